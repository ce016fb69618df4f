//! The options contract decoded from JSON values: what the package's
//! bad-input suite checks through wasm, checked here natively.

use std::time::Duration;

use serde_json::{json, Value};

use super::{decode, OptionsInput};
use crate::config::{RawOptions, RelayerConfig};
use crate::options::{PoolOptions, Strategy};
use crate::policy::classify::UserRule;
use crate::policy::wire_batch::WireBatchConfig;
use crate::policy::ErrorClass;

fn options(v: Value) -> Result<(RawOptions, Vec<UserRule>), crate::config::ConfigError> {
    super::options(v)
}

fn refused(v: Value) -> (String, String) {
    let e = options(v).expect_err("refused");
    (e.field().to_string(), e.reason().to_string())
}

fn upstreams(v: Value) -> Result<Vec<(crate::options::EndpointSpec, bool)>, crate::config::ConfigError> {
    super::upstreams(v)
}

fn upstream_field(v: Value) -> String {
    upstreams(v).expect_err("refused").field().to_string()
}

/// The whole path, as the package does it: options, then the build.
fn built(v: Value) -> Result<RelayerConfig, crate::config::ConfigError> {
    let (raw, _) = options(v)?;
    let specs = upstreams(json!(["http://127.0.0.1:8545"]))?.into_iter().map(|(s, _)| s).collect();
    RelayerConfig::build(specs, raw)
}

#[test]
fn an_empty_object_is_every_default_and_the_defaults_are_the_config_types_own() {
    let (raw, rules) = options(json!({})).unwrap();
    assert!(rules.is_empty());
    assert_eq!(raw.pool, PoolOptions::default());
    assert_eq!(raw.max_retries, None);
    assert_eq!(options(Value::Null).unwrap().0.pool, PoolOptions::default(), "null: every default");
    let direct = decode::<OptionsInput, _>(json!({ "dedup": false }), "").unwrap();
    assert_eq!(direct.dedup, Some(false));
    let c = built(json!({})).unwrap();
    assert_eq!((c.max_attempts(), c.deadline), (5, Duration::from_secs(30)));
}

