//! Lag as a preference (`lag.rs`) and the live head it is judged against
//! (`Router::best_head`), on explicit instants: two endpoints,
//! 0 in sync (head 200), 1 fifty blocks behind, `maxLagBlocks` 5.

use std::time::Duration;

use super::tests::{at, finish, options, pick, req, spec, verdict};
use super::*;
use crate::policy::{ErrorClass, Verdict};

fn in_sync_and_behind() -> Router {
    checked_in_sync_and_behind(None)
}

/// The same, expecting chain 1 when `chain` is given: endpoint 1 checked
/// on it, endpoint 0 found on `chain`.
fn checked_in_sync_and_behind(chain: Option<u64>) -> Router {
    let mut o = options(Strategy::Priority);
    o.max_lag_blocks = 5;
    if chain.is_some() {
        o.check_chain = true;
        o.chain_id = Some(1);
    }
    let mut specs: Vec<EndpointSpec> = (0..2).map(spec).collect();
    specs[1].priority = 0; // the lagging one first by priority: only lag keeps reads from it
    specs[0].priority = 1;
    let mut r = Router::new(specs, &o, Duration::from_secs(60), at(0));
    if let Some(chain) = chain {
        r.chain_checked(0, chain, at(0));
        r.chain_checked(1, 1, at(0));
    }
    r.observe_head(0, 200, at(0));
    r.observe_head(1, 150, at(0));
    assert!(r.endpoints[1].lagging(5, at(0), LAG_MEMORY));
    r
}

fn chosen(r: &mut Router, now: Instant, request: &RouteRequest<'_>) -> Option<usize> {
    match r.select(now, request, (0.5, 0.5)) {
        Selection::Reserved(res) => {
            let endpoint = res.endpoint;
            finish(r, now, res, ErrorClass::Success, false);
            Some(endpoint)
        }
        _ => None,
    }
}

#[test]
fn a_latest_read_keeps_to_the_node_in_sync_while_it_serves_even_busy() {
    let mut r = in_sync_and_behind();
    let tried = [false, false];
    assert_eq!(chosen(&mut r, at(0), &req(&tried)), Some(0), "in sync, though second by priority");
    r.endpoints[0].in_flight = r.endpoints[0].spec.max_concurrency;
    let busy = r.select(at(0), &req(&tried), (0.5, 0.5));
    assert!(matches!(busy, Selection::Wait { .. }), "busy is in service: the read waits for it, {busy:?}");
    r.endpoints[0].in_flight = 0;
    let pinned = RouteRequest { wants_latest: false, ..req(&tried) };
    assert_eq!(chosen(&mut r, at(0), &pinned), Some(1), "a read pinned to a block goes by priority");
}

#[test]
fn a_failover_from_the_node_in_sync_goes_to_the_one_behind() {
    let mut r = in_sync_and_behind();
    let tried = [true, false];
    let failover = RouteRequest { only_untried: true, after: Some(0), ..req(&tried) };
    assert_eq!(chosen(&mut r, at(0), &failover), Some(1), "an answer 50 blocks old beats none");
    // A retry that may use any endpoint goes back to the one in sync.
    let retry = RouteRequest { only_untried: false, after: Some(0), ..req(&tried) };
    assert_eq!(chosen(&mut r, at(0), &retry), Some(0));
}

