//! Which retries look for an untried endpoint before their backoff (the
//! failover preselection): only those with a backoff to skip. A retry
//! without one (a quota limit) selects as any attempt does, over every
//! endpoint, so an open endpoint's early probe is not made from it while
//! the pool has an endpoint that is merely cooling. A failover whose
//! untried endpoints are all open may probe one of them early, never the
//! endpoint it fails over from.

use super::tests::MS;
use super::tests::{harness, opts};
use super::*;
use crate::runtime::scripted::Behaviour::*;

#[test]
fn a_rate_limited_retry_waits_for_the_cooling_endpoint_instead_of_probing_an_open_one() {
    let h = harness(vec![vec![Status(429, Some("2")), Answer("0xa")], vec![Answer("0xb")]], opts());
    let now = h.rt.now();
    // Endpoint 1 is open for 30 s; its early probe is due after 500 ms.
    h.pipeline.with_router(|r| r.endpoints[1].breaker.borrow_mut().open_until(now, now + MS(30_000)));
    h.rt.block_on(h.rt.sleep(MS(1000))).unwrap();
    let ok = h.run("eth_blockNumber").unwrap();
    assert_eq!(h.net.log(), vec![(0, 1000), (0, 3000)], "the retry waits out the Retry-After on the same endpoint");
    assert_eq!((ok.endpoint, ok.attempts.len(), h.net.calls(1)), (0, 2, 0), "no early probe of the open endpoint");
}

#[test]
fn a_failover_onto_open_endpoints_never_probes_the_endpoint_that_just_failed() {
    // After a 503 the failover may take only endpoint 1, open, whose early
    // probe is due: it gets it. The endpoint that failed (up, Closed) was
    // taken as that probe once, its backoff skipped: retried at once.
    let h = harness(vec![vec![Status(503, None), Answer("0xa")], vec![Answer("0xb")]], opts());
    let now = h.rt.now();
    h.pipeline.with_router(|r| r.endpoints[1].breaker.borrow_mut().open_until(now, now + MS(30_000)));
    h.rt.block_on(h.rt.sleep(MS(1000))).unwrap();
    let ok = h.run("eth_blockNumber").unwrap();
    assert_eq!(h.net.log(), vec![(0, 1000), (1, 1000)]);
    assert_eq!(ok.endpoint, 1);
}

#[test]
fn every_read_in_flight_on_a_node_that_dies_fails_over_whatever_the_retry_budget() {
    // 64 reads in flight on the preferred node when it starts answering
    // 503; the default budget holds 5 retries. Its breaker opens after
    // three failures; the other reads were stranded on it and fail over
    // to the two healthy nodes all the same.
    let mut raw = crate::config::RawOptions::default();
    raw.pool.strategy = crate::pool::options::Strategy::Priority;
    let h =
        harness(vec![vec![Slow(MS(50), Box::new(Status(503, None)))], vec![Answer("0x2")], vec![Answer("0x3")]], raw);
    // A node known already (a fresh one's first read and chain check share one batch, whose 503
    // would keep the other reads off it).
    h.pipeline.with_router(|r| r.endpoints[0].chain = crate::pool::endpoint::ChainStatus::Verified);
    let reads = (0..64).map(|_| h.request("eth_getBalance"));
    let outcomes = h.rt.block_on(crate::runtime::sim::join_all(reads.collect())).unwrap();
    let failed: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().err().map(|f| f.reason)).collect();
    assert_eq!(failed, vec![], "every read answered by a healthy node");
    assert_eq!(h.net.calls(0), 64);
    assert_eq!(h.net.calls(1) + h.net.calls(2), 64, "one failover each, no more");
}
