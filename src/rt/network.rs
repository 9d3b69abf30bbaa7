//! The host's word on its network: a browser's `online` and `offline`
//! events, and in workers (where Chromium fires none) the changes of
//! `navigator.onLine`, looked at once a second while something
//! [listens](NetworkEvents::listen) (a running reflector). Informers
//! use them to retry at once when the network comes back instead of waiting
//! out a backoff an outage grew, and to re-open a watch that was open while
//! the network was gone (it may have died without a word: a laptop that
//! slept, a network that changed). Hosts without such events (Node, Deno,
//! Bun, workerd) never fire them, and nothing changes there.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// A source of network events: [`went_offline`](NetworkEvents::went_offline)
/// and [`came_online`](NetworkEvents::came_online), and futures that wait for
/// the next `online`.
///
/// [`host_network`] is the module's one, fed by the host's events; a
/// [`new`](NetworkEvents::new) one is fed by whoever holds it (a test).
/// Clones share one source. A waiter is registered only while its future is
/// pending and leaves when dropped, so a stopped informer is not kept by it.
#[derive(Clone, Default)]
pub struct NetworkEvents {
    inner: Rc<RefCell<Inner>>,
    demand: Rc<Demand>,
}

/// What the host is told when the first listener comes (`true`) and the
/// last goes (`false`).
type DemandHook = Rc<dyn Fn(bool)>;

/// Who needs the host to watch its network, and how to tell it: a worker's
/// host looks at `navigator.onLine` on a timer, which should run only while
/// an informer runs, not for the rest of the module's life.
#[derive(Default)]
struct Demand {
    /// [`Listening`] guards alive.
    listeners: Cell<usize>,
    /// Told `true` when the first listener comes, `false` when the last goes.
    hook: RefCell<Option<DemandHook>>,
}

impl Demand {
    fn tell(&self, on: bool) {
        // Cloned out, so a hook that listens or drops a guard cannot meet a borrow.
        let hook = self.hook.borrow().clone();
        if let Some(hook) = hook {
            hook(on);
        }
    }
}

/// Held by whoever needs the network's events as they happen (a running
/// reflector): while one is alive, the host keeps watching its network.
/// Dropping the last one lets the host stop.
#[must_use = "the host watches its network only while this is held"]
pub struct Listening {
    demand: Rc<Demand>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let n = self.demand.listeners.get().saturating_sub(1);
        self.demand.listeners.set(n);
        if n == 0 {
            self.demand.tell(false);
        }
    }
}

#[derive(Default)]
struct Inner {
    /// Events so far; each event's number is the count after it.
    seq: u64,
    /// The number of the last `offline` (0: none yet).
    last_offline: u64,
    /// The number of the last `online` (0: none yet).
    last_online: u64,
    /// `online` events and [`retry_now`](NetworkEvents::retry_now) calls so
    /// far: what [`Online`] futures wait for.
    wakes: u64,
    next_id: u64,
    /// Pending [`Online`] futures, by id.
    waiters: Vec<(u64, Waker)>,
}

/// A point in a [`NetworkEvents`]' history, to ask later what happened since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkMark(u64);

impl std::fmt::Debug for NetworkEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = self.inner.borrow();
        f.debug_struct("NetworkEvents")
            .field("events", &i.seq)
            .field("waiters", &i.waiters.len())
            .field("listeners", &self.demand.listeners.get())
            .finish()
    }
}

impl NetworkEvents {
    /// A source that only its holders feed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keep the host watching its network while the guard is held: the
    /// first one starts a worker's look at `navigator.onLine`, dropping the
    /// last stops it (events the host fires by itself come regardless).
    pub fn listen(&self) -> Listening {
        let n = self.demand.listeners.get().saturating_add(1);
        self.demand.listeners.set(n);
        if n == 1 {
            self.demand.tell(true);
        }
        Listening {
            demand: self.demand.clone(),
        }
    }

    /// Call `hook(true)` when the first [`Listening`] guard is taken and
    /// `hook(false)` when the last is dropped (at once with `true` if one is
    /// held now): how the host learns when to watch its network.
    pub fn on_demand(&self, hook: impl Fn(bool) + 'static) {
        *self.demand.hook.borrow_mut() = Some(Rc::new(hook));
        if self.demand.listeners.get() > 0 {
            self.demand.tell(true);
        }
    }

