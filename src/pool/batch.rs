//! JSON-RPC batches: many calls in one HTTP request, each answered on its
//! own, generic over the payload so the rules run on the simulated runtime.
//!
//! ```text
//!   round (at most max_attempts, within the deadline):
//!     the items still pending, sent as one batch through the pipeline
//!     (costs summed; retries, failover, breakers as for any call)
//!       pipeline gave up ───────────────────► every pending item: BatchFailed
//!       per item of the reply:
//!         a result ─────────────────────────► Answered
//!         left out by the node  ──── not last round ► pending again
//!                                  └─ last round ───► Unanswered
//!         an error, retryable anywhere ─ not last ──► pending again
//!         any other error (or last round) ──────────► Failed (its own history)
//! ```
//!
//! A round is the last when it is the `max_attempts`-th or the deadline
//! has passed. Only the items that failed for a reason another attempt
//! may cure are sent again, in a smaller batch; an item a node refused for
//! good keeps its own typed error.

use std::time::Duration;

use super::pipeline::{detail, Call, Pipeline, SuccessValue};
use super::PipelineEvent;
use crate::error::{AttemptRecord, Failure, StopReason};
use crate::policy::classify::{Observation, Reply, RpcErrorInfo};
use crate::rpc::methods::method_info;
use crate::runtime::{Payload, Runtime, Transport};

/// Most items in one batch (geth refuses more than 1,000).
pub const MAX_BATCH: usize = crate::policy::wire_batch::MAX_ITEMS;

/// What a batch reply says about one item.
pub enum ItemReply<P> {
    /// The node's `result` for it.
    Result(P),
    /// The node's JSON-RPC error for it.
    Error(RpcErrorInfo<P>),
    /// The node left it out (or the whole reply was empty).
    Missing,
}

/// How one item of a batch ended.
#[derive(Debug)]
pub enum ItemOutcome<P> {
    /// The node's result.
    Answered(P),
    /// A node refused this item (its own single-attempt history).
    Failed(Failure<P>),
    /// No node answered it, within the rounds allowed.
    Unanswered,
    /// The batch as a whole failed: [`BatchOutcome::batch_failure`] says why.
    BatchFailed,
}

/// Every item's outcome, in item order.
#[derive(Debug)]
pub struct BatchOutcome<P> {
    /// One per item, in the order given.
    pub items: Vec<ItemOutcome<P>>,
    /// Why the pipeline gave up on a round, if it did.
    pub batch_failure: Option<Failure<P>>,
}

/// Runs the calls `methods` as batches. `encode` prepares the transport
/// call for the item positions given (it may fail, e.g. params that cannot
/// be encoded: nothing is sent then); `split` reads item `pos` of a round's
/// reply (the payload the transport made of the batch answer, in the
/// order the round's items were encoded).
pub async fn execute_batch<R, T, P, E>(
    pipeline: &Pipeline,
    runtime: &R,
    transport: &T,
    methods: &[&str],
    mut encode: impl FnMut(&[usize]) -> Result<T::Call, E>,
    split: impl Fn(&P, usize) -> ItemReply<P>,
    emit: &dyn Fn(PipelineEvent),
) -> Result<BatchOutcome<P>, E>
where
    R: Runtime,
    T: Transport<Payload = P>,
    P: Payload,
{
    let mut items: Vec<Option<ItemOutcome<P>>> = (0..methods.len()).map(|_| None).collect();
    let mut pending: Vec<usize> = (0..methods.len()).collect();
    let mut batch_failure = None;
    let rounds = pipeline.config().max_attempts();
    let started = runtime.now();
    for round in 0..rounds {
        let last_round = round + 1 == rounds || runtime.now().saturating_since(started) >= pipeline.config().deadline;
        let call = encode(&pending)?;
        let cost = pending.iter().map(|&i| method_info(methods[i]).cost).sum();
        let batch_call = Call { method: "batch", wants_latest: true, cost: Some(cost), signed_chain: None };
        let outcome = pipeline.execute(runtime, batch_call, |target| transport.send(&call, target), emit).await;
        let (reply, answered_by) = match outcome {
            Ok(success) => (success.value, success.endpoint),
            Err(failure) => {
                for &i in &pending {
                    items[i] = Some(ItemOutcome::BatchFailed);
                }
                batch_failure = Some(failure);
                break;
            }
        };
        let mut again = Vec::new();
        for (pos, &i) in pending.iter().enumerate() {
            let item = match &reply {
                SuccessValue::Result(replies) => split(replies, pos),
                SuccessValue::AlreadyKnown => ItemReply::Missing,
            };
            let settled = match item {
                ItemReply::Result(value) => ItemOutcome::Answered(value),
                ItemReply::Missing if last_round => ItemOutcome::Unanswered,
                ItemReply::Missing => {
                    again.push(i);
                    continue;
                }
                ItemReply::Error(info) => {
                    let observation = Observation::Http { status: 200, retry_after: None, reply: Reply::Error(info) };
                    let verdict = pipeline.classify(methods[i], &observation, runtime.unix_time());
                    if verdict.class.retryable_anywhere() && !last_round {
                        again.push(i);
                        continue;
                    }
                    let record = AttemptRecord {
                        endpoint: answered_by,
                        verdict,
                        started_after: Duration::ZERO,
                        elapsed: Duration::ZERO,
                    };
                    ItemOutcome::Failed(Failure {
                        reason: StopReason::NotRetryable,
                        last: Some(detail(observation)),
                        attempts: vec![record],
                        reported: None,
                        next_chance_in: None,
                    })
                }
            };
            items[i] = Some(settled);
        }
        pending = again;
        if pending.is_empty() {
            break;
        }
    }
    let items = items.into_iter().map(|item| item.unwrap_or(ItemOutcome::Unanswered)).collect();
    Ok(BatchOutcome { items, batch_failure })
}

#[cfg(test)]
mod tests;
