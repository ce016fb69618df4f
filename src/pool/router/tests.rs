//! Selection, strategies and reservations on explicit instants.

use std::time::Duration;

use super::*;
use crate::policy::breaker::BreakerConfig;
use crate::policy::{ErrorClass, Verdict};
use crate::redact::EndpointUrl;
use std::borrow::Cow;

pub(super) use crate::time::at;

pub(super) fn spec(i: usize) -> EndpointSpec {
    EndpointSpec::from_url(EndpointUrl::parse(&format!("http://127.0.0.1:{}", 7000 + i), "u").unwrap(), i)
}

pub(super) fn options(strategy: Strategy) -> PoolOptions {
    PoolOptions {
        strategy,
        check_chain: false,
        slow_start: crate::policy::slow_start::SlowStartConfig { warmup: Duration::ZERO, floor: 1.0, min_rps: 1.0 },
        breaker: BreakerConfig { jitter: 0.0, ..BreakerConfig::default() },
        ..PoolOptions::default()
    }
}

pub(super) fn router(n: usize, strategy: Strategy) -> Router {
    Router::new((0..n).map(spec).collect(), &options(strategy), Duration::from_secs(60), at(0))
}

pub(super) fn req<'a>(tried: &'a [bool]) -> RouteRequest<'a> {
    RouteRequest { wants_latest: true, tried, ..RouteRequest::own("eth_blockNumber") }
}

pub(super) fn verdict(class: ErrorClass, health: bool) -> Verdict {
    Verdict {
        class,
        rule: Cow::Borrowed("test"),
        health_failure: health,
        retry_after: None,
        long_horizon: false,
        once_elsewhere: false,
        undelivered: false,
    }
}

pub(super) fn pick(r: &mut Router, now: Instant, draws: (f64, f64)) -> Reservation {
    let tried = vec![false; r.endpoints.len()];
    match r.select(now, &req(&tried), draws) {
        Selection::Reserved(res) => res,
        other => panic!("expected a reservation, got {other:?}"),
    }
}

pub(super) fn finish(
    r: &mut Router,
    now: Instant,
    res: Reservation,
    class: ErrorClass,
    health: bool,
) -> Vec<RouterEvent> {
    r.complete(now, &res, &verdict(class, health), MethodClass::Cheap, Duration::from_millis(10), 0.5)
}

#[test]
fn round_robin_rotates() {
    let mut r = router(3, Strategy::RoundRobin);
    let order: Vec<usize> = (0..6)
        .map(|_| {
            let res = pick(&mut r, at(0), (0.5, 0.5));
            finish(&mut r, at(0), res, ErrorClass::Success, false);
            res.endpoint
        })
        .collect();
    assert_eq!(order, vec![0, 1, 2, 0, 1, 2]);
}

#[test]
fn priority_prefers_the_lowest_and_spills_over_when_it_is_at_budget() {
    let mut o = options(Strategy::Priority);
    o.quota_groups = vec![("key".into(), QuotaConfig { cu_per_second: 20.0, burst: 20.0, ..QuotaConfig::default() })];
    let mut specs: Vec<EndpointSpec> = (0..2).map(spec).collect();
    specs[0].quota_group = Some("key".into());
    let mut r = Router::new(specs, &o, Duration::from_secs(60), at(0));
    let chosen: Vec<usize> = (0..4).map(|_| pick(&mut r, at(0), (0.5, 0.5)).endpoint).collect();
    assert_eq!(chosen, vec![0, 0, 1, 1], "two 10-CU calls fit the 20-CU burst, then spill over");
}

#[test]
fn weighted_follows_the_weights() {
    let mut specs: Vec<EndpointSpec> = (0..2).map(spec).collect();
    specs[0].weight = 3.0;
    specs[1].weight = 1.0;
    let mut r = Router::new(specs, &options(Strategy::Weighted), Duration::from_secs(60), at(0));
    let mut counts = [0usize; 2];
    for k in 0..1000 {
        let res = pick(&mut r, at(0), ((k as f64 + 0.5) / 1000.0, 0.5));
        counts[res.endpoint] += 1;
        finish(&mut r, at(0), res, ErrorClass::Success, false);
    }
    assert_eq!(counts, [750, 250]);
}

