//! What a lost hedge race teaches the router, on explicit instants: an
//! abandoned attempt's latency is learned only where it says more than the
//! estimate, losing at the endpoint's usual slow end is no failure, and
//! only a reply of the node's own ends its silence for the hedges.

use std::time::Duration;

use super::tests::{at, finish, options, pick, spec};
use super::*;
use crate::policy::ErrorClass;
use crate::pool::options::HedgeConfig;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn an_abandoned_attempt_teaches_its_latency_only_when_it_ran_longer_than_the_estimate() {
    let mut r = Router::new((0..2).map(spec).collect(), &options(Strategy::Latency), ms(60_000), at(0));
    let cheap = MethodClass::Cheap;
    r.observe_abandoned(1, cheap, ms(40));
    assert_eq!(r.endpoints[1].latency_ms(cheap), Some(40.0), "no estimate yet: at least 40 ms");
    r.endpoints[0].observe_latency(cheap, ms(10));
    r.observe_abandoned(0, cheap, ms(5));
    assert_eq!(r.endpoints[0].latency_ms(cheap), Some(10.0), "cut short at 5 ms: says nothing");
    r.observe_abandoned(0, cheap, ms(510));
    assert_eq!(r.endpoints[0].latency_ms(cheap), Some(110.0), "at least 510 ms: 10 + 0.2 × 500");
}

#[test]
fn losing_a_hedge_race_at_the_usual_slow_end_is_no_failure() {
    let mut r = Router::new(vec![spec(0)], &options(Strategy::Priority), ms(60_000), at(0));
    let cheap = MethodClass::Cheap;
    assert!(r.hedge_loss_is_failure(0, cheap, ms(1)), "no trusted tail: nothing says it is ever this slow");
    for _ in 0..10 {
        let res = pick(&mut r, at(0), (0.5, 0.5));
        finish(&mut r, at(0), res, ErrorClass::Success, false); // 10 ms each
    }
    assert_eq!(r.endpoints[0].trusted_tail(cheap), Some(10.0));
    assert!(!r.hedge_loss_is_failure(0, cheap, ms(15)));
    assert!(!r.hedge_loss_is_failure(0, cheap, ms(20)), "twice the tail is still the tail's business");
    assert!(r.hedge_loss_is_failure(0, cheap, ms(21)));
}

#[test]
fn a_batch_wait_is_the_relayers_own_not_the_nodes_until_the_node_has_a_tail() {
    // `batch: { waitMs: 300 }`, hedges after 100 ms: a read sits up to 300 ms in this relayer's
    // own queue before it is sent.
    let mut o = options(Strategy::Priority);
    o.batch = Some(crate::policy::wire_batch::WireBatchConfig { wait: ms(300), ..Default::default() });
    let hedge = HedgeConfig { initial_delay: ms(100), min_delay: ms(10) };
    let mut r = Router::new(vec![spec(0)], &o, ms(60_000), at(0));
    let cheap = MethodClass::Cheap;
    assert_eq!(r.hedge_delay(0, cheap, &hedge), ms(400), "no history: the blind delay after the queue's wait");
    assert!(!r.hedge_loss_is_failure(0, cheap, ms(250)), "lost within the wait: perhaps never sent");
    assert!(r.hedge_loss_is_failure(0, cheap, ms(301)), "past it, and nothing says the node is ever this slow");
    for _ in 0..10 {
        let res = pick(&mut r, at(0), (0.5, 0.5));
        finish(&mut r, at(0), res, ErrorClass::Success, false); // 10 ms each
    }
    // Its own tail (10 ms; a hedge could win only after 20) counts from the attempt's start: no wait added.
    assert_eq!(r.hedge_delay(0, cheap, &hedge), ms(20));
    assert!(r.hedge_loss_is_failure(0, cheap, ms(25)), "the tail's rule, as without a wait");
    let plain = Router::new(vec![spec(0)], &options(Strategy::Priority), ms(60_000), at(0));
    assert_eq!(plain.hedge_delay(0, cheap, &hedge), ms(100), "no wait set: the blind delay");
}

#[test]
fn only_a_reply_ends_an_endpoints_silence_a_timeout_does_not() {
    let mut r = Router::new(vec![spec(0)], &options(Strategy::Priority), ms(60_000), at(0));
    let cheap = MethodClass::Cheap;
    let (first, second) = (pick(&mut r, at(0), (0.5, 0.5)), pick(&mut r, at(0), (0.5, 0.5)));
    finish(&mut r, at(1000), first, ErrorClass::Transient, true); // timed out: no word from the node
    assert!(r.too_silent_to_hedge_onto(0, cheap, ms(1000), at(1000)), "silent since 0, an attempt still out");
    let third = pick(&mut r, at(1000), (0.5, 0.5));
    finish(&mut r, at(1200), second, ErrorClass::Fatal, false); // a revert: the node answered
    assert!(!r.too_silent_to_hedge_onto(0, cheap, ms(1000), at(1300)), "heard at 1200: silent 100 ms only");
    finish(&mut r, at(1300), third, ErrorClass::Success, false);
}

#[test]
fn a_request_is_stranded_only_where_its_retry_can_go_elsewhere() {
    let mut r = Router::new(vec![spec(0), spec(1)], &options(Strategy::Priority), ms(60_000), at(0));
    for _ in 0..3 {
        let res = pick(&mut r, at(0), (0.5, 0.5));
        finish(&mut r, at(0), res, ErrorClass::Transient, true); // endpoint 0 opens
    }
    assert!(r.stranded_on(0, at(0)), "endpoint 1 can take the retry");
    assert!(!r.stranded_on(1, at(0)), "endpoint 1 is not open");
    for _ in 0..3 {
        let res = pick(&mut r, at(0), (0.5, 0.5));
        finish(&mut r, at(0), res, ErrorClass::Transient, true); // endpoint 1 opens
    }
    assert!(!r.stranded_on(0, at(0)), "every endpoint open: a retry could only wait for a probe");
}
