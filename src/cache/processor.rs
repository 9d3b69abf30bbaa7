//! The shared processor: fans notifications out to listeners, each with its
//! own buffer and its own pump task (client-go's `sharedProcessor` and
//! `processorListener`).
//!
//! * **Isolation** (SI-06). `distribute` only appends to buffers and wakes
//!   pumps. A handler may return a future; its pump awaits it before the
//!   next notification, so a slow async handler delays only itself. A
//!   CPU-bound synchronous handler still occupies the one thread (no design
//!   can isolate that), but a pump yields to the event loop after each time
//!   slice so a long backlog does not freeze a page.
//! * **Order.** One listener sees every change in the order the cache
//!   applied it, across adds, updates and deletes. Work queued with
//!   [`Registration::enqueue`] runs in that same order (the JS layer uses it
//!   to replay the cache to a handler joining a shared listener).
//! * **Bounded backlog.** A listener holding `max_pending` notifications or
//!   more is *over*; it stays over until its pump has brought it down to
//!   half. While any listener is over, [`Processor::has_room`] is false and
//!   the controller stops popping the queue, so the queue fills and the
//!   reflector stops reading the watch: the stream's own flow control holds
//!   the server back. Nothing is dropped. The bound is soft by one key's
//!   deltas and by a late handler's replay of the cache.
//! * **Failures.** A Rust handler that panics cannot be isolated in wasm (a
//!   panic aborts the module), so the binding layer wraps JS callbacks and
//!   catches their exceptions; there is no 1 s pause after a failure (SI-16
//!   deviation: nothing here can observe one).
//! * **Sync tracking** (SI-04). When the informer syncs, each listener gets a
//!   marker after its share of the initial list; a registration has synced
//!   when its pump has delivered everything before the marker (futures
//!   included). A late registration gets its synthetic adds and, if the
//!   informer has synced, the marker, in one synchronous step (SI-03).
//! * **Resync** (SI-07/08/09). Each listener has an effective period derived
//!   from its request and the check period; `should_resync` marks the due
//!   listeners "syncing"; an update whose old and new RV are equal goes only
//!   to syncing listeners. Listeners start syncing.
//! * **Removal** (SI-11/12). `remove` is idempotent and does not wait: the
//!   running callback completes, buffered notifications are dropped.
//!   [`Registration::shut_down`] also waits for the pump to exit.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::{Rc, Weak};
use std::time::Duration;

use futures::future::LocalBoxFuture;

use super::keys::DeltaObject;
use crate::rest::KubeObject;
use crate::rt::{spawn_local, yield_now, Instant, Notify, SharedClock, TaskHandle};

/// The default bound of a handler's backlog (notifications waiting for it).
pub const DEFAULT_MAX_PENDING: usize = 1024;

/// One change delivered to a handler.
#[derive(Clone, Debug)]
pub enum Notification {
    /// An object was added (`true` when part of the initial list or a late
    /// handler's replay of the cache).
    Add(KubeObject, bool),
    /// An object changed: old (as cached), new.
    Update(KubeObject, KubeObject),
    /// An object was deleted: its final state or a tombstone.
    Delete(DeltaObject),
}

/// A handler. It may return a future, which its listener awaits before the
/// next notification (only this listener waits).
pub type Handler = Rc<dyn Fn(Notification) -> Option<LocalBoxFuture<'static, ()>>>;

/// The smallest per-handler resync period (client-go's `minimumResyncPeriod`).
pub const MIN_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// Time a pump may deliver before yielding to the event loop.
const PUMP_SLICE: Duration = Duration::from_millis(8);

enum Item {
    Note(Notification),
    SyncMarker,
    Call(Box<dyn FnOnce()>),
}

/// How many listeners are over their backlog bound, and a signal for the
/// moment none is.
#[derive(Default)]
struct Gate {
    over: Cell<usize>,
    room: Notify,
}

pub(crate) struct Listener {
    id: u64,
    /// Dropped on removal: a handler may capture what holds its
    /// registration (a JS object's closure does, through wasm's table of
    /// JS references, which the garbage collector cannot see through).
    handler: RefCell<Option<Handler>>,
    buffer: RefCell<VecDeque<Item>>,
    wake: Notify,
    gate: Rc<Gate>,
    max_pending: usize,
    over: Cell<bool>,
    synced: Cell<bool>,
    synced_notify: Notify,
    requested_resync: Duration,
    resync_period: Cell<Duration>,
    next_resync: Cell<Instant>,
    syncing: Cell<bool>,
    removed: Cell<bool>,
    exited: Cell<bool>,
    exit: Notify,
    task: RefCell<Option<TaskHandle>>,
}