#[test]
fn the_node_behind_serves_while_the_one_in_sync_is_open_or_resting() {
    let mut r = in_sync_and_behind();
    let tried = [false, false];
    // Endpoint 0's breaker opens (three health failures).
    for _ in 0..3 {
        let res = pick(&mut r, at(0), (0.5, 0.5));
        assert_eq!(res.endpoint, 0);
        finish(&mut r, at(0), res, ErrorClass::Transient, true);
    }
    assert!(matches!(r.endpoints[0].breaker.borrow_mut().state(at(1)), BreakerState::Open { .. }));
    assert_eq!(chosen(&mut r, at(1), &req(&tried)), Some(1), "open: the node behind serves");
    // Half-open at 30 s: in service again, its probe is the read's (the heads heard again
    // just before: a lag is remembered 30 s).
    r.observe_head(0, 229, at(29_000));
    r.observe_head(1, 179, at(29_000));
    let res = pick(&mut r, at(30_000), (0.5, 0.5));
    assert_eq!((res.endpoint, res.probe), (0, true));
    // Its one probe out: unproven, the node behind serves the reads meanwhile.
    assert_eq!(chosen(&mut r, at(30_000), &req(&tried)), Some(1), "probe out: the node behind serves");
    finish(&mut r, at(30_000), res, ErrorClass::Success, false);

    // A 429 with Retry-After: 2 s rests it; the node behind serves until then.
    let mut r = in_sync_and_behind();
    let res = pick(&mut r, at(0), (0.5, 0.5));
    let limited = Verdict { retry_after: Some(Duration::from_secs(2)), ..verdict(ErrorClass::Transient, false) };
    r.complete(at(0), &res, &limited, MethodClass::Cheap, Duration::from_millis(10), 0.5);
    assert_eq!(chosen(&mut r, at(100), &req(&tried)), Some(1), "resting: the node behind serves");
    assert_eq!(chosen(&mut r, at(2_000), &req(&tried)), Some(0), "rested: back to the node in sync");
}

#[test]
fn the_node_behind_serves_while_the_quota_group_of_the_one_in_sync_cools_down() {
    let mut r = in_sync_and_behind();
    let tried = [false, false];
    let res = pick(&mut r, at(0), (0.5, 0.5));
    assert_eq!(res.endpoint, 0);
    // A 429 with no Retry-After: endpoint 0's group cools down (its own cooldown), no rest.
    finish(&mut r, at(0), res, ErrorClass::RateLimited, false);
    let cooling = r.groups[r.endpoints[0].group].quota.borrow().cooldown_until();
    assert!(cooling > at(0) && r.endpoints[0].rest_until <= at(0));
    assert_eq!(chosen(&mut r, at(1), &req(&tried)), Some(1), "cooling: the node behind serves");
    assert_eq!(chosen(&mut r, cooling, &req(&tried)), Some(0), "cooled: back to the node in sync");
}

#[test]
fn a_head_not_heard_for_a_while_is_no_reference_for_the_lag_of_the_others() {
    let mut r = in_sync_and_behind();
    // Endpoint 0 dies at 200 and is never heard again; endpoint 1 goes on (a block a second).
    r.observe_head(1, 170, at(20_000));
    assert!(r.endpoints[1].lagging(5, at(20_000), LAG_MEMORY), "30 behind a head heard 20 s ago");
    r.observe_head(1, 180, at(30_000));
    assert_eq!(r.best_head(at(30_000)), Some(180), "0's head, 30 s old, is no reference");
    assert!(!r.endpoints[1].lagging(5, at(30_000), LAG_MEMORY), "the best live head is its own");
}

#[test]
fn the_node_behind_serves_while_the_one_in_sync_refused_the_key_or_is_on_another_chain() {
    let mut r = in_sync_and_behind();
    let tried = [false, false];
    let res = pick(&mut r, at(0), (0.5, 0.5));
    finish(&mut r, at(0), res, ErrorClass::Unauthorized, false);
    assert!(r.endpoints[0].refused(at(1)));
    assert_eq!(chosen(&mut r, at(1), &req(&tried)), Some(1), "refused: the node behind serves");

    // Endpoint 0 found on chain 5 after its head was heard (a backend swapped under its URL).
    let mut r = checked_in_sync_and_behind(Some(1));
    assert_eq!(chosen(&mut r, at(1), &req(&tried)), Some(0), "both on chain 1: the node in sync");
    assert!(r.chain_checked(0, 5, at(1)).is_some(), "endpoint 0 serves chain 5 now");
    assert_eq!(chosen(&mut r, at(2), &req(&tried)), Some(1), "another chain: the node behind serves");
}
