//! Decoded input → the core's configuration: an absent field takes the
//! config type's `Default` (said once, there), a present one is range
//! checked through `ranges.rs` with its full path. What needs the whole
//! configuration (maxDelayMs ≥ baseDelayMs, quota group names, duplicate
//! upstreams) stays in `RelayerConfig::build` and the `validate` methods.

use std::time::Duration;

use super::{
    BreakerInput, BudgetInput, CacheInput, ChainIdInput, EndpointInput, Entries, List, Num, OptionsInput, QuotaInput,
    RuleInput, Switch, UpstreamInput, UpstreamList,
};
use crate::config::RawOptions;
use crate::config_error::ConfigError;
use crate::options::{CacheConfig, EndpointSpec, HedgeConfig, PoolOptions, Strategy, ADAPTIVE_TIMEOUT};
use crate::policy::breaker::BreakerConfig;
use crate::policy::classify::UserRule;
use crate::policy::quota::QuotaConfig;
use crate::policy::slow_start::SlowStartConfig;
use crate::policy::wire_batch::WireBatchConfig;
use crate::policy::{ErrorClass, RetryBudgetConfig};
use crate::ranges::{bounded, millis, whole};
use crate::redact::EndpointUrl;
use crate::runtime::parse_quantity;

fn num(v: &Option<Num>) -> Option<f64> {
    v.map(|n| n.0)
}

/// A duration field (`None`: absent), 0 to one day.
/// A budget's settings over `defaults` (fields left out keep theirs).
fn retry_budget(b: &BudgetInput, defaults: RetryBudgetConfig) -> RetryBudgetConfig {
    RetryBudgetConfig {
        ratio: num(&b.ratio).unwrap_or(defaults.ratio),
        min_per_second: num(&b.min_per_second).unwrap_or(defaults.min_per_second),
        burst: num(&b.burst).unwrap_or(defaults.burst),
    }
}

fn ms(field: &str, v: &Option<Num>) -> Result<Option<Duration>, ConfigError> {
    num(v).map(|v| millis(field, v, 0.0)).transpose()
}

fn count(field: &str, v: &Option<Num>, min: u32, max: u32) -> Result<Option<u32>, ConfigError> {
    num(v).map(|v| whole(field, v, min, max)).transpose()
}

impl OptionsInput {
    /// The relayer's raw options and its classification rules.
    pub fn resolve(self) -> Result<(RawOptions, Vec<UserRule>), ConfigError> {
        let budget = self.budget.as_ref().map(|b| retry_budget(b, RetryBudgetConfig::default()));
        let rules = self.classify.as_ref().map_or(Ok(Vec::new()), rules)?;
        let raw = RawOptions {
            max_retries: num(&self.max_retries),
            base_delay_ms: num(&self.base_delay_ms),
            max_delay_ms: num(&self.max_delay_ms),
            backoff: self.backoff.clone(),
            attempt_timeout_ms: num(&self.attempt_timeout_ms),
            deadline_ms: num(&self.deadline_ms),
            budget,
            max_retry_after_ms: num(&self.max_retry_after_ms),
            max_response_bytes: num(&self.max_response_bytes),
            pool: self.pool()?,
        };
        Ok((raw, rules))
    }

