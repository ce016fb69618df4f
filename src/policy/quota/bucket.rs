//! The seam between a quota group and its bucket: a token bucket when a
//! burst is configured, one that also keeps every second within the plan
//! when none is (`policy::plan_window`); a shared store's lease sits in
//! front of either (`quota/fleet.rs`).

use std::time::Duration;

use crate::policy::plan_window::PlanWindow;
use crate::policy::token_bucket::TokenBucket;
use crate::time::Instant;

/// The seam for the group's bucket (local today, shared store later).
pub trait QuotaBucket {
    /// Takes `cost` or says how long until it could.
    fn try_take(&mut self, now: Instant, cost: f64) -> Result<(), Duration>;
    /// Whether `cost` could be taken, without taking it.
    fn check(&mut self, now: Instant, cost: f64) -> Result<(), Duration>;
    /// Changes the refill rate.
    fn set_rate(&mut self, now: Instant, rate: f64);
    /// Changes the burst (tokens held are capped to it).
    fn set_burst(&mut self, now: Instant, burst: f64);
    /// Empties the bucket (it refills at its rate); returns what it held.
    fn drain(&mut self, now: Instant) -> f64;
    /// Puts back `tokens` a [`drain`](QuotaBucket::drain) withheld (up to the burst).
    fn give_back(&mut self, now: Instant, tokens: f64);
    /// Charges paid elsewhere (a fleet lease) within the last second, in
    /// time order: a bucket that keeps every second counts them, so falling
    /// from a lease does not spend a second's worth on top of what the
    /// lease paid in it.
    fn seed(&mut self, _charges: &[(Instant, f64)]) {}
    /// The charge of `cost` taken at `charged_at` was answered `now` (a
    /// bucket that counts by second counts it from its answer).
    fn answered(&mut self, _charged_at: Instant, _cost: f64, _now: Instant) {}
}

impl QuotaBucket for TokenBucket {
    fn try_take(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        TokenBucket::try_take(self, now, cost)
    }
    fn check(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        TokenBucket::check(self, now, cost)
    }
    fn set_rate(&mut self, now: Instant, rate: f64) {
        TokenBucket::set_rate(self, now, rate)
    }
    fn set_burst(&mut self, now: Instant, burst: f64) {
        TokenBucket::set_burst(self, now, burst)
    }
    fn drain(&mut self, now: Instant) -> f64 {
        TokenBucket::drain(self, now)
    }
    fn give_back(&mut self, now: Instant, tokens: f64) {
        TokenBucket::give_back(self, now, tokens)
    }
}

/// A quota group's bucket that also keeps every second within the allowed
/// rate (`policy::plan_window`): what a plan with no configured burst gets.
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

impl QuotaBucket for WindowedBucket {
    fn try_take(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        QuotaBucket::check(self, now, cost)?; // the longer of the two waits
        self.bucket.try_take(now, cost)?;
        self.window.take(now, cost);
        Ok(())
    }
    fn check(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        match (self.bucket.check(now, cost), self.window.check(now, cost)) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(a), Err(b)) => Err(a.max(b)),
            (Err(wait), Ok(())) | (Ok(()), Err(wait)) => Err(wait),
        }
    }
    fn set_rate(&mut self, now: Instant, rate: f64) {
        self.bucket.set_rate(now, rate);
        self.window.set_cap(rate);
    }
    fn set_burst(&mut self, now: Instant, burst: f64) {
        self.bucket.set_burst(now, burst);
    }
    fn drain(&mut self, now: Instant) -> f64 {
        self.bucket.drain(now)
    }
    fn give_back(&mut self, now: Instant, tokens: f64) {
        self.bucket.give_back(now, tokens);
    }
    fn seed(&mut self, charges: &[(Instant, f64)]) {
        for &(at, cost) in charges {
            self.window.take(at, cost);
        }
    }
    fn answered(&mut self, charged_at: Instant, cost: f64, now: Instant) {
        self.window.answered(charged_at, cost, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::at;

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
    fn charges_a_lease_paid_in_the_last_second_count_in_the_window() {
        // Falling from a lease at 1,000 ms with 15 CU paid by it at 600 ms: a 20 CU/s window has 5
        // left until 1,600 ms, when they leave it.
        let mut b = WindowedBucket::new(20.0, 20.0, at(0));
        b.seed(&[(at(600), 15.0)]);
        let taken = (0..20).filter(|_| b.try_take(at(1000), 1.0).is_ok()).count();
        assert_eq!(taken, 5);
        assert!(b.try_take(at(1600), 1.0).is_ok(), "the seeded charges left the second");
        // A token bucket keeps no second: seeding it changes nothing.
        let mut t = TokenBucket::new(20.0, 20.0, at(0), true);
        QuotaBucket::seed(&mut t, &[(at(600), 15.0)]);
        assert_eq!((0..20).filter(|_| QuotaBucket::try_take(&mut t, at(1000), 1.0).is_ok()).count(), 20);
    }

    #[test]
    fn a_lower_rate_lowers_the_second() {
        let mut b = WindowedBucket::new(20.0, 20.0, at(0));
        b.set_rate(at(0), 10.0);
        let taken = (0..20).filter(|_| b.try_take(at(0), 1.0).is_ok()).count();
        assert_eq!(taken, 10, "AIMD's rate is the second's bound too");
    }
}
