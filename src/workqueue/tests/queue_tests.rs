//! WQ-01..06: client-go `queue_test.go` behaviours.

use std::cell::{Cell, RefCell};
use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::FutureExt;

use crate::rt::{run_until_stalled, spawn_local, yield_now, FakeClock, Rng};
use crate::workqueue::{Queue, QueueConfig, QueueOrder};

fn queue<T: std::hash::Hash + Eq + Clone + 'static>() -> Queue<T> {
    Queue::new(FakeClock::new().shared())
}

/// Take an item if one is ready now: `Some(Some(x))`, `Some(None)` for shut
/// down, `None` if `get` would wait.
fn get_now<T: std::hash::Hash + Eq + Clone + 'static>(q: &Queue<T>) -> Option<Option<T>> {
    q.get().now_or_never()
}

/// FIFO order that records `touch` calls.
struct TouchRecorder {
    items: VecDeque<&'static str>,
    touched: Rc<RefCell<Vec<&'static str>>>,
}

impl QueueOrder<&'static str> for TouchRecorder {
    fn push(&mut self, item: &'static str) {
        self.items.push_back(item);
    }
    fn pop(&mut self) -> Option<&'static str> {
        self.items.pop_front()
    }
    fn len(&self) -> usize {
        self.items.len()
    }
    fn touch(&mut self, item: &&'static str) {
        self.touched.borrow_mut().push(item);
    }
}

fn touch_queue() -> (Queue<&'static str>, Rc<RefCell<Vec<&'static str>>>) {
    let touched = Rc::new(RefCell::new(Vec::new()));
    let order = TouchRecorder {
        items: VecDeque::new(),
        touched: touched.clone(),
    };
    let q = Queue::with_config(
        QueueConfig::new("touch", FakeClock::new().shared()).order(Box::new(order)),
    );
    (q, touched)
}

#[test]
fn wq_01_len_counts_unique_waiting_items() {
    let q = queue();
    q.add("foo");
    assert_eq!(q.len(), 1);
    q.add("bar");
    assert_eq!(q.len(), 2);
    q.add("foo"); // still waiting: no effect
    assert_eq!(q.len(), 2);
    assert!(!q.is_empty());
}

#[test]
fn wq_01_collapse_touches_waiting_item() {
    let (q, touched) = touch_queue();
    q.add("bar");
    q.add("bar");
    assert_eq!(get_now(&q), Some(Some("bar")));
    assert_eq!(q.len(), 0);
    assert_eq!(*touched.borrow(), vec!["bar"]);
}

#[test]
fn wq_01_fifo_order_of_first_add() {
    let q = queue();
    for k in ["a", "b", "a", "c", "b"] {
        q.add(k);
    }
    let got: Vec<_> = (0..3).map(|_| q.try_get()).collect();
    assert_eq!(got, vec![Some("a"), Some("b"), Some("c")]);
    assert_eq!(q.try_get(), None);
}

#[test]
fn wq_02_get_waits_until_add() {
    let q: Queue<u32> = queue();
    let got = Rc::new(Cell::new(None));
    let (q2, g) = (q.clone(), got.clone());
    spawn_local(async move {
        g.set(Some(q2.get().await));
    });
    run_until_stalled();
    assert_eq!(got.get(), None, "get waits on an empty queue");
    q.add(7);
    run_until_stalled();
    assert_eq!(got.get(), Some(Some(7)));
    assert_eq!(q.processing(), 1);
}

