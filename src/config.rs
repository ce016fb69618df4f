//! Relayer configuration, validated into typed errors that name the field.
//!
//! Field names are the JS option names (`maxRetries`, `baseDelayMs`…), so
//! an error thrown at construction points at the exact option to fix.

use std::time::Duration;

pub use crate::config_error::ConfigError;
use crate::options::{EndpointSpec, PoolOptions};
use crate::policy::{Backoff, RetryBudgetConfig};
use crate::ranges;

/// Which backoff family the relayer uses between attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackoffKind {
    /// Uniform in `[0, min(max, base·2^n)]` (default).
    #[default]
    FullJitter,
    /// Half fixed, half random.
    EqualJitter,
    /// Grows from the previous delay.
    DecorrelatedJitter,
    /// `base·2^n`, no jitter.
    Exponential,
    /// `base·(n+1)`, no jitter.
    Linear,
    /// Always `base`.
    Fixed,
}

impl BackoffKind {
    /// Parses the JS spelling (`"fullJitter"`, …).
    pub fn parse(name: &str) -> Result<Self, ConfigError> {
        Ok(match name {
            "fullJitter" => BackoffKind::FullJitter,
            "equalJitter" => BackoffKind::EqualJitter,
            "decorrelatedJitter" => BackoffKind::DecorrelatedJitter,
            "exponential" => BackoffKind::Exponential,
            "linear" => BackoffKind::Linear,
            "fixed" => BackoffKind::Fixed,
            _ => {
                return Err(ConfigError::new(
                    "backoff",
                    "must be one of fullJitter, equalJitter, decorrelatedJitter, exponential, linear, fixed",
                ))
            }
        })
    }
}

/// Everything the request pipeline needs, already validated.
#[derive(Clone, Debug)]
pub struct RelayerConfig {
    /// Upstream endpoints in configuration order.
    pub endpoints: Vec<EndpointSpec>,
    /// Pool options (strategy, breaker, quota groups, cache…).
    pub pool: PoolOptions,
    /// Retries after the first attempt (so attempts = maxRetries + 1).
    pub max_retries: u32,
    /// Backoff schedule between attempts.
    pub backoff: Backoff,
    /// Per-attempt timeout.
    pub attempt_timeout: Duration,
    /// Deadline of one logical request, all attempts and waits included.
    pub deadline: Duration,
    /// The shared retry budget.
    pub budget: RetryBudgetConfig,
    /// Longest server-requested wait (Retry-After) the relayer will honour.
    pub max_retry_after: Duration,
    /// Largest response body accepted, in bytes.
    pub max_response_bytes: u32,
}

/// Raw option values as they arrive from JS (milliseconds as numbers),
/// before validation. `None` means "use the default".
#[derive(Clone, Debug, Default)]
pub struct RawOptions {
    /// `maxRetries` (default 4).
    pub max_retries: Option<f64>,
    /// `baseDelayMs` (default 1000).
    pub base_delay_ms: Option<f64>,
    /// `maxDelayMs` (default 15000).
    pub max_delay_ms: Option<f64>,
    /// `backoff` (default `fullJitter`).
    pub backoff: Option<String>,
    /// `attemptTimeoutMs` (default 10000).
    pub attempt_timeout_ms: Option<f64>,
    /// `deadlineMs` (default 30000).
    pub deadline_ms: Option<f64>,
    /// `budget` (default ratio 0.2, 0.5/s floor, burst 5).
    pub budget: Option<RetryBudgetConfig>,
    /// `maxRetryAfterMs` (default 60000).
    pub max_retry_after_ms: Option<f64>,
    /// `maxResponseBytes` (default 32 MiB).
    pub max_response_bytes: Option<f64>,
    /// Pool options, already parsed.
    pub pool: PoolOptions,
}

fn millis(field: &str, value: Option<f64>, default: f64, min: f64) -> Result<Duration, ConfigError> {
    ranges::millis(field, value.unwrap_or(default), min)
}

fn whole(field: &str, value: Option<f64>, default: u32, max: u32) -> Result<u32, ConfigError> {
    ranges::whole(field, value.unwrap_or(f64::from(default)), 0, max)
}

