//! The pipeline at the edges: keys refused, answers no rule knows, and
//! failovers that cost no node any work.
#![allow(clippy::result_large_err)]

use super::tests::MS;
use super::tests::{harness, opts};
use super::*;
use crate::config::RawOptions;
use crate::policy::RetryBudgetConfig;
use crate::pool::router::REFUSED_FOR;
use crate::runtime::scripted::Behaviour::*;
use crate::runtime::sim::join_all;

#[test]
fn a_refused_key_fails_over_at_once_and_keeps_the_endpoint_out_for_long() {
    let h = harness(vec![vec![Status(401, None)], vec![Answer("0x5")]], opts());
    let ok = h.run("eth_blockNumber").unwrap();
    assert_eq!((ok.endpoint, ok.attempts.len(), h.now_ms()), (1, 2, 0), "no backoff before the failover");
    for _ in 0..20 {
        assert_eq!(h.run("eth_blockNumber").unwrap().endpoint, 1);
    }
    assert_eq!(h.net.calls(0), 1, "the endpoint that refused the key is never asked again soon");
    assert!(
        !h.events.borrow().iter().any(|e| matches!(e, PipelineEvent::Breaker { endpoint: 0, .. })),
        "not a health failure"
    );
    h.rt.block_on(h.rt.sleep(REFUSED_FOR - MS(1))).unwrap();
    h.run("eth_blockNumber").unwrap();
    assert_eq!(h.net.calls(0), 1, "still out just before the hold ends");
    h.rt.block_on(h.rt.sleep(MS(2))).unwrap();
    for _ in 0..10 {
        h.run("eth_blockNumber").unwrap();
    }
    assert_eq!(h.net.calls(0), 2, "after the hold, one request tries it again (and is refused again)");
}

#[test]
fn a_single_endpoint_that_refuses_the_key_rejects_at_once_then_without_asking() {
    let h = harness(vec![vec![Status(403, None)]], opts());
    let err = h.run("eth_blockNumber").unwrap_err();
    assert_eq!((err.reason, err.attempts.len(), h.now_ms()), (StopReason::NotRetryable, 1, 0));
    assert!(h.events.borrow().iter().all(|e| !matches!(e, PipelineEvent::Retry { .. })), "nothing was retried");
    assert_eq!(err.last_verdict().map(|v| v.class), Some(ErrorClass::Unauthorized));
    let again = h.run("eth_blockNumber").unwrap_err();
    assert_eq!((again.reason, again.attempts.len(), h.now_ms()), (StopReason::NoEndpoint, 0, 0));
    assert_eq!(h.pipeline.with_router(|r| r.all_refused(h.rt.now())), Some(vec![0]));
    assert_eq!(h.net.calls(0), 1);
}

#[test]
fn an_unknown_answer_is_retried_once_elsewhere_and_learned_when_repeated() {
    let odd = RpcError(-38099, "a new input rule was broken");
    let h = harness(vec![vec![odd.clone()], vec![odd.clone()], vec![odd]], opts());
    let err = h.run("eth_simulateV1").unwrap_err();
    assert_eq!((err.reason, err.attempts.len(), h.now_ms()), (StopReason::NotRetryable, 2, 0));
    assert_ne!(err.attempts[0].endpoint, err.attempts[1].endpoint, "the one retry goes elsewhere");
    // Two endpoints said the same: the next request asks once.
    let next = h.run("eth_simulateV1").unwrap_err();
    assert_eq!((next.reason, next.attempts.len()), (StopReason::NotRetryable, 1));
    assert_eq!(h.net.calls(0) + h.net.calls(1) + h.net.calls(2), 3);
}

#[test]
fn an_unknown_answer_on_the_only_endpoint_is_asked_once() {
    let h = harness(vec![vec![RpcError(-32000, "something new"), Answer("0x1")]], opts());
    let err = h.run("eth_call").unwrap_err();
    assert_eq!((err.reason, err.attempts.len(), h.net.calls(0)), (StopReason::NotRetryable, 1, 1));
}

#[test]
fn lag_answers_keep_their_retries() {
    let lag = RpcError(-32000, "header not found");
    let h = harness(vec![vec![lag.clone()], vec![lag.clone()], vec![lag]], opts());
    let err = h.run("eth_getBalance").unwrap_err();
    assert_eq!(err.reason, StopReason::AttemptsExhausted);
    assert_eq!(err.attempts.len() as u32, h.pipeline.config().max_attempts());
}

