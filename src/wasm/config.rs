//! Reads the JS options object into the core's raw options, naming the
//! exact option on every type error (`options.maxRetries must be a
//! number`), so nothing malformed reaches the pure validation.

use js_sys::{Array, Reflect};
use wasm_bindgen::prelude::*;

use crate::config::{ConfigError, RawOptions};
use crate::policy::classify::UserRule;
use crate::policy::{ErrorClass, RetryBudgetConfig};
use crate::redact::EndpointUrl;

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

fn number(target: &JsValue, key: &str, field: &str) -> Result<Option<f64>, ConfigError> {
    let v = get(target, key);
    if absent(&v) {
        return Ok(None);
    }
    v.as_f64().map(Some).ok_or_else(|| ConfigError::new(field, "must be a number"))
}

fn string(target: &JsValue, key: &str, field: &str) -> Result<Option<String>, ConfigError> {
    let v = get(target, key);
    if absent(&v) {
        return Ok(None);
    }
    v.as_string().map(Some).ok_or_else(|| ConfigError::new(field, "must be a string"))
}

/// Parses the upstream list: an array of http(s) URL strings.
pub fn upstreams(value: &JsValue) -> Result<Vec<EndpointUrl>, ConfigError> {
    if !Array::is_array(value) {
        return Err(ConfigError::new("upstreams", "must be an array of RPC URLs"));
    }
    let list = Array::from(value);
    let mut out = Vec::with_capacity(list.length() as usize);
    for (i, item) in list.iter().enumerate() {
        let field = format!("upstreams[{i}]");
        let url = item.as_string().ok_or_else(|| ConfigError::new(&field, "must be an http(s) URL string"))?;
        out.push(EndpointUrl::parse(&url, &field)?);
    }
    Ok(out)
}

/// Parses the relayer options object (`undefined` means all defaults).
pub fn options(value: &JsValue) -> Result<(RawOptions, Vec<UserRule>), ConfigError> {
    if absent(value) {
        return Ok((RawOptions::default(), Vec::new()));
    }
    if !value.is_object() || Array::is_array(value) {
        return Err(ConfigError::new("options", "must be an object"));
    }
    let mut raw = RawOptions {
        max_retries: number(value, "maxRetries", "maxRetries")?,
        base_delay_ms: number(value, "baseDelayMs", "baseDelayMs")?,
        max_delay_ms: number(value, "maxDelayMs", "maxDelayMs")?,
        backoff: string(value, "backoff", "backoff")?,
        attempt_timeout_ms: number(value, "attemptTimeoutMs", "attemptTimeoutMs")?,
        deadline_ms: number(value, "deadlineMs", "deadlineMs")?,
        budget: None,
        max_retry_after_ms: number(value, "maxRetryAfterMs", "maxRetryAfterMs")?,
        max_response_bytes: number(value, "maxResponseBytes", "maxResponseBytes")?,
    };
    let budget = get(value, "retryBudget");
    if !absent(&budget) {
        if !budget.is_object() {
            return Err(ConfigError::new("retryBudget", "must be an object"));
        }
        let d = RetryBudgetConfig::default();
        raw.budget = Some(RetryBudgetConfig {
            ratio: number(&budget, "ratio", "retryBudget.ratio")?.unwrap_or(d.ratio),
            min_per_second: number(&budget, "minPerSecond", "retryBudget.minPerSecond")?.unwrap_or(d.min_per_second),
            burst: number(&budget, "burst", "retryBudget.burst")?.unwrap_or(d.burst),
        });
    }
    Ok((raw, rules(&get(value, "classify"))?))
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
        let field = |key: &str| format!("classify[{i}].{key}");
        if !rule.is_object() {
            return Err(ConfigError::new(format!("classify[{i}]"), "must be an object"));
        }
        let code = number(&rule, "code", &field("code"))?;
        if code.is_some_and(|c| c.fract() != 0.0 || c.abs() > 9e15) {
            return Err(ConfigError::new(field("code"), "must be an integer"));
        }
        let status = number(&rule, "status", &field("status"))?;
        if status.is_some_and(|s| !(100.0..=599.0).contains(&s) || s.fract() != 0.0) {
            return Err(ConfigError::new(field("status"), "must be an HTTP status between 100 and 599"));
        }
        let message = string(&rule, "message", &field("message"))?;
        let method = string(&rule, "method", &field("method"))?;
        if code.is_none() && status.is_none() && message.is_none() {
            return Err(ConfigError::new(format!("classify[{i}]"), "needs at least one of code, status or message"));
        }
        let class_name = string(&rule, "class", &field("class"))?.unwrap_or_default();
        let class = ErrorClass::parse(&class_name)
            .filter(|c| {
                matches!(
                    c,
                    ErrorClass::Transient | ErrorClass::RateLimited | ErrorClass::Capability | ErrorClass::Fatal
                )
            })
            .ok_or_else(|| {
                ConfigError::new(field("class"), "must be one of transient, rateLimited, capability, fatal")
            })?;
        out.push(UserRule { code: code.map(|c| c as i64), message, status: status.map(|s| s as u16), method, class });
    }
    Ok(out)
}
