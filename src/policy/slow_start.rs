//! Slow start after recovery (or when an endpoint joins).
//!
//! Why both weight and an absolute cap: weight only sets a *share*. With
//! one endpoint left, any weight takes all traffic. So during warm-up the
//! factor `max(elapsed / warmup, floor)` scales the endpoint's routing
//! weight, its concurrency limit and its rate caps, and the rate buckets
//! restart empty instead of full.

use std::time::Duration;

use crate::config_error::ConfigError;
use crate::time::Instant;

/// Tuning of slow start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlowStartConfig {
    /// Time to reach full share.
    pub warmup: Duration,
    /// Share at the start of the ramp (0..=1).
    pub floor: f64,
    /// Requests/s an endpoint may always get while warming, whatever its
    /// history (so a quiet wallet is not starved after a recovery).
    pub min_rps: f64,
}

impl Default for SlowStartConfig {
    fn default() -> Self {
        SlowStartConfig { warmup: Duration::from_secs(30), floor: 0.1, min_rps: 1.0 }
    }
}

impl SlowStartConfig {
    /// Checks every field, naming the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.floor > 0.0 && self.floor <= 1.0) {
            return Err(ConfigError::new("slowStart.floor", "must be in (0, 1]"));
        }
        if !(self.min_rps.is_finite() && self.min_rps > 0.0) {
            return Err(ConfigError::new("slowStart.minRps", "must be a positive number"));
        }
        Ok(())
    }
}

/// The ramp of one endpoint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlowStart {
    config: SlowStartConfig,
    since: Option<Instant>,
}

impl SlowStart {
    /// A ramp that starts at `now` (an endpoint coming back, or joining a
    /// pool that already carries traffic).
    pub fn new(config: SlowStartConfig, now: Instant) -> Self {
        let since = (!config.warmup.is_zero()).then_some(now);
        SlowStart { config, since }
    }

    /// No ramp: the endpoints a relayer starts with. Slow start protects a
    /// node that comes back from the backlog that built up while it was
    /// gone; at construction there is none, and ramping every endpoint of
    /// a fresh client would only throttle its first burst (10,000 reads at
    /// start ran at ~7 concurrent per endpoint for seconds).
    pub fn warm(config: SlowStartConfig) -> Self {
        SlowStart { config, since: None }
    }

    /// Restarts the ramp (a breaker closed).
    pub fn restart(&mut self, now: Instant) {
        self.since = (!self.config.warmup.is_zero()).then_some(now);
    }

    /// The share in `[floor, 1]` at `now`; 1 once warm.
    pub fn factor(&mut self, now: Instant) -> f64 {
        let Some(since) = self.since else { return 1.0 };
        let elapsed = now.saturating_since(since);
        if elapsed >= self.config.warmup {
            self.since = None;
            return 1.0;
        }
        (elapsed.as_secs_f64() / self.config.warmup.as_secs_f64()).max(self.config.floor)
    }

    /// Whether the ramp is still running.
    pub fn warming(&mut self, now: Instant) -> bool {
        self.factor(now) < 1.0
    }

    /// The absolute rate cap: the endpoint's throughput before it failed,
    /// scaled by `ramp`, never below `min_rps` (so a quiet client is never
    /// starved; herds of clients are paced by the pool after total outages).
    pub fn rate_cap(&self, healthy_rps: f64, ramp: f64) -> f64 {
        let full = if healthy_rps.is_finite() { healthy_rps.max(0.0) } else { 0.0 };
        (full * ramp).max(self.config.min_rps)
    }

    /// The ramp since `since`: `max(elapsed / warmup, floor)`, not capped at
    /// 1, so a cap that still has a backlog behind it keeps growing instead
    /// of vanishing at once when the warm-up time is over.
    pub fn ramp(&self, since: Instant, now: Instant) -> f64 {
        if self.config.warmup.is_zero() {
            return f64::INFINITY;
        }
        (now.saturating_since(since).as_secs_f64() / self.config.warmup.as_secs_f64()).max(self.config.floor)
    }
}

/// Events per second, smoothed over one-second windows: "what this
/// endpoint was serving while healthy", the full rate slow start returns
/// to, or a pool's demand before an outage, the rate recovery paces at.
///
/// Its owner stops counting at times (an endpoint while it warms up) or
/// knows the window being counted is not the rate it measures (a pool's
/// demand at the end of an outage) and says so with
/// [`RateMeter::restart`]: the next count starts a new window. Without
/// that, the first window after a pause spanned the whole pause and read it
/// as a quiet spell, so every fault cycle cut the remembered rate by up to
/// the smoothing's 30 %: part of the soak's throughput ratchet (2026-12-02).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateMeter {
    window_start: Instant,
    count: u32,
    /// Events and seconds per window, each smoothed (30 % per window):
    /// their ratio is the rate. (A mean of per-window rates read a client
    /// sending every 1–3 s at 0.55/s, not 0.5: the mean of 1/interval.)
    smoothed: Option<(f64, f64)>,
    restarting: bool,
}

