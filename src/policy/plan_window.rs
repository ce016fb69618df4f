//! A plan per second kept in every second, not on average: the default
//! shape of a quota group whose plan is configured without a `burst`.
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

use super::token_bucket::TokenBucket;
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

/// A quota group's bucket that also keeps every second within the allowed
/// rate (see the module doc).
#[derive(Clone, Debug)]
pub struct WindowedBucket {
    bucket: TokenBucket,
    window: PlanWindow,
}

impl WindowedBucket {
    /// A full token bucket of `rate` and `burst`, and at most `rate` in any second.
    pub fn new(rate: f64, burst: f64, now: Instant) -> Self {
        WindowedBucket { bucket: TokenBucket::new(rate, burst, now, true), window: PlanWindow::new(rate) }
    }
}

impl WindowedBucket {
    /// Takes `cost` from both, or says how long until both would allow it.
    pub fn try_take(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        self.check(now, cost)?;
        self.bucket.try_take(now, cost)?;
        self.window.take(now, cost);
        Ok(())
    }

    /// Whether both would allow `cost` now, without taking it.
    pub fn check(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        match (self.bucket.check(now, cost), self.window.check(now, cost)) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(a), Err(b)) => Err(a.max(b)),
            (Err(wait), Ok(())) | (Ok(()), Err(wait)) => Err(wait),
        }
    }

    /// A new allowed rate: the bucket's refill and the second's bound.
    pub fn set_rate(&mut self, now: Instant, rate: f64) {
        self.bucket.set_rate(now, rate);
        self.window.set_cap(rate);
    }

    /// A new burst for the token bucket.
    pub fn set_burst(&mut self, now: Instant, burst: f64) {
        self.bucket.set_burst(now, burst);
    }

    /// Empties the token bucket (the second's log stays).
    pub fn drain(&mut self, now: Instant) {
        self.bucket.drain(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_epoch(Duration::from_millis(ms))
    }

    #[test]
    fn a_burst_goes_at_once_up_to_the_plan_and_no_second_carries_more() {
        // 20 CU/s, burst defaulted to 20: the token bucket alone lets 40 through in the first second.
        let mut b = WindowedBucket::new(20.0, 20.0, at(0));
        let mut sent = Vec::new();
        for ms in 0..3000u64 {
            while b.try_take(at(ms), 1.0).is_ok() {
                sent.push(ms);
            }
        }
        assert_eq!(sent.iter().filter(|&&ms| ms == 0).count(), 20, "the burst, at once");
        for start in 0..2000u64 {
            let in_second = sent.iter().filter(|&&ms| ms >= start && ms < start + 1000).count();
            assert!(in_second <= 20, "{in_second} CU in the second from {start} ms");
        }
        assert!(sent.len() >= 59, "and the plan is used: {}", sent.len());
    }

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
    fn a_lower_rate_lowers_the_second_and_nonsense_means_no_bound() {
        let mut b = WindowedBucket::new(20.0, 20.0, at(0));
        b.set_rate(at(0), 10.0);
        let taken = (0..20).filter(|_| b.try_take(at(0), 1.0).is_ok()).count();
        assert_eq!(taken, 10, "AIMD's rate is the second's bound too");
        let mut w = PlanWindow::new(f64::NAN);
        w.take(at(0), 1e9);
        assert_eq!((w.check(at(0), 1e9), w.used(at(0))), (Ok(()), 0.0));
    }
}
