use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use super::Instant;

/// A timer future returned by [`Clock::sleep`]; dropping it cancels the timer.
pub type Sleep = Pin<Box<dyn Future<Output = ()>>>;

/// Monotonic time and timers. Every time-based component takes a [`SharedClock`]
/// so tests can substitute a fake clock (the `testing` feature).
pub trait Clock {
    /// The current instant on this clock's monotonic timeline.
    fn now(&self) -> Instant;

    /// Wall-clock milliseconds since the Unix epoch (for ages shown to users and
    /// compared with server timestamps; never used for timers).
    fn wall_millis(&self) -> f64;

    /// A future that completes once `now() >= deadline`.
    fn sleep_until(&self, deadline: Instant) -> Sleep;

    /// A future that completes after `d` has elapsed on this clock.
    fn sleep(&self, d: Duration) -> Sleep {
        self.sleep_until(self.now() + d)
    }
}

/// A clock shared by the components of one client (single-threaded, so `Rc`).
pub type SharedClock = Rc<dyn Clock>;

/// The platform clock: `performance.now()` and `setTimeout` in wasm, the OS
/// monotonic clock and a sleeper thread natively.
pub fn real_clock() -> SharedClock {
    Rc::new(RealClock::new())
}

#[cfg(target_arch = "wasm32")]
mod platform {
    use super::*;
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        // Bound through the global object, not `window`: works in workers,
        // Node and edge runtimes as well as pages.
        #[wasm_bindgen(js_namespace = performance, js_name = now)]
        fn performance_now() -> f64;
        #[wasm_bindgen(js_namespace = Date, js_name = now)]
        fn date_now() -> f64;
    }

    pub struct RealClock;

    impl RealClock {
        pub fn new() -> Self {
            RealClock
        }
    }

    impl Clock for RealClock {
        fn now(&self) -> Instant {
            let ms = performance_now();
            let ms = if ms.is_finite() && ms > 0.0 { ms } else { 0.0 };
            Instant::from_origin(Duration::from_secs_f64(ms / 1000.0))
        }

        fn wall_millis(&self) -> f64 {
            date_now()
        }

        fn sleep_until(&self, deadline: Instant) -> Sleep {
            let remaining = deadline - self.now();
            // setTimeout takes an i32 of milliseconds; longer waits are chained.
            Box::pin(async move {
                let mut left = remaining;
                loop {
                    let step = left.min(Duration::from_millis(i32::MAX as u64));
                    let ms = step.as_millis() as u32
                        + u32::from(!step.subsec_nanos().is_multiple_of(1_000_000));
                    gloo_timers::future::TimeoutFuture::new(ms).await;
                    left = left.saturating_sub(step);
                    if left.is_zero() {
                        break;
                    }
                }
            })
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod platform {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Waker};

    pub struct RealClock {
        origin: std::time::Instant,
    }

    impl RealClock {
        pub fn new() -> Self {
            RealClock {
                origin: std::time::Instant::now(),
            }
        }
    }

    #[derive(Default)]
    struct SleepState {
        done: bool,
        waker: Option<Waker>,
    }

    /// Native real sleep: a thread per timer. Only demos and native tools use the
    /// real clock natively; tests use the fake clock.
    struct ThreadSleep {
        wait: Option<std::time::Duration>,
        state: Arc<Mutex<SleepState>>,
    }

    impl Future for ThreadSleep {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if let Some(wait) = self.wait.take() {
                if wait.is_zero() {
                    return Poll::Ready(());
                }
                let state = self.state.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(wait);
                    if let Ok(mut s) = state.lock() {
                        s.done = true;
                        if let Some(w) = s.waker.take() {
                            w.wake();
                        }
                    }
                });
            }
            match self.state.lock() {
                Ok(mut s) if !s.done => {
                    s.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
                _ => Poll::Ready(()),
            }
        }
    }

    impl Clock for RealClock {
        fn now(&self) -> Instant {
            Instant::from_origin(self.origin.elapsed())
        }

        fn wall_millis(&self) -> f64 {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs_f64() * 1000.0)
                .unwrap_or(0.0)
        }

        fn sleep_until(&self, deadline: Instant) -> Sleep {
            Box::pin(ThreadSleep {
                wait: Some(deadline - self.now()),
                state: Arc::new(Mutex::new(SleepState::default())),
            })
        }
    }
}

use platform::RealClock;
