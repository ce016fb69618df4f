//! Time as a value. Policies never read a clock: they are handed an
//! [`Instant`] and answer with durations or deadlines, which is what makes
//! them testable to the millisecond on a simulated clock.

use std::ops::{Add, Sub};
use std::time::Duration;

/// A point in time, measured from an arbitrary epoch chosen by the runtime
/// (page load in browsers, process start in Node, zero in simulations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Duration);

impl Instant {
    /// The epoch of the runtime's clock.
    pub const ZERO: Instant = Instant(Duration::ZERO);

    /// An instant `since_epoch` after the runtime's epoch.
    pub const fn from_epoch(since_epoch: Duration) -> Self {
        Instant(since_epoch)
    }

    /// An instant from fractional milliseconds (as `performance.now()`
    /// returns them). Negative, NaN or absurd inputs clamp instead of
    /// panicking, because a hostile or buggy clock must not kill the instance.
    pub fn from_millis_f64(ms: f64) -> Self {
        Instant(duration_from_millis_f64(ms))
    }

    /// Time since the runtime's epoch.
    pub const fn since_epoch(self) -> Duration {
        self.0
    }

    /// Time elapsed from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
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
        self.saturating_since(rhs)
    }
}

/// Converts fractional milliseconds to a `Duration` without panicking:
/// NaN and negatives become zero, values beyond ~292 years saturate.
pub fn duration_from_millis_f64(ms: f64) -> Duration {
    if ms.is_nan() || ms <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::MAX)
}

/// Milliseconds of a duration as `f64`, for events and JS.
pub fn millis_f64(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// An instant `ms` after the epoch: the clock tests state their steps on.
#[cfg(test)]
pub fn at(ms: u64) -> Instant {
    Instant::from_epoch(Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_clock_values_clamp() {
        assert_eq!(Instant::from_millis_f64(f64::NAN), Instant::ZERO);
        assert_eq!(Instant::from_millis_f64(-5.0), Instant::ZERO);
        assert_eq!(Instant::from_millis_f64(f64::INFINITY).since_epoch(), Duration::MAX);
        assert_eq!(Instant::from_millis_f64(1.5).since_epoch(), Duration::from_micros(1500));
    }

    #[test]
    fn arithmetic_saturates() {
        let late = Instant::from_epoch(Duration::MAX);
        assert_eq!(late + Duration::from_secs(1), late);
        assert_eq!(Instant::ZERO - late, Duration::ZERO);
    }
}
