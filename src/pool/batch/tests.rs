//! Batches on the simulated clock. A scripted answer stands for a whole
//! batch reply: items separated by `|`, `-` for an item the node left
//! out, `!code:message` for an item's JSON-RPC error.
#![allow(clippy::result_large_err)]

use std::cell::RefCell;

use super::*;
use crate::config::{RawOptions, RelayerConfig};
use crate::policy::{Classifier, ErrorClass};
use crate::pool::options::EndpointSpec;
use crate::redact::EndpointUrl;
use crate::runtime::scripted::{Behaviour, Behaviour::*, ScriptedTransport};
use crate::runtime::sim::SimRuntime;

struct Harness {
    rt: SimRuntime,
    net: ScriptedTransport,
    pipeline: Pipeline,
    /// The item positions each round encoded.
    rounds: RefCell<Vec<Vec<usize>>>,
}

fn harness(scripts: Vec<Vec<Behaviour>>, raw: RawOptions) -> Harness {
    let rt = SimRuntime::new(11);
    let endpoints = (0..scripts.len())
        .map(|i| EndpointSpec::from_url(EndpointUrl::parse(&format!("http://127.0.0.1:{}", 9300 + i), "u").unwrap(), i))
        .collect();
    let config = RelayerConfig::build(endpoints, raw).unwrap();
    let pipeline = Pipeline::new(config, Classifier::default(), rt.now());
    Harness { net: ScriptedTransport::new(&rt, scripts), rt, pipeline, rounds: RefCell::default() }
}

#[allow(clippy::ptr_arg)] // the payload type is String
fn split(reply: &String, pos: usize) -> ItemReply<String> {
    match reply.split('|').nth(pos) {
        None | Some("-") => ItemReply::Missing,
        Some(error) if error.starts_with('!') => {
            let (code, message) = error[1..].split_once(':').unwrap();
            let code = Some(code.parse().unwrap());
            ItemReply::Error(RpcErrorInfo { code, message: message.into(), data: None, backoff_hint: None })
        }
        Some(result) => ItemReply::Result(result.to_string()),
    }
}

impl Harness {
    fn run(&self, methods: &[&str]) -> BatchOutcome<String> {
        let encode = |positions: &[usize]| -> Result<(), &'static str> {
            self.rounds.borrow_mut().push(positions.to_vec());
            Ok(())
        };
        let run = execute_batch(&self.pipeline, &self.rt, &self.net, methods, encode, split, &|_| {});
        self.rt.block_on(run).unwrap().unwrap()
    }
}

fn answered(outcome: &ItemOutcome<String>) -> Option<&str> {
    match outcome {
        ItemOutcome::Answered(v) => Some(v),
        _ => None,
    }
}

const THREE: [&str; 3] = ["eth_blockNumber", "eth_getBalance", "eth_call"];

#[test]
fn every_item_answered_in_one_request() {
    let h = harness(vec![vec![Answer("0x1|0x2|0x3")]], RawOptions::default());
    let out = h.run(&THREE);
    let values: Vec<_> = out.items.iter().map(answered).collect();
    assert_eq!(values, [Some("0x1"), Some("0x2"), Some("0x3")]);
    assert_eq!((h.net.calls(0), h.rounds.borrow().len()), (1, 1));
    assert!(out.batch_failure.is_none());
}

#[test]
fn only_items_left_out_or_failing_transiently_are_sent_again() {
    let h = harness(vec![vec![Answer("0x1|-|!-32000:header not found"), Answer("0x2|0x3")]], RawOptions::default());
    let out = h.run(&THREE);
    let values: Vec<_> = out.items.iter().map(answered).collect();
    assert_eq!(values, [Some("0x1"), Some("0x2"), Some("0x3")]);
    assert_eq!(*h.rounds.borrow(), [vec![0, 1, 2], vec![1, 2]], "the second batch holds the two unanswered");
}

#[test]
fn an_item_refused_for_good_keeps_its_own_error_and_is_not_sent_again() {
    let h = harness(vec![vec![Answer("0x1|!3:execution reverted|0x3")]], RawOptions::default());
    let out = h.run(&THREE);
    let ItemOutcome::Failed(failure) = &out.items[1] else { panic!("{:?}", out.items[1]) };
    assert_eq!(failure.reason, StopReason::NotRetryable);
    assert_eq!(failure.attempts.len(), 1);
    assert_eq!(failure.attempts[0].verdict.class, ErrorClass::Fatal);
    assert!(matches!(&failure.last, Some(crate::error::FailureDetail::Rpc(info, _)) if info.code == Some(3)));
    assert_eq!((answered(&out.items[0]), answered(&out.items[2])), (Some("0x1"), Some("0x3")));
    assert_eq!(h.rounds.borrow().len(), 1);
}

#[test]
fn the_last_round_settles_what_is_still_missing() {
    let raw = RawOptions { max_retries: Some(1.0), ..Default::default() };
    let h = harness(vec![vec![Answer("0x1|-|-"), Answer("-|!-32000:header not found")]], raw);
    let out = h.run(&THREE);
    assert_eq!(answered(&out.items[0]), Some("0x1"));
    assert!(matches!(out.items[1], ItemOutcome::Unanswered));
    let ItemOutcome::Failed(failure) = &out.items[2] else { panic!("{:?}", out.items[2]) };
    assert_eq!(failure.attempts[0].verdict.class, ErrorClass::Transient, "retryable, but no round is left");
    assert_eq!(h.rounds.borrow().len(), 2, "two attempts: maxRetries 1");
}

#[test]
fn a_batch_the_pipeline_gives_up_on_fails_every_pending_item_with_one_reason() {
    let raw = RawOptions { max_retries: Some(0.0), ..Default::default() };
    let h = harness(vec![vec![Status(503, None)]], raw);
    let out = h.run(&THREE);
    assert!(out.items.iter().all(|i| matches!(i, ItemOutcome::BatchFailed)));
    assert!(out.batch_failure.is_some());
}

#[test]
fn a_batch_that_cannot_be_encoded_sends_nothing() {
    let h = harness(vec![vec![Answer("0x1")]], RawOptions::default());
    let encode = |_: &[usize]| -> Result<(), &'static str> { Err("params") };
    let run = execute_batch(&h.pipeline, &h.rt, &h.net, &["eth_call"], encode, split, &|_| {});
    assert_eq!(h.rt.block_on(run).unwrap().err(), Some("params"));
    assert_eq!(h.net.calls(0), 0);
}

#[test]
fn no_round_starts_as_other_than_the_last_once_the_deadline_has_passed() {
    let raw = RawOptions { deadline_ms: Some(2000.0), ..Default::default() };
    let slow = |ms, reply| Slow(std::time::Duration::from_millis(ms), Box::new(Answer(reply)));
    let h = harness(vec![vec![slow(1500, "0x1|-|-"), slow(600, "-|-"), Answer("-|-"), Answer("0x2|0x3")]], raw);
    let out = h.run(&THREE);
    assert_eq!(answered(&out.items[0]), Some("0x1"));
    assert!(matches!(out.items[1], ItemOutcome::Unanswered), "{:?}", out.items[1]);
    assert_eq!(h.rounds.borrow().len(), 3, "the round begun at 2.1 s is the last, though four are allowed");
}
