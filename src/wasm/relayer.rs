//! `WasmRelayer`: the class the JS `FaultTolerantRelayer` wraps.
//!
//! State lives in one `Rc<Core>`; every exported async method clones the
//! `Rc` into its future, so requests run concurrently on the JS event loop
//! while sharing the pipeline's budget and routing state.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use alloy_primitives::{hex, keccak256};
use js_sys::{Array, Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use web_sys::AbortSignal;

use super::config;
use super::descriptors::{self, Obj, Redactor, CODE_DISCONNECTED, CODE_INVALID_PARAMS};
use super::fetch::{FetchCall, FetchTransport};
use super::js_runtime::JsRuntime;
use crate::config::RelayerConfig;
use crate::policy::classify::{Observation, Reply, RpcErrorInfo, TransportFailure};
use crate::policy::Classifier;
use crate::pool::{Pipeline, PipelineEvent, SuccessValue};
use crate::runtime::{AttemptTarget, Runtime, Transport};
use crate::time::duration_from_millis_f64;

struct Core {
    pipeline: Pipeline,
    transport: FetchTransport,
    redactor: Redactor,
    listener: Option<Function>,
    closed: Cell<bool>,
    next_id: Cell<f64>,
}

/// The relayer core exposed to JS. Use the `FaultTolerantRelayer` wrapper;
/// this class is its engine.
#[wasm_bindgen]
pub struct WasmRelayer {
    core: Rc<Core>,
}

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

#[wasm_bindgen]
impl WasmRelayer {
    /// Validates `upstreams` and `options`; throws a config descriptor
    /// naming the bad field. `listener(event)` receives pipeline events.
    #[wasm_bindgen(constructor)]
    pub fn new(upstreams: JsValue, options: JsValue, listener: JsValue) -> Result<WasmRelayer, JsValue> {
        let endpoints = config::upstreams(&upstreams).map_err(|e| descriptors::config_error(&e))?;
        let (raw, rules) = config::options(&options).map_err(|e| descriptors::config_error(&e))?;
        let relayer_config = RelayerConfig::build(endpoints.clone(), raw).map_err(|e| descriptors::config_error(&e))?;
        let urls = endpoints.iter().map(|e| e.url().to_string()).collect();
        let transport = FetchTransport::new(urls, relayer_config.max_response_bytes);
        let pipeline = Pipeline::new(relayer_config, Classifier::with_rules(rules), JsRuntime.now());
        let core = Core {
            pipeline,
            transport,
            redactor: Redactor::new(endpoints),
            listener: listener.dyn_into::<Function>().ok(),
            closed: Cell::new(false),
            next_id: Cell::new(1.0),
        };
        Ok(WasmRelayer { core: Rc::new(core) })
    }

    /// One logical JSON-RPC request under every policy. Resolves to the
    /// node's `result` untouched; rejects with an error descriptor.
    /// `signal` (an `AbortSignal` or undefined) cancels it.
    pub fn request(&self, method: String, params: JsValue, signal: JsValue) -> Promise {
        let core = self.core.clone();
        let signal = signal.dyn_into::<AbortSignal>().ok();
        future_to_promise(async move { core.request(method, params, signal).await })
    }

    /// Exactly one attempt against endpoint `endpoint` (for the provider
    /// handed to `executeRpcWithRetry` operations). Rejections carry an
    /// `observation` the outer retry loop classifies.
    #[wasm_bindgen(js_name = attemptOnce)]
    pub fn attempt_once(&self, endpoint: usize, method: String, params: JsValue, signal: JsValue) -> Promise {
        let core = self.core.clone();
        let signal = signal.dyn_into::<AbortSignal>().ok();
        future_to_promise(async move { core.attempt_once(endpoint, method, params, signal).await })
    }

    /// Runs `op(endpointIndex, attempt, timeoutMs)` under the retry
    /// policies. `op` must resolve to `{ ok: true, value }` or `{ ok: false,
    /// observation, error }` (the JS wrapper guarantees it). `signal`
    /// cancels the loop.
    pub fn execute(&self, op: Function, signal: JsValue) -> Promise {
        let core = self.core.clone();
        let signal = signal.dyn_into::<AbortSignal>().ok();
        future_to_promise(async move { core.execute(op, signal).await })
    }

    /// Redacted endpoint labels, in order.
    pub fn endpoints(&self) -> Array {
        self.core.redactor.labels()
    }

    /// A small snapshot: endpoints and the retry budget balance.
    pub fn stats(&self) -> JsValue {
        let balance = self.core.pipeline.budget_balance(JsRuntime.now());
        Obj::new()
            .set("endpoints", self.core.redactor.labels())
            .set("retryBudget", balance)
            .set("closed", self.core.closed.get())
            .build()
    }

    /// Stops accepting requests; attempts in flight end at their next step.
    pub fn close(&self) {
        self.core.closed.set(true);
    }
}

impl Core {
    fn emit(&self, event: &PipelineEvent, method: &str) {
        if let Some(listener) = &self.listener {
            // A throwing listener must not break the request.
            let _ = listener.call1(&JsValue::UNDEFINED, &descriptors::event(event, method, &self.redactor));
        }
    }

    fn closed_error(&self) -> JsValue {
        descriptors::simple_error("closed", CODE_DISCONNECTED, "the relayer is closed")
    }

    fn encode(&self, method: &str, params: &JsValue, signal: Option<AbortSignal>) -> Result<FetchCall, JsValue> {
        let id = self.next_id.get();
        self.next_id.set(if id >= 9e15 { 1.0 } else { id + 1.0 });
        FetchTransport::encode(method, params, id, signal).map_err(|e| {
            let why = get(&e, "message").as_string().unwrap_or_default();
            descriptors::simple_error(
                "invalidRequest",
                CODE_INVALID_PARAMS,
                &format!("params cannot be encoded as JSON: {why}"),
            )
        })
    }

    async fn request(
        self: Rc<Self>,
        method: String,
        params: JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        if self.closed.get() {
            return Err(self.closed_error());
        }
        let call = self.encode(&method, &params, signal)?;
        let emit = |e: PipelineEvent| self.emit(&e, &method);
        let attempt = |target: AttemptTarget| {
            let (core, call) = (&self, &call);
            async move {
                if core.closed.get() {
                    return Observation::Transport(TransportFailure::Aborted);
                }
                core.transport.send(call, target).await
            }
        };
        let outcome = self.pipeline.execute(&JsRuntime, &method, attempt, &emit).await;
        match outcome {
            Ok(success) => match success.value {
                SuccessValue::Result(value) => Ok(value),
                SuccessValue::AlreadyKnown => Ok(raw_tx_hash(&params)),
            },
            Err(_) if self.closed.get() => Err(self.closed_error()),
            Err(failure) => Err(descriptors::failure(&failure, &self.redactor, self.pipeline.config().max_attempts())),
        }
    }

    async fn attempt_once(
        self: Rc<Self>,
        endpoint: usize,
        method: String,
        params: JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        if self.closed.get() {
            return Err(self.closed_error());
        }
        if endpoint >= self.pipeline.config().endpoints.len() {
            return Err(descriptors::simple_error("invalidRequest", CODE_INVALID_PARAMS, "no such endpoint"));
        }
        let call = self.encode(&method, &params, signal)?;
        let timeout = self.pipeline.config().attempt_timeout;
        let observation = self.transport.send(&call, AttemptTarget { endpoint, timeout }).await;
        let verdict = self.pipeline.classify(&method, &observation, JsRuntime.unix_time());
        if verdict.class == crate::policy::ErrorClass::Success {
            if let Observation::Http { reply: Reply::Result(v), .. } = observation {
                return Ok(v);
            }
        }
        if verdict.class == crate::policy::ErrorClass::AlreadyKnown {
            return Ok(raw_tx_hash(&params));
        }
        let plain = observation_to_js(&observation, &self.redactor);
        let failure = crate::error::Failure {
            reason: crate::error::StopReason::NotRetryable,
            last: Some(crate::pool::pipeline::detail(observation)),
            attempts: vec![crate::error::AttemptRecord {
                endpoint,
                verdict,
                started_after: std::time::Duration::ZERO,
                elapsed: std::time::Duration::ZERO,
            }],
        };
        let descriptor = descriptors::failure(&failure, &self.redactor, 1);
        let _ = Reflect::set(&descriptor, &"observation".into(), &plain);
        Err(descriptor)
    }

    async fn execute(self: Rc<Self>, op: Function, signal: Option<AbortSignal>) -> Result<JsValue, JsValue> {
        if self.closed.get() {
            return Err(self.closed_error());
        }
        let last_error = RefCell::new(JsValue::UNDEFINED);
        let success_value = RefCell::new(JsValue::UNDEFINED);
        let attempts = Cell::new(0u32);
        let emit = |e: PipelineEvent| self.emit(&e, "executeRpcWithRetry");
        let attempt = |target: AttemptTarget| {
            let (op, last_error, success_value, attempts, signal) =
                (&op, &last_error, &success_value, &attempts, &signal);
            let closed = &self.closed;
            async move {
                if closed.get() || signal.as_ref().is_some_and(|s| s.aborted()) {
                    return Observation::Transport(TransportFailure::Aborted);
                }
                let n = attempts.get();
                attempts.set(n + 1);
                let timeout_ms = crate::time::millis_f64(target.timeout);
                let promise = op.call3(
                    &JsValue::UNDEFINED,
                    &(target.endpoint as f64).into(),
                    &(n as f64).into(),
                    &timeout_ms.into(),
                );
                let settled = match promise {
                    Ok(p) => JsFuture::from(Promise::resolve(&p)).await,
                    Err(e) => Err(e),
                };
                let report = match settled {
                    Ok(report) => report,
                    Err(thrown) => {
                        *last_error.borrow_mut() = thrown;
                        return Observation::Transport(TransportFailure::Network("operation threw".into()));
                    }
                };
                if get(&report, "ok").as_bool() == Some(true) {
                    *success_value.borrow_mut() = get(&report, "value");
                    return Observation::Http {
                        status: 200,
                        retry_after: None,
                        reply: Reply::Result(JsValue::UNDEFINED),
                    };
                }
                *last_error.borrow_mut() = get(&report, "error");
                observation_from_js(&get(&report, "observation"))
            }
        };
        let outcome = self.pipeline.execute(&JsRuntime, "executeRpcWithRetry", attempt, &emit).await;
        match outcome {
            Ok(_) => Ok(success_value.into_inner()),
            Err(_) if self.closed.get() => Err(self.closed_error()),
            Err(failure) => {
                let descriptor = descriptors::failure(&failure, &self.redactor, self.pipeline.config().max_attempts());
                let _ = Reflect::set(&descriptor, &"operationError".into(), &last_error.into_inner());
                Err(descriptor)
            }
        }
    }
}

/// The hash of a raw transaction in `params[0]`, computed locally (it is
/// what the node would have returned for a first broadcast).
fn raw_tx_hash(params: &JsValue) -> JsValue {
    let raw = Reflect::get_u32(params, 0).ok().and_then(|v| v.as_string()).unwrap_or_default();
    match hex::decode(raw.trim()) {
        Ok(bytes) if !bytes.is_empty() => JsValue::from_str(&format!("{:#x}", keccak256(bytes))),
        _ => JsValue::NULL,
    }
}

/// A plain description of one observation, for the op wrapper.
fn observation_to_js(observation: &Observation<JsValue>, redactor: &Redactor) -> JsValue {
    match observation {
        Observation::Transport(t) => {
            let kind = match t {
                TransportFailure::Timeout => "timeout",
                TransportFailure::ConnectionRefused => "refused",
                TransportFailure::ConnectionReset => "reset",
                TransportFailure::Dns => "dns",
                TransportFailure::Aborted => "aborted",
                TransportFailure::Network(_) => "network",
            };
            Obj::new().set("transport", kind).build()
        }
        Observation::Http { status, retry_after, reply } => {
            let obj = Obj::new().set("status", *status as f64).maybe("retryAfter", retry_after.clone());
            match reply {
                Reply::Error(e) => obj
                    .maybe("code", e.code.map(|c| c as f64))
                    .set("message", redactor.scrub(&e.message))
                    .maybe("backoffSeconds", e.backoff_hint.map(|d| d.as_secs_f64()))
                    .build(),
                Reply::NotJson => obj.set("body", "notJson").build(),
                Reply::WrongId => obj.set("body", "wrongId").build(),
                Reply::TooLarge => obj.set("body", "tooLarge").build(),
                Reply::Malformed | Reply::Result(_) => obj.set("body", "malformed").build(),
            }
        }
    }
}

/// Rebuilds an observation from its plain description (from
/// [`observation_to_js`] or from the JS wrapper's reading of a foreign
/// error). Unknown shapes become a generic network failure.
fn observation_from_js(plain: &JsValue) -> Observation<JsValue> {
    if let Some(kind) = get(plain, "transport").as_string() {
        let failure = match kind.as_str() {
            "timeout" => TransportFailure::Timeout,
            "refused" => TransportFailure::ConnectionRefused,
            "reset" => TransportFailure::ConnectionReset,
            "dns" => TransportFailure::Dns,
            "aborted" => TransportFailure::Aborted,
            _ => TransportFailure::Network(get(plain, "message").as_string().unwrap_or_default()),
        };
        return Observation::Transport(failure);
    }
    let status = get(plain, "status").as_f64().filter(|s| (100.0..=599.0).contains(s)).map_or(200, |s| s as u16);
    let retry_after = get(plain, "retryAfter").as_string();
    let code = get(plain, "code").as_f64().filter(|c| c.fract() == 0.0 && c.abs() < 9e15).map(|c| c as i64);
    let message = get(plain, "message").as_string();
    let reply = if code.is_some() || message.is_some() {
        let backoff_hint = get(plain, "backoffSeconds")
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| duration_from_millis_f64(s * 1000.0));
        Reply::Error(RpcErrorInfo { code, message: message.unwrap_or_default(), data: None, backoff_hint })
    } else {
        match get(plain, "body").as_string().as_deref() {
            Some("notJson") => Reply::NotJson,
            Some("wrongId") => Reply::WrongId,
            Some("tooLarge") => Reply::TooLarge,
            _ => Reply::Malformed,
        }
    };
    Observation::Http { status, retry_after, reply }
}
