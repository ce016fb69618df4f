//! A retry is sent only with time left for its answer: less than the
//! typical latency of the node it would go to, and it would spend quota
//! and the node's work for an answer that comes after the deadline.
#![allow(clippy::result_large_err)]

use super::hedge_tests::slow;
use super::tests::{harness, opts, Harness, MS};
use super::*;
use crate::config::RawOptions;
use crate::pool::options::Strategy;
use crate::rpc::methods::method_info;
use crate::runtime::scripted::Behaviour::*;

/// `endpoint` known to answer reads in `ms` (trusted: ten answers).
fn known_latency(h: &Harness, endpoint: usize, ms: u64) {
    let class = method_info("eth_getBalance").class;
    let mut r = h.pipeline.router.borrow_mut();
    for _ in 0..10 {
        r.endpoints[endpoint].tail[class as usize].observe(ms as f64);
        r.endpoints[endpoint].observe_latency(class, MS(ms));
    }
}

/// Node 0 fails after 900 ms of a 1 s deadline; node 1 answers in `ms`.
fn failing_late(node1_ms: u64) -> Harness {
    let mut raw = RawOptions { deadline_ms: Some(1000.0), ..opts() };
    raw.pool.strategy = Strategy::Priority;
    raw.pool.check_chain = false;
    raw.pool.hedge = None;
    let h = harness(vec![vec![slow(900, Status(503, None))], vec![slow(node1_ms, Answer("0x1"))]], raw);
    known_latency(&h, 1, node1_ms);
    h
}

#[test]
fn a_retry_with_less_time_left_than_its_node_typically_takes_is_not_sent() {
    let h = failing_late(200);
    let err = h.run("eth_getBalance").unwrap_err();
    assert_eq!((err.reason, err.attempts.len()), (StopReason::Deadline, 1));
    assert_eq!(h.net.calls(1), 0, "no retry 100 ms before the deadline onto a node that takes 200");
    assert_eq!(h.now_ms(), 900, "told at once, not at the deadline");
}

#[test]
fn a_retry_with_time_left_for_its_answer_goes() {
    let h = failing_late(50);
    let ok = h.run("eth_getBalance").unwrap();
    assert_eq!((ok.endpoint, ok.attempts.len()), (1, 2));
    assert_eq!(h.now_ms(), 950);
}

#[test]
fn a_retry_after_its_backoff_is_dropped_when_the_time_left_no_longer_covers_an_answer() {
    // One node: a 503 at 700 ms, a backoff, then less than its 250 ms typical answer is left.
    let mut raw = RawOptions { deadline_ms: Some(1000.0), ..opts() };
    raw.pool.check_chain = false;
    raw.pool.hedge = None;
    let h = harness(vec![vec![slow(700, Status(503, None)), slow(250, Answer("0x1"))]], raw);
    known_latency(&h, 0, 250);
    let err = h.run("eth_getBalance").unwrap_err();
    assert_eq!((err.reason, err.attempts.len(), h.net.calls(0)), (StopReason::Deadline, 1, 1));
    assert_eq!(h.now_ms(), 700, "no backoff slept for a retry that could not be answered in time");
}

#[test]
fn a_retry_that_waited_out_a_rate_limit_is_dropped_when_too_little_time_is_left() {
    // A 429 at 600 ms asks for 200 ms; after it only 200 ms of the deadline are left,
    // less than the node's 250 ms typical answer.
    let mut raw = RawOptions { deadline_ms: Some(1000.0), ..opts() };
    raw.pool.check_chain = false;
    raw.pool.hedge = None;
    let h = harness(vec![vec![slow(600, Status(429, Some("0.2"))), slow(250, Answer("0x1"))]], raw);
    known_latency(&h, 0, 250);
    let err = h.run("eth_getBalance").unwrap_err();
    assert_eq!((err.reason, h.net.calls(0)), (StopReason::Deadline, 1), "the retry after the wait is not sent");
    assert!(h.now_ms() < 1000, "told before the deadline: {} ms", h.now_ms());
}
