//! Rate limiters (client-go `util/workqueue/default_rate_limiters.go`).
//!
//! Limiters take `&self` and keep their state in a `RefCell`, so one limiter
//! can be shared as `Rc<dyn RateLimiter<T>>` by a queue, a binding and tests.
//! Delay arithmetic is integer nanoseconds and saturates: no input can panic.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hash;
use std::rc::Rc;
use std::time::Duration;

use crate::rt::{Instant, SharedClock};

/// Decides how long an item waits before it is retried.
pub trait RateLimiter<T> {
    /// The delay for the next retry of `item` (records one more requeue).
    fn when(&self, item: &T) -> Duration;
    /// Stop tracking `item` (it succeeded): its next delay starts over.
    fn forget(&self, item: &T);
    /// How many times `item` has been requeued since it was last forgotten.
    fn num_requeues(&self, item: &T) -> u32;
}

/// Shared, dynamically typed limiter handle.
pub type SharedRateLimiter<T> = Rc<dyn RateLimiter<T>>;

/// Per-item exponential backoff: `base × 2^n` for the n-th retry (n from 0),
/// capped at `max` (RLM-01).
pub struct ItemExponentialRateLimiter<T> {
    base: Duration,
    max: Duration,
    failures: RefCell<HashMap<T, u32>>,
}

impl<T: Hash + Eq + Clone> ItemExponentialRateLimiter<T> {
    /// Backoff starting at `base`, never above `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        ItemExponentialRateLimiter {
            base,
            max,
            failures: RefCell::new(HashMap::new()),
        }
    }
}

/// `base × 2^exp`, capped at `max`, without overflow.
fn exponential(base: Duration, exp: u32, max: Duration) -> Duration {
    if exp >= 64 {
        return if base.is_zero() { Duration::ZERO } else { max };
    }
    let nanos = base.as_nanos().saturating_mul(1u128 << exp);
    if nanos >= max.as_nanos() {
        return max;
    }
    // nanos < max's nanos, so it fits a Duration.
    let secs = u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX);
    Duration::new(secs, (nanos % 1_000_000_000) as u32)
}

impl<T: Hash + Eq + Clone> RateLimiter<T> for ItemExponentialRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let mut failures = self.failures.borrow_mut();
        let exp = match failures.get_mut(item) {
            Some(n) => {
                let exp = *n;
                *n = n.saturating_add(1);
                exp
            }
            None => {
                failures.insert(item.clone(), 1);
                0
            }
        };
        exponential(self.base, exp, self.max)
    }

    fn forget(&self, item: &T) {
        self.failures.borrow_mut().remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.borrow().get(item).copied().unwrap_or(0)
    }
}

/// `fast` for the first `max_fast_attempts` retries of an item, `slow` after
/// (RLM-02).
pub struct ItemFastSlowRateLimiter<T> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
    failures: RefCell<HashMap<T, u32>>,
}

impl<T: Hash + Eq + Clone> ItemFastSlowRateLimiter<T> {
    /// A two-speed limiter.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        ItemFastSlowRateLimiter {
            fast,
            slow,
            max_fast_attempts,
            failures: RefCell::new(HashMap::new()),
        }
    }
}

impl<T: Hash + Eq + Clone> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let mut failures = self.failures.borrow_mut();
        let n = failures.entry(item.clone()).or_insert(0);
        *n = n.saturating_add(1);
        if *n <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.failures.borrow_mut().remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.borrow().get(item).copied().unwrap_or(0)
    }
}

/// One token bucket shared by all items (RLM-04), with the reservation
/// semantics of Go's `rate.Limiter.Reserve`: each call takes a token, possibly
/// going into debt, and returns when that token will exist.
pub struct BucketRateLimiter {
    clock: SharedClock,
    /// Tokens per second; infinite means "never wait".
    rate: f64,
    burst: u32,
    bucket: RefCell<Bucket>,
}

