//! One request's attempts so far: their records, the endpoints tried, and
//! the most informative failure to report if it ends without an answer.

use super::context::RequestContext;
use super::permit::Permit;
use super::unknown::Answer;
use super::Pipeline;
use crate::error::{AttemptRecord, Failure, FailureDetail, StopReason};
use crate::policy::classify::{Observation, Reply, TransportFailure};
use crate::policy::silence::silence_is_evidence;
use crate::policy::{ErrorClass, Verdict};
use crate::rpc::methods::MethodClass;
use crate::runtime::Runtime;
use crate::time::Instant;
use std::time::Duration;

/// Per-request bookkeeping.
pub(super) struct Attempts<P> {
    pub(super) records: Vec<AttemptRecord>,
    pub(super) tried: Vec<bool>,
    pub(super) last: Option<FailureDetail<P>>,
    pub(super) reported: Option<usize>,
    /// The first unrecognised answer of this request, and from where.
    pub(super) unknown: Option<(usize, Answer)>,
}

impl<P> Attempts<P> {
    pub(super) fn stop(self, reason: StopReason) -> Failure<P> {
        Failure { reason, last: self.last, attempts: self.records, reported: self.reported, next_chance_in: None }
    }

    /// Keeps the most informative failure: a node's JSON-RPC answer is not
    /// replaced by a later transport or HTTP failure elsewhere.
    pub(super) fn failed(&mut self, detail: FailureDetail<P>) {
        let answered = matches!(self.last, Some(FailureDetail::Rpc(..)));
        if answered && !matches!(detail, FailureDetail::Rpc(..)) {
            return;
        }
        self.last = Some(detail);
        self.reported = Some(self.records.len().saturating_sub(1));
    }
}

impl Pipeline {
    /// The bookkeeping of one finished attempt: its reservation given back
    /// with the verdict, its record kept, its endpoint marked as tried.
    pub(super) fn settle<R: Runtime, F, P>(
        &self,
        cx: &RequestContext<'_, R, F>,
        ended: Instant,
        reservation: Permit<'_>,
        began: Instant,
        verdict: &Verdict,
        state: &mut Attempts<P>,
    ) {
        let elapsed = ended.saturating_since(began);
        let endpoint = reservation.endpoint();
        reservation.complete(cx, ended, verdict, elapsed);
        state.records.push(AttemptRecord {
            endpoint,
            verdict: verdict.clone(),
            started_after: began.saturating_since(cx.start),
            elapsed,
        });
        state.tried[endpoint] = true;
    }
}

impl Pipeline {
    /// A timeout after `silent_for` on `endpoint` counts against its health
    /// only if the node had time to answer (`policy::silence`): one cut to
    /// milliseconds by the request's deadline stays a failure of the
    /// request (it may fail over) but leaves the breaker alone.
    pub(super) fn weigh_silence<P>(
        &self,
        verdict: &mut Verdict,
        endpoint: usize,
        class: MethodClass,
        observation: &Observation<P>,
        silent_for: Duration,
    ) {
        if verdict.health_failure && matches!(observation, Observation::Transport(TransportFailure::Timeout)) {
            let proof = self.router.borrow().proof_time(endpoint, class);
            if !silence_is_evidence(silent_for, proof) {
                verdict.health_failure = false;
            }
        }
    }
}

/// The failure detail an observation leaves behind.
pub fn detail<P>(observation: Observation<P>) -> FailureDetail<P> {
    match observation {
        Observation::Transport(t) => FailureDetail::Transport(t),
        Observation::Answered(_) => FailureDetail::Http { status: 200, body: "result" },
        Observation::Http { status, reply, .. } => match reply {
            Reply::Error(e) => FailureDetail::Rpc(e, (status >= 400).then_some(status)),
            Reply::Result(_) => FailureDetail::Http { status, body: "result" },
            Reply::NotJson => FailureDetail::Http { status, body: "notJson" },
            Reply::WrongId => FailureDetail::Http { status, body: "wrongId" },
            Reply::Malformed => FailureDetail::Http { status, body: "malformed" },
            Reply::TooLarge => FailureDetail::Http { status, body: "tooLarge" },
            Reply::InexactNumber => FailureDetail::Http { status, body: "inexactNumber" },
        },
    }
}

/// An outcome that teaches the router nothing (an abandoned hedge's
/// record: its reservation is completed with it, not just released).
pub(super) fn neutral() -> Verdict {
    Verdict {
        class: ErrorClass::Capability,
        rule: "released".into(),
        health_failure: false,
        retry_after: None,
        long_horizon: false,
        once_elsewhere: false,
        undelivered: false,
    }
}
