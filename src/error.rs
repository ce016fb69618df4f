//! How a logical request ends when it does not succeed.
//!
//! The pipeline never invents an error when upstreams gave a real one: a
//! revert, or the last failure after the attempts ran out, is reported as
//! it came (with the node's own code). Only when the relayer itself stops
//! for a reason of its own (deadline, retry budget, caller abort) does the
//! [`StopReason`] say so, keeping the last upstream failure as the cause.

use std::time::Duration;

use crate::policy::classify::{RpcErrorInfo, TransportFailure, Verdict};
use crate::policy::ErrorClass;

/// Why the pipeline stopped trying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The last outcome must not be retried (revert, bad params, a send
    /// rule, or a capability gap no other endpoint can fill).
    NotRetryable,
    /// Every allowed attempt was used.
    AttemptsExhausted,
    /// The request's deadline would pass before the next attempt could finish.
    Deadline,
    /// The shared retry budget had no token left for a retry.
    Budget,
    /// Every endpoint is rate-limited beyond the deadline.
    RateLimited,
    /// Too many requests are already waiting for an endpoint.
    Overload,
    /// No endpoint can serve this request (method not allowed anywhere,
    /// every endpoint on another chain).
    NoEndpoint,
    /// The relayer was closed.
    Closed,
}

impl StopReason {
    /// JS spelling, used as the error `kind` for stops of our own.
    pub const fn as_str(self) -> &'static str {
        match self {
            StopReason::NotRetryable => "notRetryable",
            StopReason::AttemptsExhausted => "attemptsExhausted",
            StopReason::Deadline => "deadline",
            StopReason::Budget => "budget",
            StopReason::RateLimited => "rateLimited",
            StopReason::Overload => "overload",
            StopReason::NoEndpoint => "noEndpoint",
            StopReason::Closed => "closed",
        }
    }
}

/// What the last failed attempt showed, payloads kept untouched.
#[derive(Clone, Debug)]
pub enum FailureDetail<P> {
    /// A JSON-RPC error object from the node, and the HTTP status it came
    /// with when that was an error status (a 401 with a JSON-RPC body: the
    /// caller's error still says 401).
    Rpc(RpcErrorInfo<P>, Option<u16>),
    /// An HTTP status without a usable JSON-RPC error.
    Http {
        /// Status code.
        status: u16,
        /// What was wrong with the body, if anything (`notJson`, `wrongId`…).
        body: &'static str,
    },
    /// No response at all.
    Transport(TransportFailure),
}

/// One attempt, as recorded in the error history and in events.
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptRecord {
    /// Endpoint index.
    pub endpoint: usize,
    /// Classification of the outcome.
    pub verdict: Verdict,
    /// When it started, relative to the request's start.
    pub started_after: Duration,
    /// How long it took.
    pub elapsed: Duration,
}

/// The end of an unsuccessful logical request.
#[derive(Clone, Debug)]
pub struct Failure<P> {
    /// Why the pipeline stopped.
    pub reason: StopReason,
    /// The upstream failure reported: the last one, except that an answer
    /// from a node (a JSON-RPC error) is never replaced by a later failure
    /// to reach another node — "method not found" says more than
    /// "connection refused" from the endpoint tried after it.
    pub last: Option<FailureDetail<P>>,
    /// Every attempt, in order.
    pub attempts: Vec<AttemptRecord>,
    /// Index in `attempts` of the attempt `last` comes from (`None`: the last one).
    pub reported: Option<usize>,
    /// For a [`StopReason::Deadline`] stop before the deadline: how soon
    /// an endpoint could next have taken the request (every breaker open,
    /// resting, or full), which was later than the deadline.
    pub next_chance_in: Option<Duration>,
}

impl<P> Failure<P> {
    fn reported_attempt(&self) -> Option<&AttemptRecord> {
        match self.reported {
            Some(i) => self.attempts.get(i),
            None => self.attempts.last(),
        }
    }

    /// The endpoint of the reported attempt.
    pub fn last_endpoint(&self) -> Option<usize> {
        self.reported_attempt().map(|a| a.endpoint)
    }

    /// The verdict of the reported attempt.
    pub fn last_verdict(&self) -> Option<&Verdict> {
        self.reported_attempt().map(|a| &a.verdict)
    }

    /// A give-up for the key's rate: every endpoint rate limited past the
    /// deadline, or every attempt spent and the last refused for the key's
    /// rate. One kind of error to a caller (`RateLimitedError` in JS): a
    /// new user's reads on an over-subscribed key ended as a rate-limit,
    /// HTTP or RPC error by which of the two ways they stopped, and a check
    /// for the first missed the others. The stop reason stays as it was.
    pub fn rate_limited(&self) -> bool {
        match self.reason {
            StopReason::RateLimited => true,
            StopReason::AttemptsExhausted => self.last_verdict().is_some_and(|v| v.class == ErrorClass::RateLimited),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::time::Duration;

    use super::*;

    fn ended(reason: StopReason, classes: &[ErrorClass]) -> Failure<()> {
        let attempts = classes
            .iter()
            .map(|&class| AttemptRecord {
                endpoint: 0,
                verdict: Verdict {
                    class,
                    rule: Cow::Borrowed("test"),
                    health_failure: false,
                    retry_after: None,
                    long_horizon: false,
                    once_elsewhere: false,
                    undelivered: false,
                },
                started_after: Duration::ZERO,
                elapsed: Duration::ZERO,
            })
            .collect();
        Failure { reason, last: None, attempts, reported: None, next_chance_in: None }
    }

    #[test]
    fn attempts_spent_on_429s_are_a_rate_limit_give_up_like_a_cooldown_past_the_deadline() {
        use ErrorClass::{RateLimited, Transient};
        assert!(ended(StopReason::RateLimited, &[]).rate_limited(), "cooled down past the deadline");
        assert!(ended(StopReason::AttemptsExhausted, &[Transient, RateLimited]).rate_limited(), "the last was a 429");
        assert!(!ended(StopReason::AttemptsExhausted, &[RateLimited, Transient]).rate_limited(), "the last was not");
        assert!(!ended(StopReason::Deadline, &[RateLimited]).rate_limited(), "its own stop, with a 429 as cause");
        assert!(!ended(StopReason::NotRetryable, &[]).rate_limited());
    }
}