struct Bucket {
    tokens: f64,
    last: Option<Instant>,
}

impl BucketRateLimiter {
    /// `rate` tokens per second, at most `burst` stored; starts full.
    pub fn new(clock: SharedClock, rate: f64, burst: u32) -> Self {
        BucketRateLimiter {
            clock,
            rate,
            burst,
            bucket: RefCell::new(Bucket {
                tokens: f64::from(burst),
                last: None,
            }),
        }
    }

    /// Reserve one token now and return how long until it is available.
    pub fn reserve(&self) -> Duration {
        if self.rate.is_infinite() && self.rate > 0.0 {
            return Duration::ZERO;
        }
        if self.burst == 0 {
            // A single token can never fit: Go reports an infinite delay.
            return Duration::MAX;
        }
        let now = self.clock.now();
        let mut b = self.bucket.borrow_mut();
        let elapsed = b.last.map_or(Duration::MAX, |last| now - last);
        let refill = if self.rate > 0.0 {
            elapsed.as_secs_f64() * self.rate
        } else {
            0.0
        };
        let mut tokens = (b.tokens + refill).min(f64::from(self.burst));
        tokens -= 1.0;
        b.tokens = tokens;
        b.last = Some(now);
        if tokens >= 0.0 {
            return Duration::ZERO;
        }
        if self.rate <= 0.0 || self.rate.is_nan() {
            return Duration::MAX;
        }
        // Truncate to whole nanoseconds as Go does; `as` saturates.
        let nanos = (-tokens / self.rate * 1e9) as u64;
        Duration::from_nanos(nanos)
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }
    fn forget(&self, _item: &T) {}
    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

/// The largest delay of several limiters; every child sees every call (RLM-03).
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<SharedRateLimiter<T>>,
}

impl<T> MaxOfRateLimiter<T> {
    /// Combine `limiters`.
    pub fn new(limiters: Vec<SharedRateLimiter<T>>) -> Self {
        MaxOfRateLimiter { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|l| l.when(item))
            .fold(Duration::ZERO, Duration::max)
    }
    fn forget(&self, item: &T) {
        for l in &self.limiters {
            l.forget(item);
        }
    }
    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters
            .iter()
            .map(|l| l.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// Caps another limiter's delay at `max_delay` (RLM-06).
pub struct WithMaxWaitRateLimiter<T> {
    inner: SharedRateLimiter<T>,
    max_delay: Duration,
}

impl<T> WithMaxWaitRateLimiter<T> {
    /// Wrap `inner`.
    pub fn new(inner: SharedRateLimiter<T>, max_delay: Duration) -> Self {
        WithMaxWaitRateLimiter { inner, max_delay }
    }
}

impl<T> RateLimiter<T> for WithMaxWaitRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.inner.when(item).min(self.max_delay)
    }
    fn forget(&self, item: &T) {
        self.inner.forget(item);
    }
    fn num_requeues(&self, item: &T) -> u32 {
        self.inner.num_requeues(item)
    }
}

/// client-go's default controller limiter (RLM-05): the larger of per-item
/// exponential backoff 5 ms → 1000 s and a 10/s, burst-100 bucket.
pub fn default_controller_rate_limiter<T: Hash + Eq + Clone + 'static>(
    clock: SharedClock,
) -> SharedRateLimiter<T> {
    Rc::new(MaxOfRateLimiter::new(vec![
        Rc::new(ItemExponentialRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Rc::new(BucketRateLimiter::new(clock, 10.0, 100)),
    ]))
}

/// client-go's default item-based limiter (RLM-05): exponential 1 ms → 1000 s.
pub fn default_item_based_rate_limiter<T: Hash + Eq + Clone + 'static>() -> SharedRateLimiter<T> {
    Rc::new(ItemExponentialRateLimiter::new(
        Duration::from_millis(1),
        Duration::from_secs(1000),
    ))
}
