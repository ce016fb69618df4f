//! Hedged reads on the simulated clock (the state machine in `hedge.rs`).
#![allow(clippy::result_large_err)]

use super::tests::{harness, opts, Harness, MS};
use super::*;
use crate::config::RawOptions;
use crate::policy::breaker::BreakerState;
use crate::policy::RetryBudgetConfig;
use crate::pool::options::{HedgeConfig, Strategy};
use crate::rpc::methods::method_info;
use crate::runtime::scripted::{Behaviour, Behaviour::*};

pub(super) fn slow(ms: u64, then: Behaviour) -> Behaviour {
    Slow(MS(ms), Box::new(then))
}

/// No chain checks (they are never hedged), so every request below is.
pub(super) fn hedging() -> RawOptions {
    let mut o = opts();
    o.pool.check_chain = false;
    o
}

pub(super) fn hedges(h: &Harness) -> Vec<(usize, usize, u64)> {
    h.events
        .borrow()
        .iter()
        .filter_map(|e| match e {
            PipelineEvent::Hedge { from, to, after } => Some((*from, *to, after.as_millis() as u64)),
            _ => None,
        })
        .collect()
}

fn timed(h: &Harness, method: &str) -> (Result<Success<String>, Failure<String>>, u64) {
    let t0 = h.now_ms();
    let out = h.run(method);
    (out, h.now_ms() - t0)
}

#[test]
fn a_hung_node_without_history_costs_the_initial_delay_not_the_timeout() {
    let h = harness(vec![vec![Hang], vec![slow(5, Answer("0x2"))]], hedging());
    let (ok, took) = timed(&h, "eth_getBalance");
    let ok = ok.unwrap();
    assert_eq!((ok.endpoint, ok.value.clone()), (1, SuccessValue::Result("0x2".into())));
    assert_eq!(took, 1005, "hedged after the 1 s initial delay, answered 5 ms later (timeout: 10 s)");
    assert_eq!(hedges(&h), vec![(0, 1, 1000)]);
    let rules: Vec<_> = ok.attempts.iter().map(|a| (a.endpoint, a.verdict.rule.to_string())).collect();
    assert_eq!(rules[0], (0, "hedgeLost".to_string()), "the abandoned primary is in the history");
    assert_eq!(rules.len(), 2);
}

#[test]
fn three_lost_hedges_trip_a_hung_nodes_breaker_then_reads_cost_nothing() {
    let h = harness(vec![vec![Hang], vec![slow(5, Answer("0x2"))]], hedging());
    for _ in 0..3 {
        h.run("eth_getBalance").unwrap();
    }
    assert!(
        h.events
            .borrow()
            .iter()
            .any(|e| matches!(e, PipelineEvent::Breaker { endpoint: 0, to: BreakerState::Open { .. }, .. })),
        "a primary with no history that loses three races is unhealthy"
    );
    let (ok, took) = timed(&h, "eth_getBalance");
    assert_eq!((ok.unwrap().attempts.len(), took), (1, 5), "straight to the healthy node");
    assert_eq!(hedges(&h).len(), 3);
}

#[test]
fn with_history_the_hedge_fires_at_the_nodes_own_slow_end() {
    let mut script = vec![slow(200, Answer("0x1")); 12];
    script.push(Hang);
    let h = harness(vec![script, vec![slow(5, Answer("0x2"))]], hedging());
    for _ in 0..12 {
        assert_eq!(h.run("eth_getBalance").unwrap().endpoint, 0);
    }
    assert!(hedges(&h).is_empty(), "a node at its usual pace is never hedged");
    let (ok, took) = timed(&h, "eth_getBalance");
    assert_eq!(ok.unwrap().endpoint, 1);
    assert_eq!(
        took, 405,
        "hedged once a hedge could win (its 200 ms typical latency plus as much again for a peer not measured), \
         not at the 1 s initial delay"
    );
    assert_eq!(hedges(&h), vec![(0, 1, 400)]);
}

