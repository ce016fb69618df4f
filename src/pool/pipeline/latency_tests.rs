//! What an endpoint's learned latency changes in the pipeline: the
//! attempt's timeout (adaptive timeouts) and, for an endpoint with no
//! history of its own, the hedge delay borrowed from its peers' slow end.
//! Each test fails if the pipeline falls back to the fixed setting.
#![allow(clippy::result_large_err)]

use super::tests::{harness, harness_with, opts, MS};
use super::*;
use crate::config::RawOptions;
use crate::runtime::scripted::{Behaviour, Behaviour::*};

fn slow(ms: u64, then: Behaviour) -> Behaviour {
    Slow(MS(ms), Box::new(then))
}

/// One attempt per request, no hedging, no chain checks: only the timeout
/// decides how long a hung attempt costs.
fn lone_attempts() -> RawOptions {
    let mut o = opts();
    o.max_retries = Some(0.0);
    o.pool.hedge = None;
    o.pool.check_chain = false;
    o
}

#[test]
fn a_hung_attempt_costs_a_multiple_of_the_endpoints_own_slow_end_not_the_fixed_timeout() {
    let mut o = lone_attempts();
    o.pool.adaptive_timeout = Some((5.0, MS(100)));
    let mut script = vec![slow(100, Answer("0x1")); 10];
    script.push(Hang);
    let h = harness(vec![script], o);
    for _ in 0..10 {
        h.run("eth_getBalance").unwrap();
    }
    let t0 = h.now_ms();
    let err = h.run("eth_getBalance").unwrap_err();
    assert_eq!(err.reason, StopReason::AttemptsExhausted);
    assert_eq!(h.now_ms() - t0, 500, "5 × its 100 ms tail, not the fixed 10 s attempt timeout");
    assert_eq!(err.attempts[0].elapsed, MS(500));
}

#[test]
fn before_any_history_and_with_adaptive_timeouts_off_the_fixed_timeout_holds() {
    let h = harness(vec![vec![Hang]], lone_attempts());
    h.run("eth_getBalance").unwrap_err();
    assert_eq!(h.now_ms(), 10_000, "no history: the configured 10 s");
    let mut o = lone_attempts();
    o.pool.adaptive_timeout = None;
    let mut script = vec![slow(100, Answer("0x1")); 10];
    script.push(Hang);
    let h = harness(vec![script], o);
    for _ in 0..10 {
        h.run("eth_getBalance").unwrap();
    }
    let t0 = h.now_ms();
    h.run("eth_getBalance").unwrap_err();
    assert_eq!(h.now_ms() - t0, 10_000, "adaptive timeouts off");
}

#[test]
fn a_fresh_endpoint_is_hedged_at_its_peers_learned_slow_end_not_the_initial_delay() {
    // Endpoint 0 learns a 200 ms tail on eth_call (same class as
    // eth_getBalance) but does not serve eth_getBalance, so that read goes
    // first to endpoint 1, which has no history and hangs.
    let mut o = opts();
    o.pool.check_chain = false;
    let h = harness_with(vec![vec![slow(200, Answer("0x0"))], vec![Hang], vec![slow(5, Answer("0x2"))]], o, |specs| {
        specs[0].deny = vec!["eth_getBalance".into()]
    });
    for _ in 0..10 {
        assert_eq!(h.run("eth_call").unwrap().endpoint, 0);
    }
    let t0 = h.now_ms();
    let ok = h.run("eth_getBalance").unwrap();
    assert_eq!(ok.endpoint, 2);
    assert_eq!(h.now_ms() - t0, 205, "hedged after the peers' 200 ms tail (initial delay: 1 s)");
    let hedges: Vec<_> = h
        .events
        .borrow()
        .iter()
        .filter_map(|e| match e {
            PipelineEvent::Hedge { from, to, after } => Some((*from, *to, *after)),
            _ => None,
        })
        .collect();
    assert_eq!(hedges, vec![(1, 2, MS(200))]);
}
