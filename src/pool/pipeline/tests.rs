//! The pipeline on the simulated clock against scripted endpoints.
#![allow(clippy::result_large_err)] // test helpers return the pipeline's own result type

use std::cell::RefCell;
use std::time::Duration;

use super::*;
use crate::config::RawOptions;
use crate::error::FailureDetail;
use crate::policy::classify::TransportFailure;
use crate::policy::RetryBudgetConfig;
use crate::pool::options::{EndpointSpec, Strategy};
use crate::redact::EndpointUrl;
use crate::runtime::scripted::{Behaviour, Behaviour::*, ScriptedTransport};
use crate::runtime::sim::{join_all, SimRuntime};
use crate::runtime::Transport;

pub(super) const MS: fn(u64) -> Duration = Duration::from_millis;

pub(super) struct Harness {
    pub(super) rt: SimRuntime,
    pub(super) net: ScriptedTransport,
    pub(super) pipeline: Pipeline,
    pub(super) events: RefCell<Vec<PipelineEvent>>,
}

pub(super) fn harness(scripts: Vec<Vec<Behaviour>>, raw: RawOptions) -> Harness {
    harness_with(scripts, raw, |_| {})
}

/// A harness whose endpoint specs `tweak` adjusts first (allow/deny lists, costs…).
pub(super) fn harness_with(
    scripts: Vec<Vec<Behaviour>>,
    raw: RawOptions,
    tweak: impl Fn(&mut Vec<EndpointSpec>),
) -> Harness {
    let rt = SimRuntime::new(7);
    let mut urls: Vec<EndpointSpec> = (0..scripts.len())
        .map(|i| EndpointSpec::from_url(EndpointUrl::parse(&format!("http://127.0.0.1:{}", 9000 + i), "u").unwrap(), i))
        .collect();
    tweak(&mut urls);
    let config = RelayerConfig::build(urls, raw).unwrap();
    let pipeline = Pipeline::new(config, Classifier::default(), rt.now());
    Harness { net: ScriptedTransport::new(&rt, scripts), rt, pipeline, events: RefCell::default() }
}

/// A relayer told chain 1 before two endpoints: 0 answers `0xbad` and its
/// chain checks with `chain_id` (another chain, or no chain id at all), 1
/// answers `0x900d` on chain 1.
pub(super) fn first_on_chain(chain_id: &'static str) -> Harness {
    let mut raw = opts();
    raw.pool.chain_id = Some(1);
    let h = harness(vec![vec![Answer("0xbad")], vec![Answer("0x900d")]], raw);
    h.net.set_chain_id(0, chain_id);
    h
}

pub(super) fn opts() -> RawOptions {
    RawOptions { base_delay_ms: Some(100.0), max_delay_ms: Some(1000.0), ..Default::default() }
}

impl Harness {
    pub(super) fn run(&self, method: &str) -> Result<Success<String>, Failure<String>> {
        self.rt.block_on(self.request(method)).unwrap()
    }

    pub(super) async fn request(&self, method: &str) -> Result<Success<String>, Failure<String>> {
        let emit = |e: PipelineEvent| self.events.borrow_mut().push(e);
        self.pipeline.execute(&self.rt, Call::new(method), |t| self.net.send(&(), t), &emit).await
    }

    pub(super) fn now_ms(&self) -> u64 {
        self.rt.now().since_epoch().as_millis() as u64
    }
}

#[test]
fn a_healthy_endpoint_answers_in_one_attempt_without_waiting() {
    let h = harness(vec![vec![Answer("0x10")]], opts());
    let ok = h.run("eth_blockNumber").unwrap();
    assert_eq!(ok.value, SuccessValue::Result("0x10".to_string()));
    assert_eq!((ok.attempts.len(), h.now_ms()), (1, 0));
}

#[test]
fn a_revert_costs_exactly_one_attempt() {
    let h = harness(vec![vec![RpcError(3, "execution reverted: nope")], vec![Answer("0x1")]], opts());
    let err = h.run("eth_call").unwrap_err();
    assert_eq!(err.reason, StopReason::NotRetryable);
    assert!(matches!(err.last, Some(FailureDetail::Rpc(ref e, _)) if e.code == Some(3)));
    assert_eq!((h.net.calls(0), h.net.calls(1), h.now_ms()), (1, 0, 0));
    assert!(h.events.borrow().is_empty());
}

