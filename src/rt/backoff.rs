//! Capped exponential backoff with jitter: the one shape every retry in the
//! crate waits by (client-go's `wait.Backoff` without a step limit).

use std::time::Duration;

/// Capped exponential backoff with jitter.
///
/// Wait number `n` (0-based) is `min(initial × factorⁿ, max)` plus a random
/// `[0, jitter)` fraction of itself. The REST client waits this way between
/// retries of a request; the reflector between failed lists and watches
/// (with a periodic reset, see `ReflectorOptions::backoff_reset`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The first wait.
    pub initial: Duration,
    /// Multiplier per step (values below 1 count as 1).
    pub factor: f64,
    /// Upper bound of a wait before jitter.
    pub max: Duration,
    /// Up to this fraction of the wait is added at random (`1.0`: up to
    /// double). Clamped to `0.0..=10.0`.
    pub jitter: f64,
}

impl Backoff {
    /// The wait before attempt `step` (0-based), given a random `r` in
    /// `[0, 1)`. Never panics, whatever the fields hold: non-finite factors
    /// and jitters count as 1 and 0, and an overflowing wait is `max`.
    pub fn delay(&self, step: u32, r: f64) -> Duration {
        let factor = if self.factor.is_finite() {
            self.factor.max(1.0)
        } else {
            1.0
        };
        let jitter = if self.jitter.is_finite() {
            self.jitter.clamp(0.0, 10.0)
        } else {
            0.0
        };
        let r = if r.is_finite() {
            r.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let grown = self.initial.as_secs_f64() * factor.powi(step.min(1024) as i32);
        let capped = grown.min(self.max.as_secs_f64()).max(0.0);
        Duration::try_from_secs_f64(capped + capped * jitter * r).unwrap_or(self.max)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn capped_exponential_with_jitter() {
        let b = Backoff {
            initial: Duration::from_secs(1),
            factor: 2.0,
            max: Duration::from_secs(30),
            jitter: 0.2,
        };
        assert_eq!(b.delay(0, 0.0), Duration::from_secs(1));
        assert_eq!(b.delay(3, 0.0), Duration::from_secs(8));
        assert_eq!(b.delay(10, 0.0), Duration::from_secs(30));
        assert_eq!(b.delay(u32::MAX, 0.0), Duration::from_secs(30));
        assert_eq!(b.delay(0, 0.5), Duration::from_millis(1100));
        assert_eq!(
            b.delay(10, 0.999_999),
            Duration::from_secs_f64(30.0 + 30.0 * 0.2 * 0.999_999)
        );
    }

    #[test]
    fn absurd_fields_give_a_wait_not_a_panic() {
        let b = Backoff {
            initial: Duration::from_secs(u64::MAX / 4),
            factor: f64::INFINITY,
            max: Duration::MAX,
            jitter: f64::NAN,
        };
        assert!(b.delay(5, f64::NAN) >= Duration::from_secs(1));
        let tiny = Backoff {
            initial: Duration::from_millis(10),
            factor: 0.5,
            max: Duration::from_secs(1),
            jitter: -3.0,
        };
        assert_eq!(tiny.delay(4, 0.9), Duration::from_millis(10));
    }
}