impl Listener {
    fn push(&self, item: Item) {
        if self.removed.get() {
            return;
        }
        let len = {
            let mut b = self.buffer.borrow_mut();
            b.push_back(item);
            b.len()
        };
        if self.max_pending > 0 && len >= self.max_pending && !self.over.replace(true) {
            self.gate.over.set(self.gate.over.get() + 1);
        }
        self.wake.notify_waiters();
    }

    /// Leave the "over" state once the backlog is down to half the bound
    /// (or the listener is gone).
    fn relieve(&self, len: usize) {
        if self.over.get() && (len <= self.max_pending / 2 || self.removed.get()) {
            self.over.set(false);
            let n = self.gate.over.get().saturating_sub(1);
            self.gate.over.set(n);
            if n == 0 {
                self.gate.room.notify_waiters();
            }
        }
    }

    fn pop(&self) -> Option<Item> {
        let (item, len) = {
            let mut b = self.buffer.borrow_mut();
            let item = b.pop_front();
            (item, b.len())
        };
        self.relieve(len);
        item
    }

    fn set_synced(&self) {
        self.synced.set(true);
        self.synced_notify.notify_waiters();
    }

    async fn pump(self: Rc<Self>, clock: SharedClock) {
        let mut slice_start = clock.now();
        loop {
            if self.removed.get() {
                break;
            }
            let wait = self.wake.notified();
            let delivered = match self.pop() {
                Some(Item::Note(n)) => {
                    let handler = self.handler.borrow().clone();
                    if let Some(fut) = handler.and_then(|h| h(n)) {
                        fut.await;
                        slice_start = clock.now();
                    }
                    true
                }
                Some(Item::Call(f)) => {
                    f();
                    true
                }
                Some(Item::SyncMarker) => {
                    self.set_synced();
                    false
                }
                None => {
                    wait.await;
                    slice_start = clock.now();
                    false
                }
            };
            // After every delivery: one slow handler call (tens of ms) is
            // already a slice, and a page waiting on it is a long task.
            if delivered && clock.now().saturating_duration_since(slice_start) >= PUMP_SLICE {
                yield_now().await;
                slice_start = clock.now();
            }
        }
        self.buffer.borrow_mut().clear();
        self.relieve(0);
        self.exited.set(true);
        self.exit.notify_waiters();
    }

    fn remove(&self) {
        if self.removed.replace(true) {
            return;
        }
        self.buffer.borrow_mut().clear();
        // A call under way holds its own reference until it returns.
        drop(self.handler.borrow_mut().take());
        self.relieve(0);
        self.synced_notify.notify_waiters();
        if self.task.borrow().is_none() {
            // Never started: nothing will run.
            self.exited.set(true);
        }
        self.wake.notify_waiters();
    }

    fn should_resync(&self, now: Instant) -> bool {
        let p = self.resync_period.get();
        !p.is_zero() && now >= self.next_resync.get()
    }
}

/// client-go's `determineResyncPeriod` (SI-07).
pub(crate) fn effective_resync_period(requested: Duration, check: Duration) -> Duration {
    if requested.is_zero() || check.is_zero() {
        Duration::ZERO
    } else {
        requested.max(check)
    }
}

/// The listeners of one informer.
pub(crate) struct Processor {
    clock: SharedClock,
    listeners: RefCell<Vec<Rc<Listener>>>,
    next_id: Cell<u64>,
    running: Cell<bool>,
    check_period: Cell<Duration>,
    gate: Rc<Gate>,
    max_pending: Cell<usize>,
}

impl Processor {
    pub(crate) fn new(clock: SharedClock, check_period: Duration) -> Self {
        Processor {
            clock,
            listeners: RefCell::new(Vec::new()),
            next_id: Cell::new(1),
            running: Cell::new(false),
            check_period: Cell::new(check_period),
            gate: Rc::default(),
            max_pending: Cell::new(DEFAULT_MAX_PENDING),
        }
    }

    /// The backlog bound for listeners added from now on (0 = unbounded).
    pub(crate) fn set_max_pending(&self, n: usize) {
        self.max_pending.set(n);
    }

    /// Whether every listener is under its backlog bound.
    pub(crate) fn has_room(&self) -> bool {
        self.gate.over.get() == 0
    }

