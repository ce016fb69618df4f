//! A token bucket: the shape behind quota groups, slow-start rate caps and
//! per-process shares of a plan. Pure: time is an argument.
//!
//! Tokens refill continuously at `rate` per second up to `burst`; a take of
//! `cost` succeeds if that many tokens are there, and otherwise reports how
//! long until they will be. Tokens never go negative and never exceed the
//! burst. A cost above the burst can never be saved up for, so it is
//! charged as a full bucket instead of waiting forever.

use std::time::Duration;

use crate::time::Instant;

/// The bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl TokenBucket {
    /// A bucket refilling `rate` tokens/s up to `burst`, starting full or empty.
    /// An infinite or NaN rate means "unlimited".
    pub fn new(rate: f64, burst: f64, now: Instant, start_full: bool) -> Self {
        let burst = if burst.is_finite() && burst > 0.0 { burst } else { 1.0 };
        let rate = if rate.is_nan() || rate < 0.0 { f64::INFINITY } else { rate };
        TokenBucket { rate, burst, tokens: if start_full { burst } else { 0.0 }, at: now }
    }

    /// Tokens per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Changes the refill rate from `now` on.
    pub fn set_rate(&mut self, now: Instant, rate: f64) {
        self.refill(now);
        self.rate = if rate.is_nan() || rate < 0.0 { 0.0 } else { rate };
    }

    /// Changes the burst from `now` on; tokens above it are dropped.
    pub fn set_burst(&mut self, now: Instant, burst: f64) {
        self.refill(now);
        if burst.is_finite() && burst > 0.0 {
            self.burst = burst;
            self.tokens = self.tokens.min(burst);
        }
    }

    /// Empties the bucket at `now` (it refills at its rate from there);
    /// returns what it held.
    pub fn drain(&mut self, now: Instant) -> f64 {
        self.refill(now);
        std::mem::take(&mut self.tokens)
    }

    /// Puts back `tokens` withheld by a [`drain`](TokenBucket::drain) that
    /// turned out needless, never above the burst (a negative or NaN amount
    /// puts nothing back).
    pub fn give_back(&mut self, now: Instant, tokens: f64) {
        self.refill(now);
        if tokens > 0.0 {
            self.tokens = (self.tokens + tokens).min(self.burst);
        }
    }

    /// Tokens available at `now`.
    pub fn available(&mut self, now: Instant) -> f64 {
        self.refill(now);
        self.tokens
    }

    /// Whether `cost` could be taken at `now`, without taking it.
    pub fn check(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        self.refill(now);
        let need = crate::policy::bound(cost, 0.0, self.burst);
        if self.rate.is_infinite() || self.tokens + 1e-9 >= need {
            return Ok(());
        }
        if self.rate <= 0.0 {
            return Err(Duration::from_secs(3600));
        }
        let wait = (need - self.tokens) / self.rate;
        Err(Duration::try_from_secs_f64(wait).unwrap_or(Duration::from_secs(3600)).max(Duration::from_millis(1)))
    }

    /// Takes `cost` tokens, or says how long until it could.
    pub fn try_take(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        self.check(now, cost)?;
        let need = crate::policy::bound(cost, 0.0, self.burst);
        self.tokens = (self.tokens - need).max(0.0);
        Ok(())
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_since(self.at).as_secs_f64();
        self.at = self.at.max(now);
        if self.rate.is_infinite() {
            self.tokens = self.burst;
        } else {
            self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::time::at;

    #[test]
    fn takes_refill_and_waits() {
        let mut b = TokenBucket::new(10.0, 5.0, at(0), true);
        for _ in 0..5 {
            assert!(b.try_take(at(0), 1.0).is_ok());
        }
        assert_eq!(b.try_take(at(0), 1.0), Err(Duration::from_millis(100)));
        assert!(b.try_take(at(100), 1.0).is_ok());
        assert_eq!(b.try_take(at(100), 3.0), Err(Duration::from_millis(300)));
    }

    #[test]
    fn a_drain_says_what_it_held_and_a_give_back_stays_within_the_burst() {
        let mut b = TokenBucket::new(10.0, 5.0, at(0), true);
        assert_eq!(b.drain(at(0)), 5.0);
        b.give_back(at(100), 3.0);
        assert!((b.available(at(100)) - 4.0).abs() < 1e-9, "1 refilled + 3 given back");
        b.give_back(at(100), 3.0);
        assert_eq!(b.available(at(100)), 5.0, "never above the burst");
        b.drain(at(100));
        for bad in [-2.0, f64::NAN] {
            b.give_back(at(100), bad);
            assert_eq!(b.available(at(100)), 0.0, "{bad} puts nothing back");
        }
    }

    #[test]
    fn an_empty_start_and_a_cost_above_the_burst() {
        let mut b = TokenBucket::new(2.0, 4.0, at(0), false);
        assert!(b.try_take(at(0), 1.0).is_err());
        assert!(b.try_take(at(2000), 100.0).is_ok(), "charged as a full bucket");
        assert!(b.available(at(2000)) < 1e-9);
    }

    #[test]
    fn rate_and_burst_changes_apply_from_now_and_refuse_nonsense() {
        let mut b = TokenBucket::new(10.0, 5.0, at(0), false);
        assert_eq!(b.rate(), 10.0);
        b.set_rate(at(100), 20.0);
        assert_eq!(b.rate(), 20.0);
        assert!((b.available(at(100)) - 1.0).abs() < 1e-9, "the first 100 ms refilled at the old rate");
        assert!((b.available(at(200)) - 3.0).abs() < 1e-9, "then at the new one");
        for bad in [-1.0, f64::NAN] {
            b.set_rate(at(200), bad);
            assert_eq!(b.rate(), 0.0, "{bad}: a broken rate stops refills");
        }
        b.set_rate(at(200), 0.0);
        assert_eq!(b.rate(), 0.0);
        let mut c = TokenBucket::new(1.0, 10.0, at(0), true);
        c.set_burst(at(0), 4.0);
        assert_eq!(c.available(at(0)), 4.0, "tokens above the new burst are dropped");
        assert!(c.try_take(at(0), 4.0).is_ok());
        assert!((c.available(at(10_000)) - 4.0).abs() < 1e-9, "refills stop at the new burst");
        for bad in [0.0, -3.0, f64::INFINITY, f64::NAN] {
            c.set_burst(at(10_000), bad);
            assert!((c.available(at(10_000)) - 4.0).abs() < 1e-9, "{bad} is ignored");
        }
        c.set_burst(at(10_000), 8.0);
        assert!((c.available(at(14_000)) - 8.0).abs() < 1e-9, "a larger burst fills up to it");
        assert_eq!(
            TokenBucket::new(-5.0, 1.0, at(0), false).rate(),
            f64::INFINITY,
            "a broken rate at birth: unlimited"
        );
    }

    #[test]
    fn unlimited_and_zero_rates() {
        let mut b = TokenBucket::new(f64::INFINITY, 1.0, at(0), false);
        for _ in 0..1000 {
            assert!(b.try_take(at(0), 50.0).is_ok());
        }
        let mut z = TokenBucket::new(1.0, 1.0, at(0), true);
        z.set_rate(at(0), 0.0);
        assert!(z.try_take(at(0), 1.0).is_ok());
        assert!(z.try_take(at(1_000_000), 1.0).is_err());
    }

    proptest! {
        #[test]
        fn tokens_stay_within_zero_and_burst(ops in proptest::collection::vec((0u64..2_000, 0.0f64..20.0, 0.0f64..50.0), 0..200)) {
            let mut b = TokenBucket::new(5.0, 10.0, at(0), true);
            let mut now = 0;
            for (step, cost, rate) in ops {
                now += step;
                if cost > 15.0 { b.set_rate(at(now), rate); } else { let _ = b.try_take(at(now), cost); }
                let t = b.available(at(now));
                prop_assert!((0.0..=10.0).contains(&t), "{t}");
            }
        }
    }
}