#[test]
fn with_a_faster_peer_known_the_hedge_fires_at_the_nodes_own_slow_end() {
    // Node 0 answers in 200 ms until it hangs; node 1's 5 ms answers are known.
    let mut script = vec![slow(200, Answer("0x1")); 12];
    script.push(Hang);
    let h = harness(vec![script, vec![slow(5, Answer("0x2")); 12]], hedging());
    for _ in 0..12 {
        assert_eq!(h.run("eth_getBalance").unwrap().endpoint, 0);
    }
    let class = method_info("eth_getBalance").class;
    for _ in 0..10 {
        let mut r = h.pipeline.router.borrow_mut();
        r.endpoints[1].tail[class as usize].observe(5.0);
        r.endpoints[1].observe_latency(class, Duration::from_millis(5));
    }
    let (ok, took) = timed(&h, "eth_getBalance");
    assert_eq!(ok.unwrap().endpoint, 1);
    assert_eq!(took, 210, "hedged at 205 ms (200 typical + 5), just past its 200 ms tail");
}

#[test]
fn a_hedge_waits_until_it_could_win_when_every_endpoint_is_alike() {
    // Both nodes answer in 100 ms, node 0 now in 150: a hedge onto node 1
    // at node 0's tail would answer after node 0 anyway.
    let mut slow_once = vec![slow(100, Answer("0x1")); 12];
    slow_once.push(slow(150, Answer("0x1")));
    let h = harness(vec![slow_once, vec![slow(100, Answer("0x2")); 12]], hedging());
    for _ in 0..12 {
        h.run("eth_getBalance").unwrap();
    }
    let (ok, took) = timed(&h, "eth_getBalance");
    assert_eq!((ok.unwrap().endpoint, took), (0, 150), "no hedge: node 1 could not have answered first");
    assert!(hedges(&h).is_empty());
}

#[test]
fn a_fast_node_is_hedged_no_sooner_than_the_minimum_delay() {
    let mut script = vec![slow(2, Answer("0x1")); 12];
    script.push(Hang);
    let h = harness(vec![script, vec![Answer("0x2")]], hedging());
    for _ in 0..12 {
        h.run("eth_getBalance").unwrap();
    }
    let (_, took) = timed(&h, "eth_getBalance");
    assert_eq!(took, 50);
}

#[test]
fn when_the_primary_answers_first_the_hedge_is_dropped_as_neutral() {
    let h = harness(vec![vec![slow(1500, Answer("0x1"))], vec![slow(3000, Answer("0x2"))]], hedging());
    let (ok, took) = timed(&h, "eth_getBalance");
    let ok = ok.unwrap();
    assert_eq!((ok.endpoint, took), (0, 1500));
    assert_eq!(hedges(&h), vec![(0, 1, 1000)]);
    let hedge = ok.attempts.iter().find(|a| a.endpoint == 1).unwrap();
    assert_eq!(hedge.verdict.rule, "hedgedOut");
    assert!(!hedge.verdict.health_failure);
    assert_eq!(h.pipeline.with_router(|r| r.endpoints[1].failures), 0, "losing a race it joined late is no fault");
}

#[test]
fn a_revert_from_the_hedge_is_the_answer_at_once() {
    let h = harness(vec![vec![Hang], vec![slow(5, RpcError(3, "execution reverted"))]], hedging());
    let (err, took) = timed(&h, "eth_call");
    let err = err.unwrap_err();
    assert_eq!((err.reason, took), (StopReason::NotRetryable, 1005));
}

#[test]
fn a_hedge_that_fails_transiently_leaves_the_primary_to_finish() {
    let h = harness(vec![vec![slow(1500, Answer("0x1"))], vec![Refuse]], hedging());
    let (ok, took) = timed(&h, "eth_getBalance");
    let ok = ok.unwrap();
    assert_eq!((ok.endpoint, took), (0, 1500));
    let rules: Vec<_> = ok.attempts.iter().map(|a| (a.endpoint, a.verdict.class)).collect();
    assert_eq!(rules, vec![(1, ErrorClass::Transient), (0, ErrorClass::Success)]);
}

#[test]
fn sends_and_unknown_methods_are_never_hedged() {
    for method in ["eth_sendRawTransaction", "eth_customWrite"] {
        let mut o = hedging();
        o.max_retries = Some(0.0);
        let h = harness(vec![vec![Hang], vec![Answer("0x2")]], o);
        let (out, took) = timed(&h, method);
        assert!(out.is_err());
        assert_eq!((hedges(&h).len(), took), (0, 10_000), "{method}: one attempt, the full timeout");
    }
}