#[test]
fn a_dead_primary_fails_over_until_its_breaker_trips_then_costs_nothing() {
    let h = harness(vec![vec![Refuse], vec![Answer("0x2")]], opts());
    let ok = h.run("eth_blockNumber").unwrap();
    assert_eq!((ok.endpoint, ok.attempts.len()), (1, 2));
    assert_eq!(h.now_ms(), 0, "an untried healthy endpoint takes the retry at once");
    let events = h.events.borrow().clone();
    assert!(matches!(events[0], PipelineEvent::Retry { attempt: 1, from: 0, class: "transient", .. }));
    assert_eq!(events[1], PipelineEvent::Failover { from: 0, to: 1 });
    h.run("eth_blockNumber").unwrap();
    h.run("eth_blockNumber").unwrap();
    assert!(h.events.borrow().iter().any(|e| matches!(e, PipelineEvent::Breaker { endpoint: 0, .. })));
    for _ in 0..10 {
        assert_eq!(h.run("eth_blockNumber").unwrap().attempts.len(), 1);
    }
    assert_eq!((h.net.calls(0), h.net.calls(1)), (3, 13), "three failures trip the breaker, then no more traffic");
}

#[test]
fn attempts_run_out_with_the_last_real_failure_and_no_trailing_sleep() {
    let raw = RawOptions { max_retries: Some(3.0), backoff: Some("exponential".into()), ..opts() };
    let h = harness(vec![vec![Status(503, None)], vec![Status(502, None)]], raw);
    let err = h.run("eth_blockNumber").unwrap_err();
    assert_eq!(err.reason, StopReason::AttemptsExhausted);
    assert_eq!(err.attempts.len(), 4);
    assert!(matches!(err.last, Some(FailureDetail::Http { status: 502, .. })));
    assert_eq!(
        h.net.log(),
        vec![(0, 0), (1, 0), (0, 200), (1, 600)],
        "failover to the untried endpoint at once, then 2b, 4b between attempts"
    );
    assert_eq!(h.now_ms(), 600, "no sleep after the final attempt");
}

#[test]
fn hung_nodes_are_cut_by_the_attempt_timeout_and_the_deadline() {
    let raw =
        RawOptions { attempt_timeout_ms: Some(1000.0), deadline_ms: Some(2500.0), max_retries: Some(10.0), ..opts() };
    let h = harness(vec![vec![Hang], vec![Hang]], raw);
    let err = h.run("eth_blockNumber").unwrap_err();
    assert_eq!(err.reason, StopReason::Deadline);
    assert!(matches!(err.last, Some(FailureDetail::Transport(TransportFailure::Timeout))));
    assert!(h.now_ms() <= 2500, "ended at {} ms, after the deadline", h.now_ms());
    assert!(err.attempts.iter().all(|a| a.elapsed <= MS(1000)));
}

#[test]
fn a_wait_that_would_cross_the_deadline_stops_at_once() {
    let raw = RawOptions { deadline_ms: Some(500.0), ..opts() };
    let h = harness(vec![vec![Status(429, Some("30"))]], raw);
    let err = h.run("eth_blockNumber").unwrap_err();
    assert_eq!(err.reason, StopReason::RateLimited);
    assert_eq!(h.net.calls(0), 1);
    assert!(h.now_ms() <= 100, "no waiting beyond one backoff");
}

#[test]
fn budget_exhaustion_is_distinct_from_the_attempt_limit() {
    let raw = RawOptions { budget: Some(RetryBudgetConfig { ratio: 0.0, min_per_second: 0.0, burst: 1.0 }), ..opts() };
    let h = harness(vec![vec![Status(503, None)], vec![Status(503, None)]], raw);
    let first = h.run("eth_blockNumber").unwrap_err();
    assert_eq!((first.reason, first.attempts.len()), (StopReason::Budget, 2));
    let second = h.run("eth_blockNumber").unwrap_err();
    assert_eq!((second.reason, second.attempts.len()), (StopReason::Budget, 1));
}

