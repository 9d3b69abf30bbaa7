//! The worker runner under a fake clock: backoff on errors, forget on success,
//! no item reconciled concurrently with itself, done paired on every path,
//! graceful and hard stops.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::time::Duration;

use super::ms;
use crate::rt::{run_until_stalled, spawn_local, FakeClock, Instant, Rng};
use crate::workqueue::WorkQueue as _;
use crate::workqueue::{
    run_workers, ItemExponentialRateLimiter, RateLimitingQueue, Reconciled, WorkerOptions,
};

fn step(clock: &FakeClock, d: Duration) {
    clock.advance(d);
    run_until_stalled();
}

#[test]
fn workers_fail_three_times_then_succeed_with_backoff() {
    let clock = FakeClock::new();
    let q = RateLimitingQueue::with_default_limiter(clock.shared());
    let calls: Rc<RefCell<Vec<Instant>>> = Rc::default();
    let errors: Rc<RefCell<Vec<(String, u32)>>> = Rc::default();
    let (c, shared_clock) = (calls.clone(), clock.shared());
    let errs = errors.clone();
    let pool = run_workers(
        q.clone(),
        WorkerOptions::workers(2).on_error(move |item: &String, attempt: u32| {
            errs.borrow_mut().push((item.clone(), attempt))
        }),
        move |_item: String| {
            let (c, clock) = (c.clone(), shared_clock.clone());
            async move {
                c.borrow_mut().push(clock.now());
                let n = c.borrow().len() as u32;
                if n <= 3 {
                    Err(n) // a throwing reconcile arrives as an error
                } else {
                    Ok(Reconciled::Done)
                }
            }
        },
    );
    q.add("a".to_string());
    run_until_stalled();
    assert_eq!(calls.borrow().len(), 1);
    assert_eq!(q.num_requeues(&"a".to_string()), 1);
    assert_eq!(q.processing(), 0, "done after the failed attempt");
    for (i, wait) in [5u64, 10, 20].into_iter().enumerate() {
        step(&clock, ms(wait - 1));
        assert_eq!(
            calls.borrow().len(),
            i + 1,
            "not retried before its backoff"
        );
        step(&clock, ms(1));
        assert_eq!(calls.borrow().len(), i + 2, "retried after {wait} ms");
    }
    let at: Vec<u64> = calls
        .borrow()
        .iter()
        .map(|t| t.since_origin().as_millis() as u64)
        .collect();
    assert_eq!(
        at,
        vec![0, 5, 15, 35],
        "reconciled four times: backoff 5, 10, 20 ms"
    );
    assert_eq!(
        q.num_requeues(&"a".to_string()),
        0,
        "forgotten after success"
    );
    assert_eq!(
        *errors.borrow(),
        vec![
            ("a".to_string(), 1),
            ("a".to_string(), 2),
            ("a".to_string(), 3)
        ]
    );
    assert_eq!((q.len(), q.processing(), q.delayed_len()), (0, 0, 0));
    assert_eq!(clock.pending_timers(), 0);
    assert_eq!(pool.running(), 2);
}

#[test]
fn workers_requeue_and_requeue_after_paths() {
    let clock = FakeClock::new();
    let limiter = Rc::new(ItemExponentialRateLimiter::new(
        ms(100),
        Duration::from_secs(10),
    ));
    let q = RateLimitingQueue::new(clock.shared(), limiter);
    let script: Rc<RefCell<Vec<Reconciled>>> = Rc::new(RefCell::new(vec![
        Reconciled::Requeue,
        Reconciled::Requeue,
        Reconciled::RequeueAfter(Duration::from_secs(1)),
        Reconciled::Done,
    ]));
    let count = Rc::new(Cell::new(0));
    let (s, n) = (script.clone(), count.clone());
    let _pool = run_workers(
        q.clone(),
        WorkerOptions::<u8, ()>::default(),
        move |_item: u8| {
            let (s, n) = (s.clone(), n.clone());
            async move {
                n.set(n.get() + 1);
                Ok(s.borrow_mut().remove(0))
            }
        },
    );
    q.add(1);
    run_until_stalled();
    assert_eq!(count.get(), 1);
    assert_eq!(q.num_requeues(&1), 1, "Requeue goes through the limiter");
    step(&clock, ms(100));
    assert_eq!(count.get(), 2);
    assert_eq!(q.num_requeues(&1), 2);
    step(&clock, ms(200));
    assert_eq!(count.get(), 3);
    assert_eq!(q.num_requeues(&1), 0, "RequeueAfter forgets the history");
    step(&clock, ms(999));
    assert_eq!(count.get(), 3);
    step(&clock, ms(1));
    assert_eq!(count.get(), 4, "RequeueAfter waits exactly its delay");
    assert_eq!((q.len(), q.processing(), q.delayed_len()), (0, 0, 0));
}