#[test]
fn hedges_are_paid_from_the_retry_budget() {
    let mut o = hedging();
    o.budget = Some(RetryBudgetConfig { ratio: 0.0, min_per_second: 0.0, burst: 1.0 });
    let h = harness(vec![vec![slow(1500, Answer("0x1"))], vec![slow(3000, Answer("0x2"))]], o);
    let (_, took) = timed(&h, "eth_getBalance");
    assert_eq!((took, hedges(&h).len()), (1500, 1), "the one token pays for a hedge");
    let (ok, took) = timed(&h, "eth_getBalance");
    assert_eq!((ok.unwrap().endpoint, took, hedges(&h).len()), (0, 1500, 1), "no token, no hedge");
}

#[test]
fn hedge_false_never_hedges() {
    let mut off = hedging();
    off.pool.hedge = None;
    let h = harness(vec![vec![slow(1500, Answer("0x1"))], vec![Answer("0x2")]], off);
    let (ok, took) = timed(&h, "eth_getBalance");
    assert_eq!((ok.unwrap().endpoint, took, hedges(&h).len()), (0, 1500, 0));
}

#[test]
fn a_custom_initial_delay_is_used_before_any_history() {
    let mut o = hedging();
    o.pool.hedge = Some(HedgeConfig { initial_delay: MS(300), min_delay: MS(10) });
    let h = harness(vec![vec![Hang], vec![Answer("0x2")]], o);
    let (_, took) = timed(&h, "eth_getBalance");
    assert_eq!(took, 300);
}

#[test]
fn a_hedge_to_an_unchecked_endpoint_checks_its_chain_first() {
    let h = harness(vec![vec![Answer("0x1"), Hang], vec![slow(5, Answer("0x2"))]], opts());
    h.run("eth_getBalance").unwrap();
    assert_eq!(h.net.chain_checks(1), 0, "endpoint 1 was never used");
    let (ok, took) = timed(&h, "eth_getBalance");
    assert_eq!((ok.unwrap().endpoint, took), (1, 1005));
    assert_eq!(h.net.chain_checks(1), 1);
}

#[test]
fn a_hedge_to_a_node_on_another_chain_is_void_and_disables_it() {
    let h = harness(vec![vec![Answer("0x1"), slow(1500, Answer("0x1"))], vec![Answer("0x2")]], opts());
    h.net.set_chain_id(1, "0x5");
    h.run("eth_getBalance").unwrap();
    let (ok, took) = timed(&h, "eth_getBalance");
    let ok = ok.unwrap();
    assert_eq!((ok.endpoint, took, ok.attempts.len()), (0, 1500, 1));
    assert!(h.events.borrow().iter().any(|e| matches!(e, PipelineEvent::ChainMismatch { endpoint: 1, .. })));
    assert_eq!((h.net.exchanges(1), h.net.batches(1)), (1, 1), "the read rode with the check; its answer was dropped");
}

#[test]
fn the_first_request_after_a_chain_check_is_hedged_too() {
    let h = harness(vec![vec![Hang], vec![slow(5, Answer("0x2"))]], opts());
    let (ok, took) = timed(&h, "eth_getBalance");
    assert_eq!((ok.unwrap().endpoint, took), (1, 1005));
    assert_eq!((h.net.chain_checks(0), h.net.chain_checks(1)), (1, 1));
}

#[test]
fn under_steady_load_every_read_stuck_on_a_hung_primary_is_hedged() {
    // One client, 10 reads per second for 2 s; the primary (by priority)
    // hangs from the start; the others answer in 1 ms.
    let h = harness(vec![vec![Hang], vec![slow(1, Answer("0x2"))], vec![slow(1, Answer("0x3"))]], opts());
    let took = std::cell::RefCell::new(Vec::new());
    let reads = (0..20u64).map(|i| {
        let (h, took) = (&h, &took);
        async move {
            h.rt.sleep(MS(100 * i)).await;
            let t0 = h.now_ms();
            let ok = h.request("eth_getBalance").await.is_ok();
            took.borrow_mut().push((i * 100, h.now_ms() - t0, ok));
        }
    });
    h.rt.block_on(crate::runtime::sim::join_all(reads.collect())).unwrap();
    let slow: Vec<_> = took.borrow().iter().filter(|(_, ms, _)| *ms > 1100).cloned().collect();
    assert!(slow.is_empty(), "slow reads (start, took, ok): {slow:?}; events: {:?}", h.events.borrow());
}