#[test]
fn failing_over_after_a_refused_connection_draws_nothing_from_the_budget() {
    // One token, never refilled: retries after a 503 soon run out of budget;
    // failovers after a refused connection (nothing reached a node) do not.
    let raw = RawOptions { budget: Some(RetryBudgetConfig { ratio: 0.0, min_per_second: 0.0, burst: 1.0 }), ..opts() };
    let h = harness(vec![vec![Refuse], vec![Answer("0x1")]], raw.clone());
    let results = h.rt.block_on(join_all((0..60).map(|_| h.request("eth_blockNumber")).collect())).unwrap();
    assert!(results.iter().all(|r| r.is_ok()), "every cold-start read succeeds");
    let h = harness(vec![vec![Status(503, None)], vec![Answer("0x1")]], raw);
    assert!(h.run("eth_blockNumber").is_ok(), "the one token pays this failover");
    assert_eq!(h.run("eth_blockNumber").unwrap_err().reason, StopReason::Budget);
}

#[test]
fn closing_ends_an_attempt_in_flight_at_once() {
    let h = harness(vec![vec![Hang]], RawOptions { attempt_timeout_ms: Some(10_000.0), ..opts() });
    let closer = async {
        h.rt.sleep(MS(50)).await;
        h.pipeline.close();
    };
    let tasks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>> = vec![
        Box::pin(async {
            let err = h.request("eth_blockNumber").await.unwrap_err();
            assert_eq!((err.reason, h.now_ms()), (StopReason::Closed, 50), "not after the 10 s attempt timeout");
        }),
        Box::pin(closer),
    ];
    h.rt.block_on(join_all(tasks)).unwrap();
    assert_eq!(h.pipeline.shutdown_waiters(), 0);
}

#[test]
fn a_request_dropped_mid_attempt_gives_its_slot_back() {
    use std::future::Future;
    use std::task::Poll;
    let raw = RawOptions { attempt_timeout_ms: Some(10_000.0), ..opts() };
    let h = super::tests::harness_with(vec![vec![Hang, Answer("0x1")]], raw, |specs| specs[0].max_concurrency = 1);
    let ok = h.rt.block_on(async {
        {
            // The caller gives up after 50 ms (its future is dropped, as an
            // abandoned hedge or a closed relayer drops an attempt).
            let mut hung = std::pin::pin!(h.request("eth_getBalance"));
            let mut give_up = std::pin::pin!(h.rt.sleep(MS(50)));
            std::future::poll_fn(|cx| {
                if hung.as_mut().poll(cx).is_ready() || give_up.as_mut().poll(cx).is_ready() {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            })
            .await;
        }
        h.request("eth_getBalance").await
    });
    let ok = ok.unwrap().unwrap();
    assert_eq!((ok.value, h.now_ms()), (SuccessValue::Result("0x1".into()), 50), "the one slot was free at once");
    assert_eq!(h.pipeline.with_router(|r| r.endpoints[0].in_flight), 0);
}

#[test]
fn two_endpoints_with_different_unknown_answers_teach_nothing() {
    let h = harness(vec![vec![RpcError(-32042, "one thing")], vec![RpcError(-32043, "another")]], opts());
    for _ in 0..3 {
        let err = h.run("eth_call").unwrap_err();
        assert_eq!(err.attempts.len(), 2, "different answers: each request still gets its one retry elsewhere");
    }
}

#[test]
fn the_pipeline_reports_its_budget_its_waiters_and_when_it_closes() {
    let h = harness(vec![vec![Status(503, None)], vec![Answer("0x10")]], opts());
    let full = h.pipeline.budget_balance(h.rt.now());
    assert_eq!(full, 5.0, "the default burst");
    h.run("eth_blockNumber").unwrap();
    assert!(h.pipeline.budget_balance(h.rt.now()) < full, "the failover's retry spent a token");
    assert_eq!(h.pipeline.waiting(), 0);
    assert!(!h.pipeline.is_closed());
    assert_eq!(h.pipeline.shutdown_waiters(), 0);
    let closed = std::cell::Cell::new(false);
    let tasks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>> = vec![
        Box::pin(async {
            h.pipeline.closing().await;
            closed.set(true);
        }),
        Box::pin(async {
            h.rt.sleep(MS(10)).await;
            assert_eq!(h.pipeline.shutdown_waiters(), 1, "the closing() above waits on it");
            h.pipeline.close();
        }),
    ];
    h.rt.block_on(crate::runtime::sim::join_all(tasks)).unwrap();
    assert!(closed.get() && h.pipeline.is_closed());
}

#[test]
fn an_answered_block_number_is_the_endpoints_head() {
    let h = harness(vec![vec![Answer("0x10")]], opts());
    h.run("eth_blockNumber").unwrap();
    assert_eq!(h.pipeline.router.borrow().endpoints[0].head, Some(16));
    let h = harness(vec![vec![Answer("0x10")]], opts());
    h.run("eth_getBalance").unwrap();
    assert_eq!(h.pipeline.router.borrow().endpoints[0].head, None, "another method's result is no head");
}
