//! A breaker's probe goes only to a request with time to prove the node
//! (`policy::silence`): one that would give the node a few milliseconds
//! would time out, prove nothing, and spend the probe.

use std::time::Duration;

use super::tests::{at, finish, pick, req};
use super::*;
use crate::policy::ErrorClass;

/// Two endpoints, both open at `at(0)` (three health failures each); their
/// early probes are due at 500 ms, their half-open time at 30 s.
fn all_open() -> Router {
    let mut r = super::tests::router(2, Strategy::Priority);
    for _ in 0..6 {
        let res = pick(&mut r, at(0), (0.5, 0.5));
        finish(&mut r, at(0), res, ErrorClass::Transient, true);
    }
    r
}

#[test]
fn an_early_probe_skips_a_request_about_to_pass_its_deadline() {
    let mut r = all_open();
    let tried = [false, false];
    // Nobody measured these nodes: a probe needs 250 ms of a request's time.
    assert_eq!(r.proof_time(0, MethodClass::Cheap), Duration::from_millis(250));
    let short = RouteRequest { deadline: Some(at(510)), ..req(&tried) };
    assert_eq!(
        r.select(at(500), &short, (0.5, 0.5)),
        Selection::Wait { until: Some(at(510)), quota: false, paced: false },
        "10 ms left: it waits out its deadline, the probe stays for another"
    );
    let long = RouteRequest { deadline: Some(at(750)), ..req(&tried) };
    match r.select(at(500), &long, (0.5, 0.5)) {
        Selection::Reserved(res) => assert!(res.outage_probe && res.probe),
        other => panic!("250 ms left carries the probe: {other:?}"),
    }
}

#[test]
fn a_half_open_probe_skips_a_request_about_to_pass_its_deadline() {
    let mut r = all_open();
    let tried = [false, false];
    let short = RouteRequest { deadline: Some(at(30_100)), ..req(&tried) };
    assert!(
        matches!(r.select(at(30_000), &short, (0.5, 0.5)), Selection::Wait { .. }),
        "100 ms left is too little to prove a half-open node"
    );
    assert_eq!(r.endpoints[0].breaker.borrow().probes_in_flight(), 0, "no permit taken");
    let long = RouteRequest { deadline: Some(at(31_000)), ..req(&tried) };
    match r.select(at(30_000), &long, (0.5, 0.5)) {
        Selection::Reserved(res) => assert!(res.probe),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_proof_time_follows_the_slow_end_and_the_attempt_timeout() {
    let mut r = super::tests::router(1, Strategy::Priority);
    for _ in 0..crate::pool::endpoint::TRUSTED_TAIL_SAMPLES {
        let res = pick(&mut r, at(0), (0.5, 0.5));
        finish(&mut r, at(0), res, ErrorClass::Success, false); // 10 ms each
    }
    assert_eq!(r.proof_time(0, MethodClass::Cheap), Duration::from_millis(50), "3 × 10 ms, at least 50 ms");
    let mut slow = super::tests::router(1, Strategy::Priority);
    slow.set_attempt_ceiling(Duration::from_millis(40));
    assert_eq!(slow.proof_time(0, MethodClass::Cheap), Duration::from_millis(40), "never past a full timeout");
}

#[test]
fn while_the_pools_probe_is_out_a_request_waits_for_its_verdict() {
    let mut r = all_open();
    let tried = [false, false];
    // Failed early probes double the pool's spacing up to 8 s.
    let mut t = 500;
    for _ in 0..5 {
        let due = match r.select(at(t), &req(&tried), (0.5, 0.5)) {
            Selection::Reserved(res) => {
                finish(&mut r, at(t), res, ErrorClass::Transient, true);
                continue;
            }
            Selection::Wait { until: Some(u), .. } => u,
            other => panic!("{other:?}"),
        };
        t = due.since_epoch().as_millis() as u64;
        let res = pick(&mut r, at(t), (0.5, 0.5));
        finish(&mut r, at(t), res, ErrorClass::Transient, true);
    }
    assert_eq!(r.outage.spacing(), Duration::from_millis(8000));
    let due = match r.select(at(t), &req(&tried), (0.5, 0.5)) {
        Selection::Wait { until: Some(u), .. } => u,
        other => panic!("{other:?}"),
    };
    let _probe = pick(&mut r, due, (0.5, 0.5)); // out, its verdict to come
    let one_second = RouteRequest { deadline: Some(due + Duration::from_secs(1)), ..req(&tried) };
    assert_eq!(
        r.select(due, &one_second, (0.5, 0.5)),
        Selection::Wait { until: Some(due + Duration::from_millis(500)), quota: false, paced: false },
        "it waits (and looks again by the base spacing), not fails at once for the next probe 8 s away"
    );
}
