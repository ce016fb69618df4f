//! Plain JS objects describing errors and events. The JS wrapper turns
//! error descriptors into branded `Error` subclasses; keeping them plain
//! here keeps the wasm surface small and free of JS class plumbing.
//!
//! Every string that could carry a URL goes through the redactor first.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::contract::{event_type, kind};
use crate::config::ConfigError;
use crate::error::{AttemptRecord, Failure, FailureDetail, StopReason};
use crate::policy::classify::TransportFailure;
use crate::policy::ErrorClass;
use crate::pool::PipelineEvent;
use crate::redact::EndpointUrl;
use crate::time::millis_f64;

/// EIP-1474 "resource unavailable": our own give-ups. Chosen because
/// viem and ethers do not retry it, so layers above do not multiply our
/// retries.
pub const CODE_UNAVAILABLE: i64 = -32002;
/// EIP-1474 / EIP-1193 codes that viem maps to error classes it never
/// retries (and ethers retries nothing): kept as they are on a give-up, as
/// they say more than -32002 (method not found, invalid input…).
const WRAPPERS_NEVER_RETRY: [i64; 16] = [
    -32700, -32600, -32601, -32602, -32000, -32001, -32002, -32003, -32004, -32006, 4001, 4100, 4200, 4900, 4901, 4902,
];

/// EIP-1193 "unauthorized": an endpoint refused our credentials (never
/// retried by viem; says more than -32002).
pub const CODE_UNAUTHORIZED: i64 = 4100;

/// EIP-1193 "chain disconnected": the endpoints serve another chain.
pub const CODE_CHAIN_DISCONNECTED: f64 = 4901.0;

/// EIP-1474 "method not found": no endpoint serves the request.
pub const CODE_METHOD_NOT_FOUND: i64 = -32601;
/// EIP-1474 "invalid params".
pub const CODE_INVALID_PARAMS: i64 = -32602;
/// EIP-1193 "disconnected": the relayer was closed.
pub const CODE_DISCONNECTED: i64 = 4900;

/// Builds a plain object key by key.
pub struct Obj(Object);

impl Obj {
    /// An empty object.
    pub fn new() -> Self {
        Obj(Object::new())
    }

    /// Sets `key` (ignoring the impossible failure on a fresh object).
    pub fn set(self, key: &str, value: impl Into<JsValue>) -> Self {
        let _ = Reflect::set(&self.0, &JsValue::from_str(key), &value.into());
        self
    }

    /// Sets `key` when `value` is present.
    pub fn maybe(self, key: &str, value: Option<impl Into<JsValue>>) -> Self {
        match value {
            Some(v) => self.set(key, v),
            None => self,
        }
    }

    /// The finished object.
    pub fn build(self) -> JsValue {
        self.0.into()
    }
}

/// Labels and secrets of every endpoint, for naming and scrubbing.
pub struct Redactor {
    endpoints: Vec<EndpointUrl>,
}

impl Redactor {
    /// A redactor over the relayer's endpoints.
    pub fn new(endpoints: Vec<EndpointUrl>) -> Self {
        Redactor { endpoints }
    }

    /// The safe label of endpoint `i`.
    pub fn label(&self, i: usize) -> String {
        self.endpoints.get(i).map_or_else(|| format!("endpoint #{i}"), |e| e.label().to_string())
    }

    /// Removes every endpoint's secrets from `text`.
    pub fn scrub(&self, text: &str) -> String {
        self.endpoints.iter().fold(text.to_string(), |acc, e| e.scrub(&acc))
    }

    /// A node's `error.data` with every endpoint secret removed. Data that
    /// contains none (revert bytes, the usual case) is returned as is; data
    /// that echoes a key is rebuilt from its scrubbed JSON.
    pub fn scrub_value(&self, value: &JsValue) -> JsValue {
        if let Some(text) = value.as_string() {
            return JsValue::from_str(&self.scrub(&text));
        }
        if !value.is_object() {
            return value.clone();
        }
        let Some(json) = js_sys::JSON::stringify(value).ok().and_then(|s| s.as_string()) else {
            return JsValue::UNDEFINED; // not serialisable: dropped rather than risk a leak
        };
        let scrubbed = self.scrub(&json);
        if scrubbed == json {
            return value.clone();
        }
        js_sys::JSON::parse(&scrubbed).unwrap_or(JsValue::UNDEFINED)
    }