#[test]
fn wq_02_basic_producers_consumers() {
    // TestBasic: many producers and consumers interleaved; an item is never
    // held by two consumers, and every produced item is processed.
    let q: Queue<u32> = queue();
    let in_flight = Rc::new(RefCell::new(HashSet::new()));
    let processed = Rc::new(RefCell::new(HashSet::new()));
    let consumers_done = Rc::new(Cell::new(0));
    for p in 0..50u32 {
        let q = q.clone();
        spawn_local(async move {
            for i in 0..50 {
                q.add(i);
                if (i + p) % 3 == 0 {
                    yield_now().await;
                }
            }
        });
    }
    for c in 0..10u64 {
        let (q, in_flight, processed, done) = (
            q.clone(),
            in_flight.clone(),
            processed.clone(),
            consumers_done.clone(),
        );
        spawn_local(async move {
            let mut rng = Rng::with_seed(c);
            while let Some(i) = q.get().await {
                assert!(
                    in_flight.borrow_mut().insert(i),
                    "item {i} handed to two consumers"
                );
                for _ in 0..(rng.next_u64() % 3) {
                    yield_now().await;
                }
                in_flight.borrow_mut().remove(&i);
                processed.borrow_mut().insert(i);
                q.done(&i);
            }
            done.set(done.get() + 1);
        });
    }
    run_until_stalled();
    assert_eq!(consumers_done.get(), 0, "consumers wait for more work");
    q.shut_down();
    run_until_stalled();
    assert_eq!(consumers_done.get(), 10);
    assert_eq!(processed.borrow().len(), 50);
    assert_eq!(q.len(), 0);
    assert_eq!(q.processing(), 0);
}

struct Flag(AtomicBool);

