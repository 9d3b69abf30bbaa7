//! The basic work queue (client-go `util/workqueue/queue.go`).
//!
//! One hash map holds every item that is dirty (needs processing) or being
//! processed, so an add→get→done cycle costs three map look-ups; the waiting
//! order lives in a pluggable [`QueueOrder`] (FIFO by default).
//!
//! Go's condition variable becomes a list of parked [`Get`] futures: `add`
//! wakes one, shutdown wakes all. A woken `Get` that is dropped before it could
//! take the item passes the wake-up on, so no item is stranded with a waiter
//! asleep.

use std::cell::RefCell;
use std::collections::hash_map::Entry as MapEntry;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::metrics::{MetricsState, QueueMetrics};
use crate::rt::{real_clock, spawn_local, Instant, Notify, SharedClock, TaskHandle};

/// The waiting-order strategy of a [`Queue`] (client-go's `Queue` interface
/// with `Touch/Push/Len/Pop`). The queue guarantees it only pushes an item that
/// is not already held, and calls `touch` when an item that is waiting is added
/// again (e.g. to raise its priority).
pub trait QueueOrder<T> {
    /// Append a newly waiting item.
    fn push(&mut self, item: T);
    /// Remove and return the next item to hand out.
    fn pop(&mut self) -> Option<T>;
    /// Number of waiting items.
    fn len(&self) -> usize;
    /// Whether no item is waiting.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// An item that is already waiting was added again.
    fn touch(&mut self, item: &T);
}

/// First-in first-out order: items are handed out in order of first add.
pub struct FifoOrder<T>(VecDeque<T>);

impl<T> Default for FifoOrder<T> {
    fn default() -> Self {
        FifoOrder(VecDeque::new())
    }
}

impl<T> QueueOrder<T> for FifoOrder<T> {
    fn push(&mut self, item: T) {
        self.0.push_back(item);
    }
    fn pop(&mut self) -> Option<T> {
        self.0.pop_front()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn touch(&mut self, _item: &T) {}
}

/// How to build a [`Queue`] (client-go's `QueueConfig`).
pub struct QueueConfig<T> {
    /// Name shown in metrics.
    pub name: String,
    /// Clock for latency metrics and (in the delaying queue) timers.
    pub clock: SharedClock,
    /// Record latency/work-duration timings (two clock reads per item). Counters
    /// and depth are always kept.
    pub timings: bool,
    /// Waiting order; FIFO when `None`.
    pub order: Option<Box<dyn QueueOrder<T>>>,
}

impl<T> QueueConfig<T> {
    /// A named queue on `clock` with timings on and FIFO order.
    pub fn new(name: impl Into<String>, clock: SharedClock) -> Self {
        QueueConfig {
            name: name.into(),
            clock,
            timings: true,
            order: None,
        }
    }

    /// Turn latency/work-duration timings on or off.
    #[must_use]
    pub fn timings(mut self, on: bool) -> Self {
        self.timings = on;
        self
    }

    /// Use a custom waiting order.
    #[must_use]
    pub fn order(mut self, order: Box<dyn QueueOrder<T>>) -> Self {
        self.order = Some(order);
        self
    }
}

/// Per-item bookkeeping: present while the item is dirty or processing.
struct ItemState {
    /// Needs (another) processing: waiting in the order, or re-added while
    /// being processed.
    dirty: bool,
    processing: bool,
    /// First add since the last get (queue-latency metric).
    added_at: Stamp,
    /// When the current processing started (work-duration metric).
    started_at: Stamp,
}

/// An optional instant packed into 8 bytes (nanoseconds since the clock's
/// origin; `u64::MAX` = none), keeping per-item state small for large queues.
#[derive(Clone, Copy)]
struct Stamp(u64);

impl Stamp {
    const NONE: Stamp = Stamp(u64::MAX);

    fn from(t: Option<Instant>) -> Stamp {
        t.map_or(Stamp::NONE, |t| {
            Stamp(u64::try_from(t.since_origin().as_nanos()).unwrap_or(u64::MAX - 1))
        })
    }

