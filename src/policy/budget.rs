//! The retry budget: a token bucket shared by every request of a relayer.
//!
//! Why a budget and not only an attempt limit: with N layers each allowed
//! three retries, an outage multiplies load by 4^N. A budget caps retries
//! as a fraction of real traffic, so when everything fails the extra load
//! is bounded (say 20 %) no matter how many requests are in flight.
//!
//! Rules: every first attempt deposits `ratio` tokens; every retry (and
//! every failover, which is also a retry) withdraws one whole token. A
//! floor refill of `min_per_second` tokens per second lets a quiet client
//! still retry its rare failures. The balance never exceeds `burst`, and
//! it starts full so a fresh relayer can ride out its first hiccup.

use std::time::Duration;

use crate::config_error::ConfigError;
use crate::time::Instant;

/// Tuning of the retry budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryBudgetConfig {
    /// Tokens deposited per first attempt (0.2 = retries may add 20 %).
    pub ratio: f64,
    /// Tokens refilled per second regardless of traffic.
    pub min_per_second: f64,
    /// Largest balance, and the starting balance.
    pub burst: f64,
}

impl Default for RetryBudgetConfig {
    fn default() -> Self {
        RetryBudgetConfig { ratio: 0.2, min_per_second: 0.5, burst: 5.0 }
    }
}

impl RetryBudgetConfig {
    /// Checks every field, naming the first bad one (as `budget.…`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_at("budget")
    }

    /// Checks every field, naming the first bad one under `path`
    /// (`fleet.budget` for the realm's).
    pub fn validate_at(&self, path: &str) -> Result<(), ConfigError> {
        let finite_non_negative = |v: f64| v.is_finite() && v >= 0.0;
        if !finite_non_negative(self.ratio) {
            return Err(ConfigError::new(format!("{path}.ratio"), "must be a finite number >= 0"));
        }
        if !finite_non_negative(self.min_per_second) {
            return Err(ConfigError::new(format!("{path}.minPerSecond"), "must be a finite number >= 0"));
        }
        if !(self.burst.is_finite() && self.burst >= 1.0) {
            return Err(ConfigError::new(format!("{path}.burst"), "must be a finite number >= 1"));
        }
        Ok(())
    }
}

/// The live bucket. Pure: time is an argument.
#[derive(Clone, Debug)]
pub struct RetryBudget {
    config: RetryBudgetConfig,
    tokens: f64,
    refilled_at: Instant,
}

impl RetryBudget {
    /// A full bucket as of `now`.
    pub fn new(config: RetryBudgetConfig, now: Instant) -> Self {
        RetryBudget { config, tokens: config.burst, refilled_at: now }
    }

    /// Records a first attempt.
    pub fn deposit(&mut self, now: Instant) {
        self.refill(now);
        self.tokens = (self.tokens + self.config.ratio).min(self.config.burst);
    }

    /// Takes one token for a retry; `false` means the retry must not happen.
    pub fn try_withdraw(&mut self, now: Instant) -> bool {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Takes one token whatever the balance, down to one burst of debt: an
    /// extra attempt that must go (a hedge of a primary stranded on a node
    /// whose breaker opened) is still paid for, so the share holds over
    /// time and later retries wait until the debt is repaid.
    pub fn overdraw(&mut self, now: Instant) {
        self.refill(now);
        self.tokens = (self.tokens - 1.0).max(-self.config.burst);
    }

    /// The balance as of `now` (for stats).
    pub fn balance(&mut self, now: Instant) -> f64 {
        self.refill(now);
        self.tokens
    }

    fn refill(&mut self, now: Instant) {
        let elapsed: Duration = now.saturating_since(self.refilled_at);
        self.refilled_at = self.refilled_at.max(now);
        let added = elapsed.as_secs_f64() * self.config.min_per_second;
        self.tokens = (self.tokens + added).min(self.config.burst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::time::at;

    #[test]
    fn starts_full_then_limits_retries_to_the_ratio_of_traffic() {
        let cfg = RetryBudgetConfig { ratio: 0.2, min_per_second: 0.0, burst: 3.0 };
        let mut budget = RetryBudget::new(cfg, at(0));
        assert!(budget.try_withdraw(at(0)));
        assert!(budget.try_withdraw(at(0)));
        assert!(budget.try_withdraw(at(0)));
        assert!(!budget.try_withdraw(at(0)), "burst spent");
        for _ in 0..4 {
            budget.deposit(at(0));
        }
        assert!(!budget.try_withdraw(at(0)), "4 × 0.2 < 1");
        budget.deposit(at(0));
        assert!(budget.try_withdraw(at(0)), "5 first attempts pay for one retry");
        for _ in 0..5 {
            budget.overdraw(at(0));
        }
        assert_eq!(budget.balance(at(0)), -3.0, "an overdraft is at most one burst of debt");
        for _ in 0..15 {
            budget.deposit(at(0));
        }
        assert!(!budget.try_withdraw(at(0)), "3 of debt repaid, nothing left: 15 × 0.2 = 3");
    }

    #[test]
    fn the_floor_refills_over_time_so_quiet_clients_can_retry() {
        let cfg = RetryBudgetConfig { ratio: 0.0, min_per_second: 2.0, burst: 1.0 };
        let mut budget = RetryBudget::new(cfg, at(0));
        assert!(budget.try_withdraw(at(0)));
        assert!(!budget.try_withdraw(at(499)));
        assert!(budget.try_withdraw(at(500)));
    }

    #[test]
    fn a_clock_going_backwards_neither_refills_nor_panics() {
        let cfg = RetryBudgetConfig { ratio: 0.0, min_per_second: 1.0, burst: 1.0 };
        let mut budget = RetryBudget::new(cfg, at(10_000));
        assert!(budget.try_withdraw(at(10_000)));
        assert!(!budget.try_withdraw(at(0)));
        assert!(!budget.try_withdraw(at(10_500)));
        assert!(budget.try_withdraw(at(11_000)));
    }

    #[test]
    fn invalid_fields_are_named() {
        let bad = RetryBudgetConfig { ratio: -1.0, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().field(), "budget.ratio");
        let bad = RetryBudgetConfig { burst: 0.5, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().field(), "budget.burst");
        let bad = RetryBudgetConfig { min_per_second: f64::NAN, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().field(), "budget.minPerSecond");
    }

    proptest! {
        #[test]
        fn tokens_stay_between_zero_and_burst(ops in proptest::collection::vec((any::<bool>(), 0u64..5_000), 0..200)) {
            let cfg = RetryBudgetConfig { ratio: 0.3, min_per_second: 0.5, burst: 4.0 };
            let mut budget = RetryBudget::new(cfg, at(0));
            let mut now = 0;
            for (deposit, step) in ops {
                now += step;
                if deposit { budget.deposit(at(now)); } else { budget.try_withdraw(at(now)); }
                let b = budget.balance(at(now));
                prop_assert!((0.0..=4.0).contains(&b));
            }
        }
    }
}
