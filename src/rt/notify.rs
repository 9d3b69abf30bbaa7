use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// A single-threaded change signal: [`notified`](Notify::notified) futures
/// created before a [`notify_waiters`](Notify::notify_waiters) call all complete.
///
/// A waiter captures the generation when it is created, so a notification that
/// happens between creating the future and polling it is never missed — the
/// usual "check state, then wait" loop is race-free.
#[derive(Clone, Default)]
pub struct Notify {
    inner: Rc<RefCell<Inner>>,
}

#[derive(Default)]
struct Inner {
    generation: u64,
    waiters: Vec<Waker>,
}

impl Notify {
    /// A new signal with no waiters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wake every waiter created before this call.
    pub fn notify_waiters(&self) {
        let wakers = {
            let mut inner = self.inner.borrow_mut();
            inner.generation = inner.generation.wrapping_add(1);
            std::mem::take(&mut inner.waiters)
        };
        for w in wakers {
            w.wake();
        }
    }

    /// A future that completes at the next [`notify_waiters`](Notify::notify_waiters).
    pub fn notified(&self) -> Notified {
        Notified {
            inner: self.inner.clone(),
            generation: self.inner.borrow().generation,
        }
    }
}

/// Future returned by [`Notify::notified`].
pub struct Notified {
    inner: Rc<RefCell<Inner>>,
    generation: u64,
}

impl Future for Notified {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut inner = self.inner.borrow_mut();
        if inner.generation != self.generation {
            return Poll::Ready(());
        }
        if !inner.waiters.iter().any(|w| w.will_wake(cx.waker())) {
            inner.waiters.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::rt::{run_until_stalled, spawn_local};
    use std::cell::Cell;

    #[test]
    fn waiters_created_before_notify_complete() {
        let n = Notify::new();
        let done = Rc::new(Cell::new(0));
        let early = n.notified();
        n.notify_waiters();
        let late = n.notified();
        let (d1, d2) = (done.clone(), done.clone());
        spawn_local(async move {
            early.await;
            d1.set(d1.get() + 1);
        });
        spawn_local(async move {
            late.await;
            d2.set(d2.get() + 10);
        });
        run_until_stalled();
        assert_eq!(
            done.get(),
            1,
            "only the waiter from before the notify is released"
        );
        n.notify_waiters();
        run_until_stalled();
        assert_eq!(done.get(), 11);
    }
}
