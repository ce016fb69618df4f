//! `Router::select`'s corners on explicit instants: the wait it answers
//! when a warming endpoint is at its ramped concurrency (and when a warm one
//! is full), whether a wait is a quota wait, failover onto endpoints the
//! request has not tried, a realm member's note of a total outage, and
//! which endpoints may carry a total outage's early probe.

use std::time::Duration;

use super::tests::{at, finish, options, pick, req, spec, verdict};
use super::*;
use crate::policy::slow_start::SlowStartConfig;
use crate::policy::{ErrorClass, Verdict};

/// Opens the breakers of endpoints `0..n` at `at(0)` (priority: three
/// health failures each, the lowest first).
fn open_first(r: &mut Router, n: usize) {
    for _ in 0..3 * n {
        let res = pick(r, at(0), (0.5, 0.5));
        finish(r, at(0), res, ErrorClass::Transient, true);
    }
}

#[test]
fn a_warming_endpoint_at_its_ramped_concurrency_is_looked_at_again_soon_a_warm_full_one_waits_for_a_slot() {
    let mut o = options(Strategy::Priority);
    o.slow_start = SlowStartConfig { warmup: Duration::from_secs(10), floor: 0.1, min_rps: 1.0 };
    let mut specs = vec![spec(0)];
    specs[0].max_concurrency = 20;
    let mut r = Router::new(specs, &o, Duration::from_secs(60), at(0));
    r.endpoints[0].begin_warmup(at(0));
    let tried = [false];
    let mut granted = 0;
    while let Selection::Reserved(_) = r.select(at(0), &req(&tried), (0.5, 0.5)) {
        granted += 1;
    }
    assert_eq!(granted, 2, "10 % of 20");
    assert_eq!(
        r.select(at(0), &req(&tried), (0.5, 0.5)),
        Selection::Wait { until: Some(at(50)), quota: false, paced: false },
        "the limit grows with time: look again in 50 ms"
    );
    // Warm at 10 s: the limit is the configured 20 and stays there.
    while let Selection::Reserved(_) = r.select(at(10_000), &req(&tried), (0.5, 0.5)) {
        granted += 1;
    }
    assert_eq!(granted, 20);
    assert_eq!(
        r.select(at(10_000), &req(&tried), (0.5, 0.5)),
        Selection::Wait { until: None, quota: false, paced: false },
        "only an attempt ending frees a slot"
    );
}

#[test]
fn an_endpoint_at_its_limit_beside_an_open_one_is_waited_for_not_given_up_on() {
    // Endpoint 1 is open for 5 s, endpoint 0 full: a slot of 0 may free any
    // moment, so the wait is no promise of 5 s (a request fails at once when
    // its wait ends past its deadline: the soak failed ~10,000 reads a second so).
    let mut specs: Vec<EndpointSpec> = (0..2).map(spec).collect();
    specs[0].max_concurrency = 1;
    let mut r = Router::new(specs, &options(Strategy::Priority), Duration::from_secs(60), at(0));
    let held = pick(&mut r, at(0), (0.5, 0.5));
    assert_eq!(held.endpoint, 0);
    let tried = [false, false];
    while let Selection::Reserved(res) = r.select(at(0), &req(&tried), (0.5, 0.5)) {
        assert_eq!(res.endpoint, 1);
        finish(&mut r, at(0), res, ErrorClass::Transient, true); // until its breaker opens
    }
    assert!(
        matches!(r.endpoints[1].breaker.borrow_mut().state(at(10)), BreakerState::Open { until } if until >= at(5000))
    );
    assert_eq!(
        r.select(at(10), &req(&tried), (0.5, 0.5)),
        Selection::Wait { until: Some(at(260)), quota: false, paced: false },
        "look again within 250 ms, or when the slot frees"
    );
}

#[test]
fn a_wait_for_an_endpoint_resting_after_retry_after_is_not_a_quota_wait() {
    let mut r = Router::new(vec![spec(0)], &options(Strategy::Priority), Duration::from_secs(60), at(0));
    let res = pick(&mut r, at(0), (0.5, 0.5));
    let busy = Verdict { retry_after: Some(Duration::from_secs(5)), ..verdict(ErrorClass::Transient, false) };
    r.complete(at(0), &res, &busy, MethodClass::Cheap, Duration::ZERO, 0.5);
    assert_eq!(
        r.select(at(1), &req(&[false]), (0.5, 0.5)),
        Selection::Wait { until: Some(at(5000)), quota: false, paced: false }
    );
    assert!(matches!(r.select(at(5000), &req(&[false]), (0.5, 0.5)), Selection::Reserved(_)));
}

#[test]
fn failover_goes_to_an_endpoint_the_request_has_not_tried_before_one_it_tried_earlier() {
    let mut r = router3();
    // Endpoint 0 failed first, then 1: endpoint 2 is next, not 0 again.
    let tried = [true, true, false];
    let mut failover = req(&tried);
    failover.after = Some(1);
    match r.select(at(0), &failover, (0.5, 0.5)) {
        Selection::Reserved(res) => assert_eq!(res.endpoint, 2),
        other => panic!("{other:?}"),
    }
    // Everything tried: any but the one that just failed.
    let all = [true, true, true];
    let mut again = req(&all);
    again.after = Some(0);
    match r.select(at(0), &again, (0.5, 0.5)) {
        Selection::Reserved(res) => assert_eq!(res.endpoint, 1),
        other => panic!("{other:?}"),
    }
}

