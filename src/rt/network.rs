//! The host's word on its network: a browser's `online` and `offline`
//! events, and in workers (where Chromium fires none) the changes of
//! `navigator.onLine`, looked at once a second. Informers
//! use them to retry at once when the network comes back instead of waiting
//! out a backoff an outage grew, and to re-open a watch that was open while
//! the network was gone (it may have died without a word: a laptop that
//! slept, a network that changed). Hosts without such events (Node, Deno,
//! Bun, workerd) never fire them, and nothing changes there.

use std::cell::RefCell;
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
            .finish()
    }
}

impl NetworkEvents {
    /// A source that only its holders feed.
    pub fn new() -> Self {
        Self::default()
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
/// events where it has them (one listener each on the global scope, and in
/// a worker one timer that reads `navigator.onLine`, added at the first
/// call); elsewhere a source that never fires.
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
        fn on_network_change(f: &Closure<dyn Fn(bool)>) -> bool;
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
        // events the closure is simply freed.
        if on_network_change(&f) {
            f.forget();
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
