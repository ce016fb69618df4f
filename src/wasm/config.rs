//! Reads the JS upstream list and options object into the core's typed,
//! validated configuration. Type errors name the option; range checks
//! happen in the pure core (`RelayerConfig::build`, `PoolOptions::validate`).

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

use super::fields::{absent, Fields};
use crate::config::{ConfigError, RawOptions};
use crate::policy::breaker::BreakerConfig;
use crate::policy::classify::UserRule;
use crate::policy::quota::QuotaConfig;
use crate::policy::slow_start::SlowStartConfig;
use crate::policy::{ErrorClass, RetryBudgetConfig};
use crate::pool::options::{CacheConfig, EndpointSpec, HedgeConfig, PoolOptions, Strategy};
use crate::redact::EndpointUrl;

const OPTIONS: &[&str] = &[
    "maxRetries",
    "baseDelayMs",
    "maxDelayMs",
    "backoff",
    "attemptTimeoutMs",
    "deadlineMs",
    "budget",
    "maxRetryAfterMs",
    "maxResponseBytes",
    "classify",
    "strategy",
    "breaker",
    "slowStart",
    "quota",
    "chainId",
    "checkChainId",
    "chainRecheckMs",
    "maxLagBlocks",
    "headPollMs",
    "maxQueue",
    "dedup",
    "cache",
    "adaptiveTimeout",
    "hedge",
    "transactions",
];
const ENDPOINT: &[&str] = &[
    "url",
    "provider",
    "label",
    "headers",
    "quotaGroup",
    "weight",
    "priority",
    "methods",
    "costs",
    "maxConcurrency",
    "timeoutMs",
];

/// One upstream: its spec, and for a wrapped provider the JS function that
/// performs its calls (`(body, timeoutMs) → Promise<{ text } | { observation }>`,
/// made by the JS wrapper).
pub type Upstream = (EndpointSpec, Option<Function>);

/// Parses the upstream list: URL strings, endpoint objects, or wrapped providers.
pub fn upstreams(value: &JsValue) -> Result<Vec<Upstream>, ConfigError> {
    if !Array::is_array(value) {
        return Err(ConfigError::new("upstreams", "must be an array of RPC URLs, endpoint objects or providers"));
    }
    Array::from(value).iter().enumerate().map(|(i, item)| endpoint(&item, i)).collect()
}

fn endpoint(item: &JsValue, i: usize) -> Result<Upstream, ConfigError> {
    let path = format!("upstreams[{i}]");
    if let Some(url) = item.as_string() {
        return Ok((EndpointSpec::from_url(EndpointUrl::parse(&url, &path)?, i), None));
    }
    if absent(item) || !item.is_object() {
        return Err(ConfigError::new(
            &path,
            "must be an http(s) URL string, an endpoint object or an EIP-1193 provider",
        ));
    }
    let f = Fields::new(item, &path, ENDPOINT)?;
    let provider = f.raw("provider");
    let (mut url, provider) = if absent(&provider) {
        let url = f.string("url")?.ok_or_else(|| ConfigError::new(f.field("url"), "is required"))?;
        (EndpointUrl::parse(&url, &f.field("url"))?, None)
    } else {
        let call = provider.dyn_into::<Function>().map_err(|_| {
            ConfigError::new(f.field("provider"), "must be an EIP-1193 provider (request) or an ethers provider (send)")
        })?;
        if !absent(&f.raw("url")) {
            return Err(ConfigError::new(f.field("url"), "cannot be combined with `provider`"));
        }
        (EndpointUrl::labelled(&format!("provider{i}")), Some(call))
    };
    let mut headers = Vec::new();
    for (name, value) in f.entries("headers")?.unwrap_or_default() {
        let value =
            value.as_string().ok_or_else(|| ConfigError::new(format!("{path}.headers.{name}"), "must be a string"))?;
        url.add_secret(&value);
        headers.push((name, value));
    }
    if let Some(label) = f.string("label")? {
        url.set_label(&label);
    }
    let mut spec = EndpointSpec::from_url(url, i);
    spec.headers = headers;
    spec.quota_group = f.string("quotaGroup")?;
    spec.weight = f.num("weight")?.unwrap_or(1.0);
    if let Some(p) = f.ranged("priority", -1e9, 1e9)? {
        spec.priority = p as i32;
    }
    if let Some(m) = f.object("methods", &["allow", "deny"])? {
        spec.allow = m.strings("allow")?;
        spec.deny = m.strings("deny")?.unwrap_or_default();
    }
    for (method, cost) in f.entries("costs")?.unwrap_or_default() {
        let c = cost.as_f64().ok_or_else(|| ConfigError::new(format!("{path}.costs.{method}"), "must be a number"))?;
        spec.costs.push((method, c));
    }
    if let Some(c) = f.whole("maxConcurrency", 1, 100_000)? {
        spec.max_concurrency = c;
    }
    spec.timeout = f.ms("timeoutMs")?.filter(|d| !d.is_zero());
    Ok((spec, provider))
}