    /// [`Listening`] guards alive.
    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub(crate) fn listeners(&self) -> usize {
        self.demand.listeners.get()
    }

    /// The host reported the network gone (`offline`).
    pub fn went_offline(&self) {
        let mut i = self.inner.borrow_mut();
        i.seq = i.seq.saturating_add(1);
        i.last_offline = i.seq;
    }

    /// The host reported the network back (`online`): every pending
    /// [`online`](NetworkEvents::online) future completes.
    pub fn came_online(&self) {
        {
            let mut i = self.inner.borrow_mut();
            i.seq = i.seq.saturating_add(1);
            i.last_online = i.seq;
        }
        self.wake_all();
    }

    /// Every pending [`online`](NetworkEvents::online) future completes, as
    /// at an `online`, but no connection is presumed dead: someone knows the
    /// server can be reached again (a "Retry now" button, a shared worker
    /// whose own informer recovered).
    pub fn retry_now(&self) {
        self.wake_all();
    }

    fn wake_all(&self) {
        let wakers = {
            let mut i = self.inner.borrow_mut();
            i.wakes = i.wakes.wrapping_add(1);
            std::mem::take(&mut i.waiters)
        };
        for (_, w) in wakers {
            w.wake();
        }
    }

    /// Now, for [`back_online_since`](NetworkEvents::back_online_since).
    pub fn mark(&self) -> NetworkMark {
        NetworkMark(self.inner.borrow().seq)
    }

    /// Whether the network went away after `mark` and has come back since:
    /// a connection open at `mark` may have died without a word.
    pub fn back_online_since(&self, mark: NetworkMark) -> bool {
        let i = self.inner.borrow();
        i.last_offline > mark.0 && i.last_online > i.last_offline
    }

    /// Futures waiting for the next `online` (registered, not dropped).
    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub(crate) fn waiters(&self) -> usize {
        self.inner.borrow().waiters.len()
    }

    /// A future that completes at the next `online` (or
    /// [`retry_now`](NetworkEvents::retry_now)) after this call.
    pub fn online(&self) -> Online {
        let since = self.inner.borrow().wakes;
        Online {
            inner: self.inner.clone(),
            since,
            id: None,
        }
    }
}

/// The future of [`NetworkEvents::online`]; dropping it deregisters it.
pub struct Online {
    inner: Rc<RefCell<Inner>>,
    since: u64,
    id: Option<u64>,
}

impl Online {
    /// Whether the `online` it waits for has happened.
    pub fn fired(&self) -> bool {
        self.inner.borrow().wakes != self.since
    }
}

/// Take the waiter `id` (if any) out of the registered ones.
fn deregister(id: &mut Option<u64>, i: &mut Inner) {
    if let Some(id) = id.take() {
        if let Some(at) = i.waiters.iter().position(|(w, _)| *w == id) {
            i.waiters.swap_remove(at);
        }
    }
}

impl Future for Online {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Online { inner, since, id } = &mut *self;
        let mut i = inner.borrow_mut();
        deregister(id, &mut i);
        if i.wakes != *since {
            return Poll::Ready(());
        }
        i.next_id = i.next_id.wrapping_add(1);
        let new = i.next_id;
        i.waiters.push((new, cx.waker().clone()));
        *id = Some(new);
        Poll::Pending
    }
}

impl Drop for Online {
    fn drop(&mut self) {
        if let Ok(mut i) = self.inner.try_borrow_mut() {
            deregister(&mut self.id, &mut i);
        }
    }
}

/// The module's network events, fed by the host's `online` and `offline`
/// events where it has them (one listener each on the global scope, added
/// at the first call, and in a worker one timer that reads
/// `navigator.onLine` while something [listens](NetworkEvents::listen));
/// elsewhere a source that never fires.
pub fn host_network() -> NetworkEvents {
    thread_local! {
        static HOST: RefCell<Option<NetworkEvents>> = const { RefCell::new(None) };
    }
    HOST.try_with(|h| {
        h.borrow_mut()
            .get_or_insert_with(|| platform::listen(NetworkEvents::new()))
            .clone()
    })
    .unwrap_or_default()
}

