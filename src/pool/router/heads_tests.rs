//! What the router says about the endpoints' chain and heads, on explicit
//! instants: which endpoints a head-poll round asks (not one resting after
//! a Retry-After; one whose every slot is taken still is), when every
//! endpoint refused our credentials, which heads and lags an outlier takes with it, and which
//! members of a realm share a round (those polling at one interval).

use std::time::Duration;

use super::tests::{at, options, pick, spec, verdict};
use super::*;
use crate::policy::{ErrorClass, Verdict};

/// Gives `res` back with `class` (no health failure) and `retry_after`.
fn answer(r: &mut Router, now: Instant, res: Reservation, class: ErrorClass, retry_after: Option<Duration>) {
    let v = Verdict { retry_after, ..verdict(class, false) };
    r.complete(now, &res, &v, MethodClass::Cheap, Duration::ZERO, 0.5);
}

/// The endpoint of `res`, after giving it back as a success.
fn done(r: &mut Router, now: Instant, res: Reservation) -> usize {
    answer(r, now, res, ErrorClass::Success, None);
    res.endpoint
}

#[test]
fn a_head_poll_round_skips_an_endpoint_resting_after_a_retry_after() {
    let mut r = Router::new((0..3).map(spec).collect(), &options(Strategy::RoundRobin), Duration::from_secs(60), at(0));
    let first = pick(&mut r, at(0), (0.5, 0.5));
    assert_eq!(first.endpoint, 0);
    let second = pick(&mut r, at(0), (0.5, 0.5));
    assert_eq!(second.endpoint, 1);
    done(&mut r, at(0), first);
    // Endpoint 1 answers 503 with Retry-After: 60 s.
    answer(&mut r, at(0), second, ErrorClass::Transient, Some(Duration::from_secs(60)));
    let polls = r.start_head_round(at(12_000)).expect("a round at 12 s").polls;
    let polled: Vec<usize> = polls.iter().map(|p| p.endpoint).collect();
    assert_eq!(polled, vec![0, 2]);
    for p in polls {
        done(&mut r, at(12_000), p);
    }
    r.end_head_round(&[(0, 100), (2, 100)], at(12_000));
    // Rested by the next round: asked again.
    let polls = r.start_head_round(at(72_000)).expect("a round at 72 s").polls;
    assert_eq!(polls.iter().map(|p| p.endpoint).collect::<Vec<_>>(), vec![0, 1, 2]);
}

#[test]
fn a_head_poll_round_asks_an_endpoint_whose_slots_are_all_taken_one_call_past_them() {
    let mut specs: Vec<EndpointSpec> = (0..2).map(spec).collect();
    specs[0].max_concurrency = 1;
    let mut r = Router::new(specs, &options(Strategy::Priority), Duration::from_secs(60), at(0));
    let held = pick(&mut r, at(12_000), (0.5, 0.5));
    assert_eq!(held.endpoint, 0);
    let polls = r.start_head_round(at(12_000)).expect("a round at 12 s").polls;
    assert_eq!(polls.iter().map(|p| p.endpoint).collect::<Vec<_>>(), vec![0, 1], "endpoint 0 polled past its one slot");
    assert_eq!(r.endpoints[0].in_flight, 2, "the poll is counted in flight: no read takes its place");
}