#[test]
fn every_field_reaches_its_config() {
    let (raw, rules) = options(json!({
        "maxRetries": 2, "baseDelayMs": 10, "maxDelayMs": 20, "backoff": "linear",
        "attemptTimeoutMs": 500, "deadlineMs": 900, "budget": { "ratio": 0.5 },
        "maxRetryAfterMs": 1000, "maxResponseBytes": 1024, "strategy": "latency",
        "breaker": { "openMs": 100, "openMaxMs": 200, "probePermits": 2 },
        "slowStart": { "warmupMs": 5, "floor": 0.5 },
        "quota": { "b": { "cuPerSecond": 10 }, "a": { "cuPerSecond": 5, "burst": 1, "cooldownMs": 7 } },
        "chainId": "0x89", "checkChainId": false, "chainRecheckMs": 0, "maxLagBlocks": 3,
        "headPollMs": 0, "maxQueue": 7, "dedup": false,
        "cache": { "maxEntries": 5 }, "adaptiveTimeout": false, "hedge": { "minDelayMs": 9 }, "fleet": false,
        "classify": [{ "code": -32099, "message": "busy", "class": "transient" }],
        "transactions": { "bumpPercent": 20 },
    }))
    .unwrap();
    assert_eq!((raw.max_retries, raw.backoff.as_deref(), raw.budget.unwrap().ratio), (Some(2.0), Some("linear"), 0.5));
    assert_eq!(raw.budget.unwrap().burst, 5.0, "an absent budget field keeps its default");
    let p = &raw.pool;
    assert_eq!(p.strategy, Strategy::Latency);
    assert_eq!((p.breaker.open_base, p.breaker.probe_permits), (Duration::from_millis(100), 2));
    assert_eq!(p.slow_start.floor, 0.5);
    let names: Vec<&str> = p.quota_groups.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["b", "a"], "groups keep the order they were written in");
    assert_eq!(p.quota_groups[0].1.burst, 0.0, "absent: the group takes one second of the plan, in every second");
    assert_eq!(p.quota_groups[1].1.cooldown_base, Duration::from_millis(7));
    assert_eq!((p.chain_id, p.check_chain, p.chain_recheck), (Some(137), false, Duration::ZERO));
    assert_eq!((p.max_lag_blocks, p.head_poll, p.max_queue, p.dedup), (3, Duration::ZERO, 7, false));
    assert_eq!((p.cache.enabled, p.cache.max_entries), (true, 5));
    assert_eq!(p.adaptive_timeout, None);
    assert!(!p.share_in_realm, "fleet: false learns alone");
    assert!(options(json!({})).unwrap().0.pool.share_in_realm, "sharing is the default");
    assert_eq!(p.hedge.unwrap().min_delay, Duration::from_millis(9));
    assert_eq!(p.hedge.unwrap().initial_delay, Duration::from_secs(1));
    assert_eq!((rules[0].code, rules[0].class), (Some(-32099), ErrorClass::Transient));
    let (raw, _) = options(json!({ "cache": false, "hedge": false, "adaptiveTimeout": { "floorMs": 10 } })).unwrap();
    assert!(!raw.pool.cache.enabled && raw.pool.hedge.is_none());
    assert_eq!(raw.pool.adaptive_timeout, Some((5.0, Duration::from_millis(10))));
    assert_eq!(options(json!({})).unwrap().0.pool.batch, Some(WireBatchConfig::default()), "batching is the default");
    assert_eq!(options(json!({ "batch": false })).unwrap().0.pool.batch, None);
    let batch = options(json!({ "batch": { "maxSize": 20, "waitMs": 5 } })).unwrap().0.pool.batch.unwrap();
    assert_eq!((batch.max_size, batch.wait), (20, Duration::from_millis(5)));
    for id in [json!(137), json!("137"), json!(" 0x89 ")] {
        assert_eq!(options(json!({ "chainId": id })).unwrap().0.pool.chain_id, Some(137));
    }
    let chain = |v: Value| options(json!({ "chainId": v })).map(|(raw, _)| raw.pool.chain_id.unwrap());
    assert_eq!(chain(json!(1)), Ok(1));
    assert_eq!(chain(json!(1.0)), Ok(1), "a JS number (not a bigint or a string)");
    assert_eq!(chain(json!(8_999_999_999_999_999u64)), Ok(8_999_999_999_999_999), "as a string of digits: exact");
    assert_eq!(
        chain(json!(8_999_999_999_999_998.0)),
        Ok(8_999_999_999_999_998),
        "the largest whole numbers below 9e15"
    );
    assert_eq!(chain(json!("18446744073709551615")), Ok(u64::MAX), "a decimal string takes any u64");
    for bad in [
        json!(0),
        json!(-1),
        json!(1.5),
        json!(9e15),
        json!(-0.5),
        json!("0"),
        json!("0x0"),
        json!(""),
        json!("12a"),
        json!("-5"),
        json!("+5"),
        json!("1.5"),
    ] {
        assert_eq!(chain(bad.clone()).map_err(|e| e.field().to_string()), Err("chainId".into()), "{bad}");
    }
}

#[test]
fn a_refusal_names_the_full_path_and_says_what_was_expected() {
    let cases = [
        (json!({ "maxRetries": "3" }), "maxRetries", "must be a number"),
        (json!({ "budget": 5 }), "budget", "must be an object"),
        (json!({ "budget": [1] }), "budget", "must be an object"),
        (json!({ "budget": { "ratio": "x" } }), "budget.ratio", "must be a number"),
        (json!({ "dedup": "yes" }), "dedup", "must be a boolean"),
        (json!({ "fleet": 1 }), "fleet", "must be a boolean or an object"),
        (json!({ "fleet": { "budget": 0.1 } }), "fleet.budget", "must be a boolean or an object"),
        (json!({ "fleet": { "budget": { "ratio": "x" } } }), "fleet.budget.ratio", "must be a number"),
        (json!({ "fleet": { "budgte": {} } }), "fleet.budgte", "unknown option (did you mean `budget`?)"),
        (json!({ "fleet": { "prefx": "a:" } }), "fleet.prefx", "unknown option (did you mean `prefix`?)"),
        (json!({ "cache": "yes" }), "cache", "must be a boolean or an object"),
        (json!({ "hedge": [] }), "hedge", "must be a boolean or an object"),
        (json!({ "batch": 10 }), "batch", "must be a boolean or an object"),
        (json!({ "batch": { "maxSize": 0 } }), "batch.maxSize", ""),
        (json!({ "batch": { "maxSize": 1001 } }), "batch.maxSize", ""),
        (json!({ "batch": { "waitMs": 20000 } }), "batch.waitMs", "must be at most 10000"),
        (json!({ "batch": { "wait": 5 } }), "batch.wait", "unknown option (did you mean `waitMs`?)"),
        (json!({ "classify": {} }), "classify", "must be an array"),
        (json!({ "classify": [{ "code": 1, "class": "x" }] }), "classify[0].class", ""),
        (json!({ "classify": [{}, 5] }), "classify[1]", "must be an object"),
        (json!({ "quota": { "k": {} } }), "quota.k.cuPerSecond", "is required"),
        (json!({ "quota": { "k": { "cuPerSecond": "1" } } }), "quota.k.cuPerSecond", "must be a number"),
        (json!({ "quota": { "k": { "cooldownMs": -1, "cuPerSecond": 1 } } }), "quota.k.cooldownMs", ""),
        (json!({ "breaker": { "probePermits": 0 } }), "breaker.probePermits", ""),
        (json!({ "breaker": { "openMs": 1e12 } }), "breaker.openMs", ""),
        (json!({ "chainId": -1 }), "chainId", ""),
        (json!({ "chainId": "0xzz" }), "chainId", ""),
        (
            json!({ "chainId": true }),
            "chainId",
            "must be a positive integer: a number, a bigint, or a decimal or 0x hex string",
        ),
        (json!({ "maxQueue": -1 }), "maxQueue", "must be a whole number between 0 and 10000000, got -1"),
        (json!("fast"), "options", "must be an object"),
        (json!({ "cache": { "maxEntries": 0 } }), "cache.maxEntries", ""),
    ];
    for (input, field, reason) in cases {
        let (f, r) = refused(input.clone());
        assert_eq!(f, field, "{input}");
        assert!(r.starts_with(reason), "{input}: {r}");
    }
}