    fn get(self) -> Option<Instant> {
        (self.0 != u64::MAX).then(|| Instant::from_origin(Duration::from_nanos(self.0)))
    }

    fn take(&mut self) -> Option<Instant> {
        std::mem::replace(self, Stamp::NONE).get()
    }

    fn is_none(self) -> bool {
        self.0 == u64::MAX
    }
}

struct State<T> {
    order: Box<dyn QueueOrder<T>>,
    items: HashMap<T, ItemState>,
    processing: usize,
    shutting_down: bool,
    drain: bool,
    /// Workers that keep taking items until shutdown (see [`Queue::taker`]).
    takers: usize,
    waiters: VecDeque<(u64, Waker)>,
    next_waiter: u64,
    metrics: MetricsState,
}

pub(crate) struct Shared<T> {
    state: RefCell<State<T>>,
    clock: SharedClock,
    timings: bool,
    name: Rc<str>,
    /// Signalled when processing reaches zero during a drain, and on shutdown.
    drained: Notify,
    /// Signalled once by `shut_down` (the delaying queue's timer listens).
    shutdown: Notify,
}

/// A work queue: deduplicating, with the guarantee that an item is never held
/// by two workers at once. Cloning gives another handle to the same queue.
///
/// Invariant (WQ-02/WQ-03): an item handed out by [`get`](Queue::get) is
/// *processing* until [`done`](Queue::done); adding it meanwhile only marks it
/// dirty, and `done` then queues it again exactly once.
pub struct Queue<T> {
    shared: Rc<Shared<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            shared: self.shared.clone(),
        }
    }
}

/// A handle that does not keep the queue alive (for background tasks).
pub(crate) struct WeakQueue<T>(Weak<Shared<T>>);

impl<T> WeakQueue<T> {
    pub(crate) fn upgrade(&self) -> Option<Queue<T>> {
        self.0.upgrade().map(|shared| Queue { shared })
    }
}

impl<T: Hash + Eq + Clone + 'static> Default for Queue<T> {
    fn default() -> Self {
        Self::new(real_clock())
    }
}

