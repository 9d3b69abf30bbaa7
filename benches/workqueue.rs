//! Workqueue benchmarks (native). Run: `cargo bench -p kubewasm --bench workqueue`.
//!
//! * add → get → done cycles with string keys (targets: ≥ 2M cycles/s);
//! * add_after with 100,000 pending delayed items: inserts/s and the cost of
//!   firing them;
//! * the worker runner with a synchronous reconcile.

// The runtime's test drivers (`run_until_stalled`, `block_on`) are native-only;
// on wasm the figures come from tests/wasm_bench_workqueue.rs.
#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::hint::black_box;
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    use futures::FutureExt;
    use kubewasm::rt::{block_on, real_clock};
    use kubewasm::testing::{run_until_stalled, FakeClock, Rng};
    use kubewasm::workqueue::{
        run_workers, DelayingQueue, Queue, QueueConfig, RateLimitingQueue, Reconciled, WorkQueue,
        WorkerOptions,
    };

    const KEYS: usize = 10_000;
    const CYCLES: usize = 2_000_000;

    fn keys() -> Vec<String> {
        (0..KEYS)
            .map(|i| format!("namespace-{}/pod-{:06}", i % 37, i))
            .collect()
    }

    fn report(name: &str, ops: usize, elapsed: Duration) {
        let rate = ops as f64 / elapsed.as_secs_f64();
        println!(
            "{name:<58} {ops:>9} ops in {:>8.2} ms  {:>12.0} ops/s  {:>7.1} ns/op",
            elapsed.as_secs_f64() * 1e3,
            rate,
            elapsed.as_nanos() as f64 / ops as f64
        );
    }

    fn cycle_one_at_a_time(name: &str, q: &Queue<String>, keys: &[String], async_get: bool) {
        let start = Instant::now();
        for i in 0..CYCLES {
            q.add(keys[i % KEYS].clone());
            let item = if async_get {
                q.get().now_or_never().flatten()
            } else {
                q.try_get()
            };
            if let Some(item) = item {
                q.done(black_box(&item));
            }
        }
        report(name, CYCLES, start.elapsed());
        assert_eq!(q.len(), 0);
    }

    fn cycle_batched(name: &str, q: &Queue<String>, keys: &[String]) {
        let start = Instant::now();
        let mut n = 0;
        while n < CYCLES {
            for k in keys.iter().take(1000) {
                q.add(k.clone());
            }
            while let Some(item) = q.get().now_or_never().flatten() {
                q.done(black_box(&item));
                n += 1;
            }
        }
        report(name, n, start.elapsed());
    }

    fn cycles() {
        let keys = keys();
        let q = Queue::with_config(QueueConfig::new("bench", real_clock()));
        cycle_one_at_a_time(
            "add/get/done String, async get, timings on",
            &q,
            &keys,
            true,
        );
        cycle_one_at_a_time("add/get/done String, try_get, timings on", &q, &keys, false);
        let q = Queue::with_config(QueueConfig::new("bench", real_clock()).timings(false));
        cycle_one_at_a_time(
            "add/get/done String, async get, timings off",
            &q,
            &keys,
            true,
        );
        let q = Queue::with_config(QueueConfig::new("bench", real_clock()));
        cycle_batched("add 1000 then get/done 1000, String, async get", &q, &keys);

        let rc_keys: Vec<Rc<str>> = keys.iter().map(|k| Rc::from(k.as_str())).collect();
        let q: Queue<Rc<str>> = Queue::with_config(QueueConfig::new("bench", real_clock()));
        let start = Instant::now();
        for i in 0..CYCLES {
            q.add(rc_keys[i % KEYS].clone());
            if let Some(item) = q.get().now_or_never().flatten() {
                q.done(black_box(&item));
            }
        }
        report(
            "add/get/done Rc<str>, async get, timings on",
            CYCLES,
            start.elapsed(),
        );
    }

    fn delayed() {
        const PENDING: usize = 100_000;
        let keys: Vec<String> = (0..PENDING)
            .map(|i| format!("namespace-{}/pod-{:06}", i % 37, i))
            .collect();
        let mut rng = Rng::with_seed(1);
        let delays: Vec<Duration> = (0..PENDING)
            .map(|_| Duration::from_millis(1 + rng.next_u64() % 100_000))
            .collect();

        let clock = FakeClock::new();
        let q: DelayingQueue<String> = DelayingQueue::new(clock.shared());
        let start = Instant::now();
        for (k, d) in keys.iter().zip(&delays) {
            q.add_after(k.clone(), *d);
        }
        report(
            "add_after: 100k distinct items, random delays",
            PENDING,
            start.elapsed(),
        );
        run_until_stalled();
        assert_eq!(q.delayed_len(), PENDING);

        // With 100k pending: duplicates (later: no-op; earlier: move).
        let start = Instant::now();
        for (k, d) in keys.iter().zip(&delays) {
            q.add_after(k.clone(), *d + Duration::from_secs(1));
        }
        report(
            "add_after: 100k later duplicates (100k pending)",
            PENDING,
            start.elapsed(),
        );
        let start = Instant::now();
        for (k, d) in keys.iter().zip(&delays) {
            q.add_after(k.clone(), *d / 2 + Duration::from_millis(1));
        }
        report(
            "add_after: 100k earlier duplicates (100k pending)",
            PENDING,
            start.elapsed(),
        );
        run_until_stalled();

        // Fire everything in 1,000 clock steps (~100 items per timer wake).
        let start = Instant::now();
        for s in 1..=1000u64 {
            clock.set(kubewasm::rt::Instant::from_origin(Duration::from_millis(
                s * 100,
            )));
            run_until_stalled();
        }
        report(
            "fire: 100k delayed items over 1000 timer wakes",
            PENDING,
            start.elapsed(),
        );
        assert_eq!(q.len(), PENDING);
        assert_eq!(q.delayed_len(), 0);

        // Reference: the plain adds that firing performs.
        let plain: Queue<String> = Queue::new(FakeClock::new().shared());
        let start = Instant::now();
        for k in &keys {
            plain.add(k.clone());
        }
        report(
            "reference: add 100k distinct items to a plain queue",
            PENDING,
            start.elapsed(),
        );

        // Fire 100k at once.
        let clock = FakeClock::new();
        let q: DelayingQueue<String> = DelayingQueue::new(clock.shared());
        for (k, d) in keys.iter().zip(&delays) {
            q.add_after(k.clone(), *d);
        }
        run_until_stalled();
        let start = Instant::now();
        clock.advance(Duration::from_secs(200));
        run_until_stalled();
        report(
            "fire: 100k delayed items in one timer wake",
            PENDING,
            start.elapsed(),
        );
        assert_eq!(q.len(), PENDING);
    }

    fn workers() {
        const ITEMS: usize = 200_000;
        let keys: Vec<String> = (0..ITEMS)
            .map(|i| format!("namespace-{}/pod-{:06}", i % 37, i))
            .collect();
        let clock = FakeClock::new();
        let q: RateLimitingQueue<String> = RateLimitingQueue::with_default_limiter(clock.shared());
        for k in &keys {
            q.add(k.clone());
        }
        let start = Instant::now();
        let pool = run_workers(
            q.clone(),
            WorkerOptions::<String, ()>::workers(4),
            |item: String| async move {
                black_box(&item);
                Ok(Reconciled::Done)
            },
        );
        block_on(pool.stop());
        report(
            "worker runner: 4 workers, sync reconcile, 200k items",
            ITEMS,
            start.elapsed(),
        );
    }

    pub fn run() {
        cycles();
        delayed();
        workers();
    }
}

fn main() {
    #[cfg(not(target_arch = "wasm32"))]
    native::run();
}