/// Parses the relayer options object (`undefined` means all defaults).
pub fn options(value: &JsValue) -> Result<(RawOptions, Vec<UserRule>), ConfigError> {
    if absent(value) {
        return Ok((RawOptions::default(), Vec::new()));
    }
    let f = Fields::new(value, "", OPTIONS)?;
    let mut raw = RawOptions {
        max_retries: f.num("maxRetries")?,
        base_delay_ms: f.num("baseDelayMs")?,
        max_delay_ms: f.num("maxDelayMs")?,
        backoff: f.string("backoff")?,
        attempt_timeout_ms: f.num("attemptTimeoutMs")?,
        deadline_ms: f.num("deadlineMs")?,
        budget: None,
        max_retry_after_ms: f.num("maxRetryAfterMs")?,
        max_response_bytes: f.num("maxResponseBytes")?,
        pool: pool(&f)?,
    };
    if let Some(b) = f.object("budget", &["ratio", "minPerSecond", "burst"])? {
        let d = RetryBudgetConfig::default();
        raw.budget = Some(RetryBudgetConfig {
            ratio: b.num("ratio")?.unwrap_or(d.ratio),
            min_per_second: b.num("minPerSecond")?.unwrap_or(d.min_per_second),
            burst: b.num("burst")?.unwrap_or(d.burst),
        });
    }
    Ok((raw, rules(&f.raw("classify"))?))
}

