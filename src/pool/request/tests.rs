//! Cache → dedup → pipeline on the simulated clock.
#![allow(clippy::result_large_err)]

use std::time::Duration;

use super::*;
use crate::config::{RawOptions, RelayerConfig};
use crate::policy::Classifier;
use crate::pool::options::EndpointSpec;
use crate::redact::EndpointUrl;
use crate::runtime::scripted::{Behaviour, Behaviour::*, ScriptedTransport};
use crate::runtime::sim::{join_all, SimRuntime};
use crate::runtime::Transport;

struct Harness {
    rt: SimRuntime,
    net: ScriptedTransport,
    pipeline: Pipeline,
    front: Front<String>,
    aborted: std::cell::Cell<bool>,
}

fn harness(script: Vec<Behaviour>, raw: RawOptions) -> Harness {
    let rt = SimRuntime::new(3);
    let url = EndpointSpec::from_url(EndpointUrl::parse("http://127.0.0.1:9100", "u").unwrap(), 0);
    let config = RelayerConfig::build(vec![url], raw).unwrap();
    let front = Front::new(config.pool.cache.max_entries);
    let pipeline = Pipeline::new(config, Classifier::default(), rt.now());
    Harness { net: ScriptedTransport::new(&rt, vec![script]), rt, pipeline, front, aborted: Default::default() }
}

impl Harness {
    async fn read(&self, method: &str, key: &str, tag: BlockTag) -> Outcome<String> {
        let read = Read { method, key, tag, fresh: false, sends: None };
        let aborted = || self.aborted.get();
        self.front.request(&self.pipeline, &self.rt, read, |t| self.net.send(&(), t), &aborted, &|_| {}).await
    }

    fn many(&self, n: usize, method: &str, tag: BlockTag) -> Vec<Outcome<String>> {
        let reads = (0..n).map(|_| self.read(method, "k", tag)).collect();
        self.rt.block_on(join_all(reads)).unwrap()
    }
}

fn no_cache() -> RawOptions {
    let mut raw = RawOptions::default();
    raw.pool.cache.enabled = false;
    raw
}

fn value(outcome: &Outcome<String>) -> Option<String> {
    match outcome {
        Ok(SuccessValue::Result(v)) => Some(v.clone()),
        _ => None,
    }
}

fn slow(then: Behaviour) -> Behaviour {
    Slow(Duration::from_millis(20), Box::new(then))
}

#[test]
fn identical_reads_at_once_share_one_upstream_call() {
    let h = harness(vec![slow(Answer("0x5"))], no_cache());
    let outcomes = h.many(10, "eth_getBalance", BlockTag::Latest);
    assert!(outcomes.iter().all(|o| value(o).as_deref() == Some("0x5")));
    assert_eq!(h.net.calls(0), 1);
    assert_eq!(h.front.shared(), 0, "the shared entry is gone once published");
}

#[test]
fn a_read_in_flight_is_counted_as_shared_until_it_ends() {
    let h = harness(vec![slow(Answer("0x5"))], no_cache());
    let seen = std::cell::Cell::new(usize::MAX);
    let tasks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>> = vec![
        Box::pin(async {
            let _ = h.read("eth_getBalance", "k", BlockTag::Latest).await;
        }),
        Box::pin(async {
            h.rt.sleep(Duration::from_millis(5)).await;
            seen.set(h.front.shared());
        }),
    ];
    h.rt.block_on(join_all(tasks)).unwrap();
    assert_eq!((seen.get(), h.front.shared()), (1, 0));
}

#[test]
fn pending_reads_and_sends_are_never_shared() {
    let h = harness(vec![slow(Answer("0x5"))], no_cache());
    h.many(4, "eth_getBalance", BlockTag::Pending);
    assert_eq!(h.net.calls(0), 4, "pending state moves between calls");
    h.many(3, "eth_sendRawTransaction", BlockTag::Absent);
    assert_eq!(h.net.calls(0), 7, "each send is its own");
}

#[test]
fn a_fresh_cache_entry_answers_without_an_upstream_call_until_it_expires() {
    let h = harness(vec![Answer("0x9")], RawOptions::default());
    assert_eq!(value(&h.rt.block_on(h.read("eth_blockNumber", "k", BlockTag::Latest)).unwrap()).unwrap(), "0x9");
    h.rt.block_on(h.read("eth_blockNumber", "k", BlockTag::Latest)).unwrap().unwrap();
    assert_eq!((h.net.calls(0), h.front.cache_stats()), (1, (1, 1)), "the second read was a hit");
    h.rt.block_on(h.rt.sleep(Duration::from_millis(1001))).unwrap();
    h.rt.block_on(h.read("eth_blockNumber", "k", BlockTag::Latest)).unwrap().unwrap();
    assert_eq!(h.net.calls(0), 2, "latest entries live one second by default");
}