#[cfg(target_arch = "wasm32")]
mod platform {
    use super::NetworkEvents;
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen(module = "/src/rt/host.js")]
    extern "C" {
        #[wasm_bindgen(js_name = onNetworkChange)]
        fn on_network_change(f: &Closure<dyn Fn(bool)>) -> JsValue;
    }

    pub fn listen(events: NetworkEvents) -> NetworkEvents {
        let feed = events.clone();
        let f = Closure::<dyn Fn(bool)>::new(move |online: bool| {
            if online {
                feed.came_online();
            } else {
                feed.went_offline();
            }
        });
        // Listened to for the module's life; where the host has no such
        // events the closure is simply freed. The host answers with what
        // starts and stops its look at the network.
        let watch = on_network_change(&f);
        if let Ok(watch) = watch.dyn_into::<js_sys::Function>() {
            f.forget();
            events.on_demand(move |on| {
                let _ = watch.call1(&JsValue::NULL, &JsValue::from_bool(on));
            });
        }
        events
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod platform {
    use super::NetworkEvents;

    pub fn listen(events: NetworkEvents) -> NetworkEvents {
        events
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::rt::{run_until_stalled, spawn_local};
    use std::cell::Cell;

    #[test]
    fn online_wakes_the_waiters_from_before_it_and_back_online_needs_an_offline_first() {
        let net = NetworkEvents::new();
        let woke = Rc::new(Cell::new(0));
        for _ in 0..2 {
            let (w, online) = (woke.clone(), net.online());
            spawn_local(async move {
                online.await;
                w.set(w.get() + 1);
            });
        }
        run_until_stalled();
        assert_eq!(woke.get(), 0);
        let mark = net.mark();
        net.came_online();
        assert!(
            !net.back_online_since(mark),
            "online without offline: nothing died"
        );
        run_until_stalled();
        assert_eq!(woke.get(), 2);
        assert_eq!(net.waiters(), 0);

        let late = net.online();
        assert!(!late.fired(), "an online before the future does not count");
        net.went_offline();
        assert!(!net.back_online_since(mark), "still offline");
        net.came_online();
        assert!(late.fired());
        assert!(net.back_online_since(mark));
        assert!(
            !net.back_online_since(net.mark()),
            "nothing since the last online"
        );
    }

    #[test]
    fn the_host_watches_from_the_first_listener_to_the_last_and_again_later() {
        let net = NetworkEvents::new();
        let told: Rc<RefCell<Vec<bool>>> = Rc::default();
        let t = told.clone();
        net.on_demand(move |on| t.borrow_mut().push(on));
        assert!(told.borrow().is_empty(), "nobody listens yet");
        let a = net.listen();
        let b = net.clone().listen();
        assert_eq!(*told.borrow(), [true], "started once, at the first");
        drop(a);
        assert_eq!(*told.borrow(), [true], "one still listens");
        drop(b);
        assert_eq!(*told.borrow(), [true, false], "stopped at the last");
        let c = net.listen();
        assert_eq!(*told.borrow(), [true, false, true], "started again");
        // A hook set while someone listens starts at once.
        let late: Rc<RefCell<Vec<bool>>> = Rc::default();
        let l = late.clone();
        net.on_demand(move |on| l.borrow_mut().push(on));
        assert_eq!(*late.borrow(), [true]);
        drop(c);
        assert_eq!(*late.borrow(), [true, false]);
        assert_eq!(net.listeners(), 0);
    }

    #[test]
    fn a_dropped_waiter_leaves_nothing_behind() {
        let net = NetworkEvents::new();
        let task = spawn_local(net.online());
        run_until_stalled();
        assert_eq!(net.waiters(), 1);
        task.abort();
        run_until_stalled();
        assert_eq!(net.waiters(), 0, "an aborted task's waiter is gone");
        // Natively there are no host events: the host's source never fires.
        let host = host_network();
        let mark = host.mark();
        assert!(!host.online().fired() && !host.back_online_since(mark));
    }
}