fn pool(f: &Fields) -> Result<PoolOptions, ConfigError> {
    let mut p = PoolOptions::default();
    if let Some(s) = f.string("strategy")? {
        p.strategy = Strategy::parse(&s)?;
    }
    if let Some(b) = f.object(
        "breaker",
        &[
            "consecutiveFailures",
            "failureRate",
            "windowMs",
            "minSamples",
            "openMs",
            "openMaxMs",
            "jitter",
            "probePermits",
            "closeAfter",
            "observeMs",
            "earlyProbeMs",
            "resetAfterMs",
        ],
    )? {
        let d = BreakerConfig::default();
        p.breaker = BreakerConfig {
            consecutive_failures: b.whole("consecutiveFailures", 1, 1_000_000)?.unwrap_or(d.consecutive_failures),
            failure_rate: b.num("failureRate")?.unwrap_or(d.failure_rate),
            window: b.ms("windowMs")?.unwrap_or(d.window),
            min_samples: b.whole("minSamples", 1, 1_000_000)?.unwrap_or(d.min_samples),
            open_base: b.ms("openMs")?.unwrap_or(d.open_base),
            open_max: b.ms("openMaxMs")?.unwrap_or(d.open_max),
            jitter: b.num("jitter")?.unwrap_or(d.jitter),
            probe_permits: b.whole("probePermits", 1, 10_000)?.unwrap_or(d.probe_permits),
            close_after: b.whole("closeAfter", 1, 10_000)?.unwrap_or(d.close_after),
            observe: b.ms("observeMs")?.unwrap_or(d.observe),
            early_probe_base: b.ms("earlyProbeMs")?.unwrap_or(d.early_probe_base),
            reset_after: b.ms("resetAfterMs")?.unwrap_or(d.reset_after),
        };
    }
    if let Some(s) = f.object("slowStart", &["warmupMs", "floor", "minRps"])? {
        let d = SlowStartConfig::default();
        p.slow_start = SlowStartConfig {
            warmup: s.ms("warmupMs")?.unwrap_or(d.warmup),
            floor: s.num("floor")?.unwrap_or(d.floor),
            min_rps: s.num("minRps")?.unwrap_or(d.min_rps),
        };
    }
    for (name, value) in f.entries("quota")?.unwrap_or_default() {
        let q = Fields::new(
            &value,
            &format!("quota.{name}"),
            &[
                "cuPerSecond",
                "burst",
                "share",
                "decrease",
                "increase",
                "stableWindowMs",
                "minFraction",
                "cooldownMs",
                "cooldownMaxMs",
                "longEjectionMs",
            ],
        )?;
        let d = QuotaConfig::default();
        let cu = q.num("cuPerSecond")?.ok_or_else(|| ConfigError::new(q.field("cuPerSecond"), "is required"))?;
        p.quota_groups.push((
            name,
            QuotaConfig {
                cu_per_second: cu,
                burst: q.num("burst")?.unwrap_or(if cu.is_finite() { cu } else { 0.0 }),
                share: q.num("share")?.unwrap_or(d.share),
                decrease: q.num("decrease")?.unwrap_or(d.decrease),
                increase: q.num("increase")?.unwrap_or(d.increase),
                stable_window: q.ms("stableWindowMs")?.unwrap_or(d.stable_window),
                min_fraction: q.num("minFraction")?.unwrap_or(d.min_fraction),
                cooldown_base: q.ms("cooldownMs")?.unwrap_or(d.cooldown_base),
                cooldown_max: q.ms("cooldownMaxMs")?.unwrap_or(d.cooldown_max),
                long_ejection: q.ms("longEjectionMs")?.unwrap_or(d.long_ejection),
            },
        ));
    }
    p.chain_id = chain_id(f)?;
    p.check_chain = f.boolean("checkChainId")?.unwrap_or(true);
    if let Some(recheck) = f.ms("chainRecheckMs")? {
        p.chain_recheck = recheck;
    }
    if let Some(lag) = f.whole("maxLagBlocks", 0, 1_000_000)? {
        p.max_lag_blocks = u64::from(lag);
    }
    if let Some(interval) = f.ms("headPollMs")? {
        p.head_poll = interval;
    }
    if let Some(q) = f.whole("maxQueue", 0, 10_000_000)? {
        p.max_queue = q;
    }
    p.dedup = f.boolean("dedup")?.unwrap_or(true);
    let hedge = f.raw("hedge");
    if hedge.as_bool() == Some(false) {
        p.hedge = None;
    } else if !absent(&hedge) && hedge.as_bool() != Some(true) {
        switch_or_object(&hedge, "hedge")?;
        let h = Fields::new(&hedge, "hedge", &["initialDelayMs", "minDelayMs"])?;
        let d = HedgeConfig::default();
        p.hedge = Some(HedgeConfig {
            initial_delay: h.ms("initialDelayMs")?.unwrap_or(d.initial_delay),
            min_delay: h.ms("minDelayMs")?.unwrap_or(d.min_delay),
        });
    }
    let adaptive = f.raw("adaptiveTimeout");
    if adaptive.as_bool() == Some(false) {
        p.adaptive_timeout = None;
    } else if !absent(&adaptive) && adaptive.as_bool() != Some(true) {
        switch_or_object(&adaptive, "adaptiveTimeout")?;
        let a = Fields::new(&adaptive, "adaptiveTimeout", &["multiplier", "floorMs"])?;
        let (m, floor) = p.adaptive_timeout.unwrap_or((5.0, std::time::Duration::from_secs(2)));
        p.adaptive_timeout = Some((a.num("multiplier")?.unwrap_or(m), a.ms("floorMs")?.unwrap_or(floor)));
    }
    let cache = f.raw("cache");
    if let Some(enabled) = cache.as_bool() {
        p.cache.enabled = enabled;
    } else if !absent(&cache) {
        switch_or_object(&cache, "cache")?;
        let c = Fields::new(&cache, "cache", &["latestTtlMs", "immutableTtlMs", "maxEntries"])?;
        let d = CacheConfig::default();
        p.cache = CacheConfig {
            enabled: true,
            latest_ttl: c.ms("latestTtlMs")?.unwrap_or(d.latest_ttl),
            immutable_ttl: c.ms("immutableTtlMs")?.unwrap_or(d.immutable_ttl),
            max_entries: c.whole("maxEntries", 1, 1_000_000)?.map_or(d.max_entries, |n| n as usize),
        };
    }
    Ok(p)
}

