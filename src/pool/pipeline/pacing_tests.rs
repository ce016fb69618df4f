//! After a total outage the recovery pacer holds requests and lets them go
//! oldest first: a request keeps its place in the line only while the
//! pacer is what it waits for.
#![allow(clippy::result_large_err)]

use std::time::Duration;

use super::tests::MS;
use super::tests::{harness_with, opts, Harness};
use super::*;
use crate::config::RawOptions;
use crate::policy::breaker::BreakerConfig;
use crate::policy::quota::QuotaConfig;
use crate::policy::slow_start::SlowStartConfig;
use crate::runtime::scripted::Behaviour;
use crate::runtime::scripted::Behaviour::*;
use crate::runtime::Transport;

/// One endpoint that served two requests a second for 3 s, then went
/// down (its breaker open for 30 s, an early probe due 500 ms later) and is
/// back at once: a single early probe closes its breaker (no slow start).
/// Requests make one attempt. The clock is at the outage when it returns.
fn back_after_an_outage(script: Vec<Behaviour>) -> Harness {
    back_after_an_outage_in(script, None)
}

/// The same, the endpoint in a quota group of `quota` if given.
fn back_after_an_outage_in(script: Vec<Behaviour>, quota: Option<QuotaConfig>) -> Harness {
    let mut raw = RawOptions {
        max_retries: Some(0.0),
        attempt_timeout_ms: Some(20_000.0),
        deadline_ms: Some(60_000.0),
        ..opts()
    };
    raw.pool.breaker =
        BreakerConfig { close_after: 1, observe: Duration::ZERO, probe_permits: 10, ..Default::default() };
    raw.pool.slow_start = SlowStartConfig { warmup: Duration::ZERO, ..Default::default() };
    raw.pool.quota_groups = quota.into_iter().map(|q| ("key".to_string(), q)).collect();
    let in_group = raw.pool.quota_groups.len() == 1;
    let mut script = script;
    script.splice(0..0, vec![Answer("0x0"); 7]);
    let h = harness_with(vec![script], raw, |specs| {
        if in_group {
            specs[0].quota_group = Some("key".into());
        }
    });
    for _ in 0..7 {
        h.run("eth_blockNumber").unwrap();
        h.rt.block_on(h.rt.sleep(MS(500))).unwrap();
    }
    let now = h.rt.now();
    h.pipeline.with_router(|r| r.endpoints[0].breaker.borrow_mut().open_until(now, now + MS(30_000)));
    h
}

/// Runs requests that begin the given times (ms) after now, each to its
/// end; for each, when it was answered (ms after now).
fn requests_at(h: &Harness, starts: &[u64]) -> Vec<Option<u64>> {
    calls_at(h, &starts.iter().map(|&ms| (ms, None)).collect::<Vec<_>>())
}

/// The same for calls of the given costs (`None`: the method table's).
fn calls_at(h: &Harness, calls: &[(u64, Option<f64>)]) -> Vec<Option<u64>> {
    let t0 = h.now_ms();
    let runs = calls.iter().map(|&(ms, cost)| async move {
        h.rt.sleep(MS(ms)).await;
        let call = Call { cost, ..Call::new("eth_blockNumber") };
        let r = h.pipeline.execute(&h.rt, call, |t| h.net.send(&(), t), &|_| {}).await;
        r.ok().map(|_| h.now_ms() - t0)
    });
    h.rt.block_on(crate::runtime::sim::join_all(runs.collect())).unwrap()
}

// The pacer's turns come every ~385 ms (1.3 × the 2 requests/s before the
// outage) from the early probe's answer at 500 ms: at 884, 1269, 1653 ms.

#[test]
fn a_younger_request_waking_first_leaves_the_pacers_turn_to_the_older_one() {
    // The first paced request is on the endpoint from 884 to 1268.6 ms; the
    // slot it gives back wakes the older of the two held since 900 and
    // 1000 ms, 0.6 ms before the next turn: it sleeps the least wait (1 ms),
    // and the younger one wakes first at the turn. It must let the older go.
    let h = back_after_an_outage(vec![Answer("0x1"), Slow(MS(384), Box::new(Answer("0x2"))), Answer("0x3")]);
    let answered = requests_at(&h, &[0, 600, 900, 1000]);
    assert_eq!(answered, vec![Some(500), Some(1268), Some(1269), Some(1654)], "oldest first");
}

#[test]
fn a_request_being_served_holds_no_place_in_the_pacers_line() {
    // The request served at 884 ms is on the endpoint until 1484 ms: the
    // one held since 900 ms takes the turn at 1269 ms all the same.
    let h = back_after_an_outage(vec![Answer("0x1"), Slow(MS(600), Box::new(Answer("0x2"))), Answer("0x3")]);
    let answered = requests_at(&h, &[0, 600, 900]);
    assert_eq!(answered, vec![Some(500), Some(1484), Some(1269)]);
}

#[test]
fn requests_waiting_for_their_quota_are_served_in_turn_beside_the_pacer() {
    // 100 CU a second, a burst of 100: the 100 CU request served at 884 ms
    // empties the bucket; the next 100 CU one (held since 600 ms) waits for
    // the bucket, and the 1 CU one held since 1000 ms waits behind it in the
    // key's line: the refill is the older one's, all 100 CU at 1884 ms, and
    // the 1 CU one takes the pacer's next turn, 385 ms later. Before requests
    // waited in turn, the 1 CU one took the pacer's turn at 1269 ms and the
    // 100 CU one waited for a bucket that every small request could empty.
    let quota = QuotaConfig { cu_per_second: 100.0, burst: 100.0, ..QuotaConfig::default() };
    let h = back_after_an_outage_in(vec![Answer("0x1")], Some(quota));
    let answered = calls_at(&h, &[(0, None), (550, Some(100.0)), (600, Some(100.0)), (1000, Some(1.0))]);
    assert_eq!(answered, vec![Some(500), Some(884), Some(1884), Some(2269)]);
}
