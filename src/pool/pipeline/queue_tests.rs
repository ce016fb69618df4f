//! Cost per request independent of the queue's length: 100,000 requests
//! queued at once for 64 slots complete, each exactly once, and the work
//! per request (router selections, real time) stays flat from 10,000 to
//! 100,000. Before, every waiter re-checked the router every 50 ms and each
//! check scanned every other waiter: quadratic, and past ~3,000 waiters in
//! Node the process did little else. And the queue has a bound: past
//! `max_queue` waiters a request fails at once with `Overload`.

use std::time::Duration;

use super::tests::{harness, harness_with, opts};
use super::*;
use crate::config::RawOptions;
use crate::pool::options::PoolOptions;
use crate::runtime::scripted::Behaviour::{Answer, Slow};
use crate::runtime::sim::join_many;

/// Runs `n` concurrent reads through one endpoint with 64 slots answering
/// after 20 ms; returns (router selections per request, real seconds).
fn queued(n: usize) -> (f64, f64) {
    let pool = PoolOptions { max_queue: n as u32, hedge: None, check_chain: false, ..PoolOptions::default() };
    let raw = RawOptions { deadline_ms: Some(3_600_000.0), pool, ..opts() };
    let h = harness(vec![vec![Slow(Duration::from_millis(20), Box::new(Answer("0x1")))]], raw);
    let started = std::time::Instant::now();
    let results = h.rt.block_on(join_many((0..n).map(|_| h.request("eth_getBalance")).collect())).unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(results.len(), n);
    assert!(results.iter().all(|r| r.as_ref().is_ok_and(|ok| ok.attempts.len() == 1)), "each completes, once");
    assert_eq!(h.net.calls(0), n, "exactly one upstream call per request");
    // 64 at a time, 20 ms each: the simulated time is the queue's length, nothing more.
    let expected = Duration::from_millis(20 * n.div_ceil(64) as u64);
    assert!(h.rt.now().since_epoch() <= expected + Duration::from_millis(20), "{:?} vs {expected:?}", h.rt.now());
    let selections = h.pipeline.with_router(|r| r.selections);
    (selections as f64 / n as f64, seconds)
}

#[test]
fn a_hundred_thousand_queued_requests_cost_per_request_what_ten_thousand_do() {
    let (per_request_10k, seconds_10k) = queued(10_000);
    let (per_request_100k, seconds_100k) = queued(100_000);
    // One selection to queue, one when a freed slot wakes it: never one per tick.
    assert!(per_request_10k <= 2.5, "{per_request_10k} selections per request at 10,000");
    assert!(per_request_100k <= 2.5, "{per_request_100k} selections per request at 100,000");
    // Real time grows with the count (10×), not its square (100×); generous for a busy machine.
    let ratio = seconds_100k / seconds_10k.max(1e-3);
    assert!(ratio < 30.0, "100,000 took {ratio:.1}× the time of 10,000 ({seconds_100k:.2} s vs {seconds_10k:.2} s)");
}

#[test]
fn beyond_max_queue_waiting_requests_the_next_one_fails_at_once_with_overload() {
    // One slot, answers after 100 ms; two may wait for it.
    let pool = PoolOptions { max_queue: 2, hedge: None, check_chain: false, ..PoolOptions::default() };
    let raw = RawOptions { pool, ..opts() };
    let script = vec![vec![Slow(Duration::from_millis(100), Box::new(Answer("0x1")))]];
    let h = harness_with(script, raw, |specs| specs[0].max_concurrency = 1);
    let results = h.rt.block_on(join_many((0..4).map(|_| h.request("eth_getBalance")).collect())).unwrap();
    let reasons: Vec<Option<StopReason>> = results.iter().map(|r| r.as_ref().err().map(|f| f.reason)).collect();
    assert_eq!(
        reasons,
        vec![None, None, None, Some(StopReason::Overload)],
        "one in flight, two queued, the fourth refused"
    );
    assert_eq!(results[3].as_ref().unwrap_err().attempts.len(), 0, "refused before any attempt");
    assert_eq!(h.net.calls(0), 3);
    let overloads: Vec<_> =
        h.events.borrow().iter().filter(|e| matches!(e, PipelineEvent::Overload { .. })).cloned().collect();
    assert_eq!(overloads, vec![PipelineEvent::Overload { waiting: 2 }]);
    assert_eq!(h.pipeline.waiting(), 0, "every wait ended");
}

#[test]
fn the_pipeline_counts_the_requests_waiting_for_a_slot() {
    let pool = PoolOptions { hedge: None, check_chain: false, ..PoolOptions::default() };
    let script = vec![vec![Slow(Duration::from_millis(100), Box::new(Answer("0x1")))]];
    let h = harness_with(script, RawOptions { pool, ..opts() }, |specs| specs[0].max_concurrency = 1);
    let seen = std::cell::Cell::new(u32::MAX);
    let mut tasks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>> = (0..3)
        .map(|_| {
            Box::pin(async {
                h.request("eth_getBalance").await.unwrap();
            }) as _
        })
        .collect();
    tasks.push(Box::pin(async {
        h.rt.sleep(Duration::from_millis(50)).await;
        seen.set(h.pipeline.waiting());
    }));
    h.rt.block_on(crate::runtime::sim::join_all(tasks)).unwrap();
    assert_eq!((seen.get(), h.pipeline.waiting()), (2, 0), "one in flight, two waiting; none at the end");
}
