//! Client-side token bucket (client-go's `flowcontrol.NewTokenBucketRateLimiter`).
//!
//! Reservation style, as Go's `rate.Limiter.Wait`: each request takes a token
//! at once, possibly driving the balance negative, and then sleeps until the
//! balance it took would have refilled. Requests are served in arrival order
//! and nothing polls. A request dropped while waiting keeps its token (Go
//! returns it); the single-threaded client makes that a rare, bounded loss.
use std::cell::RefCell;
use std::time::Duration;

use crate::rt::{Instant, SharedClock};

use super::config::RateLimit;

/// A token bucket on a [`SharedClock`].
pub struct TokenBucket {
    clock: SharedClock,
    qps: f64,
    burst: f64,
    state: RefCell<(f64, Instant)>,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(limit: RateLimit, clock: SharedClock) -> Self {
        let now = clock.now();
        let burst = f64::from(limit.burst.max(1));
        TokenBucket {
            clock,
            qps: if limit.qps.is_finite() && limit.qps > 0.0 {
                limit.qps
            } else {
                1.0
            },
            burst,
            state: RefCell::new((burst, now)),
        }
    }

    /// Take one token; the returned duration is how long the caller must
    /// wait before proceeding (zero when a token was available).
    pub fn reserve(&self) -> Duration {
        let now = self.clock.now();
        let mut st = self.state.borrow_mut();
        let elapsed = (now - st.1).as_secs_f64();
        let tokens = (st.0 + elapsed * self.qps).min(self.burst) - 1.0;
        *st = (tokens, now);
        if tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::try_from_secs_f64(-tokens / self.qps).unwrap_or(Duration::MAX)
        }
    }

    /// Wait for a token.
    pub async fn acquire(&self) {
        let wait = self.reserve();
        if !wait.is_zero() {
            self.clock.sleep(wait).await;
        }
    }

    /// Tokens available now (may be negative while requests wait).
    #[cfg(test)]
    pub fn available(&self) -> f64 {
        let now = self.clock.now();
        let st = self.state.borrow();
        (st.0 + (now - st.1).as_secs_f64() * self.qps).min(self.burst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rt::FakeClock;

    #[test]
    fn rc_04_bucket_allows_burst_then_paces_at_qps() {
        let clock = FakeClock::new();
        let b = TokenBucket::new(
            RateLimit {
                qps: 5.0,
                burst: 10,
            },
            clock.shared(),
        );
        for _ in 0..10 {
            assert_eq!(b.reserve(), Duration::ZERO);
        }
        assert_eq!(b.reserve(), Duration::from_millis(200));
        assert_eq!(b.reserve(), Duration::from_millis(400));
        clock.advance(Duration::from_secs(10));
        // Refill is capped at the burst.
        assert!((b.available() - 10.0).abs() < 1e-9);
        clock.advance(Duration::from_millis(100));
        for _ in 0..10 {
            assert_eq!(b.reserve(), Duration::ZERO);
        }
        assert_eq!(b.reserve(), Duration::from_millis(200));
    }
}
