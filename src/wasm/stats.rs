//! The `stats()` snapshot: per endpoint (breaker state, in-flight, EWMA
//! latency per method class, successes, failures, chain status, head,
//! slow-start share) and per quota group (CU/s used over the last second,
//! allowed rate, limit signals, cooldown), plus budget, queue and cache.

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::core::Core;
use super::descriptors::Obj;
use super::js_runtime::JsRuntime;
use crate::policy::quota::FleetMode;
use crate::pool::endpoint::ChainStatus;
use crate::runtime::Runtime;
use crate::time::millis_f64;

const CLASS_NAMES: [&str; 4] = ["cheap", "call", "heavy", "send"];

/// Builds the snapshot. Holds no borrow beyond this call.
pub fn snapshot(core: &Core) -> JsValue {
    let now = JsRuntime.now();
    let pipeline = &core.pipeline;
    let (endpoints, groups) = pipeline.with_router(|router| {
        let endpoints: Array = router
            .endpoints
            .iter_mut()
            .enumerate()
            .map(|(i, ep)| {
                let latency =
                    ep.latency.iter().zip(CLASS_NAMES).fold(Obj::new(), |o, (e, name)| o.maybe(name, e.value()));
                let chain = match ep.chain {
                    ChainStatus::Unknown => "unknown".to_string(),
                    ChainStatus::Verified => "verified".to_string(),
                    ChainStatus::Mismatch(id) => format!("mismatch:{id}"),
                };
                Obj::new()
                    .set("endpoint", core.redactor.label(i))
                    .set("state", if ep.refused(now) { "refused" } else { ep.breaker.borrow_mut().state(now).as_str() })
                    .set("inFlight", ep.in_flight as f64)
                    .set("latencyMs", latency.build())
                    .set("successes", ep.successes as f64)
                    .set("failures", ep.failures as f64)
                    .set("breakerFlips", ep.breaker.borrow().flips() as f64)
                    .set("chain", chain)
                    .maybe("head", ep.head.map(|h| h as f64))
                    .set("share", ep.slow_start.factor(now))
                    .set("quotaGroup", router.groups.get(ep.group).map(|g| g.name.clone()).unwrap_or_default())
                    .build()
            })
            .collect();
        let groups: Array = router
            .groups
            .iter_mut()
            .filter(|g| !g.name.is_empty())
            .map(|g| {
                let s = g.quota.borrow().stats();
                let fleet = g.quota.borrow_mut().fleet_mode(now).map(|mode| match mode {
                    FleetMode::Leased => "leased",
                    FleetMode::Shares => "shares",
                    FleetMode::Local => "local",
                });
                // Each borrow its own statement: a temporary in the builder chain below lives to
                // its end, and a second borrow of the group there would panic.
                let spending = g.quota.borrow_mut().spending_rate(now);
                let waiting = g.quota.borrow().line();
                let cu_last_second = g.quota.borrow_mut().cu_last_second(now);
                Obj::new()
                    .set("name", g.name.clone())
                    .set("cuLastSecond", cu_last_second)
                    .set("allowedCuPerSecond", finite(s.allowed_rate))
                    .set("cuCharged", s.cu_charged)
                    .set("rateLimited", s.limited as f64)
                    .set("cooldownMs", millis_f64(s.cooldown_until.saturating_since(now)))
                    .maybe("fleet", fleet)
                    .set("spendingCuPerSecond", finite(spending))
                    .set("waitingForCu", f64::from(waiting))
                    .build()
            })
            .collect();
        (endpoints, groups)
    });
    let pacing = pipeline
        .with_router(|r| r.recovery_pacing())
        .map(|(pace, demand)| Obj::new().set("attemptsPerSecond", pace).set("demandPerSecond", demand).build());
    let (cache_entries, cache_hits) = core.front.cache_stats();
    Obj::new()
        .set("endpoints", endpoints)
        .set("quotaGroups", groups)
        .set("retryBudget", pipeline.budget_balance(now))
        .set("waiting", pipeline.waiting() as f64)
        .set("cacheEntries", cache_entries as f64)
        .set("cacheHits", cache_hits as f64)
        .set("closed", core.closed())
        .maybe("recoveryPacing", pacing)
        .set("wasmMemoryBytes", wasm_memory_bytes())
        .build()
}

/// A rate for JS: an unknown plan's infinite rate as `Number.MAX_VALUE`.
fn finite(rate: f64) -> f64 {
    if rate.is_finite() {
        rate
    } else {
        f64::MAX
    }
}

/// The size of this instance's linear memory (it only grows; a soak test
/// watches it level off).
fn wasm_memory_bytes() -> f64 {
    use wasm_bindgen::JsCast;
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .map(|m| m.buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length() as f64)
        .unwrap_or(0.0)
}
