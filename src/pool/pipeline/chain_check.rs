//! An endpoint's chain id, checked before its first request and at each
//! re-check, in as few round trips as the request allows: a known read
//! rides in one JSON-RPC batch behind the check (`[eth_chainId, call]`,
//! one round trip to a fresh endpoint, as ethers does); an `eth_chainId`
//! call is answered by the check itself; anything else (a send, whose
//! bytes must never reach a node of another chain; an unknown method; a
//! caller's batch or operation) and any endpoint known to refuse batches
//! is checked first and asked after.
//!
//! ```text
//!   no check due ───────────────────────────────────────► the request alone
//!   the call is eth_chainId ──► the check alone; verified ► its answer is the call's
//!   a known read, the endpoint not known to refuse batches:
//!     [eth_chainId, call] as one attempt
//!       both items back, the chain verified ─────────────► the call's item is the answer
//!       both items back, another chain ──────────────────► OtherChain (answer dropped)
//!       no answer, 429, 5xx, 401/403, or the check's item
//!       rate-limited or refused ─────────────────────────► ChainCheckFailed
//!       a 2xx body that is no JSON (a gateway's page) ──► check alone in this
//!         attempt; a lone check that is read ─► the node refuses batches (remembered)
//!       the node refused the batch (400/404/405/413/415/422, or
//!       JSON that is no batch reply: one error object, one answer,
//!       no check item) ──────────────► remembered for the endpoint;
//!                                        check, then ask, in this attempt
//!   otherwise: the check alone, then (verified) the request
//! ```
//! The batch costs what the two requests cost (the reservation already
//! counts the check). A refusal is remembered for the router's life: a
//! node that refuses batches keeps refusing them, and each refusal would
//! cost a round trip.

use std::future::Future;
use std::time::Duration;

use super::context::RequestContext;
use super::permit::Target;
use super::Pipeline;
use crate::policy::classify::rules::not_a_chain_id;
use crate::policy::classify::{Observation, Reply};
use crate::policy::{ErrorClass, Verdict};
use crate::pool::events::PipelineEvent;
use crate::pool::router::RouterEvent;
use crate::runtime::{AttemptTarget, Payload, Purpose, Runtime};

/// One attempt on a reserved endpoint, its chain id checked first when the
/// endpoint needs it.
pub(super) enum AttemptOutcome<P> {
    /// The request ran (its observation, to classify with the call's method).
    Answered(Observation<P>),
    /// The chain check failed: its observation and verdict stand for the attempt.
    ChainCheckFailed(Observation<P>, Verdict),
    /// The endpoint serves another chain: disabled, nothing to report.
    OtherChain,
}

/// What the reply to `[eth_chainId, call]` says.
pub(super) enum Batched<P> {
    /// Both items: the check's observation and the call's.
    Items(Observation<P>, Observation<P>),
    /// The exchange failed as a whole (this observation, this verdict).
    Failed(Observation<P>, Verdict),
    /// The node does not take batches.
    Refused,
    /// The batch got a body that is no JSON (a gateway's error page): the
    /// node may refuse batches, or be unwell. A lone check tells which.
    Unreadable,
}

/// Statuses with which a node refuses a batch it cannot read (bad request,
/// not found, method not allowed, too large, unsupported media type,
/// unprocessable): a single request may still pass.
fn refuses_batch(status: u16) -> bool {
    matches!(status, 400 | 404 | 405 | 413 | 415 | 422)
}

/// Whether a failed check says nothing of batches: the node (or its key)
/// is unwell or busy, and a single check now would fail as well.
fn unwell(verdict: &Verdict) -> bool {
    matches!(verdict.class, ErrorClass::RateLimited | ErrorClass::Unauthorized)
}

