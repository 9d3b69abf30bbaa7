//! The delaying queue (client-go `util/workqueue/delaying_queue.go`).
//!
//! Pending items sit in a min-heap by ready time plus a map from item to its
//! current ready time (for dedup). Moving an item earlier pushes a new heap
//! entry and leaves the old one behind as stale; stale entries are skipped when
//! they reach the top, which keeps every insert `O(log n)` without a
//! decrease-key.
//!
//! Go runs a goroutine that selects on a channel of new items, a timer for the
//! earliest item and a 10 s heartbeat. Here one background task (spawned on the
//! first delayed add) sleeps on the clock until the earliest ready time, and is
//! woken early only when an insert lands before the armed deadline. So exactly
//! one timer is armed at any time, there is no heartbeat or polling, and
//! shutdown drops the timer.

use std::cell::RefCell;
use std::cmp::{Ordering, Reverse};
use std::collections::hash_map::Entry as MapEntry;
use std::collections::{BinaryHeap, HashMap};
use std::hash::Hash;
use std::rc::{Rc, Weak};
use std::time::Duration;

use futures::future::select;

use super::interface::WorkQueue;
use super::metrics::QueueMetrics;
use super::queue::{Queue, QueueConfig, WeakQueue};
use crate::rt::{spawn_local, Instant, Notify, SharedClock, TaskHandle};

/// A heap entry: `item` becomes ready at `at`; `seq` tells it apart from
/// stale entries for the same item.
struct Waiting<T> {
    at: Instant,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Waiting<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl<T> Eq for Waiting<T> {}
impl<T> PartialOrd for Waiting<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Waiting<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

struct DelayState<T> {
    heap: BinaryHeap<Reverse<Waiting<T>>>,
    /// The live ready time (and entry sequence number) of each pending item.
    pending: HashMap<T, (Instant, u64)>,
    next_seq: u64,
    /// The deadline the timer task sleeps until (or is about to recompute);
    /// `None` while idle.
    armed: Option<Instant>,
    task: Option<TaskHandle>,
}

struct DelayShared<T> {
    state: RefCell<DelayState<T>>,
    /// Wakes the timer task when an insert lands before the armed deadline.
    wake: Notify,
}

impl<T> Drop for DelayShared<T> {
    fn drop(&mut self) {
        if let Some(task) = self.state.get_mut().task.take() {
            task.abort();
        }
    }
}

/// A [`Queue`] whose items can also be added with a delay
/// ([`add_after`](Self::add_after)); the queue operations come from
/// [`WorkQueue`]. Cloning gives another handle to the same queue.
///
/// Dropping the last `DelayingQueue` handle cancels the timer and with it the
/// pending delayed adds, even if plain [`Queue`] clones are still alive.
pub struct DelayingQueue<T> {
    queue: Queue<T>,
    delay: Rc<DelayShared<T>>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        DelayingQueue {
            queue: self.queue.clone(),
            delay: self.delay.clone(),
        }
    }
}

impl<T: Hash + Eq + Clone + 'static> WorkQueue<T> for DelayingQueue<T> {
    fn queue(&self) -> &Queue<T> {
        &self.queue
    }

    /// A metrics snapshot, including the number of delayed items.
    fn metrics(&self) -> QueueMetrics {
        let mut m = self.queue.metrics();
        m.delayed = self.delayed_len();
        m
    }
}

