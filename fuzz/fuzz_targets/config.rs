//! Any option values (NaN, infinities, negatives, huge numbers) and any
//! upstream strings: the config is either built or refused with an error
//! naming a field; a built config runs a pipeline without panicking.
#![no_main]
use std::time::Duration;

use breakwater_rpc::config::{RawOptions, RelayerConfig};
use breakwater_rpc::policy::quota::QuotaConfig;
use breakwater_rpc::policy::{Classifier, RetryBudgetConfig};
use breakwater_rpc::pool::options::EndpointSpec;
use breakwater_rpc::pool::Pipeline;
use breakwater_rpc::redact::EndpointUrl;
use breakwater_rpc::time::Instant;
use libfuzzer_sys::{arbitrary, fuzz_target};

#[derive(arbitrary::Arbitrary, Debug)]
struct Input {
    urls: Vec<String>,
    numbers: [Option<f64>; 7],
    budget: Option<(f64, f64, f64)>,
    quota: Option<(f64, f64, f64, f64, f64, f64)>,
    breaker: (u32, f64, u32, u32, u32),
    weights: Vec<f64>,
    quota_member: bool,
}

fuzz_target!(|input: Input| {
    let mut specs = Vec::new();
    for (i, url) in input.urls.iter().take(8).enumerate() {
        match EndpointUrl::parse(url, "upstreams[i]") {
            Ok(parsed) => {
                // user:pass@ in the authority must never reach the label's authority.
                let label = parsed.label();
                if let Some((_, rest)) = label.split_once("://") {
                    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
                    assert!(!authority.contains('@'), "userinfo leaked into the label {label}");
                }
                let mut spec = EndpointSpec::from_url(parsed, i);
                spec.weight = input.weights.get(i).copied().unwrap_or(1.0);
                if input.quota_member {
                    spec.quota_group = Some("g".into());
                }
                specs.push(spec);
            }
            Err(e) => assert!(!e.field().is_empty()),
        }
    }
    let [retries, base, cap, timeout, deadline, retry_after, bytes] = input.numbers;
    let mut raw = RawOptions {
        max_retries: retries,
        base_delay_ms: base,
        max_delay_ms: cap,
        attempt_timeout_ms: timeout,
        deadline_ms: deadline,
        max_retry_after_ms: retry_after,
        max_response_bytes: bytes,
        budget: input.budget.map(|(ratio, min_per_second, burst)| RetryBudgetConfig { ratio, min_per_second, burst }),
        ..Default::default()
    };
    if let Some((cu, burst, share, decrease, increase, min_fraction)) = input.quota {
        let q = QuotaConfig { cu_per_second: cu, burst, share, decrease, increase, min_fraction, ..Default::default() };
        raw.pool.quota_groups.push(("g".into(), q));
    }
    let (consecutive, rate, min_samples, permits, close_after) = input.breaker;
    raw.pool.breaker.consecutive_failures = consecutive;
    raw.pool.breaker.failure_rate = rate;
    raw.pool.breaker.min_samples = min_samples;
    raw.pool.breaker.probe_permits = permits;
    raw.pool.breaker.close_after = close_after;
    match RelayerConfig::build(specs, raw) {
        Ok(config) => {
            assert!(config.attempt_timeout > Duration::ZERO);
            let _ = Pipeline::new(config, Classifier::default(), Instant::from_epoch(Duration::ZERO));
        }
        Err(e) => assert!(!e.field().is_empty(), "an error names its field"),
    }
});