#[test]
fn retry_after_rests_a_single_endpoint_for_exactly_that_long() {
    let h = harness(vec![vec![Status(429, Some("2")), Answer("0x5")]], opts());
    let ok = h.run("eth_blockNumber").unwrap();
    assert_eq!(ok.attempts.len(), 2);
    assert_eq!(h.net.log(), vec![(0, 0), (0, 2000)]);
    assert!(h.events.borrow().iter().any(|e| matches!(e, PipelineEvent::RateLimited { endpoint: 0, .. })));
}

#[test]
fn a_rate_limited_endpoint_is_skipped_by_later_requests_until_it_has_rested() {
    let h = harness(vec![vec![Status(429, Some("10")), Answer("0xa")], vec![Answer("0xb")]], opts());
    assert_eq!(h.run("eth_blockNumber").unwrap().endpoint, 1);
    h.rt.block_on(h.rt.sleep(MS(2000))).unwrap();
    assert_eq!(h.run("eth_blockNumber").unwrap().endpoint, 1);
    assert_eq!(h.net.calls(0), 1, "rested endpoint not hit again");
}

#[test]
fn capability_errors_move_to_untried_endpoints_without_waiting() {
    let h = harness(vec![vec![RpcError(-32601, "method not found")], vec![Answer("0x7")]], opts());
    let ok = h.run("debug_traceTransaction").unwrap();
    assert_eq!((ok.endpoint, h.now_ms()), (1, 0));
    let h = harness(vec![vec![RpcError(-32601, "method not found")]; 3], opts());
    let err = h.run("debug_traceTransaction").unwrap_err();
    assert_eq!((err.reason, err.attempts.len()), (StopReason::NotRetryable, 3), "each endpoint once");
}

#[test]
fn sends_follow_replay_safety() {
    let h = harness(vec![vec![RpcError(-32000, "already known")]], opts());
    assert_eq!(h.run("eth_sendRawTransaction").unwrap().value, SuccessValue::AlreadyKnown);
    let h = harness(vec![vec![Hang, Answer("0xhash")], vec![Answer("0xhash")]], opts());
    assert!(h.run("eth_sendRawTransaction").is_ok(), "same signed bytes may be re-broadcast");
    let h = harness(vec![vec![Hang], vec![Answer("0xhash")]], opts());
    let err = h.run("eth_sendTransaction").unwrap_err();
    assert_eq!((err.reason, h.net.calls(1)), (StopReason::NotRetryable, 0), "node-signed send never resent");
    assert_eq!(err.last_verdict().unwrap().class, ErrorClass::OutcomeUnknown);
    let h =
        harness(vec![vec![RpcError(-32000, "nonce too low: next nonce 3, tx nonce 2")], vec![Answer("0x")]], opts());
    assert_eq!(h.run("eth_sendRawTransaction").unwrap_err().attempts.len(), 1);
}

#[test]
fn a_total_outage_under_load_is_bounded_by_the_budget_not_multiplied() {
    let raw = RawOptions { budget: Some(RetryBudgetConfig { ratio: 0.2, min_per_second: 0.0, burst: 5.0 }), ..opts() };
    let h = harness(vec![vec![Status(503, None)], vec![Status(503, None)]], raw);
    let results = h.rt.block_on(join_all((0..100).map(|_| h.request("eth_blockNumber")).collect())).unwrap();
    assert!(results.iter().all(|r| r.is_err()));
    let upstream = h.net.calls(0) + h.net.calls(1);
    // Breakers trip after 3 failures each; then only early probes reach the fleet.
    assert!(upstream <= 30, "{upstream} upstream requests for 100 logical ones");
    let reasons: Vec<_> = results.iter().map(|r| r.as_ref().map(|_| ()).map_err(|f| f.reason)).collect();
    assert!(
        reasons
            .iter()
            .all(|r| matches!(r, Err(StopReason::Budget | StopReason::Deadline | StopReason::AttemptsExhausted))),
        "{reasons:?}"
    );
}

