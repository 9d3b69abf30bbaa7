//! Queue metrics: counters and duration summaries a UI can chart directly.
//!
//! client-go reports through a Prometheus-style provider (gauges, counters,
//! histograms with exponential buckets from 10 ns to 10 s). Here the queue keeps
//! the same quantities in plain fields and hands out a [`QueueMetrics`]
//! snapshot, either on demand or periodically to a callback
//! ([`Queue::watch_metrics`](super::Queue::watch_metrics)).

use std::rc::Rc;
use std::time::Duration;

/// Number of finite bucket bounds in a [`DurationSummary`].
pub const BUCKET_COUNT: usize = 10;

/// Upper bounds of the histogram buckets: 10 ns × 10^i for i in 0..10, i.e.
/// 10 ns up to 10 s (client-go's `ExponentialBuckets(10e-9, 10, 10)`).
/// Observations above the last bound land in an overflow bucket.
pub fn bucket_upper_bounds() -> [Duration; BUCKET_COUNT] {
    let mut out = [Duration::ZERO; BUCKET_COUNT];
    let mut nanos: u64 = 10;
    for slot in out.iter_mut() {
        *slot = Duration::from_nanos(nanos);
        nanos = nanos.saturating_mul(10);
    }
    out
}

/// Count, sum, extremes and a bucketed histogram of observed durations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DurationSummary {
    /// Number of observations.
    pub count: u64,
    /// Sum of all observations (saturating).
    pub sum: Duration,
    /// Smallest observation (zero when `count == 0`).
    pub min: Duration,
    /// Largest observation.
    pub max: Duration,
    /// Per-bucket counts (not cumulative): `buckets[i]` counts observations in
    /// `(bound[i-1], bound[i]]` of [`bucket_upper_bounds`]; the last entry counts
    /// everything above 10 s.
    pub buckets: [u64; BUCKET_COUNT + 1],
}

impl DurationSummary {
    /// Record one observation.
    pub fn observe(&mut self, d: Duration) {
        if self.count == 0 || d < self.min {
            self.min = d;
        }
        if d > self.max {
            self.max = d;
        }
        self.count = self.count.saturating_add(1);
        self.sum = self.sum.saturating_add(d);
        // Bucket index = number of decimal orders of magnitude above 10 ns.
        let mut idx = 0;
        let mut bound: u128 = 10;
        let nanos = d.as_nanos();
        while idx < BUCKET_COUNT && nanos > bound {
            idx += 1;
            bound *= 10;
        }
        if let Some(b) = self.buckets.get_mut(idx) {
            *b = b.saturating_add(1);
        }
    }

    /// Mean observation, or zero when empty.
    pub fn mean(&self) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        let n = u32::try_from(self.count).unwrap_or(u32::MAX);
        self.sum / n
    }

    /// Estimated `q`-quantile (0 ≤ q ≤ 1): the upper bound of the bucket that
    /// holds it, clamped to the observed maximum. Zero when empty.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        let q = if q.is_nan() { 1.0 } else { q.clamp(0.0, 1.0) };
        let rank = ((self.count as f64) * q).ceil().max(1.0) as u64;
        let bounds = bucket_upper_bounds();
        let mut seen = 0u64;
        for (i, c) in self.buckets.iter().enumerate() {
            seen = seen.saturating_add(*c);
            if seen >= rank {
                let upper = bounds.get(i).copied().unwrap_or(self.max);
                return upper.min(self.max).max(self.min);
            }
        }
        self.max
    }
}

/// A point-in-time view of a queue's metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueMetrics {
    /// The queue's name (from its config; may be empty).
    pub name: Rc<str>,
    /// Items waiting to be handed out (what `len()` reports).
    pub depth: usize,
    /// Items currently taken by a worker and not yet `done`.
    pub processing: usize,
    /// Items in the delaying queue's waiting set (0 for a plain queue).
    pub delayed: usize,
    /// Adds that marked an item dirty (duplicates of a waiting item do not count).
    pub adds: u64,
    /// Delayed adds accepted (`add_after`, hence also `add_rate_limited`),
    /// as client-go counts retries.
    pub retries: u64,
    /// Time from an item's add to the `get` that handed it out.
    pub queue_latency: DurationSummary,
    /// Time from `get` to `done`.
    pub work_duration: DurationSummary,
    /// Sum of how long every in-flight item has been processing so far.
    pub unfinished_work: Duration,
    /// How long the oldest in-flight item has been processing.
    pub longest_running_processor: Duration,
}

/// The counters the queue updates on every operation (only when metrics are on).
#[derive(Default)]
pub(crate) struct MetricsState {
    pub adds: u64,
    pub retries: u64,
    pub queue_latency: DurationSummary,
    pub work_duration: DurationSummary,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_buckets_and_quantiles() {
        let mut s = DurationSummary::default();
        assert_eq!(s.quantile(0.5), Duration::ZERO);
        s.observe(Duration::from_nanos(5)); // bucket 0 (≤ 10 ns)
        s.observe(Duration::from_millis(5)); // ≤ 10 ms: bucket 6
        s.observe(Duration::from_millis(5));
        s.observe(Duration::from_secs(60)); // overflow
        assert_eq!(s.count, 4);
        assert_eq!(s.buckets[0], 1);
        assert_eq!(s.buckets[6], 2);
        assert_eq!(s.buckets[BUCKET_COUNT], 1);
        assert_eq!(s.min, Duration::from_nanos(5));
        assert_eq!(s.max, Duration::from_secs(60));
        assert_eq!(s.quantile(0.5), Duration::from_millis(10));
        assert_eq!(s.quantile(1.0), Duration::from_secs(60));
        assert_eq!(s.quantile(0.0), Duration::from_nanos(10));
        assert_eq!(bucket_upper_bounds()[9], Duration::from_secs(10));
        assert!(s.mean() > Duration::from_secs(15));
    }
}
