//! The reflector's backoff (client-go's `wait.Backoff` behind a
//! `BackoffManager`, RL-16): a base wait that starts at 800 ms and doubles up
//! to 30 s, each wait plus up to 100 % random jitter, and a reset to the first
//! step when two minutes have passed since the previous reset (not since the
//! last failure — a reflector that fails once a minute keeps resetting).

use std::time::Duration;

use crate::rt::{Instant, Rng, SharedClock};

/// No single wait exceeds a day, whatever the options say (timers and
/// instants stay far from overflow).
const MAX_WAIT: Duration = Duration::from_secs(86_400);

/// Backoff settings.
#[derive(Clone, Debug, PartialEq)]
pub struct BackoffOptions {
    /// First base wait (800 ms).
    pub initial: Duration,
    /// Multiplier per step (2).
    pub factor: f64,
    /// Cap of the base wait (30 s).
    pub cap: Duration,
    /// Extra random fraction of the base wait: each wait is
    /// `base + uniform[0,1) × jitter × base` (1.0 = up to double).
    pub jitter: f64,
    /// Return to the first step after this long since the last reset (2 min).
    pub reset_after: Duration,
}

impl Default for BackoffOptions {
    fn default() -> Self {
        BackoffOptions {
            initial: Duration::from_millis(800),
            factor: 2.0,
            cap: Duration::from_secs(30),
            jitter: 1.0,
            reset_after: Duration::from_secs(120),
        }
    }
}

/// Exponential backoff with jitter and periodic reset, on a clock.
pub struct BackoffManager {
    opts: BackoffOptions,
    clock: SharedClock,
    current: Duration,
    last_reset: Instant,
    rng: Rng,
}

impl BackoffManager {
    /// A backoff at its first step; `seed` drives the jitter.
    pub fn new(opts: BackoffOptions, clock: SharedClock, seed: u64) -> Self {
        let now = clock.now();
        BackoffManager {
            current: opts.initial,
            opts,
            clock,
            last_reset: now,
            rng: Rng::with_seed(seed),
        }
    }

    /// The next wait, advancing one step.
    pub fn next_delay(&mut self) -> Duration {
        let now = self.clock.now();
        if now.saturating_duration_since(self.last_reset) > self.opts.reset_after {
            self.current = self.opts.initial;
            self.last_reset = now;
        }
        let base = self.current.min(self.opts.cap);
        let factor = if self.opts.factor.is_finite() {
            self.opts.factor.max(1.0)
        } else {
            1.0
        };
        self.current = mul(base, factor).min(self.opts.cap);
        let jitter = if self.opts.jitter.is_finite() {
            self.opts.jitter.clamp(0.0, 10.0)
        } else {
            0.0
        };
        base.saturating_add(mul(base, jitter * self.rng.next_f64()))
            .min(MAX_WAIT)
    }
}

/// `d × f` without the panics of `Duration::mul_f64` on huge values.
fn mul(d: Duration, f: f64) -> Duration {
    Duration::try_from_secs_f64(d.as_secs_f64() * f).unwrap_or(Duration::MAX)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::rt::FakeClock;

    fn secs(d: Duration) -> f64 {
        d.as_secs_f64()
    }

    #[test]
    fn rl_16_default_steps_with_full_jitter_then_cap() {
        let clock = FakeClock::new();
        let mut b = BackoffManager::new(BackoffOptions::default(), clock.shared(), 3);
        let bounds = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0, 30.0];
        for lo in bounds {
            let d = secs(b.next_delay());
            assert!(d >= lo && d < lo * 2.0, "{d} not in [{lo}, {})", lo * 2.0);
        }
    }

    #[test]
    fn rl_16_resets_two_minutes_after_the_previous_reset_not_the_last_failure() {
        let clock = FakeClock::new();
        let opts = BackoffOptions {
            jitter: 0.0,
            ..Default::default()
        };
        let mut b = BackoffManager::new(opts, clock.shared(), 1);
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
        let opts = BackoffOptions {
            initial: Duration::from_millis(10),
            factor: 2.0,
            cap: Duration::from_millis(100),
            jitter: 0.0,
            reset_after: Duration::from_secs(3600),
        };
        let mut b = BackoffManager::new(opts, clock.shared(), 1);
        let total: Duration = (0..5).map(|_| b.next_delay()).sum();
        assert_eq!(total, Duration::from_millis(250));
    }

    #[test]
    fn backoff_survives_absurd_options() {
        let clock = FakeClock::new();
        let opts = BackoffOptions {
            initial: Duration::from_secs(u64::MAX / 4),
            factor: f64::INFINITY,
            cap: Duration::MAX,
            jitter: f64::NAN,
            reset_after: Duration::ZERO,
        };
        let mut b = BackoffManager::new(opts, clock.shared(), 1);
        for _ in 0..5 {
            let _ = b.next_delay();
        }
        assert!(b.next_delay() >= Duration::from_secs(1));
    }
}