#[test]
fn jittered_failover_delays_stay_within_full_jitter_bounds() {
    let mut raw = RawOptions {
        max_retries: Some(6.0),
        deadline_ms: Some(60_000.0),
        budget: Some(RetryBudgetConfig { ratio: 0.2, min_per_second: 1.0, burst: 10.0 }),
        ..opts()
    };
    raw.pool.strategy = Strategy::RoundRobin;
    let h = harness(vec![vec![Status(503, None)], vec![Status(503, None)], vec![Status(503, None)]], raw);
    let _ = h.run("eth_blockNumber");
    let log = h.net.log();
    assert_eq!(log.iter().map(|(e, _)| *e).collect::<Vec<_>>(), vec![0, 1, 2, 0, 1, 2, 0], "round robin");
    for (n, pair) in log.windows(2).enumerate() {
        let gap = pair[1].1 - pair[0].1;
        assert!(gap <= (100u64 << n).min(1000), "gap {n} = {gap}");
    }
}

#[test]
fn a_503_with_retry_after_rests_that_endpoint_for_later_requests() {
    let h = harness(vec![vec![Status(503, Some("5")), Answer("0xa")], vec![Answer("0xb")]], opts());
    assert_eq!(h.run("eth_blockNumber").unwrap().endpoint, 1);
    assert_eq!(h.run("eth_blockNumber").unwrap().endpoint, 1);
    assert_eq!(h.net.calls(0), 1);
    assert!(h.events.borrow().iter().all(|e| !matches!(e, PipelineEvent::RateLimited { .. })), "a 503 is not a quota");
}

#[test]
fn a_503_asking_for_an_hour_rests_the_endpoint_only_max_retry_after() {
    let raw = RawOptions { max_retry_after_ms: Some(5000.0), ..opts() };
    let h = harness(vec![vec![Status(503, Some("3600")), Answer("0xa")]], raw);
    let ok = h.run("eth_blockNumber").unwrap();
    assert_eq!(ok.value, SuccessValue::Result("0xa".to_string()));
    assert_eq!(h.net.log(), vec![(0, 0), (0, 5000)], "rested 5 s (the cap), not an hour past the deadline");
}

#[test]
fn when_every_endpoint_rests_past_the_deadline_a_new_request_fails_at_once_without_traffic() {
    let raw = RawOptions { deadline_ms: Some(1000.0), max_retry_after_ms: Some(60_000.0), ..opts() };
    let h = harness(vec![vec![Status(429, Some("30"))]], raw);
    assert_eq!(h.run("eth_blockNumber").unwrap_err().reason, StopReason::RateLimited);
    let second = h.run("eth_blockNumber").unwrap_err();
    assert_eq!((second.reason, second.attempts.len()), (StopReason::RateLimited, 0));
    // How soon it could have gone (`nextChanceMs`): the 429's 30 s, less what has passed.
    let next = second.next_chance_in.expect("told when the key is usable again");
    assert!(next > MS(29_000) && next <= MS(30_000), "{next:?}");
    assert_eq!(h.net.calls(0), 1);
    assert!(h.now_ms() <= 100, "at most one backoff, no waiting for the rest");
}

#[test]
fn long_horizon_quota_ejects_the_group_for_long() {
    let raw = RawOptions { max_retry_after_ms: Some(45_000.0), ..opts() };
    let h = harness(
        vec![vec![RpcError(-32005, "daily request count exceeded, request rate limited")], vec![Answer("0x1")]],
        raw,
    );
    h.run("eth_blockNumber").unwrap();
    let rested = h.events.borrow().iter().find_map(|e| match e {
        PipelineEvent::RateLimited { cooldown, long_horizon, .. } => Some((*cooldown, *long_horizon)),
        _ => None,
    });
    assert_eq!(rested, Some((Duration::from_secs(3600), true)));
}