    /// All labels, in order.
    pub fn labels(&self) -> Array {
        self.endpoints.iter().map(|e| JsValue::from_str(e.label())).collect()
    }
}

/// A configuration error descriptor.
pub fn config_error(err: &ConfigError) -> JsValue {
    Obj::new()
        .set("kind", kind::CONFIG)
        .set("code", CODE_INVALID_PARAMS as f64)
        .set("field", err.field())
        .set("message", err.to_string())
        .build()
}

/// A descriptor for a failure of the relayer's own making.
pub fn simple_error(kind: &str, code: i64, message: &str) -> JsValue {
    Obj::new().set("kind", kind).set("code", code as f64).set("message", message).build()
}

/// A deadline stop in words: one before the deadline says it stopped
/// early (not "at once": it may have waited first, through a cooldown) and
/// why (the next chance, a backoff or an endpoint coming free, is past the
/// deadline), rather than claiming a deadline that had not passed yet.
/// (How long is the error's `nextChanceMs`: the words stay the same for
/// every such stop, so one give-up reads like another.)
fn deadline_words(attempts: usize, next_chance_in: Option<std::time::Duration>) -> String {
    match next_chance_in {
        // Not "rather than wait it out": a request may have waited most of its deadline for
        // quota first (a new user read that as never having waited).
        // The same words for the same stop (callers compare messages; how far is `nextChanceMs`).
        Some(_) => format!(
            "no attempt can start before its deadline: the next chance (a retry's backoff, an endpoint's \
             quota, breaker or slot coming free) is past it (`nextChanceMs` says how far); stopped before \
             the deadline after {attempts} attempt(s)"
        ),
        None => format!("deadline passed after {attempts} attempt(s)"),
    }
}

fn transport_words(t: &TransportFailure) -> (&'static str, String) {
    match t {
        TransportFailure::Timeout => ("timeout", "request timed out".into()),
        TransportFailure::ConnectionRefused => ("refused", "connection refused".into()),
        TransportFailure::ConnectionReset => ("reset", "connection reset".into()),
        TransportFailure::Dns => ("dns", "host name did not resolve".into()),
        TransportFailure::Aborted => ("aborted", "request aborted".into()),
        TransportFailure::Network(m) => ("network", format!("network error: {m}")),
    }
}

fn history(records: &[AttemptRecord], redactor: &Redactor) -> Array {
    records
        .iter()
        .map(|r| {
            Obj::new()
                .set("endpoint", redactor.label(r.endpoint))
                .set("endpointIndex", r.endpoint as f64)
                .set("class", r.verdict.class.as_str())
                .set("rule", r.verdict.rule.to_string())
                .set("startedAfterMs", millis_f64(r.started_after))
                .set("elapsedMs", millis_f64(r.elapsed))
                .build()
        })
        .collect()
}