#[test]
fn empty_results_and_failures_are_not_cached() {
    let h = harness(vec![Answer("null"), RpcError(3, "execution reverted"), Answer("0x1")], RawOptions::default());
    for _ in 0..3 {
        let _ = h.rt.block_on(h.read("eth_getTransactionReceipt", "k", BlockTag::Absent)).unwrap();
    }
    assert_eq!(h.net.calls(0), 3, "null (not mined yet) and a revert are asked again");
    let _ = h.rt.block_on(h.read("eth_getTransactionReceipt", "k", BlockTag::Absent)).unwrap();
    assert_eq!(h.net.calls(0), 3, "a receipt is immutable once there");
}

#[test]
fn followers_of_a_leader_whose_caller_gave_up_run_the_request_themselves() {
    let h = harness(vec![slow(Answer("0x7"))], no_cache());
    h.aborted.set(true); // every caller "aborted": nobody publishes
    let outcomes = h.many(3, "eth_getBalance", BlockTag::Latest);
    assert!(outcomes.iter().all(|o| value(o).as_deref() == Some("0x7")));
    assert_eq!(h.net.calls(0), 3, "no outcome was published, so each ran its own");
}

#[test]
fn fresh_reads_skip_cache_and_sharing() {
    let h = harness(vec![slow(Answer("0x5"))], RawOptions::default());
    let fresh = |_: usize| async {
        let read =
            Read { method: "eth_getTransactionCount", key: "k", tag: BlockTag::Latest, fresh: true, sends: None };
        h.front.request(&h.pipeline, &h.rt, read, |t| h.net.send(&(), t), &|| false, &|_| {}).await
    };
    h.rt.block_on(join_all((0..3).map(fresh).collect())).unwrap();
    h.rt.block_on(fresh(0)).unwrap().unwrap();
    assert_eq!((h.net.calls(0), h.front.cache_stats()), (4, (0, 0)));
}

#[test]
fn a_submission_the_node_already_has_is_answered_with_the_hash_of_the_bytes_sent() {
    let h = harness(vec![RpcError(-32000, "already known"), RpcError(-32000, "already known")], no_cache());
    let send = |sends| {
        let read = Read { method: "eth_sendRawTransaction", key: "k", tag: BlockTag::Absent, fresh: true, sends };
        let aborted = || false;
        h.rt.block_on(h.front.request(&h.pipeline, &h.rt, read, |t| h.net.send(&(), t), &aborted, &|_| {})).unwrap()
    };
    let hashed = send(Some("0x00"));
    // keccak256(0x00): what the node returned when it first took the bytes.
    assert_eq!(value(&hashed).as_deref(), Some("0xbc36789e7a1e281436464229828f817d6612f7b477d66591ff96a9e064bcc98a"));
    assert!(matches!(send(None), Ok(SuccessValue::AlreadyKnown)), "no bytes to hash: said as it is");
    assert_eq!(h.net.calls(0), 2, "no retry: the node has it");
}

#[test]
fn eth_chain_id_is_answered_from_a_fresh_check_and_asked_again_once_the_recheck_is_due() {
    let h = harness(vec![Answer("0x5")], no_cache());
    h.net.set_chain_id(0, "0x89");
    let chain_id = || value(&h.rt.block_on(h.read("eth_chainId", "c", BlockTag::Absent)).unwrap());
    assert_eq!(chain_id().as_deref(), Some("0x89"), "unchecked: the check answers it");
    assert_eq!((h.net.chain_checks(0), h.net.exchanges(0)), (1, 1));
    h.rt.block_on(h.read("eth_getBalance", "k", BlockTag::Latest)).unwrap().unwrap();
    assert_eq!(chain_id().as_deref(), Some("0x89"));
    assert_eq!(chain_id().as_deref(), Some("0x89"));
    assert_eq!((h.net.chain_checks(0), h.net.exchanges(0)), (1, 2), "checked: no call, with the cache off");
    h.rt.block_on(h.rt.sleep(Duration::from_secs(300))).unwrap();
    assert_eq!(chain_id().as_deref(), Some("0x89"));
    assert_eq!((h.net.chain_checks(0), h.net.exchanges(0)), (2, 3), "the recheck was due: asked again");
}