    fn pool(self) -> Result<PoolOptions, ConfigError> {
        let mut p = PoolOptions::default();
        if let Some(s) = &self.strategy {
            p.strategy = Strategy::parse(s)?;
        }
        if let Some(b) = &self.breaker {
            p.breaker = breaker(b)?;
        }
        if let Some(s) = &self.slow_start {
            let d = SlowStartConfig::default();
            p.slow_start = SlowStartConfig {
                warmup: ms("slowStart.warmupMs", &s.warmup_ms)?.unwrap_or(d.warmup),
                floor: num(&s.floor).unwrap_or(d.floor),
                min_rps: num(&s.min_rps).unwrap_or(d.min_rps),
            };
        }
        for (name, q) in self.quota.map(|Entries(e)| e).unwrap_or_default() {
            let config = quota(&name, &q)?;
            p.quota_groups.push((name, config));
        }
        p.chain_id = self.chain_id.as_ref().map(chain_id).transpose()?;
        p.check_chain = self.check_chain_id.unwrap_or(p.check_chain);
        p.chain_recheck = ms("chainRecheckMs", &self.chain_recheck_ms)?.unwrap_or(p.chain_recheck);
        if let Some(lag) = count("maxLagBlocks", &self.max_lag_blocks, 0, 1_000_000)? {
            p.max_lag_blocks = u64::from(lag);
        }
        p.head_poll = ms("headPollMs", &self.head_poll_ms)?.unwrap_or(p.head_poll);
        p.max_queue = count("maxQueue", &self.max_queue, 0, 10_000_000)?.unwrap_or(p.max_queue);
        p.dedup = self.dedup.unwrap_or(p.dedup);
        match &self.fleet {
            None => {}
            Some(Switch::On(share)) => p.share_in_realm = *share,
            Some(Switch::Settings(fleet)) => match (&fleet.budget, p.realm_budget) {
                (None | Some(Switch::On(true)), _) => {}
                (Some(Switch::On(false)), _) => p.realm_budget = None,
                (Some(Switch::Settings(b)), Some(d)) => p.realm_budget = Some(retry_budget(b, d)),
                (Some(Switch::Settings(b)), None) => {
                    p.realm_budget = Some(retry_budget(b, RetryBudgetConfig::default()))
                }
            },
        }
        match self.hedge {
            None | Some(Switch::On(true)) => {}
            Some(Switch::On(false)) => p.hedge = None,
            Some(Switch::Settings(h)) => {
                let d = HedgeConfig::default();
                p.hedge = Some(HedgeConfig {
                    initial_delay: ms("hedge.initialDelayMs", &h.initial_delay_ms)?.unwrap_or(d.initial_delay),
                    min_delay: ms("hedge.minDelayMs", &h.min_delay_ms)?.unwrap_or(d.min_delay),
                });
            }
        }
        match self.batch {
            None | Some(Switch::On(true)) => {}
            Some(Switch::On(false)) => p.batch = None,
            Some(Switch::Settings(b)) => {
                let d = WireBatchConfig::default();
                let wait = ms("batch.waitMs", &b.wait_ms)?.unwrap_or(d.wait);
                if wait > Duration::from_secs(10) {
                    return Err(ConfigError::new("batch.waitMs", "must be at most 10000 (a wait is per request)"));
                }
                let max_size = count("batch.maxSize", &b.max_size, 1, crate::policy::wire_batch::MAX_ITEMS as u32)?;
                p.batch = Some(WireBatchConfig { max_size: max_size.map_or(d.max_size, |n| n as usize), wait, ..d });
            }
        }
        match self.adaptive_timeout {
            None | Some(Switch::On(true)) => {}
            Some(Switch::On(false)) => p.adaptive_timeout = None,
            Some(Switch::Settings(a)) => {
                let (m, floor) = ADAPTIVE_TIMEOUT;
                p.adaptive_timeout = Some((
                    num(&a.multiplier).unwrap_or(m),
                    ms("adaptiveTimeout.floorMs", &a.floor_ms)?.unwrap_or(floor),
                ));
            }
        }
        match self.cache {
            None => {}
            Some(Switch::On(enabled)) => p.cache.enabled = enabled,
            Some(Switch::Settings(c)) => p.cache = cache(&c)?,
        }
        Ok(p)
    }
}

fn breaker(b: &BreakerInput) -> Result<BreakerConfig, ConfigError> {
    let d = BreakerConfig::default();
    let n = |field: &str, v: &Option<Num>, max: u32, default: u32| {
        count(&format!("breaker.{field}"), v, 1, max).map(|v| v.unwrap_or(default))
    };
    let t = |field: &str, v: &Option<Num>, default: Duration| {
        ms(&format!("breaker.{field}"), v).map(|v| v.unwrap_or(default))
    };
    Ok(BreakerConfig {
        consecutive_failures: n("consecutiveFailures", &b.consecutive_failures, 1_000_000, d.consecutive_failures)?,
        failure_rate: num(&b.failure_rate).unwrap_or(d.failure_rate),
        window: t("windowMs", &b.window_ms, d.window)?,
        min_samples: n("minSamples", &b.min_samples, 1_000_000, d.min_samples)?,
        open_base: t("openMs", &b.open_ms, d.open_base)?,
        open_max: t("openMaxMs", &b.open_max_ms, d.open_max)?,
        jitter: num(&b.jitter).unwrap_or(d.jitter),
        probe_permits: n("probePermits", &b.probe_permits, 10_000, d.probe_permits)?,
        close_after: n("closeAfter", &b.close_after, 10_000, d.close_after)?,
        observe: t("observeMs", &b.observe_ms, d.observe)?,
        early_probe_base: t("earlyProbeMs", &b.early_probe_ms, d.early_probe_base)?,
        reset_after: t("resetAfterMs", &b.reset_after_ms, d.reset_after)?,
    })
}