impl Pipeline {
    /// The attempt on `r`: its chain check first if due (with the request
    /// in one batch where the module doc allows), then the request.
    pub(super) async fn attempt_checking_chain<R, P, F, Fut>(
        &self,
        cx: &RequestContext<'_, R, F>,
        r: Target,
        timeout: Duration,
    ) -> AttemptOutcome<P>
    where
        R: Runtime,
        P: Payload,
        F: Fn(AttemptTarget) -> Fut,
        Fut: Future<Output = Observation<P>>,
    {
        let (runtime, attempt) = (cx.runtime, cx.attempt);
        if r.check_chain {
            let lone_check = cx.call.method == "eth_chainId";
            let batch = !lone_check && cx.info.known_read && !self.router.borrow().refuses_batches(r.endpoint);
            let mut unreadable = false;
            if batch {
                let target = AttemptTarget { endpoint: r.endpoint, timeout, purpose: Purpose::CheckedRequest };
                match self.split_checked(cx, attempt(target).await) {
                    Batched::Items(check, call) => {
                        return match self.verify_chain(cx, r.endpoint, check) {
                            AttemptOutcome::Answered(_) => AttemptOutcome::Answered(call),
                            failed => failed,
                        }
                    }
                    Batched::Failed(obs, verdict) => return AttemptOutcome::ChainCheckFailed(obs, verdict),
                    Batched::Refused => self.router.borrow_mut().note_batches_refused(r.endpoint),
                    Batched::Unreadable => unreadable = true,
                }
            }
            let remaining = timeout.min(cx.deadline.saturating_since(runtime.now()));
            let target = AttemptTarget { endpoint: r.endpoint, timeout: remaining, purpose: Purpose::ChainId };
            match self.verify_chain(cx, r.endpoint, attempt(target).await) {
                AttemptOutcome::Answered(_) if !lone_check => {
                    if unreadable {
                        // The lone check was read where the batch was not: it is the batches.
                        self.router.borrow_mut().note_batches_refused(r.endpoint);
                    }
                }
                verified_or_failed => return verified_or_failed,
            }
        }
        let timeout = timeout.min(cx.deadline.saturating_since(runtime.now()));
        AttemptOutcome::Answered(
            attempt(AttemptTarget { endpoint: r.endpoint, timeout, purpose: Purpose::Request }).await,
        )
    }

    /// Reads the chain id a check answered: `Answered` with the check's
    /// observation when verified (the requests that waited for it go now),
    /// else the attempt's outcome.
    fn verify_chain<R: Runtime, P: Payload, F>(
        &self,
        cx: &RequestContext<'_, R, F>,
        endpoint: usize,
        obs: Observation<P>,
    ) -> AttemptOutcome<P> {
        let verdict = self.classifier.classify("eth_chainId", &obs, cx.runtime.unix_time());
        let id = match (&obs, verdict.class) {
            (Observation::Http { reply: Reply::Result(p), .. }, ErrorClass::Success) => p.quantity(),
            _ => None,
        };
        let Some(id) = id else {
            let verdict = if verdict.class == ErrorClass::Success { not_a_chain_id() } else { verdict };
            return AttemptOutcome::ChainCheckFailed(obs, verdict);
        };
        let mismatch = self.router.borrow_mut().chain_checked(endpoint, id, cx.runtime.now());
        if let Some(RouterEvent::ChainMismatch { endpoint, expected, got }) = mismatch {
            (cx.emit)(PipelineEvent::ChainMismatch { endpoint, expected, got });
            return AttemptOutcome::OtherChain;
        }
        self.wake_waiters(true);
        AttemptOutcome::Answered(obs)
    }

    /// Takes the reply to `[eth_chainId, call]` apart (module doc).
    pub(super) fn split_checked<R: Runtime, P: Payload, F>(
        &self,
        cx: &RequestContext<'_, R, F>,
        obs: Observation<P>,
    ) -> Batched<P> {
        let Observation::Http { status, retry_after, reply } = obs else {
            let verdict = self.classifier.classify("eth_chainId", &obs, cx.runtime.unix_time());
            return Batched::Failed(obs, verdict);
        };
        let items = match &reply {
            Reply::Result(p) if (200..300).contains(&status) => p.batch_item(0).map(|check| (check, p.batch_item(1))),
            _ => None,
        };
        let Some((check, call)) = items else {
            // A JSON answer that is no batch reply is a node that reads only single requests; a
            // 2xx body that is no JSON at all (a gateway's page) may be either (a lone check tells).
            let json = !matches!(reply, Reply::NotJson | Reply::TooLarge | Reply::InexactNumber);
            let ok = (200..300).contains(&status);
            let obs = Observation::Http { status, retry_after, reply };
            let verdict = self.classifier.classify("eth_chainId", &obs, cx.runtime.unix_time());
            return if ((ok && json) || refuses_batch(status)) && !unwell(&verdict) {
                Batched::Refused
            } else if ok && !json {
                Batched::Unreadable
            } else {
                Batched::Failed(obs, verdict)
            };
        };
        let check = Observation::Http { status, retry_after: retry_after.clone(), reply: check };
        if let Observation::Http { reply: Reply::Error(_), .. } = &check {
            // The check's own error: busy or refused says nothing of batches;
            // anything else may be a node that mangles them.
            let verdict = self.classifier.classify("eth_chainId", &check, cx.runtime.unix_time());
            return if unwell(&verdict) { Batched::Failed(check, verdict) } else { Batched::Refused };
        }
        let call = Observation::Http { status, retry_after, reply: call.unwrap_or(Reply::Malformed) };
        Batched::Items(check, call)
    }
}