impl RateMeter {
    /// A meter that counts from its first event (not from `now`: the time
    /// before a client sends anything is not a quiet spell of its demand).
    pub fn new(now: Instant) -> Self {
        RateMeter { window_start: now, count: 0, smoothed: None, restarting: true }
    }

    /// Drops the window being counted (the rate stays what it was): the
    /// next [`RateMeter::record`] starts a new one.
    pub fn restart(&mut self) {
        self.restarting = true;
    }

    /// Counts one event at `now`.
    pub fn record(&mut self, now: Instant) {
        if std::mem::take(&mut self.restarting) {
            self.window_start = now;
            self.count = 1;
            return;
        }
        let elapsed = now.saturating_since(self.window_start);
        if elapsed >= Duration::from_secs(1) {
            let (events, secs) = (f64::from(self.count), elapsed.as_secs_f64());
            self.smoothed =
                Some(self.smoothed.map_or((events, secs), |(e, s)| (e + 0.3 * (events - e), s + 0.3 * (secs - s))));
            self.window_start = now;
            self.count = 0;
        }
        self.count = self.count.saturating_add(1);
    }

    /// Sets the rate to `rate` (per second), as if the windows measured had
    /// carried it: an owner that knows what it measured lately is not the
    /// rate it wants to remember (measured while held down, or noise).
    /// Nothing changes for a rate that is not a finite number ≥ 0, or on a
    /// meter that measured nothing yet and is told 0.
    pub fn set_rate(&mut self, rate: f64) {
        if !(rate.is_finite() && rate >= 0.0) {
            return;
        }
        match self.smoothed.as_mut() {
            Some((events, secs)) => *events = rate * *secs,
            None if rate > 0.0 => self.smoothed = Some((rate, 1.0)),
            None => {}
        }
    }

    /// The smoothed rate, or before the first full window what the window
    /// so far counted (per second, over a quarter second at least): a pool
    /// that lost every endpoint in its first second knows some demand.
    pub fn rate_so_far(&self, now: Instant) -> f64 {
        if self.smoothed.is_some() || self.restarting {
            return self.rate();
        }
        let secs = now.saturating_since(self.window_start).as_secs_f64().max(0.25);
        f64::from(self.count) / secs
    }

    /// The smoothed rate (0 before the first full window).
    pub fn rate(&self) -> f64 {
        self.smoothed.map_or(0.0, |(events, secs)| events / secs)
    }

