//! Queue metrics: depth, adds, retries, latency, work duration, unfinished
//! work and longest-running processor, as a snapshot and through a callback.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use super::ms;
use crate::rt::{run_until_stalled, FakeClock};
use crate::workqueue::WorkQueue as _;
use crate::workqueue::{DelayingQueue, Queue, QueueConfig, QueueMetrics};

#[test]
fn metrics_snapshot_tracks_latency_and_work() {
    let clock = FakeClock::new();
    let q = Queue::with_config(QueueConfig::new("pods", clock.shared()));
    q.add("a");
    q.add("b");
    q.add("a"); // duplicate of a waiting item: not an add
    let m = q.metrics();
    assert_eq!(&*m.name, "pods");
    assert_eq!((m.depth, m.adds, m.processing), (2, 2, 0));

    clock.advance(ms(10));
    assert_eq!(q.try_get(), Some("a"));
    clock.advance(ms(20));
    assert_eq!(q.try_get(), Some("b"));
    clock.advance(ms(5));
    let m = q.metrics();
    assert_eq!(m.depth, 0);
    assert_eq!(m.processing, 2);
    assert_eq!(m.queue_latency.count, 2);
    assert_eq!(m.queue_latency.min, ms(10));
    assert_eq!(m.queue_latency.max, ms(30));
    assert_eq!(m.unfinished_work, ms(25 + 5), "a runs 25 ms, b 5 ms");
    assert_eq!(m.longest_running_processor, ms(25));

    q.done(&"a");
    q.done(&"b");
    let m = q.metrics();
    assert_eq!(m.work_duration.count, 2);
    assert_eq!(m.work_duration.sum, ms(30));
    assert_eq!(m.work_duration.max, ms(25));
    assert_eq!(m.unfinished_work, Duration::ZERO);
    assert_eq!(m.longest_running_processor, Duration::ZERO);
    assert_eq!(m.work_duration.buckets.iter().sum::<u64>(), 2);
}

#[test]
fn metrics_add_while_processing_counts_latency_from_readd() {
    let clock = FakeClock::new();
    let q = Queue::new(clock.shared());
    q.add(1u8);
    assert_eq!(q.try_get(), Some(1));
    clock.advance(ms(3));
    q.add(1); // dirty while processing
    clock.advance(ms(7));
    q.done(&1);
    assert_eq!(q.try_get(), Some(1));
    let m = q.metrics();
    assert_eq!(m.adds, 2);
    assert_eq!(m.queue_latency.count, 2);
    assert_eq!(m.queue_latency.max, ms(7), "latency runs from the re-add");
}

#[test]
fn metrics_timings_can_be_disabled() {
    let clock = FakeClock::new();
    let q = Queue::with_config(QueueConfig::new("", clock.shared()).timings(false));
    q.add(1u8);
    clock.advance(ms(3));
    assert_eq!(q.try_get(), Some(1));
    q.done(&1);
    let m = q.metrics();
    assert_eq!(m.adds, 1);
    assert_eq!(m.queue_latency.count, 0);
    assert_eq!(m.work_duration.count, 0);
}

#[test]
fn metrics_callback_reports_periodically_and_on_shutdown() {
    let clock = FakeClock::new();
    let q: DelayingQueue<&str> = DelayingQueue::new(clock.shared());
    let seen: Rc<RefCell<Vec<QueueMetrics>>> = Rc::default();
    let s = seen.clone();
    let _task = q.watch_metrics(Duration::from_millis(500), move |m| {
        s.borrow_mut().push(m.clone())
    });
    run_until_stalled();
    assert_eq!(seen.borrow().len(), 1, "first report right away");
    q.add("a");
    q.add_after("b", Duration::from_secs(10));
    clock.advance(ms(500));
    run_until_stalled();
    {
        let seen = seen.borrow();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1].depth, 1);
        assert_eq!(seen[1].delayed, 1);
        assert_eq!(seen[1].retries, 1);
    }
    q.shut_down();
    run_until_stalled();
    assert_eq!(seen.borrow().len(), 3, "a final report at shutdown");
    clock.advance(Duration::from_secs(5));
    run_until_stalled();
    assert_eq!(seen.borrow().len(), 3, "no reports after shutdown");
    assert_eq!(clock.pending_timers(), 0);
}