/// Options that take `true`/`false` or an object of settings say both in
/// their error (`cache: 'yes'` is neither).
fn switch_or_object(value: &JsValue, field: &str) -> Result<(), ConfigError> {
    if value.is_object() && !js_sys::Array::is_array(value) {
        return Ok(());
    }
    Err(ConfigError::new(field, "must be a boolean or an object"))
}

/// `chainId`: a number, a bigint (ethers' `network.chainId`), or a
/// decimal or `0x` hex string.
fn chain_id(f: &Fields) -> Result<Option<u64>, ConfigError> {
    let v = f.raw("chainId");
    if absent(&v) {
        return Ok(None);
    }
    let bad =
        || ConfigError::new("chainId", "must be a positive integer: a number, a bigint, or a decimal or 0x hex string");
    if let Some(n) = v.as_f64() {
        return (n.fract() == 0.0 && n > 0.0 && n < 9e15).then_some(Some(n as u64)).ok_or_else(bad);
    }
    let text = if v.is_bigint() {
        js_sys::BigInt::from(v).to_string(10).ok().and_then(|s| s.as_string())
    } else {
        v.as_string()
    };
    let text = text.ok_or_else(bad)?;
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(_) => crate::runtime::parse_quantity(text),
        None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    };
    parsed.filter(|n| *n > 0).map(Some).ok_or_else(bad)
}

/// Parses `classify: [{ code?, message?, status?, method?, class }]`.
fn rules(value: &JsValue) -> Result<Vec<UserRule>, ConfigError> {
    if absent(value) {
        return Ok(Vec::new());
    }
    if !Array::is_array(value) {
        return Err(ConfigError::new("classify", "must be an array of rules"));
    }
    let mut out = Vec::new();
    for (i, rule) in Array::from(value).iter().enumerate() {
        let f = Fields::new(&rule, &format!("classify[{i}]"), &["code", "message", "status", "method", "class"])?;
        let code = f.ranged("code", -9e15, 9e15)?;
        if code.is_some_and(|c| c.fract() != 0.0) {
            return Err(ConfigError::new(f.field("code"), "must be an integer"));
        }
        let status = f.whole("status", 100, 599)?;
        let message = f.string("message")?;
        let method = f.string("method")?;
        if code.is_none() && status.is_none() && message.is_none() {
            return Err(ConfigError::new(format!("classify[{i}]"), "needs at least one of code, status or message"));
        }
        let class_name = f.string("class")?.unwrap_or_default();
        let class = ErrorClass::parse(&class_name)
            .filter(|c| {
                matches!(
                    c,
                    ErrorClass::Transient
                        | ErrorClass::RateLimited
                        | ErrorClass::Capability
                        | ErrorClass::Fatal
                        | ErrorClass::Unauthorized
                )
            })
            .ok_or_else(|| {
                ConfigError::new(
                    f.field("class"),
                    "must be one of transient, rateLimited, capability, fatal, unauthorized",
                )
            })?;
        out.push(UserRule { code: code.map(|c| c as i64), message, status: status.map(|s| s as u16), method, class });
    }
    Ok(out)
}