impl<T: Hash + Eq + Clone + 'static> DelayingQueue<T> {
    /// An unnamed delaying queue on `clock`.
    pub fn new(clock: SharedClock) -> Self {
        Self::with_config(QueueConfig::new("", clock))
    }

    /// A delaying queue built from `config`.
    pub fn with_config(config: QueueConfig<T>) -> Self {
        DelayingQueue {
            queue: Queue::with_config(config),
            delay: Rc::new(DelayShared {
                state: RefCell::new(DelayState {
                    heap: BinaryHeap::new(),
                    pending: HashMap::new(),
                    next_seq: 0,
                    armed: None,
                    task: None,
                }),
                wake: Notify::new(),
            }),
        }
    }

    /// Add `item` once `d` has elapsed (DQ-01..04). A zero delay adds now; a
    /// pending item only ever moves earlier; ignored after shutdown.
    pub fn add_after(&self, item: T, d: Duration) {
        if self.queue.shutting_down() {
            return;
        }
        // Like client-go, every accepted delayed add counts as a retry.
        self.queue.count_retry();
        if d.is_zero() {
            self.queue.add(item);
            return;
        }
        let at = self.queue.clock().now() + d;
        let (earlier, start) = {
            let mut guard = self.delay.state.borrow_mut();
            let st = &mut *guard;
            let seq = st.next_seq;
            match st.pending.get_mut(&item) {
                Some(live) if live.0 <= at => return,
                Some(live) => *live = (at, seq),
                None => {
                    st.pending.insert(item.clone(), (at, seq));
                }
            }
            st.next_seq = seq.wrapping_add(1);
            st.heap.push(Reverse(Waiting { at, seq, item }));
            let earlier = st.armed.is_none_or(|armed| at < armed);
            if earlier {
                st.armed = Some(at);
            }
            (earlier, st.task.is_none())
        };
        if start {
            self.start_timer();
        } else if earlier {
            self.delay.wake.notify_waiters();
        }
    }

    /// Number of items waiting for their delay to pass.
    pub fn delayed_len(&self) -> usize {
        self.delay.state.borrow().pending.len()
    }

    /// Like [`Queue::watch_metrics`], with the delayed count filled in.
    pub fn watch_metrics(
        &self,
        period: Duration,
        f: impl FnMut(&QueueMetrics) + 'static,
    ) -> TaskHandle {
        let delay = Rc::downgrade(&self.delay);
        self.queue.watch_metrics_with(period, f, move |m| {
            m.delayed = delay
                .upgrade()
                .map_or(0, |d| d.state.borrow().pending.len());
        })
    }

    fn start_timer(&self) {
        let task = spawn_local(timer_loop(
            self.queue.downgrade(),
            Rc::downgrade(&self.delay),
            self.queue.clock().clone(),
        ));
        self.delay.state.borrow_mut().task = Some(task);
    }
}

/// Move every due item into the queue and return the earliest remaining ready
/// time, dropping stale heap entries on the way.
fn fire_due<T: Hash + Eq + Clone + 'static>(
    delay: &DelayShared<T>,
    queue: &Queue<T>,
    now: Instant,
) -> Option<Instant> {
    let mut guard = delay.state.borrow_mut();
    let st = &mut *guard;
    loop {
        let top = st.heap.peek()?;
        if top.0.at > now {
            // Future entry: it decides the next deadline unless it is stale.
            if st.pending.get(&top.0.item) == Some(&(top.0.at, top.0.seq)) {
                let next = top.0.at;
                st.armed = Some(next);
                return Some(next);
            }
            st.heap.pop();
            continue;
        }
        let Reverse(entry) = st.heap.pop()?;
        // One hash look-up per due entry: fire it if it is the live one.
        if let MapEntry::Occupied(o) = st.pending.entry(entry.item) {
            if *o.get() == (entry.at, entry.seq) {
                let (item, _) = o.remove_entry();
                queue.add(item);
            }
        }
    }
}

async fn timer_loop<T: Hash + Eq + Clone + 'static>(
    queue: WeakQueue<T>,
    delay: Weak<DelayShared<T>>,
    clock: SharedClock,
) {
    loop {
        let (wake, stop, next) = {
            let (Some(q), Some(d)) = (queue.upgrade(), delay.upgrade()) else {
                return;
            };
            if q.shutting_down() {
                let mut st = d.state.borrow_mut();
                st.heap.clear();
                st.pending.clear();
                st.armed = None;
                return;
            }
            // Signals are captured before reading the state, so an insert made
            // after this point always wakes us.
            let wake = d.wake.notified();
            let stop = q.shutdown_notified();
            let next = fire_due(&d, &q, clock.now());
            if next.is_none() {
                d.state.borrow_mut().armed = None;
            }
            (wake, stop, next)
        };
        let signal = select(wake, stop);
        match next {
            Some(at) => {
                // Dropping the losing future cancels the timer, so at most one
                // is ever armed.
                let _ = select(clock.sleep_until(at), signal).await;
            }
            None => {
                signal.await;
            }
        }
    }
}