    /// Resolves once every listener is under its backlog bound.
    pub(crate) async fn wait_for_room(&self) {
        loop {
            let wait = self.gate.room.notified();
            if self.has_room() {
                return;
            }
            wait.await;
        }
    }

    /// The longest backlog among the listeners.
    pub(crate) fn max_backlog(&self) -> usize {
        self.listeners
            .borrow()
            .iter()
            .map(|l| l.buffer.borrow().len())
            .max()
            .unwrap_or(0)
    }

    /// The backlog bound listeners are created with.
    pub(crate) fn max_pending(&self) -> usize {
        self.max_pending.get()
    }

    pub(crate) fn check_period(&self) -> Duration {
        self.check_period.get()
    }

    /// SI-07 before start: a shorter request lowers the check period and
    /// every listener's effective period is recomputed.
    pub(crate) fn lower_check_period(&self, p: Duration) {
        self.check_period.set(p);
        for l in self.listeners.borrow().iter() {
            l.resync_period
                .set(effective_resync_period(l.requested_resync, p));
        }
    }

    /// Add a listener. `replay` fills its buffer before it joins the
    /// distribution list (the late-handler replay, SI-03).
    pub(crate) fn add(
        &self,
        handler: Handler,
        requested_resync: Duration,
        replay: impl FnOnce(&mut dyn FnMut(Notification)),
        synced: bool,
    ) -> Rc<Listener> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let now = self.clock.now();
        let period = effective_resync_period(requested_resync, self.check_period.get());
        let l = Rc::new(Listener {
            id,
            handler: RefCell::new(Some(handler)),
            buffer: RefCell::new(VecDeque::new()),
            wake: Notify::new(),
            gate: self.gate.clone(),
            max_pending: self.max_pending.get(),
            over: Cell::new(false),
            synced: Cell::new(false),
            synced_notify: Notify::new(),
            requested_resync,
            resync_period: Cell::new(period),
            next_resync: Cell::new(now + period),
            syncing: Cell::new(true),
            removed: Cell::new(false),
            exited: Cell::new(false),
            exit: Notify::new(),
            task: RefCell::new(None),
        });
        replay(&mut |n| l.push(Item::Note(n)));
        if synced {
            l.push(Item::SyncMarker);
        }
        if self.running.get() {
            self.spawn_pump(&l);
        }
        self.listeners.borrow_mut().push(l.clone());
        l
    }

    fn spawn_pump(&self, l: &Rc<Listener>) {
        let task = spawn_local(l.clone().pump(self.clock.clone()));
        *l.task.borrow_mut() = Some(task);
    }

    /// Start the pumps (SI-10: everything distributed before is kept).
    pub(crate) fn run(&self) {
        if self.running.replace(true) {
            return;
        }
        for l in self.listeners.borrow().iter() {
            if !l.removed.get() {
                self.spawn_pump(l);
            }
        }
    }

    pub(crate) fn remove(&self, id: u64) {
        self.listeners.borrow_mut().retain(|l| {
            if l.id == id {
                l.remove();
                false
            } else {
                true
            }
        });
    }

    /// Stop every pump (each finishes its running callback first).
    pub(crate) fn stop(&self) {
        for l in self.listeners.borrow_mut().drain(..) {
            l.remove();
        }
    }

    /// Send `n` to every listener; a sync-type update (old RV == new RV)
    /// only to listeners currently syncing (SI-09).
    pub(crate) fn distribute(&self, n: Notification, sync: bool) {
        let ls = self.listeners.borrow();
        match ls.len() {
            0 => {}
            1 => {
                if !sync || ls[0].syncing.get() {
                    ls[0].push(Item::Note(n));
                }
            }
            _ => {
                for l in ls.iter() {
                    if !sync || l.syncing.get() {
                        l.push(Item::Note(n.clone()));
                    }
                }
            }
        }
    }

    /// The informer synced: every listener's share of the initial list is queued.
    pub(crate) fn mark_synced(&self) {
        for l in self.listeners.borrow().iter() {
            l.push(Item::SyncMarker);
        }
    }

    /// SI-08: mark due listeners syncing (and schedule their next resync),
    /// unmark the rest; true if any is due.
    pub(crate) fn should_resync(&self) -> bool {
        let now = self.clock.now();
        let mut any = false;
        for l in self.listeners.borrow().iter() {
            let due = l.should_resync(now);
            l.syncing.set(due);
            if due {
                any = true;
                l.next_resync.set(now + l.resync_period.get());
            }
        }
        any
    }

    pub(crate) fn len(&self) -> usize {
        self.listeners.borrow().len()
    }
}