#[test]
fn workers_run_concurrently_and_stop_gracefully() {
    let clock = FakeClock::new();
    let q = RateLimitingQueue::with_default_limiter(clock.shared());
    let active = Rc::new(Cell::new(0usize));
    let max_active = Rc::new(Cell::new(0usize));
    let finished: Rc<RefCell<Vec<u32>>> = Rc::default();
    let (a, m, f, shared_clock) = (
        active.clone(),
        max_active.clone(),
        finished.clone(),
        clock.shared(),
    );
    let pool = run_workers(
        q.clone(),
        WorkerOptions::<u32, ()>::workers(3),
        move |item: u32| {
            let (a, m, f, clock) = (a.clone(), m.clone(), f.clone(), shared_clock.clone());
            async move {
                a.set(a.get() + 1);
                m.set(m.get().max(a.get()));
                clock.sleep(ms(10)).await;
                a.set(a.get() - 1);
                f.borrow_mut().push(item);
                Ok(Reconciled::Done)
            }
        },
    );
    for i in 0..10 {
        q.add(i);
    }
    run_until_stalled();
    assert_eq!(max_active.get(), 3, "three workers in flight at once");
    let stopped = Rc::new(Cell::new(false));
    let (p, s) = (pool.clone(), stopped.clone());
    spawn_local(async move {
        p.stop().await;
        s.set(true);
    });
    run_until_stalled();
    q.add(99); // ignored: shutting down
    for _ in 0..3 {
        assert!(!stopped.get(), "stop waits for queued and in-flight items");
        step(&clock, ms(10));
    }
    step(&clock, ms(10));
    assert!(stopped.get());
    let mut got = finished.borrow().clone();
    got.sort_unstable();
    assert_eq!(
        got,
        (0..10).collect::<Vec<_>>(),
        "every queued item was drained"
    );
    assert_eq!(pool.running(), 0);
    assert_eq!(q.processing(), 0);
}

#[test]
fn a_drain_while_workers_run_waits_until_they_have_taken_every_queued_item() {
    // Workers yield between items (their time slice), leaving nothing in
    // flight for a moment: the drain must not end there with items queued,
    // or they would reconcile after it returned.
    let clock = FakeClock::new();
    let q = RateLimitingQueue::with_default_limiter(clock.shared());
    let done: Rc<RefCell<Vec<u32>>> = Rc::default();
    let (d, shared_clock) = (done.clone(), clock.shared());
    let mut options = WorkerOptions::<u32, ()>::workers(1);
    options.time_slice = Some(Duration::ZERO);
    let pool = run_workers(q.clone(), options, move |item: u32| {
        let (d, clock) = (d.clone(), shared_clock.clone());
        async move {
            clock.sleep(ms(5)).await;
            d.borrow_mut().push(item);
            Ok(Reconciled::Done)
        }
    });
    for i in 0..20 {
        q.add(i);
    }
    run_until_stalled();
    let drained = Rc::new(Cell::new(None::<usize>));
    let (qd, dr, d) = (q.clone(), drained.clone(), done.clone());
    spawn_local(async move {
        qd.queue().shut_down_with_drain().await;
        dr.set(Some(d.borrow().len()));
    });
    for _ in 0..40 {
        step(&clock, ms(5));
    }
    assert_eq!(
        drained.get(),
        Some(20),
        "the drain ended once all 20 were done"
    );
    assert_eq!(done.borrow().len(), 20);
    assert_eq!(pool.running(), 0, "and the workers exited");

    // Without workers, a drain waits only for what was handed out.
    let q = RateLimitingQueue::with_default_limiter(clock.shared());
    q.add(1u32);
    q.add(2);
    assert_eq!(q.queue().try_get(), Some(1));
    let drained = Rc::new(Cell::new(false));
    let (qd, dr) = (q.clone(), drained.clone());
    spawn_local(async move {
        qd.queue().shut_down_with_drain().await;
        dr.set(true);
    });
    run_until_stalled();
    assert!(!drained.get());
    q.queue().done(&1);
    run_until_stalled();
    assert!(drained.get());
    assert_eq!(
        q.queue().try_get(),
        Some(2),
        "still handed out after shutdown (WQ-04)"
    );
}

