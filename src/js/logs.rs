//! `client.logs(namespace, pod, options)`: a container's log as an async
//! iterator of lines and as a `ReadableStream` of lines (see `api/logs.rs`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::StreamExt;
use js_sys::{Object, Promise, Reflect};
use wasm_bindgen::prelude::*;

use super::abort::{signal_option, unless_cut, Cut, Signal};
use super::client::KubeClient;
use super::error::{from_rest, KubeErrorInit};
use super::options;
use super::promise::future_to_promise;
use crate::api::{pod_logs, LogLines, LogParams};
use crate::rest::Client;

#[wasm_bindgen(typescript_custom_section)]
const LOGS_TS: &'static str = r#"
/** What to read of a container's log (the API's `PodLogOptions`). */
export interface LogOptions {
  /** The container; required when the pod has several. */
  container?: string | undefined;
  /** Keep reading as lines are written, until the container stops or the stream is cancelled. */
  follow?: boolean | undefined;
  /** The previous instance of the container (after a restart). */
  previous?: boolean | undefined;
  /** Only lines of the last this many seconds (≥ 1). */
  sinceSeconds?: number | undefined;
  /** Only the last this many lines. */
  tailLines?: number | undefined;
  /** Prefix each line with its RFC 3339 timestamp and a space. */
  timestamps?: boolean | undefined;
  /** The server stops after this many bytes. */
  limitBytes?: number | undefined;
  /** Longest line handed out (default 65,536 bytes, at least 16); a longer line comes in pieces this long. */
  maxLineBytes?: number | undefined;
  /**
   * Ends the read: the request is aborted and the pending (or next) read rejects with a `KubeError` whose reason
   * is `Aborted` (its `cause` is the signal's reason). Already aborted: the first read rejects, without a request.
   */
  signal?: AbortSignal | undefined;
}

export interface LogStream extends AsyncIterableIterator<string, undefined> {
  /** The same lines as a `ReadableStream<string>`; cancelling it aborts the request. Read a log one way, not both. */
  readable(): ReadableStream<string>;
}
"#;

#[wasm_bindgen(module = "/src/js/objects.js")]
extern "C" {
    /// Adds `[Symbol.asyncIterator]` and `readable()` (objects.js).
    #[wasm_bindgen(js_name = lineStream)]
    fn line_stream(it: JsValue) -> JsValue;
}

fn int(opts: &JsValue, name: &str) -> Result<Option<i64>, KubeErrorInit> {
    Ok(options::number(opts, name)?.map(|n| n.min(i64::MAX as f64) as i64))
}

/// `LogOptions`' members.
const LOG_OPTIONS: &[&str] = &[
    "container",
    "follow",
    "previous",
    "sinceSeconds",
    "tailLines",
    "timestamps",
    "limitBytes",
    "maxLineBytes",
    "signal",
];

fn params(opts: &JsValue) -> Result<LogParams, KubeErrorInit> {
    let mut p = LogParams {
        container: options::string(opts, "container")?,
        follow: options::flag(opts, "follow", false)?,
        previous: options::flag(opts, "previous", false)?,
        since_seconds: int(opts, "sinceSeconds")?,
        tail_lines: int(opts, "tailLines")?,
        timestamps: options::flag(opts, "timestamps", false)?,
        limit_bytes: int(opts, "limitBytes")?,
        ..LogParams::default()
    };
    if let Some(n) = options::number(opts, "maxLineBytes")? {
        p.max_line_bytes = n.min(1e9) as usize;
    }
    p.validate()
        .map_err(|e| KubeErrorInit::invalid(e.to_string()))?;
    Ok(p)
}

#[wasm_bindgen]
impl KubeClient {
    /// A container's log, line by line: `for await (const line of client.logs(ns, pod))`,
    /// or `.readable()` for a `ReadableStream<string>`. The request is sent
    /// on the first read; breaking out of the loop, `return()` or cancelling
    /// the stream aborts it, and so does the options' `signal` (the pending
    /// read rejects with `Aborted`). Errors are `KubeError`s as for any request.
    /// Throws `KubeError` (reason `Invalid`) on bad options.
    #[wasm_bindgen(unchecked_return_type = "LogStream")]
    pub fn logs(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] namespace: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] pod: JsValue,
        #[wasm_bindgen(unchecked_param_type = "LogOptions")] opts: JsValue,
    ) -> Result<JsValue, JsValue> {
        let namespace = options::string_arg(&namespace, "namespace")?;
        let pod = options::string_arg(&pod, "pod")?;
        options::known_members(&opts, LOG_OPTIONS, "logs")?;
        let it = LogStream {
            client: self.inner().clone(),
            namespace,
            pod,
            params: params(&opts)?,
            lines: Rc::default(),
            done: Rc::default(),
            stop: crate::rt::Notify::new(),
            signal: signal_option(&opts)?,
        };
        Ok(line_stream(it.into()))
    }
}