/// A handle to one registered handler (client-go's `ResourceEventHandlerRegistration`).
#[derive(Clone)]
pub struct Registration {
    pub(crate) listener: Rc<Listener>,
    pub(crate) processor: Weak<Processor>,
    pub(crate) informer_synced: Rc<dyn Fn() -> bool>,
}

impl Registration {
    /// Whether the informer has synced and this handler has returned from
    /// every add of the initial list (or of its late replay) (SI-04).
    pub fn has_synced(&self) -> bool {
        (self.informer_synced)() && self.listener.synced.get()
    }

    /// Stop notifications to this handler. Idempotent; does not wait for a
    /// running callback (SI-11).
    pub fn remove(&self) {
        match self.processor.upgrade() {
            Some(p) => p.remove(self.listener.id),
            None => self.listener.remove(),
        }
    }

    /// Remove, then wait until the handler's pump has exited (SI-12). Must
    /// not be awaited from inside this handler.
    pub async fn shut_down(&self) {
        self.remove();
        loop {
            let wait = self.listener.exit.notified();
            if self.listener.exited.get() {
                return;
            }
            wait.await;
        }
    }

    /// Whether this registration was removed (or its informer stopped).
    pub fn is_removed(&self) -> bool {
        self.listener.removed.get()
    }

    /// The effective resync period (zero = never) (SI-07).
    pub fn resync_period(&self) -> Duration {
        self.listener.resync_period.get()
    }

    /// Notifications waiting in this handler's buffer.
    pub fn pending(&self) -> usize {
        self.listener.buffer.borrow().len()
    }

    /// Run `f` on this handler's pump after everything queued to it so far
    /// and before anything queued later. Dropped if the registration is
    /// removed first. Counts towards the backlog like a notification.
    pub fn enqueue(&self, f: Box<dyn FnOnce()>) {
        self.listener.push(Item::Call(f));
    }