    /// Whether a full window was measured yet.
    pub fn has_rate(&self) -> bool {
        self.smoothed.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::time::at;

    #[test]
    fn ramps_linearly_from_the_floor_to_full() {
        let mut s =
            SlowStart::new(SlowStartConfig { warmup: Duration::from_secs(10), floor: 0.2, min_rps: 1.0 }, at(0));
        assert_eq!(s.factor(at(0)), 0.2);
        assert_eq!(s.factor(at(1000)), 0.2);
        assert!((s.factor(at(5000)) - 0.5).abs() < 1e-9);
        assert_eq!(s.factor(at(10_000)), 1.0);
        assert!(!s.warming(at(10_000)));
        s.restart(at(20_000));
        assert_eq!(s.factor(at(20_000)), 0.2);
    }

    #[test]
    fn the_config_refuses_shares_and_rates_that_make_no_sense() {
        let ok = SlowStartConfig::default();
        assert!(ok.validate().is_ok());
        assert!(SlowStartConfig { floor: 1.0, ..ok }.validate().is_ok(), "a floor of 1 is no ramp at all");
        for floor in [0.0, -0.1, 1.1, f64::NAN] {
            assert_eq!(SlowStartConfig { floor, ..ok }.validate().unwrap_err().field(), "slowStart.floor", "{floor}");
        }
        for min_rps in [0.0, -1.0, f64::INFINITY, f64::NAN] {
            assert_eq!(
                SlowStartConfig { min_rps, ..ok }.validate().unwrap_err().field(),
                "slowStart.minRps",
                "{min_rps}"
            );
        }
    }

    #[test]
    fn warming_until_the_ramp_is_done() {
        let mut s =
            SlowStart::new(SlowStartConfig { warmup: Duration::from_secs(10), floor: 0.2, min_rps: 1.0 }, at(0));
        assert!(s.warming(at(0)) && s.warming(at(9_999)));
        assert!(!s.warming(at(10_000)));
        assert!(!SlowStart::warm(SlowStartConfig::default()).warming(at(0)), "the endpoints a relayer starts with");
    }

    #[test]
    fn a_pause_is_not_read_as_a_quiet_spell() {
        let mut m = RateMeter::new(at(0));
        for ms in (0..3000).step_by(10) {
            m.record(at(ms)); // 100 a second
        }
        let before = m.rate();
        assert!((before - 100.0).abs() < 1.0, "{before}");
        m.restart();
        assert_eq!(m.rate(), before, "a restart keeps the rate");
        // Counting again ten seconds later, at the same rate: the rate stays.
        for ms in (13_000..16_000).step_by(10) {
            m.record(at(ms));
        }
        assert!((m.rate() - before).abs() < 1.0, "{} after the pause, {before} before", m.rate());
        // Without a restart, a real quiet spell is learned (one event in ten seconds).
        m.record(at(26_000));
        m.record(at(27_000));
        assert!(m.rate() < 75.0, "{}", m.rate());
    }

    #[test]
    fn zero_warmup_is_always_full() {
        let mut s = SlowStart::new(SlowStartConfig { warmup: Duration::ZERO, floor: 0.1, min_rps: 1.0 }, at(0));
        assert_eq!(s.factor(at(0)), 1.0);
    }

    #[test]
    fn the_rate_cap_follows_past_throughput_scaled_by_a_ramp_that_keeps_growing() {
        let s = SlowStart::new(SlowStartConfig { warmup: Duration::from_secs(10), floor: 0.1, min_rps: 0.5 }, at(0));
        assert_eq!(s.ramp(at(0), at(0)), 0.1);
        assert_eq!(s.ramp(at(0), at(5000)), 0.5);
        assert_eq!(s.ramp(at(0), at(20_000)), 2.0, "past the warm-up the ramp keeps growing");
        assert_eq!(s.rate_cap(100.0, 0.1), 10.0);
        assert_eq!(s.rate_cap(2.0, 0.1), 0.5, "never below min_rps");
        assert_eq!(s.rate_cap(f64::NAN, 2.0), 0.5);
    }

    #[test]
    fn the_meter_measures_successes_per_second() {
        let mut m = RateMeter::new(at(0));
        for i in 0..100 {
            m.record(at(i * 100)); // 10 per second for 10 s
        }
        assert!((m.rate() - 10.0).abs() < 0.5, "{}", m.rate());
        // The first full window sets the rate; later ones move it 30 % of the way.
        let mut m = RateMeter::new(at(0));
        assert!(!m.has_rate());
        for i in 0..20 {
            m.record(at(i * 50)); // 20 in the first second
        }
        m.record(at(1000));
        assert!((m.rate() - 20.0).abs() < 1e-9, "{}", m.rate());
        for i in 1..=5 {
            m.record(at(1000 + i * 200)); // the 1 s mark and four more: 5 in the second window
        }
        assert!((m.rate() - (20.0 + 0.3 * (5.0 - 20.0))).abs() < 1e-9, "{}", m.rate());
        // A window that lasts two seconds counts per second: events and
        // seconds are smoothed apart, the rate is their ratio.
        for t in [2200, 2400, 2600, 2800] {
            m.record(at(t));
        }
        m.record(at(4000));
        let expected = (15.5 + 0.3 * (5.0 - 15.5)) / (1.0 + 0.3 * (2.0 - 1.0));
        assert!((m.rate() - expected).abs() < 1e-9, "5 in 2 s: {}", m.rate());
        // Counting starts at the first event, not when the meter was made.
        let mut late = RateMeter::new(at(0));
        for t in (60_000..63_001).step_by(100) {
            late.record(at(t));
        }
        assert!((late.rate() - 10.0).abs() < 1e-9, "{}", late.rate());
        // A rate known to be wrong is set.
        late.set_rate(40.0);
        assert!((late.rate() - 40.0).abs() < 1e-9);
        late.set_rate(5.0);
        assert!((late.rate() - 5.0).abs() < 1e-9, "set: lowered too");
        late.set_rate(f64::NAN);
        assert!((late.rate() - 5.0).abs() < 1e-9);
        let mut fresh = RateMeter::new(at(0));
        fresh.set_rate(0.0);
        assert!(!fresh.has_rate());
        fresh.set_rate(7.0);
        assert!(fresh.has_rate() && (fresh.rate() - 7.0).abs() < 1e-9);
    }
}