#[test]
fn a_drain_returns_once_its_workers_have_exited() {
    // Two workers, three items: the worker that reconciles the last one is
    // still inside `get` when that item is done; the drain waits for it.
    let clock = FakeClock::new();
    let q = RateLimitingQueue::with_default_limiter(clock.shared());
    let shared_clock = clock.shared();
    let pool = run_workers(
        q.clone(),
        WorkerOptions::<&str, ()>::workers(2),
        move |_item: &str| {
            let clock = shared_clock.clone();
            async move {
                clock.sleep(ms(20)).await;
                Ok(Reconciled::Done)
            }
        },
    );
    for k in ["a", "b", "c"] {
        q.add(k);
    }
    step(&clock, ms(5));
    let running_at_drain = Rc::new(Cell::new(None::<usize>));
    let (qd, seen, p) = (q.clone(), running_at_drain.clone(), pool.clone());
    spawn_local(async move {
        qd.queue().shut_down_with_drain().await;
        seen.set(Some(p.running()));
    });
    for _ in 0..10 {
        step(&clock, ms(5));
    }
    assert_eq!(running_at_drain.get(), Some(0));
}

#[test]
fn workers_abort_still_marks_in_flight_done() {
    let clock = FakeClock::new();
    let q = RateLimitingQueue::with_default_limiter(clock.shared());
    let pool = run_workers(
        q.clone(),
        WorkerOptions::<&str, ()>::workers(2),
        |_item: &str| async {
            futures::future::pending::<()>().await;
            Ok(Reconciled::Done)
        },
    );
    q.add("a");
    q.add("b");
    run_until_stalled();
    assert_eq!(q.processing(), 2);
    pool.abort();
    assert_eq!(pool.running(), 0, "aborted workers count as exited at once");
    run_until_stalled();
    assert_eq!(
        q.processing(),
        0,
        "done is paired even when the reconcile is cancelled"
    );
    assert_eq!(pool.running(), 0);
}

/// Randomized schedule: adds, delayed adds and clock steps while reconciles
/// (with random durations and outcomes) are pending. Asserts no item is ever
/// reconciled concurrently with itself, and that every add is followed by a
/// reconcile that started after it.
#[test]
fn workers_never_reconcile_an_item_concurrently_with_itself() {
    let mut overall_max = 0;
    for seed in 0..60u64 {
        overall_max = overall_max.max(run_random_schedule(seed));
    }
    assert!(
        overall_max >= 2,
        "the schedule really ran reconciles concurrently"
    );
}