fn router3() -> Router {
    Router::new((0..3).map(spec).collect(), &options(Strategy::Priority), Duration::from_secs(60), at(0))
}

#[test]
fn a_realm_member_that_saw_the_total_outage_starts_recovery_pacing_when_an_endpoint_is_back() {
    let realm = Realm::new();
    let o = options(Strategy::Priority);
    let mut r = Router::in_realm((0..2).map(spec).collect(), &o, Duration::from_secs(60), at(0), Some(&realm));
    open_first(&mut r, 2);
    let tried = [false, false];
    assert!(matches!(r.select(at(100), &req(&tried), (0.5, 0.5)), Selection::Wait { .. }), "no early probe due yet");
    assert!(r.pacer.borrow().recovery.is_none(), "still down");
    // Both breakers turn HalfOpen by the clock at 30 s: not every endpoint is open.
    let _ = r.select(at(30_000), &req(&tried), (0.5, 0.5));
    assert!(r.pacer.borrow().recovery.is_some(), "the fleet comes back paced");
    // Without that outage, an endpoint that is up starts nothing.
    let other = Realm::new();
    let mut calm = Router::in_realm((0..2).map(spec).collect(), &o, Duration::from_secs(60), at(0), Some(&other));
    let _ = calm.select(at(0), &req(&tried), (0.5, 0.5));
    assert!(calm.pacer.borrow().recovery.is_none());
}

#[test]
fn a_total_outages_early_probe_goes_only_to_an_endpoint_that_serves_the_method() {
    // Endpoint 2 is up but never serves this method: it neither counts as
    // serving nor may take the probe (its breaker, Closed, would admit it).
    for denied in [true, false] {
        let mut specs: Vec<EndpointSpec> = (0..3).map(spec).collect();
        if denied {
            specs[2].deny = vec!["eth_blockNumber".into()];
        } else {
            specs[2].allow = Some(vec!["eth_call".into()]);
        }
        let mut r = Router::new(specs, &options(Strategy::Priority), Duration::from_secs(60), at(0));
        open_first(&mut r, 2);
        let tried = [false; 3];
        assert_eq!(
            r.select(at(100), &req(&tried), (0.5, 0.5)),
            Selection::Wait { until: Some(at(500)), quota: false, paced: false }
        );
        match r.select(at(500), &req(&tried), (0.5, 0.5)) {
            Selection::Reserved(res) => {
                assert!(res.outage_probe && res.probe);
                assert!(res.endpoint < 2, "the probe went to endpoint {}", res.endpoint);
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_failovers_early_probe_goes_only_to_an_endpoint_it_may_take() {
    // Endpoint 1 is open (its early probe due at 500 ms); endpoint 0 is up
    // but this failover may not go back to it: every endpoint the request
    // may take is open, and the probe goes to one of them, never to 0.
    let mut r = Router::new((0..2).map(spec).collect(), &options(Strategy::Priority), Duration::from_secs(60), at(0));
    r.endpoints[1].breaker.borrow_mut().open_until(at(0), at(30_000));
    let tried = [true, false];
    let failover = RouteRequest { only_untried: true, after: Some(0), ..req(&tried) };
    match r.select(at(1000), &failover, (0.5, 0.5)) {
        Selection::Reserved(res) => assert_eq!((res.endpoint, res.outage_probe), (1, true)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_total_outages_early_probe_skips_an_endpoint_resting_after_a_retry_after() {
    // Both open, both probes due at 500 ms; endpoint 0 also rests until 5 s
    // (a Retry-After): its quota would admit the probe, its rest does not.
    let mut r = router3();
    open_first(&mut r, 3);
    r.endpoints[0].rest_until = at(5000);
    let tried = [false; 3];
    match r.select(at(500), &req(&tried), (0.5, 0.5)) {
        Selection::Reserved(res) => assert_eq!((res.endpoint, res.outage_probe), (1, true)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_total_outages_early_probe_waits_for_its_key_to_pay_not_for_the_breakers_open_time() {
    // One node on a 10 CU/s key (burst 30): the three failed reads that open its breaker at 0
    // spend the burst. At 500 ms the early probe is due, but the key pays its 10 CU only at 1 s:
    // the probe waits until then, not until the breaker's 30 s open time (a request fails at once
    // when its wait ends past its deadline: a fleet on Redis, its lease emptied by the outage's
    // first attempts, failed a fifth of its reads as "rate limited" in the outage's first second).
    let mut o = options(Strategy::Priority);
    o.quota_groups = vec![("key".into(), QuotaConfig { cu_per_second: 10.0, burst: 30.0, ..QuotaConfig::default() })];
    let mut specs = vec![spec(0)];
    specs[0].quota_group = Some("key".into());
    let mut r = Router::new(specs, &o, Duration::from_secs(60), at(0));
    open_first(&mut r, 1);
    let tried = [false];
    assert_eq!(
        r.select(at(500), &req(&tried), (0.5, 0.5)),
        Selection::Wait { until: Some(at(1000)), quota: true, paced: false }
    );
    match r.select(at(1000), &req(&tried), (0.5, 0.5)) {
        Selection::Reserved(res) => assert!(res.outage_probe && res.probe),
        other => panic!("{other:?}"),
    }
}