#[test]
fn latency_uses_two_choices_and_never_only_the_fastest() {
    let mut r = router(3, Strategy::Latency);
    r.endpoints[0].observe_latency(MethodClass::Cheap, Duration::from_millis(10));
    r.endpoints[1].observe_latency(MethodClass::Cheap, Duration::from_millis(100));
    r.endpoints[2].observe_latency(MethodClass::Cheap, Duration::from_millis(500));
    let mut counts = [0usize; 3];
    for a in 0..10 {
        for b in 0..10 {
            let res = pick(&mut r, at(0), (a as f64 / 10.0, b as f64 / 10.0));
            counts[res.endpoint] += 1;
            finish(&mut r, at(0), res, ErrorClass::Success, false);
        }
    }
    assert!(counts[0] > counts[1] && counts[1] > counts[2], "{counts:?}");
    assert!(counts[1] > 0, "the second fastest still gets traffic: {counts:?}");
    assert_eq!(counts[2], 0, "the slowest only wins against nothing");
    // In-flight load counts: a busy fast endpoint loses to an idle slower one.
    let mut r = router(2, Strategy::Latency);
    r.endpoints[0].observe_latency(MethodClass::Cheap, Duration::from_millis(10));
    r.endpoints[1].observe_latency(MethodClass::Cheap, Duration::from_millis(30));
    r.endpoints[0].in_flight = 9;
    assert_eq!(pick(&mut r, at(0), (0.0, 0.0)).endpoint, 1);
}

#[test]
fn sticky_stays_and_rebinds_when_its_endpoint_becomes_unavailable() {
    let mut r = router(3, Strategy::Sticky);
    let first = pick(&mut r, at(0), (0.9, 0.9));
    assert_eq!(first.endpoint, 0);
    finish(&mut r, at(0), first, ErrorClass::Success, false);
    for _ in 0..3 {
        let res = pick(&mut r, at(0), (0.5, 0.5));
        assert_eq!(res.endpoint, 0);
        finish(&mut r, at(0), res, ErrorClass::Transient, true);
    }
    let moved = pick(&mut r, at(1), (0.5, 0.5));
    assert_eq!(moved.endpoint, 1, "breaker open: bind to the next by priority");
    finish(&mut r, at(1), moved, ErrorClass::Success, false);
    // Endpoint 0 recovers (HalfOpen after 30 s) but sticky stays on 1.
    let later = pick(&mut r, at(40_000), (0.5, 0.5));
    assert_eq!(later.endpoint, 1);
}

#[test]
fn a_tripped_breaker_removes_the_endpoint_and_probes_are_atomic() {
    let mut r = router(2, Strategy::Priority);
    for _ in 0..3 {
        let res = pick(&mut r, at(0), (0.5, 0.5));
        assert_eq!(res.endpoint, 0);
        finish(&mut r, at(0), res, ErrorClass::Transient, true);
    }
    assert_eq!(pick(&mut r, at(1), (0.5, 0.5)).endpoint, 1);
    // HalfOpen at 30 s: one probe permit. Two selections in the same instant
    // (no await between them): only one probe reaches endpoint 0.
    let a = pick(&mut r, at(30_000), (0.5, 0.5));
    let b = pick(&mut r, at(30_000), (0.5, 0.5));
    assert_eq!((a.endpoint, a.probe), (0, true));
    assert_eq!((b.endpoint, b.probe), (1, false));
    assert_eq!(r.endpoints[0].breaker.borrow().probes_in_flight(), 1);
}

