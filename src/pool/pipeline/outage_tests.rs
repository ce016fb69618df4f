//! A total outage under a bot's load: many readers with short deadlines,
//! each failing fast while every breaker is open and asking again at once.
//! The early probe must go to a reader with time to prove a node, or the
//! fleet stays dark long after it is back (a new user's report: 64 readers,
//! 1 s deadlines, the default breaker; 165 s without a request upstream).
#![allow(clippy::result_large_err)]

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;

use super::tests::{harness, MS};
use super::*;
use crate::config::RawOptions;
use crate::policy::breaker::BreakerState;
use crate::runtime::scripted::Behaviour::*;
use crate::runtime::Transport;

/// 64 readers with 1 s deadlines against three nodes that answer in 20 ms,
/// down (503) from the start until `back_at` ms; each reader asks again
/// 5 ms after a failure. Returns when each success came (ms), to `until`.
fn bot_through_an_outage(back_at: u64, until: u64) -> (Vec<u64>, usize) {
    let down = || vec![Slow(MS(20), Box::new(Status(503, None)))];
    let raw = RawOptions { deadline_ms: Some(1000.0), ..RawOptions::default() };
    let h = harness(vec![down(), down(), down()], raw);
    let answered = std::cell::RefCell::new(Vec::new());
    let stop = Cell::new(false);
    let reader = || async {
        while !stop.get() {
            let call = Call::new("eth_getBalance");
            match h.pipeline.execute(&h.rt, call, |t| h.net.send(&(), t), &|_| {}).await {
                Ok(_) => answered.borrow_mut().push(h.now_ms()),
                Err(_) => h.rt.sleep(MS(5)).await,
            }
        }
    };
    let clock = async {
        h.rt.sleep(MS(back_at)).await;
        for i in 0..3 {
            h.net.set(i, vec![Slow(MS(20), Box::new(Answer("0x1")))]);
        }
        h.rt.sleep(MS(until - back_at)).await;
        stop.set(true);
    };
    let mut tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>> = (0..64).map(|_| Box::pin(reader()) as _).collect();
    tasks.push(Box::pin(clock));
    h.rt.block_on(crate::runtime::sim::join_all(tasks)).unwrap();
    let upstream = (0..3).map(|i| h.net.calls(i)).sum();
    (answered.into_inner(), upstream)
}

#[test]
fn a_fleet_back_from_a_total_outage_is_found_by_the_next_early_probe() {
    // The breakers open at once and stay open 30 s; early probes are spaced
    // at most 8 s (12 s jittered). Back at 10 s, the fleet must answer
    // within one spacing, long before the breakers' own 30 s are up.
    let (answered, _) = bot_through_an_outage(10_000, 25_000);
    let first = answered.iter().copied().find(|&t| t >= 10_000);
    assert!(first.is_some_and(|t| t <= 22_000), "first answer after the fleet came back: {first:?}");
    let late = answered.iter().filter(|&&t| t >= 23_000).count();
    assert!(late > 1000, "the bot runs at full speed once the fleet is found: {late} answers in its last 2 s");
}

/// A read whose first node fails after `first_fails_after` ms fails over to
/// a node that never answers, with what is left of its 1 s deadline; the
/// breakers open on the first failure. Returns the hung node's breaker.
fn failover_onto_a_hung_node(first_fails_after: u64) -> BreakerState {
    let mut raw = RawOptions { deadline_ms: Some(1000.0), ..RawOptions::default() };
    raw.pool.breaker.consecutive_failures = 1;
    raw.pool.strategy = crate::pool::options::Strategy::Priority;
    let h = harness(vec![vec![Slow(MS(first_fails_after), Box::new(Status(503, None)))], vec![Hang]], raw);
    let err = h.run("eth_getBalance").unwrap_err();
    assert_eq!(err.attempts.len(), 2, "{err:?}");
    assert_eq!(h.net.calls(1), 1);
    let now = h.rt.now();
    h.pipeline.with_router(|r| r.endpoints[1].breaker.borrow_mut().state(now))
}

#[test]
fn a_timeout_cut_to_milliseconds_by_the_deadline_leaves_the_breaker_alone() {
    // 5 ms of silence proves nothing (a node nobody measured must stay
    // silent 250 ms): the request fails, the node keeps its good name.
    assert_eq!(failover_onto_a_hung_node(995), BreakerState::Closed);
}

#[test]
fn a_timeout_after_time_enough_to_answer_opens_the_breaker() {
    assert!(matches!(failover_onto_a_hung_node(600), BreakerState::Open { .. }), "400 ms of silence counts");
}

#[test]
fn a_request_that_cannot_be_sent_before_its_deadline_fails_at_once_and_says_so() {
    let mut raw = RawOptions { deadline_ms: Some(1000.0), max_retries: Some(0.0), ..RawOptions::default() };
    raw.pool.breaker.consecutive_failures = 1;
    let h = harness(vec![vec![Status(503, None)]], raw);
    let first = h.run("eth_getBalance").unwrap_err();
    assert_eq!(first.next_chance_in, None, "a failed attempt, not a stop before the deadline");
    // Open for 30 s: early probes at doubling spacings (500 ms, 1 s, 2 s…)
    // until the next is due after a 1 s deadline; from then on a request
    // fails at once, and says when the next chance comes.
    let mut fast = None;
    for _ in 0..6 {
        let t = h.now_ms();
        let err = h.run("eth_getBalance").unwrap_err();
        if let Some(next) = err.next_chance_in {
            fast = Some((err.reason, h.now_ms() - t, next, err.attempts.len()));
            break;
        }
    }
    let (reason, took, next, attempts) = fast.expect("a request that failed at once");
    assert_eq!((reason, took, attempts), (StopReason::Deadline, 0, 0));
    assert!(next >= MS(1000), "{next:?}");
}

#[test]
fn a_retry_whose_backoff_ends_past_the_deadline_stops_now_and_says_when_it_would_have_gone() {
    let raw = RawOptions {
        deadline_ms: Some(1000.0),
        base_delay_ms: Some(5000.0),
        max_delay_ms: Some(5000.0),
        backoff: Some("fixed".into()),
        ..RawOptions::default()
    };
    let h = harness(vec![vec![Status(503, None)]], raw);
    let err = h.run("eth_getBalance").unwrap_err();
    assert_eq!(
        (err.reason, err.attempts.len(), h.now_ms()),
        (StopReason::Deadline, 1, 0),
        "no wait for a retry it cannot make"
    );
    assert_eq!(err.next_chance_in, Some(MS(5000)), "stopped before its deadline: not 'deadline passed'");
}
