use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::{Clock, Instant, SharedClock, Sleep};

/// A clock that moves only when told to, for deterministic tests of backoff,
/// resync, delaying queues and watchdogs.
///
/// Timers fire in deadline order (ties in creation order) when [`advance`] or
/// [`set`] passes their deadline; the woken tasks run the next time the test
/// drives the executor. Dropping a timer future removes it, so
/// [`pending_timers`] tells a test whether anything is still scheduled.
///
/// [`advance`]: FakeClock::advance
/// [`set`]: FakeClock::set
/// [`pending_timers`]: FakeClock::pending_timers
#[derive(Clone)]
pub struct FakeClock {
    inner: Rc<RefCell<Inner>>,
}

struct Inner {
    now: Instant,
    wall_origin_ms: f64,
    next_id: u64,
    timers: BTreeMap<(Instant, u64), Option<Waker>>,
}

impl Default for FakeClock {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeClock {
    /// A fake clock at its origin; its wall clock starts at 2024-01-01T00:00:00Z.
    pub fn new() -> Self {
        FakeClock {
            inner: Rc::new(RefCell::new(Inner {
                now: Instant::ZERO,
                wall_origin_ms: 1_704_067_200_000.0,
                next_id: 0,
                timers: BTreeMap::new(),
            })),
        }
    }

    /// This clock as a [`SharedClock`] for the components under test.
    pub fn shared(&self) -> SharedClock {
        Rc::new(self.clone())
    }

    /// Move time forward by `d`, waking every timer whose deadline is reached.
    pub fn advance(&self, d: Duration) {
        let to = self.now() + d;
        self.set(to);
    }

    /// Move time to `t` (never backwards), waking every timer due by then.
    pub fn set(&self, t: Instant) {
        let due: Vec<Waker> = {
            let mut inner = self.inner.borrow_mut();
            if t > inner.now {
                inner.now = t;
            }
            let now = inner.now;
            let mut wakers = Vec::new();
            for (_, waker) in inner.timers.range_mut(..=(now, u64::MAX)) {
                if let Some(w) = waker.take() {
                    wakers.push(w);
                }
            }
            wakers
        };
        for w in due {
            w.wake();
        }
    }

    /// Number of timers currently scheduled (not yet fired and not dropped).
    pub fn pending_timers(&self) -> usize {
        let inner = self.inner.borrow();
        inner
            .timers
            .range((inner.now, u64::MAX)..)
            .filter(|((t, _), _)| *t > inner.now)
            .count()
    }

    /// The earliest deadline among scheduled timers, if any.
    pub fn next_deadline(&self) -> Option<Instant> {
        let inner = self.inner.borrow();
        inner
            .timers
            .keys()
            .map(|(t, _)| *t)
            .find(|t| *t > inner.now)
    }

    /// The deadlines of every scheduled timer, earliest first.
    pub fn deadlines(&self) -> Vec<Instant> {
        let inner = self.inner.borrow();
        inner
            .timers
            .keys()
            .map(|(t, _)| *t)
            .filter(|t| *t > inner.now)
            .collect()
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        self.inner.borrow().now
    }

    fn wall_millis(&self) -> f64 {
        let inner = self.inner.borrow();
        inner.wall_origin_ms + inner.now.as_millis_f64()
    }

    fn sleep_until(&self, deadline: Instant) -> Sleep {
        let id = {
            let mut inner = self.inner.borrow_mut();
            let id = inner.next_id;
            inner.next_id += 1;
            if deadline > inner.now {
                inner.timers.insert((deadline, id), None);
            }
            id
        };
        Box::pin(FakeSleep {
            clock: Rc::downgrade(&self.inner),
            deadline,
            id,
        })
    }
}

struct FakeSleep {
    clock: Weak<RefCell<Inner>>,
    deadline: Instant,
    id: u64,
}

impl Future for FakeSleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(clock) = self.clock.upgrade() else {
            return Poll::Ready(());
        };
        let mut inner = clock.borrow_mut();
        if inner.now >= self.deadline {
            inner.timers.remove(&(self.deadline, self.id));
            return Poll::Ready(());
        }
        if let Some(slot) = inner.timers.get_mut(&(self.deadline, self.id)) {
            *slot = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl Drop for FakeSleep {
    fn drop(&mut self) {
        if let Some(clock) = self.clock.upgrade() {
            if let Ok(mut inner) = clock.try_borrow_mut() {
                inner.timers.remove(&(self.deadline, self.id));
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::rt::{run_until_stalled, spawn_local};
    use std::cell::Cell;

    #[test]
    fn timers_fire_in_deadline_order_and_only_when_due() {
        let clock = FakeClock::new();
        let order = Rc::new(RefCell::new(Vec::new()));
        for (name, ms) in [("b", 20u64), ("a", 10), ("c", 30)] {
            let sleep = clock.sleep(Duration::from_millis(ms));
            let order = order.clone();
            spawn_local(async move {
                sleep.await;
                order.borrow_mut().push(name);
            });
        }
        run_until_stalled();
        assert_eq!(clock.pending_timers(), 3);
        assert_eq!(
            clock.next_deadline(),
            Some(Instant::from_origin(Duration::from_millis(10)))
        );
        clock.advance(Duration::from_millis(19));
        run_until_stalled();
        assert_eq!(*order.borrow(), vec!["a"]);
        clock.advance(Duration::from_millis(11));
        run_until_stalled();
        assert_eq!(*order.borrow(), vec!["a", "b", "c"]);
        assert_eq!(clock.pending_timers(), 0);
    }

    #[test]
    fn dropping_a_timer_cancels_it() {
        let clock = FakeClock::new();
        let s = clock.sleep(Duration::from_secs(1));
        assert_eq!(clock.pending_timers(), 1);
        drop(s);
        assert_eq!(clock.pending_timers(), 0);
        let fired = Rc::new(Cell::new(false));
        let f = fired.clone();
        let zero = clock.sleep(Duration::ZERO);
        spawn_local(async move {
            zero.await;
            f.set(true);
        });
        run_until_stalled();
        assert!(fired.get(), "a zero sleep completes without advancing");
    }
}