#[test]
fn total_outage_hands_out_spaced_early_probes_and_otherwise_says_wait() {
    let mut r = router(2, Strategy::Priority);
    for e in 0..2 {
        for _ in 0..3 {
            let tried = vec![false, false];
            let res = match r.select(at(0), &req(&tried), (0.5, 0.5)) {
                Selection::Reserved(res) => res,
                other => panic!("{other:?}"),
            };
            assert_eq!(res.endpoint, e, "priority: endpoint 0 until its breaker opens, then endpoint 1");
            finish(&mut r, at(0), res, ErrorClass::Transient, true);
        }
    }
    for e in 0..2 {
        assert!(
            matches!(r.endpoints[e].breaker.borrow_mut().state(at(0)), BreakerState::Open { .. }),
            "endpoint {e} open"
        );
    }
    let tried = vec![false, false];
    assert_eq!(
        r.select(at(100), &req(&tried), (0.5, 0.5)),
        Selection::Wait { until: Some(at(500)), quota: false, paced: false }
    );
    let probe = match r.select(at(500), &req(&tried), (0.5, 0.5)) {
        Selection::Reserved(res) => res,
        other => panic!("{other:?}"),
    };
    assert!(probe.probe);
    let probed = probe.endpoint;
    let events = finish(&mut r, at(510), probe, ErrorClass::Success, false);
    assert!(events
        .iter()
        .any(|e| matches!(e, RouterEvent::Breaker { transition, .. } if transition.to == BreakerState::HalfOpen)));
    // The fleet is back: pool-wide pacing starts, and the other endpoint gets
    // its half-open probe one early-probe spacing later.
    assert!(r.pacer.borrow().recovery.is_some());
    let other = 1 - probed;
    assert_eq!(r.endpoints[other].breaker.borrow_mut().state(at(510)), BreakerState::Open { until: at(1010) });
}

#[test]
fn a_rate_limit_cools_every_endpoint_of_the_group() {
    let mut o = options(Strategy::Priority);
    o.quota_groups = vec![("key".into(), QuotaConfig::default())];
    let mut specs: Vec<EndpointSpec> = (0..3).map(spec).collect();
    specs[0].quota_group = Some("key".into());
    specs[1].quota_group = Some("key".into());
    let mut r = Router::new(specs, &o, Duration::from_secs(60), at(0));
    let res = pick(&mut r, at(0), (0.5, 0.5));
    let v = Verdict { retry_after: Some(Duration::from_secs(5)), ..verdict(ErrorClass::RateLimited, false) };
    let events = r.complete(at(0), &res, &v, MethodClass::Cheap, Duration::ZERO, 0.5);
    assert!(matches!(events[0], RouterEvent::RateLimited { until, .. } if until == at(5000)));
    assert_eq!(pick(&mut r, at(1), (0.5, 0.5)).endpoint, 2, "the other URL on the same key is skipped too");
    assert_eq!(r.endpoints[0].breaker.borrow_mut().state(at(1)), BreakerState::Closed, "429s are not health failures");
}

