//! Error classification: every upstream outcome becomes one [`Verdict`].
//!
//! Codes alone are unreliable (the same -32005 means "rate limited" at
//! Infura, "too many logs" at Nethermind and "gas limit" at Besu), so a
//! verdict looks at the method, the transport outcome, the HTTP status and
//! the JSON-RPC code *and* message together. The built-in knowledge is one
//! ordered table in [`rules`]; users prepend their own rules from JS.
//!
//! Evaluation order (first match wins):
//! 1. user rules;
//! 2. transport failures (timeout, refused, reset, DNS, abort);
//! 3. HTTP 429/402 (quota) regardless of body;
//! 4. a JSON-RPC error body, through the built-in table;
//! 5. any other non-2xx status;
//! 6. malformed replies (not JSON, wrong id, neither result nor error).

use std::borrow::Cow;
use std::time::Duration;

pub mod retry_after;
pub mod rules;

use retry_after::{hint_from_message, parse_retry_after};

/// What happened on one attempt, as the transport saw it.
#[derive(Clone, Debug)]
pub enum Observation<P> {
    /// No HTTP response was obtained.
    Transport(TransportFailure),
    /// An HTTP response arrived.
    Http {
        /// HTTP status code.
        status: u16,
        /// The raw `Retry-After` header, if any.
        retry_after: Option<String>,
        /// What the body contained.
        reply: Reply<P>,
    },
    /// A value that did not come from an HTTP exchange: an operation the
    /// caller ran itself (`executeRpcWithRetry`) reported success.
    Answered(P),
}

/// Why no response arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportFailure {
    /// The per-attempt timeout fired.
    Timeout,
    /// Nothing was listening (nothing was delivered).
    ConnectionRefused,
    /// The connection broke mid-exchange (the request may have arrived).
    ConnectionReset,
    /// The host name did not resolve (nothing was delivered).
    Dns,
    /// The caller cancelled the request.
    Aborted,
    /// Any other network failure; browsers rarely say more.
    Network(String),
}

/// The body of an HTTP response, reduced to what the policies need.
#[derive(Clone, Debug)]
pub enum Reply<P> {
    /// A JSON-RPC `result`, passed through untouched.
    Result(P),
    /// A JSON-RPC `error` object.
    Error(RpcErrorInfo<P>),
    /// The body was not JSON (an HTML error page from a gateway, say).
    NotJson,
    /// JSON, but the `id` was not ours.
    WrongId,
    /// JSON, but not a JSON-RPC response (no result, no error, or both).
    Malformed,
    /// Larger than the configured limit; not read further.
    TooLarge,
    /// JSON holding a number a JS number cannot represent exactly (beyond
    /// 2^53, or out of range): refused rather than delivered rounded.
    InexactNumber,
}

/// A JSON-RPC error object.
#[derive(Clone, Debug)]
pub struct RpcErrorInfo<P> {
    /// `error.code`, when it is an integer.
    pub code: Option<i64>,
    /// `error.message` (empty when absent).
    pub message: String,
    /// `error.data`, passed through untouched.
    pub data: Option<P>,
    /// A provider backoff hint found in `data` (Infura `rate.backoff_seconds`).
    pub backoff_hint: Option<Duration>,
}

/// The class of an outcome, which decides what the pipeline does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// The attempt succeeded.
    Success,
    /// Retry, preferably elsewhere.
    Transient,
    /// The endpoint's quota is exhausted: cool it down, try another.
    RateLimited,
    /// This endpoint cannot serve this request; another might.
    Capability,
    /// The request itself is wrong (revert, bad params): never retried.
    Fatal,
    /// A send whose exact bytes the node already holds: success.
    AlreadyKnown,
    /// A send whose nonce is already used on chain.
    NonceTooLow,
    /// A replacement whose fees are not high enough.
    ReplacementUnderpriced,
    /// A send that may or may not have reached the node.
    OutcomeUnknown,
    /// The endpoint refused our credentials (HTTP 401/403, "invalid API
    /// key"): never retried there; it stays out for a long time, other
    /// endpoints take the request.
    Unauthorized,
}

