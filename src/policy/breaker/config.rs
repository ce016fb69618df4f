//! A breaker's tuning and its validation (`policy::breaker`).

use std::time::Duration;

use crate::config_error::ConfigError;

/// Tuning of a breaker.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BreakerConfig {
    /// Consecutive infrastructure failures that trip it.
    pub consecutive_failures: u32,
    /// Failure rate over the window that trips it (0..=1).
    pub failure_rate: f64,
    /// The sliding window for the failure rate.
    pub window: Duration,
    /// Samples needed in the window before the rate counts.
    pub min_samples: u32,
    /// Open time after the first ejection.
    pub open_base: Duration,
    /// Longest open time.
    pub open_max: Duration,
    /// Relative jitter of the open time (0.2 = ±20 %).
    pub jitter: f64,
    /// Probes allowed at once in HalfOpen.
    pub probe_permits: u32,
    /// Probe successes needed to close.
    pub close_after: u32,
    /// Least time in HalfOpen before closing: a burst of quick successes
    /// (one cheap `eth_blockNumber` after another) proves little.
    pub observe: Duration,
    /// First early-probe spacing during a total outage.
    pub early_probe_base: Duration,
    /// Time in Closed after which the ejection count resets.
    pub reset_after: Duration,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            consecutive_failures: 3,
            // A node failing one request in four is worse than its
            // neighbours in any real fleet; 50 % lets a 30 % brownout
            // cost 30 % extra attempts forever.
            failure_rate: 0.25,
            window: Duration::from_secs(30),
            min_samples: 6,
            open_base: Duration::from_secs(30),
            open_max: Duration::from_secs(300),
            jitter: 0.2,
            probe_permits: 1,
            close_after: 3,
            observe: Duration::from_secs(1),
            early_probe_base: Duration::from_millis(500),
            reset_after: Duration::from_secs(600),
        }
    }
}

impl BreakerConfig {
    /// Checks every field, naming the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let f = |name: &str| format!("breaker.{name}");
        if self.consecutive_failures == 0 {
            return Err(ConfigError::new(f("consecutiveFailures"), "must be at least 1"));
        }
        if !(self.failure_rate > 0.0 && self.failure_rate <= 1.0) {
            return Err(ConfigError::new(f("failureRate"), "must be in (0, 1]"));
        }
        if self.window.is_zero() {
            return Err(ConfigError::new(f("windowMs"), "must be positive"));
        }
        if self.min_samples == 0 {
            return Err(ConfigError::new(f("minSamples"), "must be at least 1"));
        }
        if self.open_max < self.open_base {
            return Err(ConfigError::new(f("openMaxMs"), "must be >= openMs"));
        }
        if !(0.0..1.0).contains(&self.jitter) {
            return Err(ConfigError::new(f("jitter"), "must be in [0, 1)"));
        }
        if self.probe_permits == 0 {
            return Err(ConfigError::new(f("probePermits"), "must be at least 1"));
        }
        if self.close_after == 0 {
            return Err(ConfigError::new(f("closeAfter"), "must be at least 1"));
        }
        Ok(())
    }
}
