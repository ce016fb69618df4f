//! Send outcomes from attempt histories classified as the pipeline does.

use std::time::Duration;

use super::*;
use crate::error::StopReason;
use crate::policy::classify::{Observation, Reply, RpcErrorInfo};
use crate::policy::Classifier;

const SEND: &str = "eth_sendRawTransaction";

fn rpc(code: i64, message: &str) -> Observation<()> {
    let info = RpcErrorInfo { code: Some(code), message: message.into(), data: None, backoff_hint: None };
    Observation::Http { status: 200, retry_after: None, reply: Reply::Error(info) }
}

fn status(code: u16) -> Observation<()> {
    Observation::Http { status: code, retry_after: None, reply: Reply::NotJson }
}

fn transport(failure: TransportFailure) -> Observation<()> {
    Observation::Transport(failure)
}

/// The failure a pipeline would report after these attempts, in order.
fn failure(history: Vec<Observation<()>>) -> Failure<()> {
    let classifier = Classifier::default();
    let attempts = history
        .iter()
        .map(|o| AttemptRecord {
            endpoint: 0,
            verdict: classifier.classify(SEND, o, Duration::ZERO),
            started_after: Duration::ZERO,
            elapsed: Duration::ZERO,
        })
        .collect();
    let last = history.into_iter().last().map(crate::pool::pipeline::detail);
    Failure { reason: StopReason::NotRetryable, last, attempts, reported: None, next_chance_in: None }
}

fn outcome(history: Vec<Observation<()>>) -> SendOutcome<&'static str> {
    classify_send(&failure(history), "e")
}

#[test]
fn a_refusal_preceded_only_by_certain_failures_releases_the_nonce() {
    assert_eq!(outcome(vec![rpc(-32000, "insufficient funds for gas * price + value")]), SendOutcome::Rejected("e"));
    let after_undelivered =
        vec![transport(TransportFailure::ConnectionRefused), status(429), rpc(-32000, "intrinsic gas too low")];
    assert_eq!(outcome(after_undelivered), SendOutcome::Rejected("e"), "refused, DNS and 429 deliver nothing");
    assert_eq!(outcome(vec![transport(TransportFailure::Dns), status(401)]), SendOutcome::Rejected("e"));
}

#[test]
fn any_attempt_that_may_have_landed_makes_the_outcome_unknown() {
    let after_timeout = vec![transport(TransportFailure::Timeout), rpc(-32000, "insufficient funds")];
    assert_eq!(outcome(after_timeout), SendOutcome::Unknown("e"));
    assert_eq!(outcome(vec![transport(TransportFailure::ConnectionReset)]), SendOutcome::Unknown("e"));
    assert_eq!(outcome(vec![status(503)]), SendOutcome::Unknown("e"), "a 503 may come after the node took it");
    assert_eq!(outcome(vec![]), SendOutcome::Unknown("e"));
    let cancelled = vec![rpc(-32000, "insufficient funds"), transport(TransportFailure::Aborted)];
    assert_eq!(outcome(cancelled), SendOutcome::Unknown("e"), "the caller gave up: nothing is settled");
}

#[test]
fn nonce_too_low_says_whether_it_could_have_been_ours() {
    let alone = outcome(vec![rpc(-32000, "nonce too low")]);
    assert_eq!(alone, SendOutcome::NonceTooLow { certain: true, error: "e" });
    let after_timeout = outcome(vec![transport(TransportFailure::Timeout), rpc(-32000, "nonce too low")]);
    assert_eq!(
        after_timeout,
        SendOutcome::NonceTooLow { certain: false, error: "e" },
        "the lost attempt may have used it"
    );
}

#[test]
fn underpriced_replacements_and_fee_floors_are_told_apart() {
    assert_eq!(outcome(vec![rpc(-32000, "replacement transaction underpriced")]), SendOutcome::Underpriced("e"));
    let lost_first = vec![transport(TransportFailure::Timeout), rpc(-32000, "replacement transaction underpriced")];
    assert_eq!(outcome(lost_first), SendOutcome::Unknown("e"));
    for floor in [
        "max fee per gas less than block base fee: address 0x1, maxFeePerGas: 1, baseFee: 7",
        "transaction underpriced: gas tip cap 1, minimum needed 2",
        "Gas price below configured minimum gas price",
    ] {
        assert_eq!(outcome(vec![rpc(-32000, floor)]), SendOutcome::FeeTooLow("e"), "{floor}");
    }
}
