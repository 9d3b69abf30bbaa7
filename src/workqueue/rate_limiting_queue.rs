//! The rate-limited queue (client-go `util/workqueue/rate_limiting_queue.go`).

use std::hash::Hash;
use std::time::Duration;

use super::delaying::DelayingQueue;
use super::interface::WorkQueue;
use super::metrics::QueueMetrics;
use super::queue::{Queue, QueueConfig};
use super::rate_limiters::{default_controller_rate_limiter, SharedRateLimiter};
use crate::rt::SharedClock;

/// A [`DelayingQueue`] with a [`RateLimiter`](super::RateLimiter) deciding
/// retry delays (RLM-07); the queue operations come from [`WorkQueue`].
/// Cloning gives another handle to the same queue.
///
/// ```
/// use kubewasm::rt::{block_on, real_clock};
/// use kubewasm::workqueue::{RateLimitingQueue, WorkQueue};
///
/// let queue = RateLimitingQueue::with_default_limiter(real_clock());
/// queue.add("default/web-1".to_string());
/// queue.add("default/web-1".to_string()); // still waiting: queued once
/// assert_eq!(queue.len(), 1);
/// block_on(async {
///     let key = queue.get().await.expect("an item is waiting");
///     // Reconcile `key`; on failure retry later with
///     // `queue.add_rate_limited(key.clone())` instead of forgetting it.
///     queue.forget(&key);
///     queue.done(&key);
/// });
/// queue.shut_down();
/// assert!(queue.is_empty());
/// ```
pub struct RateLimitingQueue<T> {
    delaying: DelayingQueue<T>,
    limiter: SharedRateLimiter<T>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        RateLimitingQueue {
            delaying: self.delaying.clone(),
            limiter: self.limiter.clone(),
        }
    }
}

impl<T: Hash + Eq + Clone + 'static> WorkQueue<T> for RateLimitingQueue<T> {
    fn queue(&self) -> &Queue<T> {
        self.delaying.queue()
    }

    fn metrics(&self) -> QueueMetrics {
        self.delaying.metrics()
    }
}

impl<T: Hash + Eq + Clone + 'static> RateLimitingQueue<T> {
    /// An unnamed queue on `clock` using `limiter`.
    pub fn new(clock: SharedClock, limiter: SharedRateLimiter<T>) -> Self {
        Self::with_config(QueueConfig::new("", clock), limiter)
    }

    /// An unnamed queue with client-go's default controller limiter.
    pub fn with_default_limiter(clock: SharedClock) -> Self {
        let limiter = default_controller_rate_limiter(clock.clone());
        Self::new(clock, limiter)
    }

    /// A queue built from `config` using `limiter`.
    pub fn with_config(config: QueueConfig<T>, limiter: SharedRateLimiter<T>) -> Self {
        RateLimitingQueue {
            delaying: DelayingQueue::with_config(config),
            limiter,
        }
    }

    /// The delaying queue underneath.
    pub fn delaying(&self) -> &DelayingQueue<T> {
        &self.delaying
    }

    /// The limiter deciding retry delays.
    pub fn limiter(&self) -> &SharedRateLimiter<T> {
        &self.limiter
    }

    /// Add `item` after the delay the limiter decides; returns that delay.
    /// Ignored (and the limiter not consulted) after shutdown.
    pub fn add_rate_limited(&self, item: T) -> Duration {
        if self.shutting_down() {
            return Duration::ZERO;
        }
        let d = self.limiter.when(&item);
        self.delaying.add_after(item, d);
        d
    }

    /// Add `item` once `d` has elapsed (see [`DelayingQueue::add_after`]).
    pub fn add_after(&self, item: T, d: Duration) {
        self.delaying.add_after(item, d)
    }

    /// Number of items waiting for their delay to pass.
    pub fn delayed_len(&self) -> usize {
        self.delaying.delayed_len()
    }

    /// Reset the limiter's history for `item`. Does not touch queue membership:
    /// callers still call `done`.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How often `item` has been requeued since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }
}