fn quota(name: &str, q: &QuotaInput) -> Result<QuotaConfig, ConfigError> {
    let d = QuotaConfig::default();
    let path = |field: &str| format!("quota.{name}.{field}");
    let cu = num(&q.cu_per_second).ok_or_else(|| ConfigError::new(path("cuPerSecond"), "is required"))?;
    let t = |field: &str, v: &Option<Num>, default: Duration| ms(&path(field), v).map(|v| v.unwrap_or(default));
    Ok(QuotaConfig {
        cu_per_second: cu,
        // Absent (0): one second of the plan, kept in every second (`policy::plan_window`).
        burst: num(&q.burst).unwrap_or(0.0),
        share: num(&q.share).unwrap_or(d.share),
        decrease: num(&q.decrease).unwrap_or(d.decrease),
        increase: num(&q.increase).unwrap_or(d.increase),
        stable_window: t("stableWindowMs", &q.stable_window_ms, d.stable_window)?,
        min_fraction: num(&q.min_fraction).unwrap_or(d.min_fraction),
        cooldown_base: t("cooldownMs", &q.cooldown_ms, d.cooldown_base)?,
        cooldown_max: t("cooldownMaxMs", &q.cooldown_max_ms, d.cooldown_max)?,
        long_ejection: t("longEjectionMs", &q.long_ejection_ms, d.long_ejection)?,
    })
}

fn cache(c: &CacheInput) -> Result<CacheConfig, ConfigError> {
    let d = CacheConfig::default();
    Ok(CacheConfig {
        enabled: true,
        latest_ttl: ms("cache.latestTtlMs", &c.latest_ttl_ms)?.unwrap_or(d.latest_ttl),
        immutable_ttl: ms("cache.immutableTtlMs", &c.immutable_ttl_ms)?.unwrap_or(d.immutable_ttl),
        max_entries: count("cache.maxEntries", &c.max_entries, 1, 1_000_000)?.map_or(d.max_entries, |n| n as usize),
    })
}

/// `chainId`: a positive integer however it was written.
fn chain_id(v: &ChainIdInput) -> Result<u64, ConfigError> {
    let bad =
        || ConfigError::new("chainId", "must be a positive integer: a number, a bigint, or a decimal or 0x hex string");
    let parsed = match v {
        // Whole numbers a JS number holds exactly (below 2^53, with margin).
        ChainIdInput::Number(n) => (n.fract() == 0.0 && *n >= 1.0 && *n < 9e15).then_some(*n as u64),
        ChainIdInput::Text(text) => {
            let text = text.trim();
            let n = match text.strip_prefix("0x") {
                Some(_) => parse_quantity(text),
                None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
                None => None,
            };
            n.filter(|n| *n > 0)
        }
    };
    parsed.ok_or_else(bad)
}

/// `classify: [{ code?, message?, status?, method?, class }]`.
fn rules(list: &List<RuleInput>) -> Result<Vec<UserRule>, ConfigError> {
    let mut out = Vec::new();
    for (i, rule) in list.0.iter().enumerate() {
        let path = |field: &str| format!("classify[{i}].{field}");
        let code = num(&rule.code).map(|c| bounded(&path("code"), c, -9e15, 9e15)).transpose()?;
        if code.is_some_and(|c| c.fract() != 0.0) {
            return Err(ConfigError::new(path("code"), "must be an integer"));
        }
        let status = count(&path("status"), &rule.status, 100, 599)?;
        if code.is_none() && status.is_none() && rule.message.is_none() {
            return Err(ConfigError::new(format!("classify[{i}]"), "needs at least one of code, status or message"));
        }
        const USER_CLASSES: [ErrorClass; 5] = [
            ErrorClass::Transient,
            ErrorClass::RateLimited,
            ErrorClass::Capability,
            ErrorClass::Fatal,
            ErrorClass::Unauthorized,
        ];
        let class = ErrorClass::parse(rule.class.as_deref().unwrap_or_default())
            .filter(|c| USER_CLASSES.contains(c))
            .ok_or_else(|| {
            ConfigError::new(path("class"), "must be one of transient, rateLimited, capability, fatal, unauthorized")
        })?;
        out.push(UserRule {
            code: code.map(|c| c as i64),
            message: rule.message.clone(),
            status: status.map(|s| s as u16),
            method: rule.method.clone(),
            class,
        });
    }
    Ok(out)
}

