//! Exactly one attempt on one named endpoint, for a provider bound to that
//! endpoint (`relayer.endpoint(i)`): its caller runs its own retries, so
//! nothing here retries, fails over or waits. The attempt still gets the
//! endpoint's timeout and the classification every request gets, and a
//! submission the node already has is answered with its hash.

use std::future::Future;
use std::time::Duration;

use super::pipeline::{detail, Pipeline};
use crate::error::{AttemptRecord, Failure, StopReason};
use crate::policy::classify::{Observation, Reply};
use crate::policy::ErrorClass;
use crate::rpc::raw_tx::hash_of_raw_hex;
use crate::runtime::{AttemptTarget, Payload, Purpose, Runtime};

/// Why one attempt did not answer: the failure as every request reports
/// it, and the observation itself (a bound provider's caller reads it to
/// decide its own retry).
pub struct SingleFailure<P> {
    /// One attempt, not retryable here.
    pub failure: Failure<P>,
    /// What the attempt saw.
    pub observation: Observation<P>,
}

/// Runs `attempt` once against `endpoint` (which the caller checked
/// exists). `sends` is the signed transaction a submission broadcasts.
pub async fn attempt_once<R, P, F, Fut>(
    pipeline: &Pipeline,
    runtime: &R,
    endpoint: usize,
    method: &str,
    sends: Option<&str>,
    attempt: F,
) -> Result<P, SingleFailure<P>>
where
    R: Runtime,
    P: Payload + Clone,
    F: FnOnce(AttemptTarget) -> Fut,
    Fut: Future<Output = Observation<P>>,
{
    let config = pipeline.config();
    let timeout = config.endpoints.get(endpoint).and_then(|spec| spec.timeout).unwrap_or(config.attempt_timeout);
    let observation = attempt(AttemptTarget { endpoint, timeout, purpose: Purpose::Request }).await;
    let verdict = pipeline.classify(method, &observation, runtime.unix_time());
    match (verdict.class, &observation) {
        (ErrorClass::Success, Observation::Http { reply: Reply::Result(value), .. } | Observation::Answered(value)) => {
            return Ok(value.clone());
        }
        (ErrorClass::AlreadyKnown, _) => {
            if let Some(hash) = sends.and_then(hash_of_raw_hex) {
                return Ok(P::from_text(format!("{hash:#x}")));
            }
        }
        _ => {}
    }
    let record = AttemptRecord { endpoint, verdict, started_after: Duration::ZERO, elapsed: Duration::ZERO };
    let failure = Failure {
        reason: StopReason::NotRetryable,
        last: Some(detail(observation.clone())),
        attempts: vec![record],
        reported: None,
        next_chance_in: None,
    };
    Err(SingleFailure { failure, observation })
}

#[cfg(test)]
mod tests;