#[test]
fn a_node_hung_from_the_start_is_hedged_during_its_chain_check() {
    let h = harness(vec![vec![Hang], vec![slow(5, Answer("0x2"))]], opts());
    h.net.hang_chain_checks(0);
    let (ok, took) = timed(&h, "eth_getBalance");
    let ok = ok.unwrap();
    assert_eq!((ok.endpoint, took), (1, 1005), "the first read of a fresh client waits the initial delay, not 10 s");
    assert_eq!(h.net.calls(0), 0, "the hung node never got past its chain check");
    assert_eq!(ok.attempts[0].verdict.rule, "hedgeLost");
}

#[test]
fn sticky_sessions_are_never_hedged() {
    let mut o = hedging();
    o.pool.strategy = Strategy::Sticky;
    let h = harness(vec![vec![slow(1500, Answer("0x1"))], vec![Answer("0x2")]], o);
    let (ok, took) = timed(&h, "eth_getBalance");
    assert_eq!((ok.unwrap().endpoint, took, hedges(&h).len()), (0, 1500, 0));
    assert_eq!(h.run("eth_getBalance").unwrap().endpoint, 0, "still bound to the first node");
}

#[test]
fn no_hedge_while_the_hedge_timer_fires_late_because_the_host_was_busy() {
    use crate::runtime::sim::join_all;
    use std::future::Future;
    use std::pin::Pin;
    let run = |stall: bool| {
        let h = harness(vec![vec![slow(3000, Answer("0x1"))], vec![slow(5, Answer("0x2"))]], hedging());
        let out = std::cell::RefCell::new(None);
        let tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>> = vec![
            Box::pin(async { *out.borrow_mut() = Some(h.request("eth_getBalance").await.unwrap()) }),
            Box::pin(async {
                h.rt.sleep(MS(500)).await;
                if stall {
                    h.rt.stall(MS(1000)); // the event loop blocked from 0.5 s to 1.5 s
                }
            }),
        ];
        h.rt.block_on(join_all(tasks)).unwrap();
        let ok = out.into_inner().unwrap();
        (ok.endpoint, hedges(&h).len(), h.now_ms())
    };
    assert_eq!(run(false), (1, 1, 1005), "a slow primary is hedged after the 1 s delay");
    assert_eq!(
        run(true),
        (1, 1, 2505),
        "its timer fired 0.5 s late (the slowness may be ours): no hedge then; the next, on time one delay later, hedges"
    );
}

#[test]
fn a_read_without_a_hedge_token_is_hedged_once_its_node_is_judged() {
    // No budget for hedges: the primary on the hung node runs alone...
    let mut o = hedging();
    o.budget = Some(RetryBudgetConfig { ratio: 0.0, min_per_second: 0.0, burst: 1.0 });
    o.pool.breaker.consecutive_failures = 1;
    o.pool.breaker.open_base = MS(60_000);
    o.pool.breaker.open_max = MS(60_000);
    let h = harness(vec![vec![Hang], vec![slow(5, Answer("0x2"))]], o);
    assert!(h.pipeline.budget.borrow_mut().try_withdraw_retry(h.rt.now(), false), "spend the one token");
    let out = std::cell::RefCell::new(None);
    let tasks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>> = vec![
        Box::pin(async { *out.borrow_mut() = Some(h.request("eth_getBalance").await.unwrap()) }),
        Box::pin(async {
            // ...until another request's failure opens the node's breaker at 1.5 s.
            h.rt.sleep(MS(1500)).await;
            let router = h.pipeline.router.borrow_mut();
            router.endpoints[0].breaker.borrow_mut().on_failure(h.rt.now(), false, 0.5);
        }),
    ];
    h.rt.block_on(crate::runtime::sim::join_all(tasks)).unwrap();
    let ok = out.into_inner().unwrap();
    assert_eq!((ok.endpoint, h.now_ms()), (1, 2005), "asked again at 2 s: stranded, hedged without a token");
}
