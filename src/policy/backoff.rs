//! Backoff schedules.
//!
//! Why jitter is the default: when a node fails, every client notices at
//! the same moment. Deterministic schedules (fixed, linear, exponential)
//! keep those clients synchronised, so their retries arrive as waves that
//! knock the node over again. Full jitter spreads each wave uniformly over
//! `[0, min(cap, base·2^n)]`, which is the variant with the least total
//! work in the classic AWS simulations.
//!
//! Every variant is capped and saturates instead of overflowing, so huge
//! attempt numbers are harmless. Attempts are counted from 0: the delay
//! before the first retry is `delay(0, ..)`.

use std::time::Duration;

/// A backoff schedule. `base` is the first step, `cap` bounds every delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backoff {
    /// Always `base` (capped).
    Fixed {
        /// The constant delay.
        base: Duration,
        /// Upper bound.
        cap: Duration,
    },
    /// `base·(n+1)`: 1b, 2b, 3b…
    Linear {
        /// Step size.
        base: Duration,
        /// Upper bound.
        cap: Duration,
    },
    /// `base·2^n`: b, 2b, 4b…
    Exponential {
        /// First delay.
        base: Duration,
        /// Upper bound.
        cap: Duration,
    },
    /// Uniform in `[0, min(cap, base·2^n)]`. The default.
    FullJitter {
        /// Scale of the exponential ceiling.
        base: Duration,
        /// Upper bound.
        cap: Duration,
    },
    /// `t/2 + uniform[0, t/2]` with `t = min(cap, base·2^n)`: never shorter
    /// than half the exponential step.
    EqualJitter {
        /// Scale of the exponential ceiling.
        base: Duration,
        /// Upper bound.
        cap: Duration,
    },
    /// `min(cap, uniform[base, 3·previous])`, where `previous` is the delay
    /// returned for the previous attempt (`base` before the first).
    DecorrelatedJitter {
        /// Smallest delay.
        base: Duration,
        /// Upper bound.
        cap: Duration,
    },
}

impl Backoff {
    /// The default schedule: full jitter.
    pub const fn full_jitter(base: Duration, cap: Duration) -> Self {
        Backoff::FullJitter { base, cap }
    }

    /// The cap of this schedule.
    pub const fn cap(&self) -> Duration {
        match *self {
            Backoff::Fixed { cap, .. }
            | Backoff::Linear { cap, .. }
            | Backoff::Exponential { cap, .. }
            | Backoff::FullJitter { cap, .. }
            | Backoff::EqualJitter { cap, .. }
            | Backoff::DecorrelatedJitter { cap, .. } => cap,
        }
    }

    /// Whether the schedule draws random numbers.
    pub const fn is_jittered(&self) -> bool {
        matches!(self, Backoff::FullJitter { .. } | Backoff::EqualJitter { .. } | Backoff::DecorrelatedJitter { .. })
    }

    /// The delay before retry number `attempt` (0-based).
    ///
    /// `previous` is the delay this schedule returned last time (only the
    /// decorrelated variant uses it); `unit_random` is a uniform draw in
    /// `[0, 1)` supplied by the caller, so the function stays pure. Values
    /// outside `[0, 1]` (or NaN) are clamped.
    pub fn delay(&self, attempt: u32, previous: Duration, unit_random: f64) -> Duration {
        let r = clamp_unit(unit_random);
        match *self {
            Backoff::Fixed { base, cap } => base.min(cap),
            Backoff::Linear { base, cap } => base.saturating_mul(attempt.saturating_add(1)).min(cap),
            Backoff::Exponential { base, cap } => exponential(base, cap, attempt),
            Backoff::FullJitter { base, cap } => exponential(base, cap, attempt).mul_f64(r),
            Backoff::EqualJitter { base, cap } => {
                let half = exponential(base, cap, attempt) / 2;
                half + half.mul_f64(r)
            }
            Backoff::DecorrelatedJitter { base, cap } => {
                let low = base.min(cap);
                let high = previous.max(base).saturating_mul(3).min(cap);
                if high <= low {
                    low
                } else {
                    low + (high - low).mul_f64(r)
                }
            }
        }
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::full_jitter(Duration::from_millis(1000), Duration::from_millis(15_000))
    }
}

/// `min(cap, base·2^attempt)` without overflow.
fn exponential(base: Duration, cap: Duration, attempt: u32) -> Duration {
    if attempt >= 32 {
        return if base.is_zero() { Duration::ZERO } else { cap };
    }
    base.checked_mul(1u32 << attempt).map_or(cap, |d| d.min(cap))
}