/// The descriptor of a failed logical request. When attempts ran out or
/// the failure was not retryable, the last upstream failure is reported as
/// itself: a node's error the relayer did not retry keeps its own code; one
/// it retried and gave up on gets -32002 (the node's code in `rpcCode`)
/// unless its code is one no wrapper retries.
/// The relayer's own stops (deadline, budget, rate limit) get their own
/// kind and -32002, with the upstream failure kept under `cause`.
pub fn failure(f: &Failure<JsValue>, redactor: &Redactor, attempts_allowed: u32) -> JsValue {
    let endpoint = f.last_endpoint();
    let label = endpoint.map(|e| redactor.label(e));
    let verdict = f.last_verdict();
    let where_ = label.clone().map(|l| format!(" from {l}")).unwrap_or_default();
    let n = f.attempts.len();
    let upstream = f.last.as_ref().map(|last| {
        let (kind, code, message, obj) = match last {
            FailureDetail::Rpc(e, status) => {
                let message = redactor.scrub(&e.message);
                let obj = Obj::new()
                    .maybe("data", e.data.as_ref().map(|d| redactor.scrub_value(d)))
                    .maybe("status", status.map(f64::from))
                    .set("rpcCode", e.code.map_or(JsValue::NULL, |c| (c as f64).into()));
                (kind::RPC, e.code.unwrap_or(-32603), message, obj)
            }
            FailureDetail::Http { status, body } => {
                // An error status says it all; the body's shape only matters on a 2xx.
                let message = match *body {
                    _ if (300..400).contains(status) => format!(
                        "HTTP {status}{where_}: a redirect the relayer does not follow (it follows 307 and 308, \
                         never a POST turned into a GET, never https down to http); configure the URL it points to"
                    ),
                    _ if *status >= 300 => format!("HTTP {status}{where_}"),
                    "result" => format!("HTTP {status}{where_}"),
                    "inexactNumber" => format!(
                        "HTTP {status}{where_}: the reply holds a number JavaScript cannot represent exactly \
                         (beyond 2^53 or out of range); refused rather than rounded"
                    ),
                    _ => format!("HTTP {status}{where_} ({body} body)"),
                };
                (kind::HTTP, CODE_UNAVAILABLE, message, Obj::new().set("status", *status as f64).set("body", *body))
            }
            FailureDetail::Transport(t) => {
                let (reason, words) = transport_words(t);
                let message = format!("{}{where_}", redactor.scrub(&words));
                (kind::TRANSPORT, CODE_UNAVAILABLE, message, Obj::new().set("transport", reason))
            }
        };
        match verdict.map(|v| v.class) {
            Some(ErrorClass::OutcomeUnknown) => (kind::OUTCOME_UNKNOWN, code, message, obj),
            Some(ErrorClass::Unauthorized) => {
                let message = format!("{message}: the endpoint refused the credentials (check the API key)");
                (kind::AUTH, CODE_UNAUTHORIZED, message, obj)
            }
            _ => (kind, code, message, obj),
        }
    });
    let own = match f.reason {
        StopReason::Deadline => Some((kind::DEADLINE, CODE_UNAVAILABLE, deadline_words(n, f.next_chance_in))),
        StopReason::Budget => {
            Some((kind::BUDGET, CODE_UNAVAILABLE, format!("retry budget exhausted after {n} attempt(s)")))
        }
        StopReason::RateLimited => {
            // What happened, then what to do (a new user found the old words hard to read and
            // with no next step).
            let words = "rate limited: no endpoint could take this request in time (its key is cooling down after a 429, or the requests ahead of it need the plan's compute units for more than half the time left, so it was turned away now rather than at its deadline); send fewer requests at once, give it a longer deadlineMs, or raise quota.<group>.cuPerSecond if your plan allows more";
            Some((kind::RATE_LIMITED, CODE_UNAVAILABLE, words.to_string()))
        }
        StopReason::Overload => Some((
            kind::OVERLOAD,
            CODE_UNAVAILABLE,
            "overloaded: too many requests are already waiting for an endpoint".to_string(),
        )),
        StopReason::NoEndpoint => Some((
            kind::NO_ENDPOINT,
            CODE_METHOD_NOT_FOUND,
            "no endpoint can serve this request (method not allowed, or every endpoint is on another chain)"
                .to_string(),
        )),
        StopReason::Closed => Some((kind::CLOSED, CODE_DISCONNECTED, "the relayer is closed".to_string())),
        // Every attempt spent and the last one refused for the key's rate (`Failure::rate_limited`):
        // a rate-limit give-up like the others (`isRateLimitedError`), the node's 429 as its cause.
        StopReason::AttemptsExhausted if f.rate_limited() => Some((
            kind::RATE_LIMITED,
            CODE_UNAVAILABLE,
            format!("rate limited: {n} attempt(s) made, the last refused for the key's rate"),
        )),
        StopReason::NotRetryable | StopReason::AttemptsExhausted => None,
    };
    let base = |kind: &str, code: i64, message: String, obj: Obj| {
        obj.set("kind", kind)
            .set("code", code as f64)
            .set("message", message)
            .set("reason", f.reason.as_str())
            .set("attempts", n as f64)
            .set("attemptsAllowed", attempts_allowed as f64)
            .set("history", history(&f.attempts, redactor))
            .maybe("endpoint", label.clone())
            .maybe("endpointIndex", endpoint.map(|e| e as f64))
            .maybe("class", verdict.map(|v| v.class.as_str()))
            .maybe("rule", verdict.map(|v| v.rule.to_string()))
            .maybe("retryAfterMs", verdict.and_then(|v| v.retry_after).map(millis_f64))
    };
    match (own, upstream) {
        (Some((kind, code, message)), cause) => {
            // A give-up of its own says what the upstream's last failure was: "retry budget
            // exhausted after 4 attempt(s)" alone hid a refused connection in `cause` (a new
            // user's trial read the history to find it).
            let message = match (&cause, f.reason) {
                (Some((_, _, last, _)), StopReason::Deadline | StopReason::Budget) => {
                    format!("{message}; the last: {last}")
                }
                _ => message,
            };
            let cause = cause.map(|(k, c, m, o)| base(k, c, m, o).build());
            base(kind, code, message, Obj::new())
                .maybe("cause", cause)
                .maybe("nextChanceMs", f.next_chance_in.map(millis_f64))
                .build()
        }
        // A give-up after the relayer's own retries must be final: a node code
        // a wrapper would retry again (viem's transports retry -32603, -32005,
        // 429, -32007 and codes they do not know) becomes -32002; the node's
        // code stays in `rpcCode`, its message and data as they were.
        // The same for an answer no rule knows, once the relayer settled it (two
        // endpoints, or remembered): viem maps unknown codes to -1 and retries.
        (None, Some((kind, code, message, obj)))
            if (f.reason == StopReason::AttemptsExhausted || verdict.is_some_and(|v| v.once_elsewhere))
                && !WRAPPERS_NEVER_RETRY.contains(&code) =>
        {
            base(kind, CODE_UNAVAILABLE, message, obj).build()
        }
        (None, Some((kind, code, message, obj))) => base(kind, code, message, obj).build(),
        (None, None) => base(kind::TRANSPORT, CODE_UNAVAILABLE, "no attempt could be made".into(), Obj::new()).build(),
    }
}

