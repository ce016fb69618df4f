//! The seam between a quota group and its bucket: a token bucket when a
//! burst is configured, one that also keeps every second within the plan
//! when none is (`policy::plan_window`); a shared store's lease sits in
//! front of either (`quota/fleet.rs`).

use std::time::Duration;

use crate::policy::plan_window::WindowedBucket;
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
    /// Empties the bucket (it refills at its rate).
    fn drain(&mut self, now: Instant);
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
    fn drain(&mut self, now: Instant) {
        TokenBucket::drain(self, now)
    }
}

impl QuotaBucket for WindowedBucket {
    fn try_take(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        WindowedBucket::try_take(self, now, cost)
    }
    fn check(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        WindowedBucket::check(self, now, cost)
    }
    fn set_rate(&mut self, now: Instant, rate: f64) {
        WindowedBucket::set_rate(self, now, rate)
    }
    fn set_burst(&mut self, now: Instant, burst: f64) {
        WindowedBucket::set_burst(self, now, burst)
    }
    fn drain(&mut self, now: Instant) {
        WindowedBucket::drain(self, now)
    }
}
