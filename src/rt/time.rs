use std::ops::{Add, Sub};
use std::time::Duration;

/// A point on a [`Clock`](super::Clock)'s monotonic timeline, stored as the time
/// since the clock's origin.
///
/// `std::time::Instant` panics on `wasm32-unknown-unknown`, so the crate uses this
/// instead. All arithmetic saturates: timing data can never cause a panic.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Duration);

impl Instant {
    /// The clock's origin.
    pub const ZERO: Instant = Instant(Duration::ZERO);

    /// The instant `d` after the origin.
    pub const fn from_origin(d: Duration) -> Self {
        Instant(d)
    }

    /// Time elapsed from the origin to this instant.
    pub const fn since_origin(self) -> Duration {
        self.0
    }

    /// Milliseconds since the origin, for display and metrics.
    pub fn as_millis_f64(self) -> f64 {
        self.0.as_secs_f64() * 1000.0
    }

    /// `self - earlier`, or zero when `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_add(rhs))
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_sub(rhs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_origin(Duration::from_millis(5));
        assert_eq!(
            t - Instant::from_origin(Duration::from_millis(9)),
            Duration::ZERO
        );
        assert_eq!(t - Duration::from_secs(1), Instant::ZERO);
        assert_eq!((t + Duration::MAX).since_origin(), Duration::MAX);
        assert_eq!((t + Duration::from_millis(5)).as_millis_f64(), 10.0);
    }
}