impl futures::task::ArcWake for Flag {
    fn wake_by_ref(arc_self: &Arc<Self>) {
        arc_self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn wq_02_dropped_woken_get_passes_wakeup_on() {
    let q: Queue<u32> = queue();
    let (f1, f2) = (
        Arc::new(Flag(AtomicBool::new(false))),
        Arc::new(Flag(AtomicBool::new(false))),
    );
    let (w1, w2) = (
        futures::task::waker(f1.clone()),
        futures::task::waker(f2.clone()),
    );
    let mut g1 = Box::pin(q.get());
    let mut g2 = Box::pin(q.get());
    assert!(g1.as_mut().poll(&mut Context::from_waker(&w1)).is_pending());
    assert!(g2.as_mut().poll(&mut Context::from_waker(&w2)).is_pending());
    q.add(1);
    assert!(f1.0.load(Ordering::SeqCst), "add wakes the first waiter");
    assert!(!f2.0.load(Ordering::SeqCst), "and only one");
    drop(g1);
    assert!(
        f2.0.load(Ordering::SeqCst),
        "a dropped woken waiter hands the wake-up on"
    );
    assert_eq!(
        g2.as_mut().poll(&mut Context::from_waker(&w2)),
        Poll::Ready(Some(1))
    );
}

#[test]
fn wq_03_reinsert_after_done() {
    let q = queue();
    q.add("foo");
    assert_eq!(q.try_get(), Some("foo"));
    q.add("foo");
    assert_eq!(q.len(), 0, "dirty while processing: not waiting");
    q.done(&"foo");
    assert_eq!(q.len(), 1, "done re-queues the dirty item");
    assert_eq!(q.try_get(), Some("foo"));
    q.done(&"foo");
    assert_eq!(q.len(), 0);
    assert_eq!(q.processing(), 0);
}

#[test]
fn wq_03_collapse_while_processing() {
    let (q, touched) = touch_queue();
    q.add("foo");
    assert_eq!(q.try_get(), Some("foo"));
    q.add("foo");
    q.add("foo");
    assert!(
        touched.borrow().is_empty(),
        "no touch for an item being processed"
    );
    assert_eq!(q.len(), 0);
    q.done(&"foo");
    assert_eq!(q.len(), 1, "several adds while processing collapse to one");
    assert_eq!(q.try_get(), Some("foo"));
    q.done(&"foo");
    assert_eq!(q.len(), 0);
}

#[test]
fn wq_03_add_while_processing_blocks_second_consumer() {
    let q = queue();
    q.add("foo");
    assert_eq!(get_now(&q), Some(Some("foo")));
    q.add("foo");
    q.add("foo");
    let second = Rc::new(Cell::new(None));
    let (q2, s) = (q.clone(), second.clone());
    spawn_local(async move {
        s.set(q2.get().await);
    });
    run_until_stalled();
    assert_eq!(
        second.get(),
        None,
        "second consumer cannot get foo while it is processing"
    );
    q.done(&"foo");
    run_until_stalled();
    assert_eq!(second.get(), Some("foo"));
    q.done(&"foo");
    assert_eq!(q.len(), 0);
    assert_eq!(q.processing(), 0);
}

#[test]
fn wq_04_shutdown_hands_out_queued_then_none() {
    let q = queue();
    q.add("a");
    q.add("b");
    q.shut_down();
    q.add("c");
    assert_eq!(q.len(), 2, "adds after shutdown are ignored");
    assert_eq!(get_now(&q), Some(Some("a")));
    assert_eq!(get_now(&q), Some(Some("b")));
    assert_eq!(
        get_now(&q),
        Some(None),
        "empty and shut down: returns at once"
    );
    assert_eq!(q.processing(), 2);
}

#[test]
fn wq_04_shutdown_releases_parked_getters() {
    let q: Queue<u32> = queue();
    let released = Rc::new(Cell::new(0));
    for _ in 0..3 {
        let (q, r) = (q.clone(), released.clone());
        spawn_local(async move {
            assert_eq!(q.get().await, None);
            r.set(r.get() + 1);
        });
    }
    run_until_stalled();
    assert_eq!(released.get(), 0);
    q.shut_down();
    run_until_stalled();
    assert_eq!(released.get(), 3);
}

#[test]
fn wq_04_no_drain_with_plain_shutdown() {
    let q = queue();
    q.add("foo");
    q.add("bar");
    assert_eq!(q.try_get(), Some("foo"));
    assert_eq!(q.try_get(), Some("bar"));
    q.shut_down(); // returns at once although two items are in flight
    assert!(q.shutting_down());
    assert_eq!(q.processing(), 2);
}

/// Start `shut_down_with_drain` on a task; the flag turns true when it returns.
fn drain_in_background(q: &Queue<&'static str>) -> Rc<Cell<bool>> {
    let drained = Rc::new(Cell::new(false));
    let (q2, d) = (q.clone(), drained.clone());
    spawn_local(async move {
        q2.shut_down_with_drain().await;
        d.set(true);
    });
    drained
}

#[test]
fn wq_04_drain_with_dirty_item() {
    let q = queue();
    q.add("foo");
    assert_eq!(q.try_get(), Some("foo"));
    q.add("foo"); // dirty while processing
    let drained = drain_in_background(&q);
    run_until_stalled();
    assert_eq!(
        get_now(&q),
        Some(None),
        "nothing waiting while foo is in flight"
    );
    assert!(!drained.get());
    q.done(&"foo");
    assert_eq!(
        get_now(&q),
        Some(Some("foo")),
        "done re-queued the dirty item after shutdown"
    );
    run_until_stalled();
    assert!(!drained.get(), "the re-queued item is in flight again");
    q.done(&"foo");
    assert_eq!(get_now(&q), Some(None));
    run_until_stalled();
    assert!(drained.get());
}

#[test]
fn wq_04_drain_ends_when_a_dirty_item_is_requeued_and_nobody_takes_it() {
    // client-go: `Done` re-queues the item and signals; with no `Get`
    // waiting, the drain wakes, finds nothing processing and returns.
    let q = queue();
    q.add("foo");
    assert_eq!(q.try_get(), Some("foo"));
    q.add("foo");
    let drained = drain_in_background(&q);
    run_until_stalled();
    assert!(!drained.get());
    q.done(&"foo");
    run_until_stalled();
    assert!(drained.get());
    assert_eq!(
        (q.len(), q.processing()),
        (1, 0),
        "the item is left waiting"
    );
    assert_eq!(
        get_now(&q),
        Some(Some("foo")),
        "handed out still, as client-go's Get after shutdown"
    );
}

#[test]
fn wq_05_drain_waits_for_done() {
    let q = queue();
    q.add("foo");
    q.add("bar");
    assert_eq!(q.try_get(), Some("foo"));
    assert_eq!(q.try_get(), Some("bar"));
    let drained = drain_in_background(&q);
    run_until_stalled();
    assert!(!drained.get());
    q.done(&"foo");
    run_until_stalled();
    assert!(!drained.get(), "bar still in flight");
    q.done(&"bar");
    run_until_stalled();
    assert!(drained.get());
}

#[test]
fn wq_05_shutdown_releases_drain() {
    let q = queue();
    q.add("foo");
    assert_eq!(q.try_get(), Some("foo"));
    let drained = drain_in_background(&q);
    run_until_stalled();
    assert!(!drained.get());
    q.shut_down();
    run_until_stalled();
    assert!(
        drained.get(),
        "a forced shutdown ends the drain without done"
    );
    assert_eq!(q.processing(), 1);
}

#[test]
fn wq_05_drain_ignores_untaken_items() {
    let q = queue();
    q.add("foo");
    assert_eq!(
        q.shut_down_with_drain().now_or_never(),
        Some(()),
        "queued-but-untaken items are not waited for"
    );
    assert_eq!(q.len(), 1);
}

#[test]
fn wq_06_shutting_down_flag() {
    let q: Queue<u8> = queue();
    assert!(!q.shutting_down());
    q.shut_down();
    assert!(q.shutting_down());
    let q2: Queue<u8> = queue();
    let _ = q2.shut_down_with_drain().now_or_never();
    assert!(q2.shutting_down());
    // At the call, not at the first poll: an add right after is ignored.
    let q3: Queue<u8> = queue();
    let drained = q3.shut_down_with_drain();
    assert!(q3.shutting_down());
    q3.add(7);
    assert_eq!(q3.len(), 0, "added after the shutdown began");
    assert_eq!(drained.now_or_never(), Some(()));
}

/// Highest number first: shows a custom order is honoured.
struct MaxFirst(Vec<u32>);

impl QueueOrder<u32> for MaxFirst {
    fn push(&mut self, item: u32) {
        self.0.push(item);
        self.0.sort_unstable();
    }
    fn pop(&mut self) -> Option<u32> {
        self.0.pop()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn touch(&mut self, _item: &u32) {}
}

#[test]
fn wq_06_custom_order_is_used() {
    let q = Queue::with_config(
        QueueConfig::new("prio", FakeClock::new().shared()).order(Box::new(MaxFirst(Vec::new()))),
    );
    for i in [3, 9, 1, 9, 5] {
        q.add(i);
    }
    assert_eq!(q.len(), 4);
    let got: Vec<_> = std::iter::from_fn(|| q.try_get()).collect();
    assert_eq!(got, vec![9, 5, 3, 1]);
}

/// TestAddWhileProcessing: every consumer re-adds each item it gets until it
/// has seen it twice; with plain and draining shutdown the queue ends empty.
#[test]
fn wq_03_add_while_processing_many_consumers() {
    for drain in [false, true] {
        let q: Queue<u32> = queue();
        for i in 0..50 {
            q.add(i);
        }
        let exited = Rc::new(Cell::new(0));
        for c in 0..10u64 {
            let (q, exited) = (q.clone(), exited.clone());
            spawn_local(async move {
                let mut rng = Rng::with_seed(c);
                let mut counters = std::collections::HashMap::new();
                while let Some(i) = q.get().await {
                    let n = counters.entry(i).or_insert(0);
                    *n += 1;
                    if *n < 2 {
                        q.add(i);
                    }
                    if rng.next_u64().is_multiple_of(2) {
                        yield_now().await;
                    }
                    q.done(&i);
                }
                exited.set(exited.get() + 1);
            });
        }
        run_until_stalled();
        assert_eq!(exited.get(), 0, "consumers wait for more work");
        assert_eq!(
            (q.len(), q.processing()),
            (0, 0),
            "every re-add was processed"
        );
        if drain {
            let q2 = q.clone();
            spawn_local(async move { q2.shut_down_with_drain().await });
        } else {
            q.shut_down();
        }
        run_until_stalled();
        assert_eq!(exited.get(), 10, "drain={drain}: every consumer exits");
        assert_eq!(q.len(), 0, "drain={drain}");
        assert_eq!(q.processing(), 0, "drain={drain}");
    }
}

/// TestGarbageCollection: the queue keeps no reference to an item after done.
#[test]
fn wq_03_done_releases_the_item() {
    let q: Queue<Rc<str>> = queue();
    let item: Rc<str> = Rc::from("big");
    q.add(item.clone());
    let got = q.try_get();
    assert_eq!(got.as_deref(), Some("big"));
    if let Some(got) = got {
        q.done(&got);
    }
    assert_eq!(Rc::strong_count(&item), 1);
}
