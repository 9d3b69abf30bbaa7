//! Workqueue benchmarks in wasm, driven from Rust. Run:
//! `wasm-pack test --node --release --features bench --test wasm_bench_workqueue -- --nocapture`
//!
//! Mirrors `benches/workqueue.rs`: add → get → done cycles with string keys
//! (target ≥ 500k cycles/s), add_after with 100,000 pending delayed items
//! (inserts/s, cost of firing) and the worker runner.
#![cfg(all(target_arch = "wasm32", feature = "bench"))]

use std::hint::black_box;
use std::rc::Rc;
use std::time::Duration;

use futures::FutureExt;
use kubewasm::rt::{real_clock, yield_now, Instant, SharedClock};
use kubewasm::testing::{FakeClock, Rng};
use kubewasm::workqueue::{
    run_workers, DelayingQueue, Queue, QueueConfig, RateLimitingQueue, Reconciled, WorkQueue,
    WorkerOptions,
};
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

const KEYS: usize = 10_000;
const CYCLES: usize = 1_000_000;

fn keys(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("namespace-{}/pod-{:06}", i % 37, i))
        .collect()
}

fn report(name: &str, ops: usize, elapsed: Duration) {
    let secs = elapsed.as_secs_f64().max(1e-9);
    console_log!(
        "{:<58} {:>9} ops in {:>8.2} ms  {:>12.0} ops/s  {:>7.1} ns/op",
        name,
        ops,
        secs * 1e3,
        ops as f64 / secs,
        secs * 1e9 / ops as f64
    );
}

fn cycles(name: &str, q: &Queue<String>, keys: &[String], timer: &SharedClock) {
    let start = timer.now();
    for i in 0..CYCLES {
        q.add(keys[i % keys.len()].clone());
        if let Some(item) = q.get().now_or_never().flatten() {
            q.done(black_box(&item));
        }
    }
    report(name, CYCLES, timer.now() - start);
    assert_eq!(q.len(), 0);
}

#[wasm_bindgen_test]
fn bench_add_get_done_cycles() {
    let timer = real_clock();
    let keys = keys(KEYS);
    let q = Queue::with_config(QueueConfig::new("bench", real_clock()));
    cycles(
        "wasm add/get/done String, async get, timings on",
        &q,
        &keys,
        &timer,
    );
    let q = Queue::with_config(QueueConfig::new("bench", real_clock()).timings(false));
    cycles(
        "wasm add/get/done String, async get, timings off",
        &q,
        &keys,
        &timer,
    );

    let q = Queue::with_config(QueueConfig::new("bench", real_clock()));
    let start = timer.now();
    let mut n = 0;
    while n < CYCLES {
        for k in keys.iter().take(1000) {
            q.add(k.clone());
        }
        while let Some(item) = q.try_get() {
            q.done(black_box(&item));
            n += 1;
        }
    }
    report(
        "wasm add 1000 then try_get/done 1000, String",
        n,
        timer.now() - start,
    );

    let rc_keys: Vec<Rc<str>> = keys.iter().map(|k| Rc::from(k.as_str())).collect();
    let q: Queue<Rc<str>> = Queue::with_config(QueueConfig::new("bench", real_clock()));
    let start = timer.now();
    for i in 0..CYCLES {
        q.add(rc_keys[i % KEYS].clone());
        if let Some(item) = q.get().now_or_never().flatten() {
            q.done(black_box(&item));
        }
    }
    report(
        "wasm add/get/done Rc<str>, async get, timings on",
        CYCLES,
        timer.now() - start,
    );
}

#[wasm_bindgen_test]
async fn bench_add_after_100k_pending() {
    const PENDING: usize = 100_000;
    let timer = real_clock();
    let keys = keys(PENDING);
    let mut rng = Rng::with_seed(1);
    let delays: Vec<Duration> = (0..PENDING)
        .map(|_| Duration::from_millis(1 + rng.next_u64() % 100_000))
        .collect();

    let clock = FakeClock::new();
    let q: DelayingQueue<String> = DelayingQueue::new(clock.shared());
    let start = timer.now();
    for (k, d) in keys.iter().zip(&delays) {
        q.add_after(k.clone(), *d);
    }
    report(
        "wasm add_after: 100k distinct items, random delays",
        PENDING,
        timer.now() - start,
    );
    let start = timer.now();
    for (k, d) in keys.iter().zip(&delays) {
        q.add_after(k.clone(), *d / 2 + Duration::from_millis(1));
    }
    report(
        "wasm add_after: 100k earlier duplicates (100k pending)",
        PENDING,
        timer.now() - start,
    );
    yield_now().await;
    assert_eq!(q.delayed_len(), PENDING);

    // One timer wake fires everything; the measured time includes one
    // macrotask turn (yield_now) for the timer task to run.
    let start = timer.now();
    clock.set(Instant::from_origin(Duration::from_secs(200)));
    yield_now().await;
    report(
        "wasm fire: 100k delayed items in one timer wake",
        PENDING,
        timer.now() - start,
    );
    assert_eq!(q.len(), PENDING);
    assert_eq!(q.delayed_len(), 0);
}

#[wasm_bindgen_test]
async fn bench_worker_runner() {
    const ITEMS: usize = 200_000;
    let timer = real_clock();
    let keys = keys(ITEMS);
    let q: RateLimitingQueue<String> = RateLimitingQueue::with_default_limiter(real_clock());
    for k in &keys {
        q.add(k.clone());
    }
    let start = timer.now();
    let pool = run_workers(
        q.clone(),
        WorkerOptions::<String, ()>::workers(4),
        |item: String| async move {
            black_box(&item);
            Ok(Reconciled::Done)
        },
    );
    pool.stop().await;
    report(
        "wasm worker runner: 4 workers, sync reconcile, 200k items",
        ITEMS,
        timer.now() - start,
    );
}
