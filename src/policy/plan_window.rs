//! A plan per second kept in every second, not on average: the default
//! shape of a quota group whose plan is configured without a `burst`
//! (beside its token bucket: `quota/bucket.rs`, `WindowedBucket`).
//!
//! A token bucket with rate R and burst B lets through B + R in one
//! second: with the burst defaulted to the plan (what a page load or a
//! job's start needs at once), twice the plan in the first second, which a
//! provider counting per second refuses. A new user's fleet on a 20 CU/s
//! key met exactly that: two 429s in its first second, which then halved
//! its rate. So such a group also keeps a log of the last second's charges
//! and refuses a charge that would take that second past the allowed rate:
//!
//! ```text
//!   charge(cost) at now:  drop entries older than one second
//!                         sum + cost ≤ cap (or the log is empty)  → log it
//!                         otherwise wait until enough entries leave the second
//!   cap = the allowed rate × 1 s   (lowered with the rate by AIMD)
//! ```
//!
//! A burst still goes out at once, up to the plan; no second (any
//! one, not only the provider's) carries more than the plan. A charge
//! above a whole second's cap waits for an empty log, as a token bucket
//! charges a cost above its burst as a full bucket. Pure: time is an
//! argument. The log holds at most one second of charges (≤ cap / the
//! smallest cost entries) and its sum is kept, so a charge costs O(1)
//! amortised however many requests wait.

use std::collections::VecDeque;
use std::time::Duration;

use crate::time::Instant;

const SECOND: Duration = Duration::from_secs(1);

/// The charges of the last second and the most they may sum to.
#[derive(Clone, Debug)]
pub struct PlanWindow {
    cap: f64,
    log: VecDeque<(Instant, f64)>,
    sum: f64,
}

impl PlanWindow {
    /// At most `cap` in any second (infinite or NaN: no bound).
    pub fn new(cap: f64) -> Self {
        PlanWindow { cap: Self::sane(cap), log: VecDeque::new(), sum: 0.0 }
    }

    fn sane(cap: f64) -> f64 {
        if cap.is_nan() || cap <= 0.0 {
            f64::INFINITY
        } else {
            cap
        }
    }

    /// Changes the bound from now on (what was logged stays).
    pub fn set_cap(&mut self, cap: f64) {
        self.cap = Self::sane(cap);
    }

    fn expire(&mut self, now: Instant) {
        while let Some(&(at, cost)) = self.log.front() {
            if now.saturating_since(at) < SECOND {
                break;
            }
            self.log.pop_front();
            self.sum -= cost;
        }
        if self.log.is_empty() {
            self.sum = 0.0; // no drift from float sums
        }
    }

    /// Whether `cost` fits in the second ending now, or how long until it would.
    pub fn check(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        self.expire(now);
        if self.cap.is_infinite() || self.log.is_empty() || self.sum + cost <= self.cap + 1e-9 {
            return Ok(());
        }
        // Wait until the oldest entries whose leaving makes room have left.
        let mut left = self.sum;
        for &(at, c) in &self.log {
            left -= c;
            if left + cost <= self.cap + 1e-9 || left <= 1e-9 {
                return Err((at + SECOND).saturating_since(now).max(Duration::from_millis(1)));
            }
        }
        Err(Duration::from_millis(1))
    }

    /// Logs `cost` at `now` (after a `check` that said yes).
    pub fn take(&mut self, now: Instant, cost: f64) {
        if self.cap.is_infinite() || cost.is_nan() || cost <= 0.0 {
            return;
        }
        self.log.push_back((now, cost));
        self.sum += cost;
    }

    /// What was charged in the second ending now.
    pub fn used(&mut self, now: Instant) -> f64 {
        self.expire(now);
        self.sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::at;

    #[test]
    fn the_wait_is_until_enough_of_the_second_has_left() {
        let mut w = PlanWindow::new(10.0);
        w.take(at(0), 4.0);
        w.take(at(300), 4.0);
        assert_eq!(w.check(at(500), 2.0), Ok(()));
        assert_eq!(w.check(at(500), 3.0), Err(Duration::from_millis(500)), "the first 4 leave at 1000 ms");
        assert_eq!(w.check(at(500), 7.0), Err(Duration::from_millis(800)), "both must leave: 1300 ms");
        assert_eq!(w.check(at(500), 30.0), Err(Duration::from_millis(800)), "above the cap: an empty second");
        assert_eq!(w.used(at(999)), 8.0);
        assert_eq!(w.used(at(1000)), 4.0, "an entry leaves the second exactly one second later");
        assert_eq!(w.check(at(1300), 30.0), Ok(()));
    }

    #[test]
    fn nonsense_means_no_bound() {
        let mut w = PlanWindow::new(f64::NAN);
        w.take(at(0), 1e9);
        assert_eq!((w.check(at(0), 1e9), w.used(at(0))), (Ok(()), 0.0));
    }
}