impl ErrorClass {
    /// The JS spelling used in errors, events and user rules.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Success => "success",
            ErrorClass::Transient => "transient",
            ErrorClass::RateLimited => "rateLimited",
            ErrorClass::Capability => "capability",
            ErrorClass::Fatal => "fatal",
            ErrorClass::AlreadyKnown => "alreadyKnown",
            ErrorClass::NonceTooLow => "nonceTooLow",
            ErrorClass::ReplacementUnderpriced => "replacementUnderpriced",
            ErrorClass::OutcomeUnknown => "outcomeUnknown",
            ErrorClass::Unauthorized => "unauthorized",
        }
    }

    /// Whether another attempt could change the outcome (on this endpoint
    /// after a backoff, or on another one). The pipeline retries these and
    /// a hedge race goes on after them; everything else is the answer.
    pub const fn retryable(self) -> bool {
        matches!(
            self,
            ErrorClass::Transient | ErrorClass::RateLimited | ErrorClass::Capability | ErrorClass::Unauthorized
        )
    }

    /// Whether the same call, sent again as it is to whichever endpoint the
    /// router picks, could succeed: not a capability gap or a refused key,
    /// which need an endpoint of their own (a batch item re-sent in a
    /// smaller batch, say).
    pub const fn retryable_anywhere(self) -> bool {
        matches!(self, ErrorClass::Transient | ErrorClass::RateLimited)
    }

    /// Every class (for parsing, property tests and fuzzing).
    pub const ALL: [ErrorClass; 10] = [
        ErrorClass::Success,
        ErrorClass::Transient,
        ErrorClass::RateLimited,
        ErrorClass::Capability,
        ErrorClass::Fatal,
        ErrorClass::AlreadyKnown,
        ErrorClass::NonceTooLow,
        ErrorClass::ReplacementUnderpriced,
        ErrorClass::OutcomeUnknown,
        ErrorClass::Unauthorized,
    ];

    /// Parses the JS spelling.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

/// The classification of one attempt.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// What kind of outcome it was.
    pub class: ErrorClass,
    /// Which rule decided (for events and debugging).
    pub rule: Cow<'static, str>,
    /// Whether it says something bad about the endpoint's health (breakers
    /// count these; reverts, rate limits and capability gaps do not).
    pub health_failure: bool,
    /// How long the server asked us to wait, if it said.
    pub retry_after: Option<Duration>,
    /// A quota that will not come back soon (daily/monthly limit).
    pub long_horizon: bool,
    /// An answer no rule recognises from a node that otherwise answers:
    /// it may be deterministic (bad input in words we do not know), so it
    /// earns one retry, on another endpoint, and none once a second
    /// endpoint gave the same code and message.
    pub once_elsewhere: bool,
    /// Nothing reached a node (connection refused, host not resolved): a
    /// send certainly was not taken, and a failover costs no node any work.
    pub undelivered: bool,
}

impl Verdict {
    /// Whether the node itself answered: the classes only a reply can
    /// produce. A transient or capability verdict may come from the
    /// transport (a timeout, a reset) or from the pipeline (an abandoned
    /// hedge), so it does not count as hearing back.
    pub fn is_reply(&self) -> bool {
        matches!(
            self.class,
            ErrorClass::Success
                | ErrorClass::AlreadyKnown
                | ErrorClass::Fatal
                | ErrorClass::RateLimited
                | ErrorClass::Unauthorized
                | ErrorClass::NonceTooLow
                | ErrorClass::ReplacementUnderpriced
        )
    }

    fn new(class: ErrorClass, rule: impl Into<Cow<'static, str>>, health_failure: bool) -> Self {
        Verdict {
            class,
            rule: rule.into(),
            health_failure,
            retry_after: None,
            long_horizon: false,
            once_elsewhere: false,
            undelivered: false,
        }
    }
}

/// A classification rule supplied by the user. Every present field must
/// match; `message` is a case-insensitive substring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserRule {
    /// JSON-RPC error code to match.
    pub code: Option<i64>,
    /// Lower-cased substring of the error message to match.
    pub message: Option<String>,
    /// HTTP status to match.
    pub status: Option<u16>,
    /// JSON-RPC method to match.
    pub method: Option<String>,
    /// The class to assign.
    pub class: ErrorClass,
}

