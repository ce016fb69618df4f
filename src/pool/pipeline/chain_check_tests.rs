//! A fresh endpoint's chain check and first request in one round trip
//! (`chain_check.rs`), counted in exchanges (HTTP requests) per endpoint.

use super::chain_check::Batched;
use super::context::RequestContext;
use super::tests::{first_on_chain, harness, opts, MS};
use super::*;
use crate::policy::classify::{RpcErrorInfo, TransportFailure};
use crate::pool::endpoint::ChainStatus;
use crate::runtime::scripted::Behaviour::*;
use crate::runtime::{batch_text, AttemptTarget};

fn chain(h: &super::tests::Harness, endpoint: usize) -> ChainStatus {
    h.pipeline.with_router(|r| r.endpoints[endpoint].chain)
}

#[test]
fn a_fresh_endpoints_first_read_and_its_chain_check_are_one_round_trip() {
    let h = harness(vec![vec![slow(100, Answer("0xbee"))]], opts());
    let ok = h.run("eth_getBalance").unwrap();
    assert_eq!(ok.value, SuccessValue::Result("0xbee".to_string()));
    assert_eq!((h.net.exchanges(0), h.net.batches(0), h.net.chain_checks(0)), (1, 1, 1));
    assert_eq!((h.now_ms(), ok.attempts.len()), (100, 1), "one round trip, one attempt");
    assert_eq!(chain(&h, 0), ChainStatus::Verified);
    h.run("eth_getBalance").unwrap();
    assert_eq!((h.net.exchanges(0), h.net.batches(0)), (2, 1), "checked: the next read goes alone");
}

#[test]
fn reads_arriving_during_the_batch_wait_for_its_check_then_go() {
    let h = harness(vec![vec![slow(100, Answer("0x1"))]], opts());
    let reads = (0..5).map(|_| h.request("eth_blockNumber")).collect();
    let outcomes = h.rt.block_on(crate::runtime::sim::join_all(reads)).unwrap();
    assert!(outcomes.iter().all(Result::is_ok));
    assert_eq!((h.net.chain_checks(0), h.net.batches(0), h.net.exchanges(0)), (1, 1, 5), "one check for the burst");
}

#[test]
fn an_eth_chain_id_call_is_answered_by_the_check_itself() {
    let h = harness(vec![vec![Answer("0xbad")]], opts());
    h.net.set_chain_id(0, "0x89");
    let ok = h.run("eth_chainId").unwrap();
    assert_eq!(ok.value, SuccessValue::Result("0x89".to_string()));
    assert_eq!((h.net.exchanges(0), h.net.chain_checks(0), h.net.calls(0), h.net.batches(0)), (1, 1, 0, 0));
}

#[test]
fn a_send_or_an_unknown_method_never_reaches_an_unchecked_node() {
    for method in ["eth_sendRawTransaction", "debug_setHead", "acme_doSomething"] {
        let h = first_on_chain("0x5");
        let ok = h.run(method).unwrap();
        assert_eq!(ok.endpoint, 1, "{method}");
        assert_eq!((h.net.calls(0), h.net.batches(0), h.net.chain_checks(0)), (0, 0, 1), "{method}: checked alone");
        assert_eq!(h.net.exchanges(1), 2, "{method}: the check, then the call");
    }
}

#[test]
fn a_read_on_a_node_of_another_chain_is_dropped_and_the_node_disabled() {
    let h = first_on_chain("0x5");
    let ok = h.run("eth_call").unwrap();
    assert_eq!((ok.endpoint, ok.value), (1, SuccessValue::Result("0x900d".to_string())));
    assert_eq!((h.net.batches(0), chain(&h, 0)), (1, ChainStatus::Mismatch(5)));
    assert_eq!(ok.attempts.len(), 1, "the mismatch is not a failed attempt of the request");
}

/// A node that answers batches with `status` and no JSON, single requests
/// as usual: its first read costs the batch, a lone check and the read, in
/// one attempt; it is then known to refuse batches, so its re-check goes alone.
fn checked_alone_then_remembered(status: u16, why: &str) {
    let mut raw = opts();
    raw.pool.chain_recheck = MS(1000);
    let h = harness(vec![vec![Answer("0x7")]], raw);
    h.net.refuse_batches(0, status);
    let ok = h.run("eth_getBalance").unwrap();
    assert_eq!((ok.value, ok.attempts.len()), (SuccessValue::Result("0x7".to_string()), 1), "{why}");
    assert_eq!((h.net.batches(0), h.net.chain_checks(0), h.net.exchanges(0)), (1, 1, 3), "{why}: batch, check, call");
    assert!(h.pipeline.with_router(|r| r.refuses_batches(0)), "{why}: remembered");
    h.rt.block_on(h.rt.sleep(MS(1000))).unwrap();
    h.run("eth_getBalance").unwrap();
    assert_eq!(
        (h.net.batches(0), h.net.chain_checks(0), h.net.exchanges(0)),
        (1, 2, 5),
        "{why}: the re-check went alone"
    );
}

#[test]
fn a_node_that_refuses_batches_is_checked_alone_in_the_same_attempt_and_remembered() {
    checked_alone_then_remembered(400, "HTTP 400");
}

