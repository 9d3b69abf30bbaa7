//! `WorkQueue`: the rate-limited controller queue for JS, with a worker runner
//! around an async `reconcile(key)` function.

use std::rc::Rc;
use std::time::Duration;

use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::error::KubeErrorInit;
use super::options::{self, millis, report, string_arg};
use super::promise::future_to_promise;
use crate::rt::real_clock;
use crate::workqueue::WorkQueue as _;
use crate::workqueue::{
    bucket_upper_bounds, BucketRateLimiter, DurationSummary, ItemExponentialRateLimiter,
    MaxOfRateLimiter, QueueConfig, QueueMetrics, RateLimitingQueue, Reconciled, SharedRateLimiter,
    WorkerOptions, WorkerPool,
};

/// The most workers one `runWorkers` call may start: far beyond what a
/// single-threaded host can use, and a bound on a mistaken count.
const MAX_WORKERS: f64 = 10_000.0;

/// `WorkQueueOptions`' members.
const WORKQUEUE_OPTIONS: &[&str] = &[
    "name",
    "baseDelayMs",
    "maxDelayMs",
    "qps",
    "burst",
    "timings",
];

#[wasm_bindgen(typescript_custom_section)]
const WORKQUEUE_TS: &'static str = r#"
/** Options for `new WorkQueue(options)`; the defaults are client-go's controller defaults. */
export interface WorkQueueOptions {
  /** Name shown in metrics. */
  name?: string | undefined;
  /** Per-item exponential backoff: first retry delay (default 5 ms). */
  baseDelayMs?: number | undefined;
  /** Per-item exponential backoff cap (default 1,000,000 ms = 1000 s). */
  maxDelayMs?: number | undefined;
  /**
   * Overall retry rate limit, tokens per second (default 10). As the client's `qps`: 0 keeps the default, a negative
   * value or `Infinity` turns this limit off (the per-item backoff still applies).
   */
  qps?: number | undefined;
  /** Overall retry burst (default 100; 0 keeps the default, as the client's `burst`). */
  burst?: number | undefined;
  /** Record queue-latency and work-duration timings (default true). */
  timings?: boolean | undefined;
}

/** A duration histogram: client-go's buckets, 10 ns … 10 s plus overflow. */
export interface DurationSummary {
  count: number;
  meanMs: number;
  minMs: number;
  maxMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Per-bucket counts (not cumulative); `leMs` is the bucket's upper bound, `Infinity` for overflow. */
  buckets: { leMs: number; count: number }[];
}

/** A snapshot of a queue's metrics. */
export interface WorkQueueMetrics {
  name: string;
  /** Items waiting to be handed out. */
  depth: number;
  /** Items taken by a worker and not yet done. */
  processing: number;
  /** Items waiting for their delay to pass. */
  delayed: number;
  adds: number;
  retries: number;
  queueLatency: DurationSummary;
  workDuration: DurationSummary;
  unfinishedWorkMs: number;
  longestRunningProcessorMs: number;
}

/** What a reconcile may resolve to: nothing (done), or a request to look again. */
export type ReconcileResult = void | undefined | { requeue: true } | { requeueAfterMs: number };

/** Options for `WorkQueue.runWorkers`. */
export interface RunWorkersOptions {
  /** Called with the key and the thrown value whenever a reconcile throws or rejects (the key has already been requeued with backoff). Defaults to `console.error`. */
  onError?: ((key: string, error: unknown) => void) | undefined;
}
"#;

/// A rate-limited work queue of string keys (client-go's
/// `TypedRateLimitingInterface[string]`): duplicates collapse, a key is never
/// handed to two workers at once, and a key added while being processed is
/// processed again after `done`.
#[wasm_bindgen]
pub struct WorkQueue {
    queue: RateLimitingQueue<String>,
}