fn clamp_unit(r: f64) -> f64 {
    if r.is_nan() || r < 0.0 {
        0.0
    } else if r > 1.0 {
        1.0
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn schedule(b: Backoff, n: u32) -> Vec<u64> {
        (0..n).map(|a| b.delay(a, Duration::ZERO, 0.5).as_millis() as u64).collect()
    }

    #[test]
    fn fixed_schedule_is_constant_and_capped() {
        assert_eq!(schedule(Backoff::Fixed { base: MS(100), cap: MS(1000) }, 4), [100, 100, 100, 100]);
        assert_eq!(schedule(Backoff::Fixed { base: MS(100), cap: MS(40) }, 2), [40, 40]);
    }

    #[test]
    fn linear_schedule_is_base_times_n_plus_one() {
        assert_eq!(schedule(Backoff::Linear { base: MS(100), cap: MS(350) }, 5), [100, 200, 300, 350, 350]);
    }

    #[test]
    fn exponential_schedule_doubles_from_base() {
        assert_eq!(
            schedule(Backoff::Exponential { base: MS(100), cap: MS(1000) }, 6),
            [100, 200, 400, 800, 1000, 1000]
        );
    }

    #[test]
    fn huge_attempt_numbers_saturate_at_the_cap() {
        for b in [
            Backoff::Linear { base: Duration::MAX, cap: MS(5) },
            Backoff::Exponential { base: MS(100), cap: MS(5000) },
            Backoff::FullJitter { base: MS(100), cap: MS(5000) },
            Backoff::EqualJitter { base: MS(100), cap: MS(5000) },
        ] {
            for attempt in [31, 32, 63, 64, 1000, u32::MAX] {
                assert!(b.delay(attempt, Duration::MAX, 0.999) <= b.cap(), "{b:?} at {attempt}");
            }
        }
        assert_eq!(Backoff::Exponential { base: MS(1), cap: MS(5000) }.delay(u32::MAX, MS(0), 0.0), MS(5000));
        assert_eq!(Backoff::Exponential { base: MS(0), cap: MS(5000) }.delay(u32::MAX, MS(0), 0.0), MS(0));
    }

    #[test]
    fn full_jitter_spans_zero_to_the_exponential_ceiling() {
        let b = Backoff::FullJitter { base: MS(100), cap: MS(1000) };
        assert_eq!(b.delay(2, MS(0), 0.0), MS(0));
        assert_eq!(b.delay(2, MS(0), 0.5), MS(200));
        assert!(b.delay(2, MS(0), 0.999_999) < MS(400));
        assert!(b.delay(2, MS(0), 0.999_999) > MS(399));
        assert!(b.delay(10, MS(0), 0.999_999) <= MS(1000));
    }

    #[test]
    fn equal_jitter_never_goes_below_half_the_step() {
        let b = Backoff::EqualJitter { base: MS(100), cap: MS(1000) };
        assert_eq!(b.delay(1, MS(0), 0.0), MS(100));
        assert!(b.delay(1, MS(0), 0.999_999) < MS(200));
    }

    #[test]
    fn decorrelated_jitter_grows_from_the_previous_delay() {
        let b = Backoff::DecorrelatedJitter { base: MS(100), cap: MS(1000) };
        assert_eq!(b.delay(0, MS(0), 0.0), MS(100));
        assert!(b.delay(0, MS(0), 0.999_999) < MS(300));
        assert_eq!(b.delay(1, MS(250), 0.5), MS(100) + MS(650) / 2);
        let near_cap = b.delay(1, MS(900), 0.999_999);
        assert!(near_cap > MS(999) && near_cap <= MS(1000));
    }

    #[test]
    fn out_of_range_random_numbers_are_clamped() {
        let b = Backoff::FullJitter { base: MS(100), cap: MS(1000) };
        assert_eq!(b.delay(0, MS(0), f64::NAN), MS(0));
        assert_eq!(b.delay(0, MS(0), -3.0), MS(0));
        assert_eq!(b.delay(0, MS(0), 7.0), MS(100));
    }

    #[test]
    fn only_the_jitter_families_draw_random_numbers() {
        let (base, cap) = (MS(100), MS(1000));
        for b in [
            Backoff::FullJitter { base, cap },
            Backoff::EqualJitter { base, cap },
            Backoff::DecorrelatedJitter { base, cap },
        ] {
            assert!(b.is_jittered(), "{b:?}");
        }
        for b in [Backoff::Exponential { base, cap }, Backoff::Linear { base, cap }, Backoff::Fixed { base, cap }] {
            assert!(!b.is_jittered(), "{b:?}");
            assert_eq!(b.delay(1, MS(0), 0.0), b.delay(1, MS(0), 0.99), "{b:?} ignores the draw");
        }
    }

    proptest! {
        #[test]
        fn jittered_delays_stay_within_their_bounds(
            base_ms in 0u64..100_000, cap_ms in 0u64..1_000_000, attempt in any::<u32>(),
            prev_ms in 0u64..10_000_000, r in 0.0f64..1.0,
        ) {
            let (base, cap, prev) = (MS(base_ms), MS(cap_ms), MS(prev_ms));
            let ceiling = exponential(base, cap, attempt);
            let full = Backoff::FullJitter { base, cap }.delay(attempt, prev, r);
            prop_assert!(full <= ceiling);
            let equal = Backoff::EqualJitter { base, cap }.delay(attempt, prev, r);
            prop_assert!(equal >= ceiling / 2 && equal <= ceiling);
            let deco = Backoff::DecorrelatedJitter { base, cap }.delay(attempt, prev, r);
            prop_assert!(deco <= cap.max(base.min(cap)));
            prop_assert!(deco >= base.min(cap));
        }
    }
}