/// The classifier: user rules in front of the built-in table.
#[derive(Clone, Debug, Default)]
pub struct Classifier {
    user_rules: Vec<UserRule>,
}

impl Classifier {
    /// A classifier with extra rules checked before the built-in ones.
    pub fn with_rules(mut user_rules: Vec<UserRule>) -> Self {
        for rule in &mut user_rules {
            rule.message = rule.message.take().map(|m| m.to_ascii_lowercase());
        }
        Classifier { user_rules }
    }

    /// Classifies one attempt of `method`. `unix_now` is the wall clock,
    /// used only to read an HTTP-date `Retry-After`.
    pub fn classify<P>(&self, method: &str, observation: &Observation<P>, unix_now: Duration) -> Verdict {
        let mut verdict = self.decide(method, observation);
        if let Observation::Http { retry_after, reply, .. } = observation {
            let from_header = retry_after.as_deref().and_then(|v| parse_retry_after(v, unix_now));
            let from_body = match reply {
                Reply::Error(e) => e.backoff_hint.or_else(|| hint_from_message(&e.message)),
                _ => None,
            };
            verdict.retry_after = from_header.or(from_body);
        }
        verdict
    }

    fn decide<P>(&self, method: &str, observation: &Observation<P>) -> Verdict {
        if let Some(v) = self.user_verdict(method, observation) {
            return v;
        }
        let send = rules::is_send(method);
        let (status, reply) = match observation {
            Observation::Transport(failure) => return rules::transport(failure, rules::replay_safe_on_unknown(method)),
            Observation::Http { status, reply, .. } => (*status, reply),
            Observation::Answered(_) => return Verdict::new(ErrorClass::Success, "answered", false),
        };
        if matches!(status, 429 | 402 | 401 | 403) {
            // The status speaks for the key whatever the body says (Alchemy
            // answers a bad key with 401 and a -32600 JSON-RPC error).
            return rules::status(status).unwrap_or_else(|| Verdict::new(ErrorClass::RateLimited, "http.429", false));
        }
        match reply {
            Reply::Error(e) => rules::rpc_error(e.code, &e.message, send),
            Reply::Result(_) => match rules::status(status) {
                Some(v) if status >= 300 => v,
                _ => Verdict::new(ErrorClass::Success, "result", false),
            },
            other => rules::status(status).unwrap_or_else(|| match other {
                Reply::TooLarge => Verdict::new(ErrorClass::Capability, "body.too_large", false),
                // This node encodes the answer in a way JS cannot hold; another may use hex quantities.
                Reply::InexactNumber => Verdict::new(ErrorClass::Capability, "body.inexact_number", false),
                Reply::WrongId => Verdict::new(ErrorClass::Transient, "body.wrong_id", true),
                Reply::NotJson => Verdict::new(ErrorClass::Transient, "body.not_json", true),
                _ => Verdict::new(ErrorClass::Transient, "body.malformed", true),
            }),
        }
    }

    fn user_verdict<P>(&self, method: &str, observation: &Observation<P>) -> Option<Verdict> {
        let (status, error) = match observation {
            Observation::Http { status, reply: Reply::Error(e), .. } => (Some(*status), Some(e)),
            Observation::Http { status, .. } => (Some(*status), None),
            Observation::Transport(_) | Observation::Answered(_) => (None, None),
        };
        let lowered = error.map(|e| e.message.to_ascii_lowercase());
        self.user_rules.iter().enumerate().find_map(|(i, rule)| {
            let matches = rule.method.as_deref().is_none_or(|m| m == method)
                && rule.status.is_none_or(|s| Some(s) == status)
                && rule.code.is_none_or(|c| error.and_then(|e| e.code) == Some(c))
                && rule
                    .message
                    .as_deref()
                    .is_none_or(|m| lowered.as_deref().is_some_and(|l| crate::text::contains(l, m)))
                && (rule.code.is_some() || rule.message.is_some() || rule.status.is_some());
            matches.then(|| {
                let health = rule.class == ErrorClass::Transient;
                Verdict::new(rule.class, format!("user[{i}]"), health)
            })
        })
    }
}

#[cfg(test)]
mod tests;