#[wasm_bindgen]
impl WorkQueue {
    /// Create a queue. Throws `KubeError` (reason `Invalid`) on bad options.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "WorkQueueOptions")] opts: JsValue,
    ) -> Result<WorkQueue, JsValue> {
        options::known_members(&opts, WORKQUEUE_OPTIONS, "WorkQueue")?;
        let clock = real_clock();
        let name = options::string(&opts, "name")?.unwrap_or_default();
        let base = options::number(&opts, "baseDelayMs")?.unwrap_or(5.0);
        let max = options::number(&opts, "maxDelayMs")?.unwrap_or(1_000_000.0);
        // The client's reading of `qps` and `burst`: a 0 would otherwise
        // park every rate-limited key for good.
        let bucket = options::token_bucket(&opts, 10.0, 100)?;
        let timings = options::flag(&opts, "timings", true)?;
        let mut limiters: Vec<SharedRateLimiter<String>> = vec![Rc::new(
            ItemExponentialRateLimiter::new(millis(base), millis(max)),
        )];
        if let Some((qps, burst)) = bucket {
            limiters.push(Rc::new(BucketRateLimiter::new(clock.clone(), qps, burst)));
        }
        let limiter: SharedRateLimiter<String> = Rc::new(MaxOfRateLimiter::new(limiters));
        let config = QueueConfig::new(name, clock).timings(timings);
        Ok(WorkQueue {
            queue: RateLimitingQueue::with_config(config, limiter),
        })
    }

    /// Add a key now (ignored after shutdown).
    pub fn add(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> Result<(), JsValue> {
        self.queue.add(string_arg(&key, "key")?);
        Ok(())
    }

    /// Add a key once `delayMs` has passed; an earlier pending add wins. A
    /// delay of zero or less adds it now (as client-go does); a delay that is
    /// not a finite number is an `Invalid` error. A pending delayed add is a
    /// timer: in Node it keeps the process running until it fires or the
    /// queue is shut down.
    #[wasm_bindgen(js_name = addAfter)]
    pub fn add_after(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
        #[wasm_bindgen(js_name = delayMs, unchecked_param_type = "number")] delay_ms: JsValue,
    ) -> Result<(), JsValue> {
        let key = string_arg(&key, "key")?;
        let delay_ms = delay_ms.as_f64().filter(|d| d.is_finite()).ok_or_else(|| {
            JsValue::from(KubeErrorInit::invalid("`delayMs` must be a finite number"))
        })?;
        self.queue.add_after(key, millis(delay_ms));
        Ok(())
    }

    /// Add a key after its rate-limited backoff; returns the delay in ms.
    #[wasm_bindgen(js_name = addRateLimited)]
    pub fn add_rate_limited(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> Result<f64, JsValue> {
        let key = string_arg(&key, "key")?;
        Ok(self.queue.add_rate_limited(key).as_secs_f64() * 1000.0)
    }

    /// Clear a key's retry history (call after it succeeded).
    pub fn forget(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> Result<(), JsValue> {
        self.queue.forget(&string_arg(&key, "key")?);
        Ok(())
    }

    /// How many times the key has been requeued with backoff since its last `forget`.
    #[wasm_bindgen(js_name = numRequeues)]
    pub fn num_requeues(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> Result<u32, JsValue> {
        Ok(self.queue.num_requeues(&string_arg(&key, "key")?))
    }

    /// The next key, or `undefined` once the queue is shut down and empty.
    /// Every key received must be passed to `done`.
    #[wasm_bindgen(unchecked_return_type = "Promise<string | undefined>")]
    pub fn get(&self) -> Promise {
        let get = self.queue.get();
        future_to_promise(async move {
            Ok(match get.await {
                Some(k) => JsValue::from_str(&k),
                None => JsValue::UNDEFINED,
            })
        })
    }

    /// Mark a key as finished processing.
    pub fn done(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> Result<(), JsValue> {
        self.queue.done(&string_arg(&key, "key")?);
        Ok(())
    }

    /// Keys waiting to be handed out.
    #[wasm_bindgen(getter)]
    pub fn len(&self) -> u32 {
        self.queue.len().min(u32::MAX as usize) as u32
    }

    /// Whether no key is waiting to be handed out.
    #[wasm_bindgen(getter, js_name = isEmpty)]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Whether `shutdown` has been called.
    #[wasm_bindgen(getter, js_name = shuttingDown)]
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }

    /// Stop accepting keys; pending `get`s resolve with `undefined` once the queue is empty.
    pub fn shutdown(&self) {
        self.queue.shut_down();
    }

    /// Shut down and resolve once every key already taken is done
    /// (client-go's `ShutDownWithDrain`); while `runWorkers` workers serve
    /// the queue, once they have also done every key still queued and
    /// exited (their pools' `running` is 0), so a teardown can await it and
    /// release what their reconcile uses.
    #[wasm_bindgen(js_name = shutdownWithDrain, unchecked_return_type = "Promise<void>")]
    pub fn shutdown_with_drain(&self) -> Promise {
        // Shut down now; only the wait is the promise's.
        let drained = self.queue.queue().shut_down_with_drain();
        future_to_promise(async move {
            drained.await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// A snapshot of the queue's metrics.
    #[wasm_bindgen(unchecked_return_type = "WorkQueueMetrics")]
    pub fn metrics(&self) -> JsValue {
        metrics_to_js(&self.queue.metrics())
    }

    /// Run `n` concurrent workers: each takes a key, awaits `reconcile(key)`
    /// and then forgets it (success), requeues it with backoff (throw/reject or
    /// `{ requeue: true }`), or re-adds it after `requeueAfterMs`. A key is
    /// never reconciled concurrently with itself. `n` is a whole number from
    /// 1 to 10,000; anything else, or a `reconcile` that is not a function,
    /// is an `Invalid` error.
    #[wasm_bindgen(js_name = runWorkers)]
    pub fn run_workers(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] n: JsValue,
        #[wasm_bindgen(
            unchecked_param_type = "(key: string) => ReconcileResult | Promise<ReconcileResult>"
        )]
        reconcile: JsValue,
        #[wasm_bindgen(unchecked_param_type = "RunWorkersOptions")] opts: JsValue,
    ) -> Result<WorkerPoolHandle, JsValue> {
        let n = n
            .as_f64()
            .filter(|n| n.fract() == 0.0 && (1.0..=MAX_WORKERS).contains(n))
            .ok_or_else(|| {
                JsValue::from(KubeErrorInit::invalid(
                    "the number of workers must be a whole number from 1 to 10000",
                ))
            })?;
        let reconcile: Function = reconcile
            .dyn_into()
            .map_err(|_| JsValue::from(KubeErrorInit::invalid("`reconcile` must be a function")))?;
        options::known_members(&opts, &["onError"], "runWorkers")?;
        let on_error = options::function(&opts, "onError")?;
        let mut wo: WorkerOptions<String, JsValue> = WorkerOptions::workers(n as usize);
        wo = wo.on_error(move |key: &String, err: JsValue| match &on_error {
            Some(f) => {
                if let Err(thrown) = f.call2(&JsValue::NULL, &JsValue::from_str(key), &err) {
                    report("kubewasm: WorkQueue onError handler threw", &thrown);
                }
            }
            None => report(&format!("kubewasm: reconcile of {key:?} failed"), &err),
        });
        let reconcile = Rc::new(reconcile);
        let pool = crate::workqueue::run_workers(self.queue.clone(), wo, move |key: String| {
            let reconcile = reconcile.clone();
            async move { call_reconcile(&reconcile, &key).await }
        });
        Ok(WorkerPoolHandle { pool })
    }
}

async fn call_reconcile(f: &Function, key: &str) -> Result<Reconciled, JsValue> {
    let mut value = f.call1(&JsValue::NULL, &JsValue::from_str(key))?;
    if let Some(p) = value.dyn_ref::<Promise>() {
        value = JsFuture::from(p.clone()).await?;
    }
    // Anything else is a mistake (`return true` meant as "requeue"): it is
    // reported and the key retried with backoff, not taken as success.
    if !(value.is_undefined() || value.is_null() || value.is_object()) {
        return Err(KubeErrorInit::invalid(format!(
            "reconcile returned {}: expected nothing, {{ requeue: true }} or {{ requeueAfterMs }}",
            options::thrown_text(&value)
        ))
        .into());
    }
    if let Some(ms) = options::number(&value, "requeueAfterMs").map_err(JsValue::from)? {
        return Ok(Reconciled::RequeueAfter(millis(ms)));
    }
    if options::prop(&value, "requeue").and_then(|v| v.as_bool()) == Some(true) {
        return Ok(Reconciled::Requeue);
    }
    Ok(Reconciled::Done)
}

/// Running workers started by `WorkQueue.runWorkers`.
#[wasm_bindgen]
pub struct WorkerPoolHandle {
    pool: WorkerPool<String>,
}

#[wasm_bindgen]
impl WorkerPoolHandle {
    /// Workers still running: 0 once `stop()` or the queue's
    /// `shutdownWithDrain()` has resolved, and right after `abort()`.
    #[wasm_bindgen(getter)]
    pub fn running(&self) -> u32 {
        self.pool.running() as u32
    }

    /// Graceful stop: shut the queue down, finish what is queued and in flight,
    /// resolve when every worker has exited.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn stop(&self) -> Promise {
        let stopped = self.pool.stop();
        future_to_promise(async move {
            stopped.await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Hard stop: shut the queue down, as `stop` does (later `add`s are
    /// ignored, so a new pool needs a new queue), and cancel the workers now:
    /// `running` is 0 on return and no reconcile is called again. A
    /// reconcile promise in flight is not awaited any more (its result is
    /// ignored); its key is marked done a microtask later.
    pub fn abort(&self) {
        self.pool.abort();
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn set(obj: &Object, key: &str, value: impl Into<JsValue>) {
    // Setting a property on a fresh plain object cannot fail.
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value.into());
}

fn summary_to_js(s: &DurationSummary) -> JsValue {
    let o = Object::new();
    set(&o, "count", s.count as f64);
    set(&o, "meanMs", ms(s.mean()));
    set(&o, "minMs", ms(s.min));
    set(&o, "maxMs", ms(s.max));
    set(&o, "p50Ms", ms(s.quantile(0.5)));
    set(&o, "p90Ms", ms(s.quantile(0.9)));
    set(&o, "p99Ms", ms(s.quantile(0.99)));
    let buckets = Array::new();
    let bounds = bucket_upper_bounds();
    for (i, count) in s.buckets.iter().enumerate() {
        let b = Object::new();
        set(&b, "leMs", bounds.get(i).map_or(f64::INFINITY, |d| ms(*d)));
        set(&b, "count", *count as f64);
        buckets.push(&b);
    }
    set(&o, "buckets", buckets);
    o.into()
}

fn metrics_to_js(m: &QueueMetrics) -> JsValue {
    let o = Object::new();
    set(&o, "name", JsValue::from_str(&m.name));
    set(&o, "depth", m.depth as f64);
    set(&o, "processing", m.processing as f64);
    set(&o, "delayed", m.delayed as f64);
    set(&o, "adds", m.adds as f64);
    set(&o, "retries", m.retries as f64);
    set(&o, "queueLatency", summary_to_js(&m.queue_latency));
    set(&o, "workDuration", summary_to_js(&m.work_duration));
    set(&o, "unfinishedWorkMs", ms(m.unfinished_work));
    set(
        &o,
        "longestRunningProcessorMs",
        ms(m.longest_running_processor),
    );
    o.into()
}
