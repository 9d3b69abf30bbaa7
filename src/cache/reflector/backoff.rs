//! The reflector's backoff (client-go's `wait.Backoff` behind a
//! `BackoffManager`, RL-16): a base wait that starts at 800 ms and doubles up
//! to 30 s, each wait plus up to 100 % random jitter, and a reset to the first
//! step when two minutes have passed since the previous reset (not since the
//! last failure — a reflector that fails once a minute keeps resetting).

use std::time::Duration;

use crate::rt::{Backoff, Instant, Rng, SharedClock};

/// No single wait exceeds a day, whatever the options say (timers and
/// instants stay far from overflow).
const MAX_WAIT: Duration = Duration::from_secs(86_400);

/// The reflector's default backoff (client-go's): 800 ms doubling to 30 s,
/// each wait plus up to 100 % random jitter.
pub const DEFAULT_REFLECTOR_BACKOFF: Backoff = Backoff {
    initial: Duration::from_millis(800),
    factor: 2.0,
    max: Duration::from_secs(30),
    jitter: 1.0,
};

/// The reflector's default [`backoff_reset`](super::ReflectorOptions::backoff_reset):
/// two minutes.
pub const DEFAULT_BACKOFF_RESET: Duration = Duration::from_secs(120);

/// A [`Backoff`] that steps on each failure and returns to its first step
/// once `reset_after` has passed since the previous reset, on a clock.
pub(crate) struct BackoffManager {
    backoff: Backoff,
    reset_after: Duration,
    clock: SharedClock,
    step: u32,
    last_reset: Instant,
    rng: Rng,
}

impl BackoffManager {
    /// A backoff at its first step; `seed` drives the jitter.
    pub(crate) fn new(
        backoff: Backoff,
        reset_after: Duration,
        clock: SharedClock,
        seed: u64,
    ) -> Self {
        let now = clock.now();
        BackoffManager {
            backoff,
            reset_after,
            clock,
            step: 0,
            last_reset: now,
            rng: Rng::with_seed(seed),
        }
    }

    /// Back to the first step.
    pub(crate) fn restart(&mut self) {
        self.step = 0;
        self.last_reset = self.clock.now();
    }

    /// The next wait, advancing one step.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let now = self.clock.now();
        if now.saturating_duration_since(self.last_reset) > self.reset_after {
            self.step = 0;
            self.last_reset = now;
        }
        let wait = self.backoff.delay(self.step, self.rng.next_f64());
        self.step = self.step.saturating_add(1);
        wait.min(MAX_WAIT)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::rt::FakeClock;

    fn manager(b: Backoff, reset_after: Duration, clock: &FakeClock) -> BackoffManager {
        BackoffManager::new(b, reset_after, clock.shared(), 3)
    }

    fn secs(d: Duration) -> f64 {
        d.as_secs_f64()
    }

    #[test]
    fn rl_16_default_steps_with_full_jitter_then_cap() {
        let clock = FakeClock::new();
        let mut b = manager(DEFAULT_REFLECTOR_BACKOFF, DEFAULT_BACKOFF_RESET, &clock);
        let bounds = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0, 30.0];
        for lo in bounds {
            let d = secs(b.next_delay());
            assert!(d >= lo && d < lo * 2.0, "{d} not in [{lo}, {})", lo * 2.0);
        }
    }

    #[test]
    fn rl_16_resets_two_minutes_after_the_previous_reset_not_the_last_failure() {
        let clock = FakeClock::new();
        let opts = Backoff {
            jitter: 0.0,
            ..DEFAULT_REFLECTOR_BACKOFF
        };
        let mut b = manager(opts, DEFAULT_BACKOFF_RESET, &clock);
        assert_eq!(b.next_delay(), Duration::from_millis(800));
        clock.advance(Duration::from_secs(60));
        assert_eq!(b.next_delay(), Duration::from_millis(1600));
        clock.advance(Duration::from_secs(59));
        // 119 s since construction: no reset yet.
        assert_eq!(b.next_delay(), Duration::from_millis(3200));
        clock.advance(Duration::from_secs(2));
        // 121 s since construction: back to the first step.
        assert_eq!(b.next_delay(), Duration::from_millis(800));
        clock.advance(Duration::from_secs(100));
        // Only 100 s since that reset, although failures were 100 s apart.
        assert_eq!(b.next_delay(), Duration::from_millis(1600));
    }

    #[test]
    fn rl_16_custom_backoff_without_jitter_sums_exactly() {
        // client-go's TestNewReflectorWithCustomBackoff example: 10 ms ×2 capped at 100 ms.
        let clock = FakeClock::new();
        let opts = Backoff {
            initial: Duration::from_millis(10),
            factor: 2.0,
            max: Duration::from_millis(100),
            jitter: 0.0,
        };
        let mut b = manager(opts, Duration::from_secs(3600), &clock);
        let total: Duration = (0..5).map(|_| b.next_delay()).sum();
        assert_eq!(total, Duration::from_millis(250));
    }

    #[test]
    fn backoff_survives_absurd_options() {
        let clock = FakeClock::new();
        let opts = Backoff {
            initial: Duration::from_secs(u64::MAX / 4),
            factor: f64::INFINITY,
            max: Duration::MAX,
            jitter: f64::NAN,
        };
        let mut b = manager(opts, Duration::ZERO, &clock);
        for _ in 0..5 {
            let _ = b.next_delay();
        }
        assert!(b.next_delay() >= Duration::from_secs(1));
    }
}