#[test]
fn chain_mismatch_disables_and_freshness_skips_lagging_endpoints_for_latest() {
    let mut o = options(Strategy::Priority);
    o.check_chain = true;
    o.max_lag_blocks = 5;
    let mut r = Router::new((0..3).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    assert!(pick(&mut r, at(0), (0.5, 0.5)).check_chain);
    assert_eq!(r.chain_checked(0, 1, at(0)), None);
    assert!(matches!(r.chain_checked(1, 5, at(0)), Some(RouterEvent::ChainMismatch { expected: 1, got: 5, .. })));
    assert_eq!(r.chain_checked(2, 1, at(0)), None);
    r.endpoints[0].in_flight = 0;
    r.observe_head(2, 110, at(0));
    r.observe_head(0, 100, at(0));
    let tried = vec![false; 3];
    let res = match r.select(at(0), &req(&tried), (0.5, 0.5)) {
        Selection::Reserved(res) => res,
        other => panic!("{other:?}"),
    };
    assert_eq!(res.endpoint, 2, "0 lags by 10 blocks; 1 is on another chain");
    let mut pinned = req(&tried);
    pinned.wants_latest = false;
    r.endpoints[2].in_flight = 0;
    match r.select(at(0), &pinned, (0.5, 0.5)) {
        Selection::Reserved(res) => assert_eq!(res.endpoint, 0, "pinned reads may use a lagging node"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn methods_are_routed_only_where_allowed() {
    let mut specs: Vec<EndpointSpec> = (0..2).map(spec).collect();
    specs[0].deny = vec!["eth_blockNumber".into()];
    specs[1].allow = Some(vec!["eth_call".into()]);
    let mut r = Router::new(specs, &options(Strategy::Priority), Duration::from_secs(60), at(0));
    let tried = vec![false; 2];
    assert_eq!(r.select(at(0), &req(&tried), (0.5, 0.5)), Selection::NoEndpoint);
}

#[test]
fn slow_start_scales_concurrency_after_recovery() {
    let mut o = options(Strategy::Priority);
    o.slow_start =
        crate::policy::slow_start::SlowStartConfig { warmup: Duration::from_secs(10), floor: 0.1, min_rps: 1.0 };
    let mut specs = vec![spec(0)];
    specs[0].max_concurrency = 20;
    let mut r = Router::new(specs, &o, Duration::from_secs(60), at(0));
    assert_eq!(r.endpoints[0].concurrency_limit(at(0)), 20, "an endpoint the relayer starts with is not ramped");
    r.endpoints[0].begin_warmup(at(0)); // its breaker closed: it comes back
    let tried = vec![false];
    let mut granted = 0;
    while let Selection::Reserved(_) = r.select(at(0), &req(&tried), (0.5, 0.5)) {
        granted += 1;
    }
    assert_eq!(granted, 2, "10 % of 20 at the start of the ramp");
    assert_eq!(r.endpoints[0].concurrency_limit(at(5000)), 10);
    assert_eq!(r.endpoints[0].concurrency_limit(at(10_000)), 20);
}

#[test]
fn a_node_that_first_claims_a_head_far_in_the_future_cannot_make_honest_nodes_look_lagging() {
    let mut o = options(Strategy::Priority);
    o.max_lag_blocks = 5;
    let mut r = Router::new((0..2).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    r.observe_head(1, u64::MAX / 2, at(0)); // the liar answers first
    r.observe_head(0, 100, at(0));
    assert_eq!(r.best_head(at(0)), Some(100), "the outlier is forgotten once an honest head is seen");
    r.observe_head(1, u64::MAX / 2, at(1));
    assert_eq!(r.best_head(at(1)), Some(100), "and stays ignored");
    let tried = vec![false; 2];
    match r.select(at(1), &req(&tried), (0.5, 0.5)) {
        Selection::Reserved(res) => assert_eq!(res.endpoint, 0, "the honest node is not skipped as lagging"),
        other => panic!("{other:?}"),
    }
    r.observe_head(1, 90, at(2)); // going back in time: it now lags
    assert!(r.endpoints[1].lagging(5, at(2), Duration::from_secs(60)));
}

#[test]
fn a_verified_chain_is_checked_again_after_the_recheck_interval() {
    let mut o = options(Strategy::Priority);
    o.check_chain = true;
    o.chain_recheck = Duration::from_secs(300);
    let mut r = Router::new((0..1).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    let first = pick(&mut r, at(0), (0.5, 0.5));
    assert!(first.check_chain);
    assert_eq!(r.chain_checked(0, 1, at(0)), None);
    r.release(&first);
    let recent = pick(&mut r, at(299_000), (0.5, 0.5));
    assert!(!recent.check_chain, "verified recently");
    r.release(&recent);
    let due = pick(&mut r, at(300_000), (0.5, 0.5));
    assert!(due.check_chain, "due again");
    assert!(matches!(r.chain_checked(0, 5, at(300_000)), Some(RouterEvent::ChainMismatch { expected: 1, got: 5, .. })));
    r.release(&due);
    let tried = vec![false; 1];
    assert!(matches!(r.select(at(400_000), &req(&tried), (0.5, 0.5)), Selection::NoEndpoint), "disabled meanwhile");
    let again = pick(&mut r, at(600_000), (0.5, 0.5));
    assert!(again.check_chain, "a disabled node gets its chain checked again too (a backend swapped back)");
    assert_eq!(r.chain_checked(0, 1, at(600_000)), None);
    assert!(matches!(r.endpoints[0].chain, ChainStatus::Verified));
}

#[test]
fn the_healthy_rate_is_not_relearned_while_the_warm_up_cap_holds_it_down() {
    // Found by the soak test: the warm-up cap is a share of the meter; if the
    // meter learned the capped rate, cap and meter chased each other down to
    // the floor and the pool never recovered from an outage.
    let mut o = options(Strategy::Priority);
    o.slow_start =
        crate::policy::slow_start::SlowStartConfig { warmup: Duration::from_secs(30), floor: 0.1, min_rps: 1.0 };
    let mut r = Router::new((0..1).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    r.endpoints[0].warm = None; // a fresh endpoint's own ramp is not under test here
    for ms in (0..3000).step_by(10) {
        let res = pick(&mut r, at(ms), (0.5, 0.5));
        finish(&mut r, at(ms), res, ErrorClass::Success, false);
    }
    let healthy = r.endpoints[0].meter.rate();
    assert!(healthy > 50.0, "{healthy}");
    r.endpoints[0].begin_warmup(at(3000));
    for ms in (3000..9000).step_by(200) {
        if r.endpoints[0].warm_check(at(ms)).is_ok() {
            let res = pick(&mut r, at(ms), (0.5, 0.5));
            finish(&mut r, at(ms), res, ErrorClass::Success, false);
        }
    }
    assert_eq!(r.endpoints[0].meter.rate(), healthy, "the meter keeps the pre-outage rate while warming");
    // Warm again, serving what it served before: the time it spent warming
    // is not read as a quiet spell (each fault cycle cut the rate by ~30 %).
    r.endpoints[0].warm = None;
    for ms in (40_000..43_000).step_by(10) {
        let res = pick(&mut r, at(ms), (0.5, 0.5));
        finish(&mut r, at(ms), res, ErrorClass::Success, false);
    }
    let after = r.endpoints[0].meter.rate();
    assert!((after - healthy).abs() < 0.02 * healthy, "{after} after warming, {healthy} before");
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Any interleaving of selections and completions (any verdict, any
        /// strategy, with clock steps): the in-flight count of every
        /// endpoint equals the reservations held, probes stay within
        /// permits, and completing everything releases everything.
        #[test]
        fn every_reservation_is_counted_and_released(
            strategy in 0usize..5,
            ops in proptest::collection::vec((0u8..4, 0usize..16, 0usize..9, any::<bool>(), 0u16..3000), 0..200),
        ) {
            use crate::pool::options::Strategy as S;
            let strategies = [S::Priority, S::RoundRobin, S::Weighted, S::Latency, S::Sticky];
            let mut r = router(3, strategies[strategy]);
            let classes = ErrorClass::ALL;
            let tried = vec![false; 3];
            let (mut now, mut held) = (0u64, Vec::new());
            for (op, which, class, health, n) in ops {
                match op {
                    0 | 1 => if let Selection::Reserved(res) = r.select(at(now), &req(&tried), (f64::from(n) / 3000.0, 0.5)) {
                        held.push(res);
                    },
                    2 => if !held.is_empty() {
                        let res = held.remove(which % held.len());
                        r.complete(at(now), &res, &verdict(classes[class], health), MethodClass::Cheap, Duration::from_millis(u64::from(n)), 0.5);
                    },
                    _ => now += u64::from(n),
                }
                for (i, ep) in r.endpoints.iter().enumerate() {
                    prop_assert_eq!(ep.in_flight as usize, held.iter().filter(|h| h.endpoint == i).count());
                    prop_assert!(ep.breaker.borrow().probes_in_flight() <= ep.breaker.borrow().probe_permits());
                }
            }
            for res in held.drain(..) {
                r.complete(at(now), &res, &verdict(ErrorClass::Success, false), MethodClass::Cheap, Duration::ZERO, 0.5);
            }
            prop_assert!(r.endpoints.iter().all(|e| e.in_flight == 0));
        }
    }
}

#[test]
fn when_every_endpoint_serves_another_chain_the_router_says_which() {
    let mut o = options(Strategy::Priority);
    o.check_chain = true;
    o.chain_id = Some(1);
    let mut r = Router::new((0..2).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    r.chain_checked(0, 31337, at(0));
    assert_eq!(r.all_on_other_chains(), None, "endpoint 1 is not known to be wrong yet");
    r.chain_checked(1, 5, at(0));
    assert_eq!(r.all_on_other_chains(), Some((1, vec![(0, 31337), (1, 5)])));
}

#[test]
fn while_an_endpoints_chain_check_is_out_other_requests_wait_for_its_answer() {
    let mut o = options(Strategy::Priority);
    o.check_chain = true;
    let mut r = Router::new((0..2).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    let tried = vec![false; 2];
    let first = pick(&mut r, at(0), (0.5, 0.5));
    assert_eq!((first.endpoint, first.check_chain), (0, true));
    // Endpoint 0's check is out: the next request does not check it again;
    // it takes endpoint 1 (checking that one).
    let second = pick(&mut r, at(1), (0.5, 0.5));
    assert_eq!((second.endpoint, second.check_chain), (1, true));
    // Both checks out: the third waits for an answer (a release wakes it).
    assert!(matches!(r.select(at(2), &req(&tried), (0.5, 0.5)), Selection::Wait { until: None, .. }));
    assert_eq!(r.chain_checked(0, 1, at(3)), None);
    let third = pick(&mut r, at(4), (0.5, 0.5));
    assert_eq!((third.endpoint, third.check_chain), (0, false), "answered: no check of its own");
    // A check that fails (no answer) lets the next request check instead.
    r.release(&second);
    let fourth = pick(&mut r, at(5), (0.5, 0.5));
    assert_eq!(fourth.endpoint, 0, "priority");
    let _ = (first, third, fourth);
    let mut r = Router::new((0..1).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    let lone = pick(&mut r, at(0), (0.5, 0.5));
    r.release(&lone); // the check never answered
    assert!(pick(&mut r, at(1), (0.5, 0.5)).check_chain, "the next request checks");
}

#[test]
fn an_endpoints_own_group_caps_cooldowns_at_the_longest_retry_after_honoured_and_selections_are_counted() {
    let mut r = Router::new(vec![spec(0)], &options(Strategy::Priority), Duration::from_secs(7), at(0));
    assert_eq!(r.groups[0].quota.borrow().config().cooldown_max, Duration::from_secs(7));
    let before = r.selections;
    for _ in 0..3 {
        let _ = r.select(at(0), &req(&[false]), (0.5, 0.5));
    }
    assert_eq!(r.selections, before + 3);
}

#[test]
fn an_endpoint_counts_its_successes_and_failures() {
    let mut r = router(1, Strategy::Priority);
    for (class, health) in [(ErrorClass::Success, false), (ErrorClass::Success, false), (ErrorClass::Transient, true)] {
        let res = pick(&mut r, at(0), (0.5, 0.5));
        finish(&mut r, at(1), res, class, health);
    }
    assert_eq!((r.endpoints[0].successes, r.endpoints[0].failures), (2, 1));
}