#[test]
fn an_unknown_key_is_refused_with_the_name_it_most_likely_meant() {
    assert_eq!(
        refused(json!({ "maxRetrys": 3 })),
        ("maxRetrys".into(), "unknown option (did you mean `maxRetries`?)".into())
    );
    assert_eq!(refused(json!({ "breaker": { "openMS": 3 } })).0, "breaker.openMS");
    assert!(refused(json!({ "breaker": { "openMS": 3 } })).1.contains("`openMs`"));
    assert_eq!(refused(json!({ "quota": { "k": { "cuPerSecnd": 1 } } })).0, "quota.k.cuPerSecnd");
    assert_eq!(refused(json!({ "classify": [{ "cod": 1 }] })).0, "classify[0].cod");
    assert_eq!(refused(json!({ "colour": 1 })), ("colour".into(), "unknown option".into()), "nothing near: no guess");
    assert_eq!(
        refused(json!({ "loger": 1 })).1,
        "unknown option (did you mean `logger`?)",
        "the wrapper's own names too"
    );
    assert!(options(json!({ "logger": {}, "wrap": 1 })).is_ok(), "the wrapper reads those itself");
    assert_eq!(upstream_field(json!([{ "url": "http://a.b", "wieght": 2 }])), "upstreams[0].wieght");
}