impl<T: Hash + Eq + Clone + 'static> Queue<T> {
    /// An unnamed FIFO queue on `clock`.
    pub fn new(clock: SharedClock) -> Self {
        Self::with_config(QueueConfig::new("", clock))
    }

    /// A queue built from `config`.
    pub fn with_config(config: QueueConfig<T>) -> Self {
        let order = config
            .order
            .unwrap_or_else(|| Box::new(FifoOrder::default()));
        Queue {
            shared: Rc::new(Shared {
                state: RefCell::new(State {
                    order,
                    items: HashMap::new(),
                    processing: 0,
                    shutting_down: false,
                    drain: false,
                    takers: 0,
                    waiters: VecDeque::new(),
                    next_waiter: 0,
                    metrics: MetricsState::default(),
                }),
                clock: config.clock,
                timings: config.timings,
                name: Rc::from(config.name),
                drained: Notify::new(),
                shutdown: Notify::new(),
            }),
        }
    }

    fn stamp(&self) -> Option<Instant> {
        self.shared.timings.then(|| self.shared.clock.now())
    }

    /// Mark `item` as needing processing (WQ-01, WQ-03). Ignored after shutdown.
    pub fn add(&self, item: T) {
        let now = self.stamp();
        let waker = {
            let mut guard = self.shared.state.borrow_mut();
            let st = &mut *guard;
            if st.shutting_down {
                return;
            }
            match st.items.entry(item) {
                MapEntry::Occupied(mut o) => {
                    let e = o.get_mut();
                    if e.dirty {
                        // Already waiting (or re-marked during processing):
                        // only a waiting item is touched.
                        if !e.processing {
                            st.order.touch(o.key());
                        }
                        return;
                    }
                    // Being processed: remember to process again after done.
                    e.dirty = true;
                    if e.added_at.is_none() {
                        e.added_at = Stamp::from(now);
                    }
                    st.metrics.adds = st.metrics.adds.saturating_add(1);
                    return;
                }
                MapEntry::Vacant(v) => {
                    let key = v.key().clone();
                    v.insert(ItemState {
                        dirty: true,
                        processing: false,
                        added_at: Stamp::from(now),
                        started_at: Stamp::NONE,
                    });
                    st.order.push(key);
                    st.metrics.adds = st.metrics.adds.saturating_add(1);
                }
            }
            st.waiters.pop_front()
        };
        if let Some((_, w)) = waker {
            w.wake();
        }
    }

    /// Wait for the next item (WQ-02). Resolves with `None` once the queue is
    /// shutting down and no item is waiting; items still waiting are handed out
    /// after shutdown (WQ-04).
    pub fn get(&self) -> Get<T> {
        Get {
            queue: self.clone(),
            waiter: None,
        }
    }

    /// Take the next waiting item without waiting; `None` when nothing is
    /// waiting (whether or not the queue is shut down).
    pub fn try_get(&self) -> Option<T> {
        let now = self.stamp();
        let mut st = self.shared.state.borrow_mut();
        take_next(&mut st, now)
    }

    /// Finish processing `item` (WQ-03): if it was added meanwhile it waits
    /// again (once). Calling `done` for an item that is not processing does
    /// nothing.
    pub fn done(&self, item: &T) {
        let now = self.stamp();
        let wake: Option<Waker>;
        let drained;
        {
            let mut guard = self.shared.state.borrow_mut();
            let st = &mut *guard;
            let requeue = match st.items.get_mut(item) {
                Some(e) if e.processing => {
                    e.processing = false;
                    if let (Some(now), Some(start)) = (now, e.started_at.take()) {
                        st.metrics.work_duration.observe(now - start);
                    }
                    e.dirty
                }
                _ => return,
            };
            st.processing = st.processing.saturating_sub(1);
            if requeue {
                st.order.push(item.clone());
                wake = st.waiters.pop_front().map(|(_, w)| w);
                // As client-go's one `Signal`: a waiting `get` takes the
                // item; with none, the drain looks again (it ends unless
                // workers will take the item).
                drained = wake.is_none() && st.processing == 0 && st.drain;
            } else {
                st.items.remove(item);
                wake = None;
                drained = st.processing == 0 && st.drain;
            }
        }
        if let Some(w) = wake {
            w.wake();
        }
        if drained {
            self.shared.drained.notify_waiters();
        }
    }

    /// Count a worker that keeps taking items until shutdown, for as long as
    /// the guard lives: a drain then also waits for what is queued.
    pub(crate) fn taker(&self) -> Taker<T> {
        let mut st = self.shared.state.borrow_mut();
        st.takers = st.takers.saturating_add(1);
        Taker(self.clone())
    }

    /// Number of waiting items (not counting items being processed).
    pub fn len(&self) -> usize {
        self.shared.state.borrow().order.len()
    }

    /// Whether no item is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of items taken by a worker and not yet done.
    pub fn processing(&self) -> usize {
        self.shared.state.borrow().processing
    }

    /// Stop accepting adds and release every waiting `get` once the queue is
    /// empty (WQ-04). Does not wait for in-flight items; also ends a pending
    /// [`shut_down_with_drain`](Queue::shut_down_with_drain) wait (WQ-05).
    pub fn shut_down(&self) {
        let wakers = {
            let mut st = self.shared.state.borrow_mut();
            st.drain = false;
            st.shutting_down = true;
            std::mem::take(&mut st.waiters)
        };
        for (_, w) in wakers {
            w.wake();
        }
        self.shared.drained.notify_waiters();
        self.shared.shutdown.notify_waiters();
    }

    /// Shut down, then wait until every item handed out by `get` is `done`
    /// (including dirty items re-queued and handed out again). While workers
    /// of [`run_workers`](super::run_workers) serve the queue, also until
    /// they have taken every queued item and exited, so once the drain
    /// returns none of them runs again and none is counted as running. Items waiting for a `get` that
    /// nobody calls are not waited for (WQ-05). The queue shuts
    /// down at the call, as client-go's does before it waits: an `add` right
    /// after it is ignored even before the returned future is first polled.
    pub fn shut_down_with_drain(&self) -> impl std::future::Future<Output = ()> + 'static {
        let wakers = {
            let mut st = self.shared.state.borrow_mut();
            st.drain = true;
            st.shutting_down = true;
            std::mem::take(&mut st.waiters)
        };
        for (_, w) in wakers {
            w.wake();
        }
        self.shared.shutdown.notify_waiters();
        let shared = self.shared.clone();
        async move {
            loop {
                let notified = shared.drained.notified();
                {
                    let st = shared.state.borrow();
                    // With workers running, what is queued is theirs too:
                    // they take it before they exit, and the drain ends
                    // when the last of them has (a worker that finished its
                    // last item has yet to see the shutdown).
                    if !st.drain || (st.processing == 0 && st.takers == 0) {
                        return;
                    }
                }
                notified.await;
            }
        }
    }

    /// Whether shutdown has begun (WQ-06).
    pub fn shutting_down(&self) -> bool {
        self.shared.state.borrow().shutting_down
    }

    /// The queue's clock.
    pub fn clock(&self) -> &SharedClock {
        &self.shared.clock
    }

    /// The queue's name from its config.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// A snapshot of the queue's metrics.
    pub fn metrics(&self) -> QueueMetrics {
        let now = self.shared.clock.now();
        let st = self.shared.state.borrow();
        let mut unfinished = Duration::ZERO;
        let mut longest = Duration::ZERO;
        if self.shared.timings && st.processing > 0 {
            for e in st.items.values() {
                if let (true, Some(start)) = (e.processing, e.started_at.get()) {
                    let running = now - start;
                    unfinished = unfinished.saturating_add(running);
                    longest = longest.max(running);
                }
            }
        }
        QueueMetrics {
            name: self.shared.name.clone(),
            depth: st.order.len(),
            processing: st.processing,
            delayed: 0,
            adds: st.metrics.adds,
            retries: st.metrics.retries,
            queue_latency: st.metrics.queue_latency.clone(),
            work_duration: st.metrics.work_duration.clone(),
            unfinished_work: unfinished,
            longest_running_processor: longest,
        }
    }

    /// Call `f` with a metrics snapshot every `period` on the queue's clock,
    /// and a last time when the queue shuts down. Abort the returned handle to
    /// stop earlier.
    pub fn watch_metrics(
        &self,
        period: Duration,
        f: impl FnMut(&QueueMetrics) + 'static,
    ) -> TaskHandle {
        self.watch_metrics_with(period, f, |_| {})
    }

    pub(crate) fn watch_metrics_with(
        &self,
        period: Duration,
        mut f: impl FnMut(&QueueMetrics) + 'static,
        extra: impl Fn(&mut QueueMetrics) + 'static,
    ) -> TaskHandle {
        let weak = self.downgrade();
        let clock = self.shared.clock.clone();
        let shutdown = self.shared.shutdown.clone();
        // A zero period would spin; clamp to 1 ms.
        let period = period.max(Duration::from_millis(1));
        spawn_local(async move {
            loop {
                let stop = shutdown.notified();
                let snapshot = match weak.upgrade() {
                    Some(q) => {
                        if q.shutting_down() {
                            let mut m = q.metrics();
                            extra(&mut m);
                            f(&m);
                            return;
                        }
                        let mut m = q.metrics();
                        extra(&mut m);
                        m
                    }
                    None => return,
                };
                f(&snapshot);
                let sleep = clock.sleep(period);
                futures::future::select(sleep, stop).await;
            }
        })
    }

    pub(crate) fn downgrade(&self) -> WeakQueue<T> {
        WeakQueue(Rc::downgrade(&self.shared))
    }

    /// Resolves when [`shut_down`](Queue::shut_down) or
    /// [`shut_down_with_drain`](Queue::shut_down_with_drain) is called after
    /// this future was created.
    pub(crate) fn shutdown_notified(&self) -> crate::rt::Notified {
        self.shared.shutdown.notified()
    }

    pub(crate) fn count_retry(&self) {
        let mut st = self.shared.state.borrow_mut();
        st.metrics.retries = st.metrics.retries.saturating_add(1);
    }
}