#[test]
fn half_open_probe_permits_hold_under_concurrent_requests() {
    // Endpoint 0 fails three times (breaker opens for 30 s), then recovers.
    let h = harness(
        vec![
            vec![Status(503, None), Status(503, None), Status(503, None), Slow(MS(50), Box::new(Answer("0xa")))],
            vec![Answer("0xb")],
        ],
        opts(),
    );
    for _ in 0..3 {
        h.run("eth_getBalance").unwrap();
    }
    assert_eq!(h.net.calls(0), 3);
    h.rt.block_on(h.rt.sleep(Duration::from_secs(40))).unwrap();
    // Twenty requests at the same instant: exactly one is the half-open probe.
    let results = h.rt.block_on(join_all((0..20).map(|_| h.request("eth_getBalance")).collect())).unwrap();
    assert!(results.iter().all(|r| r.is_ok()));
    assert_eq!(h.net.calls(0), 4, "one probe, not twenty");
}

#[test]
fn a_nodes_answer_is_reported_rather_than_a_later_failure_to_reach_another() {
    let h = harness(vec![vec![RpcError(-32601, "the method x does not exist")], vec![Refuse]], opts());
    let err = h.run("x_unknown").unwrap_err();
    assert_eq!(err.attempts.len(), 2, "the capability gap sends it to the other endpoint, which is down");
    assert!(matches!(err.last, Some(FailureDetail::Rpc(ref e, _)) if e.code == Some(-32601)));
    assert_eq!(err.last_endpoint(), Some(0));
    assert_eq!(err.last_verdict().map(|v| v.class), Some(ErrorClass::Capability));
}

#[test]
fn closing_ends_waits_and_backoffs_at_once() {
    let raw = RawOptions {
        base_delay_ms: Some(10_000.0),
        max_delay_ms: Some(10_000.0),
        backoff: Some("fixed".into()),
        ..opts()
    };
    let h = harness(vec![vec![Status(503, None)]], raw);
    let closer = async {
        h.rt.sleep(MS(50)).await;
        h.pipeline.close();
    };
    let tasks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>> = vec![
        Box::pin(async {
            let err = h.request("eth_blockNumber").await.unwrap_err();
            assert_eq!(err.reason, StopReason::Closed);
        }),
        Box::pin(closer),
    ];
    h.rt.block_on(join_all(tasks)).unwrap();
    assert_eq!(h.now_ms(), 50, "the 10 s backoff was cut short by close()");
    assert_eq!(h.run("eth_blockNumber").unwrap_err().reason, StopReason::Closed);
    assert_eq!(h.net.calls(0), 1);
}

#[test]
fn waiting_for_shutdown_leaves_nothing_behind() {
    let h = harness(vec![vec![Status(503, None), Answer("0x1")], vec![Status(503, None), Answer("0x1")]], opts());
    for _ in 0..50 {
        let _ = h.run("eth_getBalance");
    }
    assert_eq!(h.pipeline.shutdown_waiters(), 0, "every finished wait left the list");
}

#[test]
fn an_endpoint_on_another_chain_is_disabled_before_it_serves_anything() {
    let h = first_on_chain("0x5");
    for _ in 0..3 {
        let ok = h.run("eth_getBalance").unwrap();
        assert_eq!((ok.endpoint, ok.value), (1, SuccessValue::Result("0x900d".to_string())));
        assert_eq!(ok.attempts.len(), 1, "the mismatch is not a failed attempt of the request");
    }
    assert_eq!(
        (h.net.exchanges(0), h.net.chain_checks(0)),
        (1, 1),
        "checked once (the first read in the batch), never used"
    );
    let mismatches: Vec<_> =
        h.events.borrow().iter().filter(|e| matches!(e, PipelineEvent::ChainMismatch { .. })).cloned().collect();
    assert_eq!(mismatches, vec![PipelineEvent::ChainMismatch { endpoint: 0, expected: 1, got: 5 }]);
}