impl RelayerConfig {
    /// Validates raw options against the upstream list.
    pub fn build(endpoints: Vec<EndpointSpec>, raw: RawOptions) -> Result<Self, ConfigError> {
        if endpoints.is_empty() {
            return Err(ConfigError::new("upstreams", "at least one RPC URL is required"));
        }
        raw.pool.validate()?;
        for (i, e) in endpoints.iter().enumerate() {
            e.validate(&format!("upstreams[{i}]"), &raw.pool.quota_groups)?;
            // The same URL with the same headers twice is a copy-paste slip: it would
            // double that node's share and make "failing over" go to the same node.
            let identity = e.url.identity();
            let twin = endpoints[..i]
                .iter()
                .position(|o| !identity.is_empty() && o.url.identity() == identity && o.headers == e.headers);
            if let Some(j) = twin {
                return Err(ConfigError::new(format!("upstreams[{i}]"), format!("duplicate of upstreams[{j}]")));
            }
        }
        // A plan no upstream names would limit nothing: a new user's `quota: { alchemy: { … } }`
        // beside plain URLs charged 0 CU, silently.
        if let Some((name, _)) = raw
            .pool
            .quota_groups
            .iter()
            .find(|(name, _)| !endpoints.iter().any(|e| e.quota_group.as_deref() == Some(name)))
        {
            return Err(ConfigError::new(
                format!("quota.{name}"),
                format!("no upstream names this group, so it would limit nothing: give the endpoints of its key `{{ url, quotaGroup: '{name}' }}`"),
            ));
        }
        let max_retries = whole("maxRetries", raw.max_retries, 4, 100)?;
        let base = millis("baseDelayMs", raw.base_delay_ms, 1000.0, 0.0)?;
        let cap = millis("maxDelayMs", raw.max_delay_ms, 15_000.0, 0.0)?;
        if cap < base {
            return Err(ConfigError::new("maxDelayMs", "must be greater than or equal to baseDelayMs"));
        }
        let kind = raw.backoff.as_deref().map(BackoffKind::parse).transpose()?.unwrap_or_default();
        let backoff = match kind {
            BackoffKind::FullJitter => Backoff::FullJitter { base, cap },
            BackoffKind::EqualJitter => Backoff::EqualJitter { base, cap },
            BackoffKind::DecorrelatedJitter => Backoff::DecorrelatedJitter { base, cap },
            BackoffKind::Exponential => Backoff::Exponential { base, cap },
            BackoffKind::Linear => Backoff::Linear { base, cap },
            BackoffKind::Fixed => Backoff::Fixed { base, cap },
        };
        let attempt_timeout = millis("attemptTimeoutMs", raw.attempt_timeout_ms, 10_000.0, 1.0)?;
        let deadline = millis("deadlineMs", raw.deadline_ms, 30_000.0, 1.0)?;
        let budget = raw.budget.unwrap_or_default();
        budget.validate()?;
        let max_retry_after = millis("maxRetryAfterMs", raw.max_retry_after_ms, 60_000.0, 0.0)?;
        let max_response_bytes = whole("maxResponseBytes", raw.max_response_bytes, 32 << 20, u32::MAX)?;
        if max_response_bytes == 0 {
            return Err(ConfigError::new("maxResponseBytes", "must be at least 1"));
        }
        Ok(RelayerConfig {
            endpoints,
            pool: raw.pool,
            max_retries,
            backoff,
            attempt_timeout,
            deadline,
            budget,
            max_retry_after,
            max_response_bytes,
        })
    }

    /// Attempts per logical request, the first included.
    pub fn max_attempts(&self) -> u32 {
        self.max_retries.saturating_add(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::EndpointUrl;

    fn urls() -> Vec<EndpointSpec> {
        vec![EndpointSpec::from_url(EndpointUrl::parse("http://127.0.0.1:8545", "upstreams[0]").unwrap(), 0)]
    }

    fn field_of(raw: RawOptions) -> String {
        RelayerConfig::build(urls(), raw).unwrap_err().field().to_string()
    }

    #[test]
    fn defaults_match_the_documented_ones() {
        let c = RelayerConfig::build(urls(), RawOptions::default()).unwrap();
        assert_eq!(c.max_attempts(), 5);
        assert_eq!(c.backoff, Backoff::FullJitter { base: Duration::from_secs(1), cap: Duration::from_secs(15) });
        assert_eq!(c.deadline, Duration::from_secs(30));
        assert_eq!(c.attempt_timeout, Duration::from_secs(10));
    }

    #[test]
    fn every_bad_option_names_its_field() {
        assert_eq!(RelayerConfig::build(vec![], RawOptions::default()).unwrap_err().field(), "upstreams");
        assert_eq!(field_of(RawOptions { max_retries: Some(-1.0), ..Default::default() }), "maxRetries");
        assert_eq!(field_of(RawOptions { max_retries: Some(1.5), ..Default::default() }), "maxRetries");
        assert_eq!(field_of(RawOptions { base_delay_ms: Some(-10.0), ..Default::default() }), "baseDelayMs");
        assert_eq!(field_of(RawOptions { max_delay_ms: Some(f64::NAN), ..Default::default() }), "maxDelayMs");
        assert_eq!(
            field_of(RawOptions { base_delay_ms: Some(500.0), max_delay_ms: Some(100.0), ..Default::default() }),
            "maxDelayMs"
        );
        assert_eq!(field_of(RawOptions { backoff: Some("random".into()), ..Default::default() }), "backoff");
        assert_eq!(field_of(RawOptions { attempt_timeout_ms: Some(0.0), ..Default::default() }), "attemptTimeoutMs");
        assert_eq!(field_of(RawOptions { deadline_ms: Some(1e300), ..Default::default() }), "deadlineMs");
        assert_eq!(field_of(RawOptions { max_response_bytes: Some(0.0), ..Default::default() }), "maxResponseBytes");
    }

    #[test]
    fn a_quota_group_no_upstream_names_is_an_error_not_a_plan_that_limits_nothing() {
        let mut raw = RawOptions::default();
        let plan = crate::policy::quota::QuotaConfig { cu_per_second: 100.0, ..Default::default() };
        raw.pool.quota_groups = vec![("alchemy".into(), plan)];
        let error = RelayerConfig::build(urls(), raw.clone()).unwrap_err();
        assert_eq!(error.field(), "quota.alchemy");
        assert!(error.to_string().contains("quotaGroup: 'alchemy'"), "{error}");
        let mut named = urls();
        named[0].quota_group = Some("alchemy".into());
        assert!(RelayerConfig::build(named, raw).is_ok());
    }
}