/// An event object for the JS `on(...)` listeners.
pub fn event(e: &PipelineEvent, method: &str, redactor: &Redactor) -> JsValue {
    match e {
        PipelineEvent::Retry { attempt, delay, from, class, rule } => Obj::new()
            .set("type", event_type::RETRY)
            .set("method", method)
            .set("attempt", *attempt as f64)
            .set("delayMs", millis_f64(*delay))
            .set("from", redactor.label(*from))
            .set("class", *class)
            .set("rule", rule.as_str())
            .build(),
        PipelineEvent::Failover { from, to } => Obj::new()
            .set("type", event_type::FAILOVER)
            .set("method", method)
            .set("from", redactor.label(*from))
            .set("to", redactor.label(*to))
            .build(),
        PipelineEvent::Hedge { from, to, after } => Obj::new()
            .set("type", event_type::HEDGE)
            .set("method", method)
            .set("from", redactor.label(*from))
            .set("to", redactor.label(*to))
            .set("afterMs", millis_f64(*after))
            .build(),
        PipelineEvent::RateLimited { endpoint, group, cooldown, long_horizon, .. } => Obj::new()
            .set("type", event_type::RATE_LIMITED)
            .set("method", method)
            .set("endpoint", redactor.label(*endpoint))
            .maybe("quotaGroup", group.clone())
            .set("cooldownMs", millis_f64(*cooldown))
            .set("longHorizon", *long_horizon)
            .build(),
        PipelineEvent::Breaker { endpoint, from, to } => Obj::new()
            .set("type", event_type::BREAKER)
            .set("endpoint", redactor.label(*endpoint))
            .set("from", from.as_str())
            .set("to", to.as_str())
            .build(),
        PipelineEvent::ChainMismatch { endpoint, expected, got } => Obj::new()
            .set("type", event_type::CHAIN_MISMATCH)
            .set("endpoint", redactor.label(*endpoint))
            .set("expected", *expected as f64)
            .set("got", *got as f64)
            .build(),
        PipelineEvent::Overload { waiting } => {
            Obj::new().set("type", event_type::OVERLOAD).set("method", method).set("waiting", *waiting as f64).build()
        }
        // Never reaches a listener: `Core::emit` passes it to the realm's news sink.
        PipelineEvent::News(_) | PipelineEvent::LeaseAsk { .. } => JsValue::UNDEFINED,
    }
}