#[test]
fn a_chain_check_answered_with_no_chain_id_is_the_nodes_failure_never_the_requests_answer() {
    // Found by a new user: a node answering `eth_chainId` with "banana" had
    // `eth_getBalance` resolve to "banana" (the check's reply stood for the
    // attempt, as a success). The request goes to another endpoint instead.
    for garbage in ["banana", "0x", "", "1", "-1"] {
        let h = first_on_chain(if garbage.is_empty() { "\"\"" } else { garbage });
        let ok = h.run("eth_getBalance").unwrap();
        assert_eq!((ok.endpoint, ok.value), (1, SuccessValue::Result("0x900d".to_string())), "{garbage:?}");
        assert_eq!(h.net.exchanges(0), 1, "{garbage:?}: the read rode with the check; its answer was dropped");
    }
}

#[test]
fn after_a_total_outage_successful_probes_close_the_breakers_and_say_so() {
    let mut raw = opts();
    raw.max_retries = Some(1.0);
    raw.pool.breaker.consecutive_failures = 1;
    raw.pool.breaker.open_base = MS(50);
    raw.pool.breaker.open_max = MS(50);
    raw.pool.breaker.jitter = 0.0;
    raw.pool.breaker.close_after = 1;
    raw.pool.breaker.observe = MS(10);
    let script = vec![Status(503, None), Answer("0x2")];
    let h = harness(vec![script.clone(), script], raw);
    assert!(h.run("eth_blockNumber").is_err());
    for _ in 0..6 {
        h.rt.block_on(h.rt.sleep(MS(30))).unwrap();
        assert!(h.run("eth_blockNumber").is_ok());
    }
    let closed = h
        .events
        .borrow()
        .iter()
        .filter(|e| matches!(e, PipelineEvent::Breaker { to: crate::policy::breaker::BreakerState::Closed, .. }))
        .count();
    assert!(closed >= 1, "{:?}", h.events.borrow());
}

#[test]
fn a_value_answered_outside_http_ends_the_request_with_that_value() {
    // executeRpcWithRetry: the caller's operation failed once, then returned a value.
    let h = harness(vec![vec![], vec![]], opts());
    let tries = std::cell::Cell::new(0);
    let net = &h.net;
    let attempt = |t: AttemptTarget| {
        let n = tries.get();
        tries.set(n + 1);
        async move {
            match (t.purpose, n) {
                (crate::runtime::Purpose::ChainId, _) => net.send(&(), t).await,
                (_, 0..=1) => Observation::Transport(TransportFailure::ConnectionReset),
                _ => Observation::Answered(format!("done by {}", t.endpoint)),
            }
        }
    };
    let run = h.pipeline.execute(&h.rt, Call::new("executeRpcWithRetry"), attempt, &|_| {});
    let ok = h.rt.block_on(run).unwrap().unwrap();
    assert!(matches!(&ok.value, SuccessValue::Result(v) if v.starts_with("done by")), "{:?}", ok.value);
    let classes: Vec<_> = ok.attempts.iter().map(|a| (a.verdict.class, a.verdict.rule.to_string())).collect();
    assert_eq!(classes.last(), Some(&(ErrorClass::Success, "answered".to_string())));
    assert_eq!(ok.attempts.len(), 2, "a reset, then the answer on the other endpoint");
}

#[test]
fn a_burst_on_a_fresh_endpoint_checks_its_chain_once() {
    let h = harness(vec![vec![]], opts());
    let reads = (0..10).map(|_| h.request("eth_getBalance")).collect();
    let outcomes = h.rt.block_on(join_all(reads)).unwrap();
    assert!(outcomes.iter().all(|o| o.is_ok()));
    assert_eq!(h.net.chain_checks(0), 1, "one check answers for the whole burst");
    assert_eq!(h.net.calls(0), 10);
    // A check that gets no answer lets the waiting requests check instead.
    let h = harness(vec![vec![], vec![]], RawOptions { attempt_timeout_ms: Some(500.0), ..opts() });
    h.net.hang_chain_checks(0);
    let reads = (0..4).map(|_| h.request("eth_getBalance")).collect();
    let outcomes = h.rt.block_on(join_all(reads)).unwrap();
    assert!(outcomes.iter().all(|o| o.is_ok()), "{outcomes:?}");
    assert_eq!(h.net.chain_checks(1), 1, "the other endpoint, checked once too");
}