/// A log being read: an async iterator of lines (`for await`).
#[wasm_bindgen]
pub struct LogStream {
    client: Client,
    namespace: String,
    pod: String,
    params: LogParams,
    lines: Rc<RefCell<Option<LogLines>>>,
    done: Rc<Cell<bool>>,
    /// Notified by `return()`: a pending `next()` ends and drops its request.
    stop: crate::rt::Notify,
    /// The `signal` option: aborting it ends the read with an `Aborted` error.
    signal: Option<Signal>,
}

fn result(value: JsValue, done: bool) -> JsValue {
    let o = Object::new();
    let _ = Reflect::set(&o, &"value".into(), &value);
    let _ = Reflect::set(&o, &"done".into(), &JsValue::from_bool(done));
    o.into()
}

#[wasm_bindgen]
impl LogStream {
    /// The next line (without its newline); `done` at the end of the log.
    #[wasm_bindgen(unchecked_return_type = "Promise<IteratorResult<string, undefined>>")]
    pub fn next(&self) -> Promise {
        let (client, lines, done, stop, signal) = (
            self.client.clone(),
            self.lines.clone(),
            self.done.clone(),
            self.stop.clone(),
            self.signal.clone(),
        );
        let (ns, pod, params) = (
            self.namespace.clone(),
            self.pod.clone(),
            self.params.clone(),
        );
        future_to_promise(async move {
            if done.get() {
                return Ok(result(JsValue::UNDEFINED, true));
            }
            // Ends the read for good; what the pending read resolves or rejects with.
            let cut = |how: Cut| {
                done.set(true);
                lines.borrow_mut().take();
                match (how, &signal) {
                    (Cut::Aborted, Some(s)) => Err(s.error()),
                    _ => Ok(result(JsValue::UNDEFINED, true)),
                }
            };
            if signal.as_ref().is_some_and(Signal::aborted) {
                return cut(Cut::Aborted);
            }
            if lines.borrow().is_none() {
                let opened = match unless_cut(
                    pod_logs(&client, &ns, &pod, &params),
                    &stop,
                    signal.as_ref(),
                )
                .await
                {
                    Ok(opened) => opened,
                    Err(how) => return cut(how),
                };
                let opened = opened.map_err(|e| from_rest(&e));
                let opened = match opened {
                    Ok(l) => l,
                    Err(e) => {
                        done.set(true);
                        return Err(e);
                    }
                };
                if done.get() {
                    return Ok(result(JsValue::UNDEFINED, true));
                }
                *lines.borrow_mut() = Some(opened);
            }
            // Taken out while awaiting, so `return()` can drop it meanwhile.
            let Some(mut l) = lines.borrow_mut().take() else {
                return Ok(result(JsValue::UNDEFINED, true));
            };
            let item = match unless_cut(l.next(), &stop, signal.as_ref()).await {
                Ok(item) => item,
                // `l` goes, and its request with it.
                Err(how) => return cut(how),
            };
            match item {
                None => {
                    done.set(true);
                    Ok(result(JsValue::UNDEFINED, true))
                }
                Some(Err(e)) => {
                    done.set(true);
                    Err(from_rest(&e))
                }
                Some(Ok(line)) => {
                    if !done.get() {
                        *lines.borrow_mut() = Some(l);
                    }
                    Ok(result(JsValue::from_str(&line), false))
                }
            }
        })
    }

    /// Stop reading: aborts the request (also what `break` in `for await` calls).
    #[wasm_bindgen(
        js_name = "return",
        unchecked_return_type = "Promise<IteratorResult<string, undefined>>"
    )]
    pub fn return_(&self) -> Promise {
        self.done.set(true);
        self.lines.borrow_mut().take();
        self.stop.notify_waiters();
        Promise::resolve(&result(JsValue::UNDEFINED, true))
    }
}