#[test]
fn the_router_says_which_endpoints_refused_only_when_none_is_usable() {
    let mut o = options(Strategy::RoundRobin);
    o.check_chain = true;
    o.chain_id = Some(1);
    let mut r = Router::new((0..3).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    assert_eq!(r.all_refused(at(0)), None, "nobody refused");
    let held: Vec<Reservation> = (0..3).map(|_| pick(&mut r, at(0), (0.5, 0.5))).collect();
    assert_eq!(held.iter().map(|h| h.endpoint).collect::<Vec<_>>(), vec![0, 1, 2]);
    let mut held = held.into_iter();
    answer(&mut r, at(0), held.next().unwrap(), ErrorClass::Unauthorized, None);
    assert_eq!(r.all_refused(at(0)), None, "endpoints 1 and 2 are still usable");
    answer(&mut r, at(0), held.next().unwrap(), ErrorClass::Unauthorized, None);
    assert_eq!(r.all_refused(at(0)), None, "endpoint 2 is still usable");
    // Endpoint 2 serves another chain: nothing is usable, 0 and 1 refused.
    let last = held.next().unwrap();
    assert!(r.chain_checked(2, 5, at(0)).is_some());
    answer(&mut r, at(0), last, ErrorClass::Success, None);
    assert_eq!(r.all_refused(at(0)), Some(vec![0, 1]));
    // Ten minutes later they are tried again: not refused any more.
    assert_eq!(r.all_refused(at(0) + REFUSED_FOR), None);
}

#[test]
fn a_lag_judged_against_an_outlier_is_forgotten_with_it() {
    let mut o = options(Strategy::Priority);
    o.max_lag_blocks = 5;
    let mut r = Router::new((0..3).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    r.observe_head(2, 20_000, at(0)); // the liar answers first
    r.observe_head(0, 12_000, at(0)); // within MAX_HEAD_JUMP of it: judged 8,000 behind
    assert!(r.endpoints[0].lagging(5, at(0), LAG_MEMORY));
    r.observe_head(1, 5_000, at(0)); // far below the liar: exposes it
    assert_eq!(r.best_head(at(0)), Some(12_000));
    assert!(!r.endpoints[0].lagging(5, at(0), LAG_MEMORY), "not judged against the liar any more");
    assert!(r.endpoints[1].lagging(5, at(0), LAG_MEMORY), "7,000 behind the best head left");
}

#[test]
fn an_outlier_exposed_by_a_head_far_below_takes_only_the_heads_beyond_the_jump_with_it() {
    let mut o = options(Strategy::Priority);
    o.max_lag_blocks = 5;
    let mut r = Router::new((0..3).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    r.observe_head(0, 10_200, at(0));
    r.observe_head(1, 10_099, at(0)); // 101 behind 0: lagging
    assert!(r.endpoints[1].lagging(5, at(0), LAG_MEMORY));
    // 99 + MAX_HEAD_JUMP = 10,099: endpoint 0 is beyond it, 1 is not.
    r.observe_head(2, 99, at(0));
    assert_eq!(r.best_head(at(0)), Some(10_099));
    assert_eq!((r.endpoints[0].head, r.endpoints[1].head), (None, Some(10_099)));
    assert!(!r.endpoints[1].lagging(5, at(0), LAG_MEMORY), "judged against 0, which is gone");
    assert!(r.endpoints[2].lagging(5, at(0), LAG_MEMORY));
}

#[test]
fn a_head_exactly_the_jump_below_the_best_exposes_nothing() {
    let mut o = options(Strategy::Priority);
    o.max_lag_blocks = 5;
    let mut r = Router::new((0..3).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    r.observe_head(0, 10_100, at(0));
    r.observe_head(1, 100, at(0)); // exactly MAX_HEAD_JUMP behind: believed, lagging
    r.observe_head(0, 10_050, at(0)); // a reorg: believed
    r.observe_head(2, 50, at(0)); // exactly the jump below the best: believed too
    assert_eq!(r.best_head(at(0)), Some(10_050));
    assert!(r.endpoints[1].lagging(5, at(0), LAG_MEMORY), "still far behind the best");
    assert!(r.endpoints[2].lagging(5, at(0), LAG_MEMORY));
}

#[test]
fn a_lag_judged_against_a_head_at_the_cut_stays() {
    let mut o = options(Strategy::Priority);
    o.max_lag_blocks = 5;
    let mut r = Router::new((0..4).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    r.observe_head(1, 10_099, at(0));
    r.observe_head(3, 10_000, at(0)); // 99 behind endpoint 1
    r.observe_head(0, 10_200, at(0));
    r.observe_head(2, 99, at(0)); // the cut is 10,099: endpoint 0 goes, 1 stays
    assert_eq!(r.best_head(at(0)), Some(10_099));
    assert!(r.endpoints[3].lagging(5, at(0), LAG_MEMORY), "still 99 behind endpoint 1");
}

#[test]
fn realm_members_polling_at_different_intervals_keep_their_own_rounds() {
    let realm = crate::coord::realm::Realm::new();
    let every = |secs| PoolOptions { head_poll: Duration::from_secs(secs), ..options(Strategy::Priority) };
    let member =
        |o: &PoolOptions| Router::in_realm((0..2).map(spec).collect(), o, Duration::from_secs(60), at(0), Some(&realm));
    let (slow, mut fast, mut also_fast) = (member(&every(12)), member(&every(6)), member(&every(6)));
    assert!(!slow.head_poll_due(at(6_000)), "its first round is one 12 s interval away");
    assert!(fast.head_poll_due(at(6_000)), "not the 12 s member's schedule");
    assert!(fast.start_head_round(at(6_000)).is_some());
    assert!(!also_fast.head_poll_due(at(6_000)), "the 6 s members share one round");
    assert!(also_fast.start_head_round(at(6_000)).is_none());
    assert!(slow.head_poll_due(at(12_000)));
}
