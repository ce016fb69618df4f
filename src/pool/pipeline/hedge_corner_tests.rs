//! Hedging's corners on the simulated clock: a hedge timer late by exactly
//! the busy-host threshold is ordinary jitter, and a hedge skips an
//! endpoint that has been silent as long as the primary it would rescue.
#![allow(clippy::result_large_err)]

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;

use super::hedge_tests::{hedges, hedging, slow};
use super::tests::{harness, opts, MS};
use super::*;
use crate::runtime::scripted::Behaviour::*;
use crate::runtime::sim::join_all;

#[test]
fn a_hedge_timer_late_by_exactly_a_quarter_of_the_delay_is_ordinary_jitter() {
    // The 1 s delay's threshold is 250 ms: the event loop blocked from 0.5 s
    // to `0.5 + stall` s, so the timer fired `stall - 0.5` s late.
    let run = |stall: u64| {
        let h = harness(vec![vec![slow(3000, Answer("0x1"))], vec![slow(5, Answer("0x2"))]], hedging());
        let out = RefCell::new(None);
        let tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>> = vec![
            Box::pin(async { *out.borrow_mut() = Some(h.request("eth_getBalance").await.unwrap()) }),
            Box::pin(async {
                h.rt.sleep(MS(500)).await;
                h.rt.stall(MS(stall));
            }),
        ];
        h.rt.block_on(join_all(tasks)).unwrap();
        (out.into_inner().unwrap().endpoint, hedges(&h), h.now_ms())
    };
    assert_eq!(run(750), (1, vec![(0, 1, 1000)], 1255), "250 ms late: hedged then");
    assert_eq!(run(751), (1, vec![(0, 1, 2251)], 2256), "251 ms late: busy, hedged one delay later");
}

#[test]
fn a_hedge_skips_an_endpoint_silent_as_long_as_the_primary_it_would_rescue() {
    // Endpoints 0 and 1 hang, 2 answers. The first read is hedged from 0
    // onto 1 at 1 s; a second read starting at 1.5 s is hedged at 2.5 s,
    // when 1 has been silent 1.5 s of the 1 s its primary waited: onto 2.
    let h = harness(vec![vec![Hang], vec![Hang], vec![slow(5, Answer("0x3"))]], hedging());
    let second = RefCell::new(None);
    let tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>> = vec![
        Box::pin(async {
            let _ = h.request("eth_getBalance").await;
        }),
        Box::pin(async {
            h.rt.sleep(MS(1500)).await;
            *second.borrow_mut() = Some((h.request("eth_getBalance").await.unwrap().endpoint, h.now_ms()));
        }),
    ];
    h.rt.block_on(join_all(tasks)).unwrap();
    assert_eq!(second.into_inner(), Some((2, 2505)));
    assert_eq!(hedges(&h)[..2], [(0, 1, 1000), (0, 2, 1000)]);
}

#[test]
fn a_hedge_whose_chain_check_fails_is_void_but_its_endpoint_learns_the_failure() {
    // Endpoint 1's chain check is refused at once, while the primary on 0
    // still runs: the pair's outcome is the primary's, and 1's breaker
    // hears the refusal (one failure opens it here).
    let mut o = opts();
    o.pool.breaker.consecutive_failures = 1;
    let h = harness(vec![vec![slow(1500, Answer("0x1"))], vec![Answer("0x2")]], o);
    h.net.refuse_chain_checks(1);
    let ok = h.run("eth_getBalance").unwrap();
    assert_eq!((ok.endpoint, ok.attempts.len(), h.now_ms()), (0, 1, 1500));
    assert_eq!(hedges(&h), vec![(0, 1, 1000)]);
    assert_eq!(h.net.calls(1), 0, "the void hedge sent nothing but its chain check");
    let mut router = h.pipeline.router.borrow_mut();
    assert_eq!(router.endpoints[1].failures, 1);
    assert!(router.breaker_open(1, h.rt.now()));
}

#[test]
fn a_hedge_delay_as_long_as_the_attempt_timeout_is_no_hedge() {
    // A 1 s timeout and the 1 s initial hedge delay: a hedge could only go
    // when the primary gives up. The primary's chain check takes 100 ms and
    // rides in one batch with its request, on the attempt's one timeout.
    let mut o = opts();
    o.attempt_timeout_ms = Some(1000.0);
    o.max_retries = Some(0.0);
    let h = harness(vec![vec![Hang], vec![Answer("0x2")]], o);
    h.net.delay_chain_checks(0, MS(100));
    let err = h.run("eth_getBalance").unwrap_err();
    assert_eq!(hedges(&h), vec![]);
    assert_eq!((err.attempts.len(), h.now_ms()), (1, 1000), "the primary alone, check and request timed out together");
    assert_eq!(h.net.calls(1), 0);
}