#[test]
fn eth_chain_id_goes_upstream_when_nothing_checked_serves_the_relayers_chain() {
    let mut raw = no_cache();
    raw.pool.check_chain = false;
    let h = harness(vec![Answer("0x1"), Answer("0x1")], raw);
    h.rt.block_on(h.read("eth_getBalance", "k", BlockTag::Latest)).unwrap().unwrap();
    assert_eq!(value(&h.rt.block_on(h.read("eth_chainId", "c", BlockTag::Absent)).unwrap()).as_deref(), Some("0x1"));
    assert_eq!(h.net.calls(0), 2, "checkChainId: false checked nothing: the node is asked");

    let mut raw = no_cache();
    raw.pool.chain_id = Some(5);
    let h = harness(vec![Answer("0x1")], raw);
    h.net.set_chain_id(0, "0x1");
    let wrong = h.rt.block_on(h.read("eth_chainId", "c", BlockTag::Absent)).unwrap();
    assert!(wrong.is_err(), "the only node serves chain 1, not the 5 configured");
    assert!(h.rt.block_on(h.read("eth_chainId", "c", BlockTag::Absent)).unwrap().is_err(), "still not known");
}

/// A relayer of `realm` on the harness's node: its pipeline and front.
fn realm_member(realm: &crate::coord::Realm, rt: &SimRuntime, raw: RawOptions) -> (Pipeline, Front<String>) {
    let url = EndpointSpec::from_url(EndpointUrl::parse("http://127.0.0.1:9100", "u").unwrap(), 0);
    let config = RelayerConfig::build(vec![url], raw).unwrap();
    (Pipeline::in_realm(config, Classifier::default(), rt.now(), Some(realm)), Front::new(16))
}

#[test]
fn eth_chain_id_is_answered_from_another_realm_members_check() {
    let rt = SimRuntime::new(3);
    let realm = crate::coord::Realm::new();
    let member = || {
        let mut raw = no_cache();
        raw.pool.chain_id = Some(0x89);
        realm_member(&realm, &rt, raw)
    };
    let ((a, front_a), (b, front_b)) = (member(), member());
    let net = ScriptedTransport::new(&rt, vec![vec![Answer("0x5")]]);
    net.set_chain_id(0, "0x89");
    let chain_id = |pipeline: &Pipeline, front: &Front<String>| {
        let read = Read { method: "eth_chainId", key: "c", tag: BlockTag::Absent, fresh: false, sends: None };
        value(&rt.block_on(front.request(pipeline, &rt, read, |t| net.send(&(), t), &|| false, &|_| {})).unwrap())
    };
    assert_eq!(chain_id(&a, &front_a).as_deref(), Some("0x89"), "a's check");
    assert_eq!(chain_id(&b, &front_b).as_deref(), Some("0x89"), "b: a's check, not b's call");
    assert_eq!((net.chain_checks(0), net.exchanges(0)), (1, 1));
}

#[test]
fn eth_chain_id_asked_by_two_realm_members_at_once_costs_one_check() {
    // Two relayers of a bot, each with a `connect` listener, start together:
    // b's call waits for a's check in flight, then is answered by it.
    let rt = SimRuntime::new(3);
    let realm = crate::coord::Realm::new();
    let (a, b) = (realm_member(&realm, &rt, no_cache()), realm_member(&realm, &rt, no_cache()));
    let net = ScriptedTransport::new(&rt, vec![vec![slow(Answer("0x5"))]]);
    let read = Read { method: "eth_chainId", key: "c", tag: BlockTag::Absent, fresh: false, sends: None };
    let send = |t| net.send(&(), t);
    let both: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = Outcome<String>> + '_>>> = vec![
        Box::pin(a.1.request(&a.0, &rt, read, send, &|| false, &|_| {})),
        Box::pin(b.1.request(&b.0, &rt, read, send, &|| false, &|_| {})),
    ];
    let outcomes = rt.block_on(join_all(both)).unwrap();
    assert!(
        outcomes.iter().all(|o| value(o).as_deref() == Some("0x1")),
        "{:?}",
        outcomes.iter().map(value).collect::<Vec<_>>()
    );
    assert_eq!((net.chain_checks(0), net.exchanges(0)), (1, 1), "b waited for a's check and took it");
}