    /// Resolves once [`has_synced`](Registration::has_synced) is true, or
    /// false if the registration is removed (or its informer stops) first.
    /// Must not be awaited from inside this handler.
    pub async fn wait_for_sync(&self) -> bool {
        loop {
            let wait = self.listener.synced_notify.notified();
            if self.has_synced() {
                return true;
            }
            if self.listener.removed.get() {
                return false;
            }
            wait.await;
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::rest::fixtures::obj;
    use crate::rt::{run_until_stalled, FakeClock};

    fn recorder(log: Rc<RefCell<Vec<String>>>) -> Handler {
        Rc::new(move |n| {
            let s = match n {
                Notification::Add(o, _) => format!("add {}", o.name()),
                Notification::Update(_, o) => format!("update {}", o.name()),
                Notification::Delete(d) => format!("delete {}", d.key().unwrap_or_default()),
            };
            log.borrow_mut().push(s);
            None
        })
    }

    #[test]
    fn si_10_events_before_run_are_held_then_delivered_in_order() {
        let clock = FakeClock::new();
        let p = Processor::new(clock.shared(), Duration::ZERO);
        let log = Rc::new(RefCell::new(Vec::new()));
        p.add(recorder(log.clone()), Duration::ZERO, |_| {}, false);
        p.distribute(Notification::Add(obj("a", 1), true), false);
        p.distribute(Notification::Update(obj("a", 1), obj("a", 2)), false);
        run_until_stalled();
        assert!(log.borrow().is_empty());
        p.run();
        run_until_stalled();
        assert_eq!(*log.borrow(), vec!["add a", "update a"]);
    }

    #[test]
    fn a_pump_yields_after_each_handler_call_that_outlasts_its_slice() {
        let clock = FakeClock::new();
        let p = Processor::new(clock.shared(), Duration::ZERO);
        let log = Rc::new(RefCell::new(Vec::new()));
        let (l, c) = (log.clone(), clock.clone());
        // A handler taking 20 ms a call (its slice is 8 ms).
        let slow: Handler = Rc::new(move |_| {
            c.advance(Duration::from_millis(20));
            l.borrow_mut().push('h');
            None
        });
        p.add(slow, Duration::ZERO, |_| {}, false);
        for i in 0..5 {
            p.distribute(Notification::Add(obj(&format!("p{i}"), 1), true), false);
        }
        // Another task of the page, which runs whenever the pump yields.
        let l = log.clone();
        crate::rt::spawn_local(async move {
            for _ in 0..10 {
                l.borrow_mut().push('o');
                yield_now().await;
            }
        });
        p.run();
        run_until_stalled();
        let seen: String = log.borrow().iter().collect();
        assert_eq!(seen.matches('h').count(), 5, "{seen}");
        assert!(
            !seen.contains("hh"),
            "the pump yields after each slow call: {seen}"
        );
    }

    #[test]
    fn si_07_effective_periods_and_check_period_lowering() {
        assert_eq!(
            effective_resync_period(Duration::ZERO, Duration::from_secs(5)),
            Duration::ZERO
        );
        assert_eq!(
            effective_resync_period(Duration::from_secs(5), Duration::ZERO),
            Duration::ZERO
        );
        assert_eq!(
            effective_resync_period(Duration::from_secs(5), Duration::from_secs(60)),
            Duration::from_secs(60)
        );
        let clock = FakeClock::new();
        let p = Processor::new(clock.shared(), Duration::from_secs(3600));
        let h: Handler = Rc::new(|_| None);
        let a = p.add(h.clone(), Duration::from_secs(120), |_| {}, false);
        assert_eq!(a.resync_period.get(), Duration::from_secs(3600));
        p.lower_check_period(Duration::from_secs(60));
        assert_eq!(a.resync_period.get(), Duration::from_secs(120));
    }

    #[test]
    fn si_08_09_only_due_listeners_get_sync_updates() {
        let clock = FakeClock::new();
        let p = Processor::new(clock.shared(), Duration::from_secs(1));
        let logs: Vec<Rc<RefCell<Vec<String>>>> = (0..3).map(|_| Rc::default()).collect();
        for (log, period) in logs.iter().zip([0u64, 2, 3]) {
            p.add(
                recorder(log.clone()),
                Duration::from_secs(period),
                |_| {},
                false,
            );
        }
        p.run();
        // Before any tick everyone is syncing and gets sync-type updates.
        p.distribute(Notification::Update(obj("x", 1), obj("x", 1)), true);
        run_until_stalled();
        assert!(logs.iter().all(|l| l.borrow().len() == 1));
        for l in &logs {
            l.borrow_mut().clear();
        }
        for second in 1..=3u64 {
            clock.advance(Duration::from_secs(1));
            let any = p.should_resync();
            assert_eq!(any, second >= 2, "tick {second}");
            p.distribute(Notification::Update(obj("x", 1), obj("x", 1)), true);
            // A real change goes to everyone.
            p.distribute(Notification::Update(obj("y", 1), obj("y", 2)), false);
        }
        run_until_stalled();
        assert_eq!(*logs[0].borrow(), vec!["update y"; 3]);
        assert_eq!(
            *logs[1].borrow(),
            vec!["update y", "update x", "update y", "update y"]
        );
        assert_eq!(
            *logs[2].borrow(),
            vec!["update y", "update y", "update x", "update y"]
        );
    }

    #[test]
    fn si_11_12_remove_is_idempotent_and_shut_down_waits_for_the_running_callback() {
        let clock = FakeClock::new();
        let p = Rc::new(Processor::new(clock.shared(), Duration::ZERO));
        let gate = Notify::new();
        let done = Rc::new(Cell::new(0));
        let (g, d) = (gate.clone(), done.clone());
        let h: Handler = Rc::new(move |_| {
            let w = g.notified();
            let d = d.clone();
            Some(Box::pin(async move {
                w.await;
                d.set(d.get() + 1);
            }))
        });
        let l = p.add(h, Duration::ZERO, |_| {}, false);
        let reg = Registration {
            listener: l,
            processor: Rc::downgrade(&p),
            informer_synced: Rc::new(|| true),
        };
        p.run();
        p.distribute(Notification::Add(obj("a", 1), false), false);
        p.distribute(Notification::Add(obj("b", 1), false), false);
        run_until_stalled();
        let finished = Rc::new(Cell::new(false));
        let (r2, f2) = (reg.clone(), finished.clone());
        let _t = spawn_local(async move {
            r2.shut_down().await;
            f2.set(true);
        });
        run_until_stalled();
        assert!(!finished.get(), "the running callback has not completed");
        assert_eq!(p.len(), 0);
        reg.remove();
        reg.remove();
        gate.notify_waiters();
        run_until_stalled();
        assert!(finished.get());
        // The running callback completed; the buffered one was dropped.
        assert_eq!(done.get(), 1);
        assert!(reg.is_removed());
    }
}