/// Hand out the next waiting item, marking it processing.
fn take_next<T: Hash + Eq + Clone>(st: &mut State<T>, now: Option<Instant>) -> Option<T> {
    let item = st.order.pop()?;
    let st = &mut *st;
    match st.items.get_mut(&item) {
        Some(e) => {
            e.dirty = false;
            e.processing = true;
            e.started_at = Stamp::from(now);
            if let (Some(now), Some(added)) = (now, e.added_at.take()) {
                st.metrics.queue_latency.observe(now - added);
            }
        }
        None => {
            // A custom order handed back an item it was never given; track it
            // so `done` stays consistent.
            st.items.insert(
                item.clone(),
                ItemState {
                    dirty: false,
                    processing: true,
                    added_at: Stamp::NONE,
                    started_at: Stamp::from(now),
                },
            );
        }
    }
    st.processing = st.processing.saturating_add(1);
    Some(item)
}

/// Future returned by [`Queue::get`]: the next item, or `None` once shut down
/// and empty.
pub struct Get<T> {
    queue: Queue<T>,
    /// Our slot in the waiter list while parked.
    waiter: Option<u64>,
}

impl<T: Hash + Eq + Clone + 'static> Future for Get<T> {
    type Output = Option<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let now = self.queue.stamp();
        let shared = self.queue.shared.clone();
        let mut st = shared.state.borrow_mut();
        if let Some(item) = take_next(&mut st, now) {
            if let Some(id) = self.waiter.take() {
                st.waiters.retain(|(w, _)| *w != id);
            }
            return Poll::Ready(Some(item));
        }
        if st.shutting_down {
            if let Some(id) = self.waiter.take() {
                st.waiters.retain(|(w, _)| *w != id);
            }
            return Poll::Ready(None);
        }
        match self.waiter {
            Some(id) => match st.waiters.iter_mut().find(|(w, _)| *w == id) {
                Some(slot) => slot.1.clone_from(cx.waker()),
                None => st.waiters.push_back((id, cx.waker().clone())),
            },
            None => {
                let id = st.next_waiter;
                st.next_waiter = st.next_waiter.wrapping_add(1);
                st.waiters.push_back((id, cx.waker().clone()));
                self.waiter = Some(id);
            }
        }
        Poll::Pending
    }
}

/// A worker counted by [`Queue::taker`]; dropping it lets a drain end.
pub(crate) struct Taker<T: Hash + Eq + Clone + 'static>(Queue<T>);

impl<T: Hash + Eq + Clone + 'static> Drop for Taker<T> {
    fn drop(&mut self) {
        if let Ok(mut st) = self.0.shared.state.try_borrow_mut() {
            st.takers = st.takers.saturating_sub(1);
        }
        self.0.shared.drained.notify_waiters();
    }
}

impl<T> Drop for Get<T> {
    fn drop(&mut self) {
        let Some(id) = self.waiter.take() else { return };
        let Ok(mut st) = self.queue.shared.state.try_borrow_mut() else {
            return;
        };
        let before = st.waiters.len();
        st.waiters.retain(|(w, _)| *w != id);
        // Not in the list any more means we were woken for an item we will now
        // never take: pass the wake-up on.
        let pass_on = st.waiters.len() == before && !st.order.is_empty();
        let next = if pass_on {
            st.waiters.pop_front()
        } else {
            None
        };
        drop(st);
        if let Some((_, w)) = next {
            w.wake();
        }
    }
}