impl UpstreamList {
    /// Each upstream's spec, and whether it is a wrapped provider (whose
    /// call function the host holds).
    pub fn resolve(self) -> Result<Vec<(EndpointSpec, bool)>, ConfigError> {
        self.0.into_iter().enumerate().map(|(i, u)| u.resolve(i)).collect()
    }
}

impl UpstreamInput {
    fn resolve(self, i: usize) -> Result<(EndpointSpec, bool), ConfigError> {
        let path = format!("upstreams[{i}]");
        match self {
            UpstreamInput::Url(url) => Ok((EndpointSpec::from_url(EndpointUrl::parse(&url, &path)?, i), false)),
            UpstreamInput::Endpoint(e) => (*e).resolve(i, &path),
        }
    }
}

impl EndpointInput {
    fn resolve(self, i: usize, path: &str) -> Result<(EndpointSpec, bool), ConfigError> {
        let field = |name: &str| format!("{path}.{name}");
        let provider = self.provider.is_some();
        let mut url = match (self.url, provider) {
            (Some(_), true) => return Err(ConfigError::new(field("url"), "cannot be combined with `provider`")),
            (None, true) => EndpointUrl::labelled(&format!("provider{i}")),
            (Some(url), false) => EndpointUrl::parse(&url, &field("url"))?,
            (None, false) => return Err(ConfigError::new(field("url"), "is required")),
        };
        let headers = self.headers.map(|Entries(h)| h).unwrap_or_default();
        for (name, value) in &headers {
            url.add_secret(value);
            check_header(&field(&format!("headers.{name}")), name, value)?;
        }
        if let Some(label) = &self.label {
            url.set_label(label);
        }
        let mut spec = EndpointSpec::from_url(url, i);
        spec.headers = headers;
        spec.quota_group = self.quota_group;
        spec.weight = num(&self.weight).unwrap_or(spec.weight);
        if let Some(p) = num(&self.priority) {
            spec.priority = bounded(&field("priority"), p, -1e9, 1e9)? as i32;
        }
        if let Some(m) = self.methods {
            spec.allow = m.allow.map(|List(a)| a);
            spec.deny = m.deny.map(|List(d)| d).unwrap_or_default();
        }
        spec.costs = self.costs.map(|Entries(c)| c.into_iter().map(|(m, Num(c))| (m, c)).collect()).unwrap_or_default();
        spec.max_concurrency =
            count(&field("maxConcurrency"), &self.max_concurrency, 1, 100_000)?.unwrap_or(spec.max_concurrency);
        spec.timeout = ms(&field("timeoutMs"), &self.timeout_ms)?.filter(|d| !d.is_zero());
        Ok((spec, provider))
    }
}

/// A header fetch would refuse at every request (so every attempt would
/// fail as a transport error) is refused here, once, naming it. The value
/// is never repeated: it is usually a key.
fn check_header(field: &str, name: &str, value: &str) -> Result<(), ConfigError> {
    // Bytes, not `str::contains(char)`: that one searches for a non-ASCII char with core's substring
    // searcher and its slice panic (src/text.rs).
    let token = |c: char| c.is_ascii_alphanumeric() || (c.is_ascii() && b"!#$%&'*+-.^_`|~".contains(&(c as u8)));
    if name.is_empty() || !name.chars().all(token) {
        return Err(ConfigError::new(
            field,
            "is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)",
        ));
    }
    if value.chars().any(|c| u32::from(c) > 0xFF || matches!(c, '\0' | '\r' | '\n')) {
        return Err(ConfigError::new(
            field,
            "must be a valid HTTP header value (Latin-1 characters, no line breaks; the value is not shown)",
        ));
    }
    Ok(())
}