#[test]
fn upstreams_are_urls_or_endpoint_objects_with_every_field_checked() {
    let list = upstreams(json!([
        "http://127.0.0.1:8545",
        { "url": "https://k:s@node.example/v1", "label": "main", "headers": { "x-key": "abc" },
          "weight": 2, "priority": -3, "methods": { "allow": ["eth_call"], "deny": ["eth_sign"] },
          "costs": { "eth_call": 26 }, "maxConcurrency": 5, "timeoutMs": 250 },
        { "provider": {}, "label": "wallet" },
    ]))
    .unwrap();
    assert_eq!(list.len(), 3);
    assert!(!list[0].1 && !list[1].1 && list[2].1, "only the third is a wrapped provider");
    let s = &list[1].0;
    assert_eq!((s.weight, s.priority, s.max_concurrency), (2.0, -3, 5));
    assert_eq!(s.headers, vec![("x-key".to_string(), "abc".to_string())]);
    assert_eq!(
        (s.allow.as_deref(), s.deny.as_slice()),
        (Some(&["eth_call".to_string()][..]), &["eth_sign".to_string()][..])
    );
    assert_eq!(s.costs, vec![("eth_call".to_string(), 26.0)]);
    assert_eq!(s.timeout, Some(Duration::from_millis(250)));
    assert_eq!(list[0].0.priority, 0, "priority defaults to the position");
    let cases = [
        (json!("http://127.0.0.1:8545"), "upstreams"),
        (json!({}), "upstreams"),
        (json!([42]), "upstreams[0]"),
        (json!([null]), "upstreams[0]"),
        (json!(["http://a.b", "not a url"]), "upstreams[1]"),
        (json!([{ "url": "nope" }]), "upstreams[0].url"),
        (json!([{ "label": "x" }]), "upstreams[0].url"),
        (json!([{ "url": "http://a.b", "provider": {} }]), "upstreams[0].url"),
        (json!([{ "url": "http://a.b", "headers": { "x-api-key": 42 } }]), "upstreams[0].headers.x-api-key"),
        (json!([{ "url": "http://a.b", "methods": { "allow": "eth_call" } }]), "upstreams[0].methods.allow"),
        (json!([{ "url": "http://a.b", "methods": { "allow": [1] } }]), "upstreams[0].methods.allow[0]"),
        (json!([{ "url": "http://a.b", "costs": { "eth_call": "x" } }]), "upstreams[0].costs.eth_call"),
        (json!([{ "url": "http://a.b", "maxConcurrency": 0 }]), "upstreams[0].maxConcurrency"),
        (json!([{ "url": "http://a.b", "timeoutMs": -1 }]), "upstreams[0].timeoutMs"),
        (json!([{ "url": "http://a.b", "priority": 1e10 }]), "upstreams[0].priority"),
    ];
    for (input, field) in cases {
        assert_eq!(upstream_field(input.clone()), field, "{input}");
    }
    let reason = |v: Value| upstreams(v).expect_err("refused").reason().to_string();
    assert_eq!(reason(json!([42])), "must be an http(s) URL string, an endpoint object or an EIP-1193 provider");
    assert_eq!(reason(json!([{ "url": "http://a.b", "headers": 5 }])), "must be an object");
    assert_eq!(reason(json!([{ "url": "http://a.b", "costs": ["x"] }])), "must be an object");
    assert_eq!(reason(json!("http://a.b")), "must be an array of RPC URLs, endpoint objects or providers");
    for (headers, field) in [
        (json!({ "Bad Header": "x" }), "upstreams[0].headers.Bad Header"),
        (json!({ "": "x" }), "upstreams[0].headers."),
        (json!({ "x-api-key": "ABCé€" }), "upstreams[0].headers.x-api-key"),
        (json!({ "x-api-key": "a\r\nX-Evil: 1" }), "upstreams[0].headers.x-api-key"),
    ] {
        let e = upstreams(json!([{ "url": "http://a.b", "headers": headers }])).expect_err("refused");
        assert_eq!(e.field(), field);
        assert!(!e.to_string().contains("ABC") && !e.to_string().contains("Evil"), "{e}");
    }
    assert!(
        upstreams(json!([{ "url": "http://a.b", "headers": { "X-Key_1": "abc é ~ ÿ" } }])).is_ok(),
        "Latin-1 is fine, ÿ (U+00FF) included"
    );
    let secret = upstreams(json!([{ "url": "http://a.b", "headers": { "authorization": 7 } }])).unwrap_err();
    assert_eq!(secret.reason(), "must be a string");
}

#[test]
fn the_realm_budget_is_an_option_under_fleet() {
    let pool = |v| options(v).unwrap().0.pool;
    let d = pool(json!({}));
    assert_eq!(d.realm_budget.map(|b| b.ratio), Some(0.1), "10 % by default");
    assert!(d.share_in_realm);
    let p = pool(json!({ "fleet": { "budget": { "ratio": 0.05 } } }));
    assert!(p.share_in_realm, "settings mean sharing");
    let b = p.realm_budget.unwrap();
    assert_eq!((b.ratio, b.min_per_second, b.burst), (0.05, 2.0, 20.0), "the rest keeps the realm's defaults");
    assert_eq!(pool(json!({ "fleet": { "budget": false } })).realm_budget, None);
    assert_eq!(pool(json!({ "fleet": { "budget": true } })).realm_budget, d.realm_budget);
    assert!(!pool(json!({ "fleet": false })).share_in_realm);
    let err = crate::config::RelayerConfig::build(
        vec![crate::options::EndpointSpec::from_url(
            crate::redact::EndpointUrl::parse("http://127.0.0.1:1", "u").unwrap(),
            0,
        )],
        options(json!({ "fleet": { "budget": { "burst": 0 } } })).unwrap().0,
    )
    .unwrap_err();
    assert_eq!(err.field(), "fleet.budget.burst");
}

#[test]
fn a_star_in_costs_prices_every_method_not_listed() {
    let list = upstreams(json!([{ "url": "http://a.b", "costs": { "*": 1, "eth_getLogs": 5 } }])).unwrap();
    let s = &list[0].0;
    assert_eq!(s.cost("eth_getLogs", 75.0), 5.0, "its own entry first");
    assert_eq!(s.cost("eth_blockNumber", 10.0), 1.0, "the relayer's head poll costs what the user's reads do");
    assert_eq!(s.cost("eth_chainId", 0.0), 1.0, "and so does the chain check");
    let plain = upstreams(json!([{ "url": "http://a.b", "costs": { "eth_call": 1 } }])).unwrap();
    assert_eq!(plain[0].0.cost("eth_blockNumber", 10.0), 10.0, "without a star, the table's");
}