#[test]
fn a_node_that_answers_batches_with_a_page_is_checked_alone_and_then_known_to_refuse_them() {
    // Found by a new user: a node serving single requests but an HTML page (200) for batches
    // failed every attempt, each one a batch again. Known once the lone check is read.
    checked_alone_then_remembered(200, "an HTML page");
}

#[test]
fn a_page_for_the_batch_and_for_the_lone_check_is_the_nodes_failure_and_teaches_nothing() {
    let h = harness(vec![vec![Answer("0x7")], vec![Answer("0x8")]], opts());
    h.net.refuse_batches(0, 200);
    h.net.refuse_chain_checks(0);
    let ok = h.run("eth_getBalance").unwrap();
    assert_eq!(ok.endpoint, 1);
    assert!(!h.pipeline.with_router(|r| r.refuses_batches(0)));
}

#[test]
fn a_batch_refused_for_the_key_or_the_load_is_a_failed_check_not_a_refusal_of_batches() {
    for (script, what) in [(Status(429, Some("1")), "429"), (Status(503, None), "503"), (Status(401, None), "401")] {
        let h = harness(vec![vec![script, Answer("0x1")], vec![Answer("0x2")]], opts());
        let ok = h.run("eth_getBalance").unwrap();
        assert_eq!(ok.endpoint, 1, "{what}: the other endpoint served");
        assert_eq!(h.net.batches(0), 1, "{what}: the read rode with the check");
        assert!(!h.pipeline.with_router(|r| r.refuses_batches(0)), "{what}: nothing learned of batches");
        assert_ne!(chain(&h, 0), ChainStatus::Verified, "{what}");
    }
}

#[test]
fn a_revert_in_the_batch_is_the_reads_answer_after_the_chain_is_verified() {
    let h = harness(vec![vec![RpcError(3, "execution reverted")], vec![Answer("0x2")]], opts());
    let err = h.run("eth_call").unwrap_err();
    assert_eq!(err.reason, crate::error::StopReason::NotRetryable);
    assert_eq!((h.net.exchanges(0), h.net.exchanges(1), chain(&h, 0)), (1, 0, ChainStatus::Verified));
}

fn limit() -> Reply<String> {
    Reply::Error(RpcErrorInfo { code: Some(-32005), message: "limit exceeded".into(), data: None, backoff_hint: None })
}

/// What `split_checked` makes of a reply to `[eth_chainId, eth_getBalance]`.
fn split(status: u16, reply: Reply<String>) -> &'static str {
    let h = harness(vec![vec![]], opts());
    let emit = |_: PipelineEvent| {};
    let attempt = |_: AttemptTarget| async { Observation::<String>::Transport(TransportFailure::Aborted) };
    let now = h.rt.now();
    let cx = RequestContext::new(&h.rt, &attempt, Call::new("eth_getBalance"), (now, now + MS(1000)), &emit);
    match h.pipeline.split_checked(&cx, Observation::Http { status, retry_after: None, reply }) {
        Batched::Items(..) => "items",
        Batched::Failed(_, v) if v.class == ErrorClass::RateLimited => "failed: rate-limited",
        Batched::Failed(..) => "failed",
        Batched::Refused => "refused",
        Batched::Unreadable => "unreadable",
    }
}

#[test]
fn each_shape_of_a_batch_reply_reads_as_the_module_doc_says() {
    let items = |check: Option<Reply<String>>, call: Option<Reply<String>>| Reply::Result(batch_text(&[check, call]));
    let ok = || Some(Reply::Result("0x1".to_string()));
    let not_found = || {
        Some(Reply::Error(RpcErrorInfo {
            code: Some(-32601),
            message: "no such method".into(),
            data: None,
            backoff_hint: None,
        }))
    };
    assert_eq!(split(200, items(ok(), ok())), "items");
    assert_eq!(split(200, items(ok(), None)), "items", "a missing call item is the call's failure (malformed)");
    assert_eq!(split(200, items(None, ok())), "refused", "no check item: a node that mangles batches");
    assert_eq!(split(200, items(not_found(), ok())), "refused", "the check's own error, not for the load");
    assert_eq!(split(200, items(Some(limit()), ok())), "failed: rate-limited");
    assert_eq!(split(200, limit()), "failed: rate-limited", "one error object for the whole batch, rate-limited");
    assert_eq!(split(200, not_found().unwrap()), "refused", "one error object: batches not supported");
    assert_eq!(split(200, Reply::Result("0x1".into())), "refused", "a single answer to a batch");
    assert_eq!(split(200, Reply::Malformed), "refused");
    assert_eq!(split(200, Reply::NotJson), "unreadable", "a gateway's page: the node or its batches");
    assert_eq!(split(200, Reply::TooLarge), "unreadable");
    assert_eq!(split(502, Reply::NotJson), "failed", "a gateway's 5xx is the node's failure");
    for status in [400, 404, 405, 413, 415, 422] {
        assert_eq!(split(status, Reply::NotJson), "refused", "{status}");
    }
    assert_eq!(split(429, Reply::NotJson), "failed: rate-limited");
    for status in [401, 403, 500, 502, 503, 504] {
        assert_ne!(split(status, Reply::NotJson), "refused", "{status}");
    }
}

fn slow(ms: u64, inner: crate::runtime::scripted::Behaviour) -> crate::runtime::scripted::Behaviour {
    Slow(MS(ms), Box::new(inner))
}