fn run_random_schedule(seed: u64) -> usize {
    let clock = FakeClock::new();
    let limiter = Rc::new(ItemExponentialRateLimiter::new(ms(1), ms(50)));
    let q = RateLimitingQueue::new(clock.shared(), limiter);
    let rng = Rc::new(RefCell::new(Rng::with_seed(seed)));
    let in_flight: Rc<RefCell<HashSet<u32>>> = Rc::default();
    let max_in_flight = Rc::new(Cell::new(0usize));
    let events = Rc::new(Cell::new(0u64));
    let last_start: Rc<RefCell<HashMap<u32, u64>>> = Rc::default();
    let settle = Rc::new(Cell::new(false));

    let (r, fl, mx, ev, ls, st, shared_clock) = (
        rng.clone(),
        in_flight.clone(),
        max_in_flight.clone(),
        events.clone(),
        last_start.clone(),
        settle.clone(),
        clock.shared(),
    );
    let workers = 1 + (seed % 4) as usize;
    let _pool = run_workers(
        q.clone(),
        WorkerOptions::<u32, ()>::workers(workers),
        move |item: u32| {
            let (r, fl, mx, ev, ls, st, clock) = (
                r.clone(),
                fl.clone(),
                mx.clone(),
                ev.clone(),
                ls.clone(),
                st.clone(),
                shared_clock.clone(),
            );
            async move {
                assert!(
                    fl.borrow_mut().insert(item),
                    "seed {seed}: item {item} reconciled concurrently with itself"
                );
                mx.set(mx.get().max(fl.borrow().len()));
                ev.set(ev.get() + 1);
                ls.borrow_mut().insert(item, ev.get());
                let (wait, outcome) = {
                    let mut r = r.borrow_mut();
                    (r.next_u64() % 8, r.next_u64() % 4)
                };
                if wait > 0 {
                    clock.sleep(ms(wait)).await;
                }
                fl.borrow_mut().remove(&item);
                if st.get() {
                    return Ok(Reconciled::Done);
                }
                match outcome {
                    0 => Err(()),
                    1 => Ok(Reconciled::RequeueAfter(ms(wait + 1))),
                    2 => Ok(Reconciled::Requeue),
                    _ => Ok(Reconciled::Done),
                }
            }
        },
    );

    let mut last_add: HashMap<u32, u64> = HashMap::new();
    let mut local = Rng::with_seed(seed ^ 0xABCD);
    for _ in 0..400 {
        let key = (local.next_u64() % 6) as u32;
        match local.next_u64() % 4 {
            0 | 1 => {
                q.add(key);
                events.set(events.get() + 1);
                last_add.insert(key, events.get());
            }
            2 => q.add_after(key, ms(local.next_u64() % 5)),
            _ => clock.advance(ms(local.next_u64() % 4)),
        }
        run_until_stalled();
    }
    // Settle: every reconcile now succeeds; run the clock until all is quiet.
    settle.set(true);
    for _ in 0..10_000 {
        run_until_stalled();
        match clock.next_deadline() {
            Some(t) => clock.set(t),
            None if q.is_empty() && q.processing() == 0 => break,
            None => {}
        }
    }
    assert_eq!(
        (q.len(), q.processing(), q.delayed_len()),
        (0, 0, 0),
        "seed {seed}: settled"
    );
    for (key, added) in &last_add {
        let started = last_start.borrow().get(key).copied().unwrap_or(0);
        assert!(
            started > *added,
            "seed {seed}: item {key} added at event {added} but last reconciled at {started}"
        );
    }
    max_in_flight.get()
}

#[test]
fn workers_yield_to_other_tasks_after_a_time_slice() {
    let clock = FakeClock::new();
    let q = RateLimitingQueue::with_default_limiter(clock.shared());
    for i in 0..10u32 {
        q.add(i);
    }
    let done = Rc::new(Cell::new(0u32));
    let (d, c) = (done.clone(), clock.clone());
    let mut options = WorkerOptions::<u32, ()>::workers(1);
    options.time_slice = Some(ms(10));
    let _pool = run_workers(q.clone(), options, move |_item: u32| {
        let (d, c) = (d.clone(), c.clone());
        async move {
            c.advance(ms(4)); // a synchronous, CPU-bound reconcile
            d.set(d.get() + 1);
            Ok(Reconciled::Done)
        }
    });
    let seen_by_other = Rc::new(Cell::new(None));
    let (s, d) = (seen_by_other.clone(), done.clone());
    spawn_local(async move { s.set(Some(d.get())) });
    run_until_stalled();
    assert_eq!(
        seen_by_other.get(),
        Some(3),
        "the worker yielded after 12 ms of work"
    );
    assert_eq!(done.get(), 10);
}
