//! The engine behind `WasmRelayer`: one logical request through dedup →
//! cache → pipeline, single attempts for bound providers, and operations
//! retried under the same policies.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use super::contract::kind;
use super::traced::{with_cause, Traced};
use super::descriptors::{self, Redactor, CODE_DISCONNECTED, CODE_INVALID_PARAMS};
use super::fetch::{FetchCall, FetchTransport};
use super::js_runtime::JsRuntime;
use super::observation::{observation_from_js, observation_to_js};
use crate::error::{Failure, StopReason};
use crate::policy::classify::{Observation, TransportFailure};
use crate::pool::request::{Front, Read};
use crate::pool::single::{attempt_once, SingleFailure};
use crate::pool::{Call, Pipeline, PipelineEvent, SuccessValue};
use crate::rpc::methods::{block_tag, method_info, BlockTag, CachePolicy, MethodInfo};
use crate::runtime::{AttemptTarget, Purpose, Runtime, Transport};

/// Why a [`Core::call`] failed.
pub enum CallFailure {
    /// The relayer is closed.
    Closed,
    /// The params could not be encoded (the descriptor says why).
    Invalid(JsValue),
    /// The pipeline gave up; every attempt is in the history.
    Failed(Failure<JsValue>),
}

/// Shared state of one relayer.
pub struct Core {
    pub(super) pipeline: Pipeline,
    pub(super) transport: FetchTransport,
    pub(super) redactor: Redactor,
    /// The wrapper's event listener, dropped by `close()`: it closes over
    /// the JS relayer, which holds this engine, so keeping it would make a
    /// cycle through the wasm boundary that no GC can collect.
    pub(super) listener: RefCell<Option<Function>>,
    pub(super) next_id: Cell<f64>,
    /// Cache and shared in-flight reads (`pool/request.rs`).
    pub(super) front: Front<JsValue>,
}

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// The block tag a request reads at, from its method and params.
fn tag_of(info: &MethodInfo, params: &JsValue) -> BlockTag {
    let Some(index) = info.block_param else {
        return if info.cache == CachePolicy::Head { BlockTag::Latest } else { BlockTag::Absent };
    };
    let value = Reflect::get_u32(params, index as u32).unwrap_or(JsValue::UNDEFINED);
    if value.is_object() {
        return BlockTag::Pinned; // EIP-1898 { blockHash } / { blockNumber }
    }
    block_tag(value.as_string().as_deref())
}

impl Core {
    pub(super) fn emit(&self, event: &PipelineEvent, method: &str) {
        match event {
            PipelineEvent::News(news) => return super::news::tell(news),
            PipelineEvent::LeaseAsk { group, ask } => return super::store::ask(*group, ask),
            _ => {}
        }
        // Cloned out first: the listener may call `close()`.
        if let Some(listener) = self.listener() {
            // A throwing listener must not break the request.
            let _ = listener.call1(&JsValue::UNDEFINED, &descriptors::event(event, method, &self.redactor));
        }
    }

    /// The event listener, while open.
    pub(super) fn listener(&self) -> Option<Function> {
        self.listener.borrow().clone()
    }

    /// Closes the pipeline and lets go of the wrapper's listener.
    pub(super) fn close(&self) {
        self.pipeline.close();
        self.listener.borrow_mut().take();
    }

    /// Whether `close()` was called (the pipeline is the one place that knows).
    pub(super) fn closed(&self) -> bool {
        self.pipeline.is_closed()
    }

    pub(super) fn closed_error(&self) -> JsValue {
        descriptors::simple_error(kind::CLOSED, CODE_DISCONNECTED, "the relayer is closed")
    }

    /// One attempt of a prepared call through the transport; nothing is
    /// sent once the relayer is closed.
    pub(super) async fn send(&self, call: &FetchCall, target: AttemptTarget) -> Observation<JsValue> {
        if self.closed() {
            return Observation::Transport(TransportFailure::Aborted);
        }
        self.transport.send(call, target).await
    }

    /// A fresh JSON-RPC id.
    pub(super) fn take_id(&self) -> f64 {
        let id = self.next_id.get();
        self.next_id.set(if id >= 9e15 { 1.0 } else { id + 1.0 });
        id
    }

    pub(super) fn encode(
        &self,
        method: &str,
        params: &JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<FetchCall, JsValue> {
        let id = self.take_id();
        FetchTransport::encode(method, params, id, signal).map_err(|e| {
            let why = get(&e, "message").as_string().unwrap_or_default();
            descriptors::simple_error(
                kind::INVALID_REQUEST,
                CODE_INVALID_PARAMS,
                &format!("params cannot be encoded as JSON: {why}"),
            )
        })
    }

    /// One request through the front layer (cache → dedup → pipeline,
    /// `pool/request.rs`); here only the conversions: params to a call and
    /// a block tag, the outcome to a JS value or error.
    pub(super) async fn request(
        self: Rc<Self>,
        method: String,
        params: JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        if self.closed() {
            return Err(self.closed_error());
        }
        let call = self.encode(&method, &params, signal)?;
        let tag = tag_of(&method_info(&method), &params);
        let latest = matches!(tag, BlockTag::Latest | BlockTag::Pending);
        if latest {
            self.poll_heads_if_due();
        }
        let sends = (method == "eth_sendRawTransaction").then(|| Reflect::get_u32(&params, 0).ok()).flatten();
        let sends = sends.and_then(|raw| raw.as_string());
        let outcome = self.through_front(&method, &call, tag, false, sends.as_deref()).await;
        // Answered too: a burst of thousands queued at once has no arrival after it, and the
        // reads it still holds are the ones whose routing needs the heads.
        if latest && !self.closed() {
            self.poll_heads_if_due();
        }
        match outcome {
            Ok(SuccessValue::Result(value)) => Ok(value),
            Ok(SuccessValue::AlreadyKnown) => Ok(JsValue::NULL),
            Err(_) if self.closed() => Err(self.closed_error()),
            Err((failure, cause)) => {
                let signed = sends.as_deref().and_then(crate::rpc::raw_tx::signed_chain_id);
                Err(with_cause(
                    self.signed_elsewhere(&failure, signed).unwrap_or_else(|| self.failure_error(&failure)),
                    cause,
                ))
            }
        }
    }

    /// Every request path's one way into the core (one monomorphised copy
    /// of the pipeline: size matters): cache → dedup → pipeline, or
    /// straight to the pipeline when `fresh`. A failure carries the wrapped
    /// provider's own error behind its reported attempt, if there was one.
    async fn through_front(
        &self,
        method: &str,
        call: &FetchCall,
        tag: BlockTag,
        fresh: bool,
        sends: Option<&str>,
    ) -> Result<SuccessValue<JsValue>, (Failure<JsValue>, Option<JsValue>)> {
        let read = Read { method, key: &call.key, tag, fresh, sends };
        let traced = Traced::new(&self.pipeline, &self.transport, call);
        let emit = |e: PipelineEvent| self.emit(&e, method);
        // A caller that aborted has no answer for identical reads waiting on it.
        let aborted = || call.signal.as_ref().is_some_and(|s| s.aborted());
        let attempt = |target: AttemptTarget| traced.attempt(target);
        let outcome = self.front.request(&self.pipeline, &JsRuntime, read, attempt, &aborted, &emit).await;
        outcome.map_err(|failure| {
            let cause = traced.cause_for(&failure);
            (failure, cause)
        })
    }

    /// The error for a transaction signed for another chain than the one
    /// this relayer serves (nothing was sent), if that is why it stopped.
    fn signed_elsewhere(&self, failure: &Failure<JsValue>, signed: Option<u64>) -> Option<JsValue> {
        let signed = signed.filter(|_| failure.reason == StopReason::NoEndpoint && failure.attempts.is_empty())?;
        let serving = self.pipeline.with_router(|r| r.serving_chain()).filter(|&c| c != signed)?;
        let whence = if self.pipeline.config().pool.chain_id.is_some() {
            "the `chainId` option"
        } else {
            "its first node's eth_chainId; set `chainId` to name it"
        };
        let message = format!(
            "the transaction is signed for chain {signed}, and this relayer serves chain {serving} ({whence}): nothing was sent"
        );
        Some(descriptors::simple_error(kind::NO_ENDPOINT, descriptors::CODE_INVALID_PARAMS, &message))
    }

    /// The JS error for a failed request; "no endpoint" because every
    /// endpoint serves another chain says which chain was expected and what
    /// each endpoint serves.
    pub(super) fn failure_error(&self, failure: &Failure<JsValue>) -> JsValue {
        let descriptor = descriptors::failure(failure, &self.redactor, self.pipeline.config().max_attempts());
        if failure.reason != StopReason::NoEndpoint {
            return descriptor;
        }
        if let Some(refused) = self.pipeline.with_router(|r| r.all_refused(JsRuntime.now())) {
            let names: Vec<String> = refused.iter().map(|&i| self.redactor.label(i)).collect();
            let minutes = crate::pool::router::REFUSED_FOR.as_secs() / 60;
            let message = format!(
                "every endpoint refused the credentials in the last {minutes} minutes ({}); check the API key",
                names.join(", ")
            );
            for (key, value) in [
                ("kind", JsValue::from(kind::AUTH)),
                ("message", JsValue::from(message)),
                ("code", (descriptors::CODE_UNAUTHORIZED as f64).into()),
            ] {
                let _ = Reflect::set(&descriptor, &key.into(), &value);
            }
            return descriptor;
        }
        let Some((expected, seen)) = self.pipeline.with_router(|r| r.all_on_other_chains()) else { return descriptor };
        let labels = self.redactor.labels();
        let label = |i: usize| labels.get(i as u32).as_string().unwrap_or_default();
        let listed: Vec<String> = seen.iter().map(|(i, id)| format!("{}: {id}", label(*i))).collect();
        let message = format!(
            "every endpoint serves another chain than the expected {expected} ({}); check the URLs or the `chainId` option",
            listed.join(", ")
        );
        let chains: js_sys::Array = seen
            .iter()
            .map(|(i, id)| descriptors::Obj::new().set("endpoint", label(*i)).set("chainId", *id as f64).build())
            .collect();
        // EIP-1193 4901 "chain disconnected": not the method's fault (-32601).
        for (key, value) in [
            ("message", JsValue::from(message)),
            ("code", descriptors::CODE_CHAIN_DISCONNECTED.into()),
            ("expectedChainId", (expected as f64).into()),
            ("chains", chains.into()),
        ] {
            let _ = Reflect::set(&descriptor, &key.into(), &value);
        }
        descriptor
    }

    /// One logical request through the pipeline only (no cache, no dedup),
    /// keeping the failure's attempt history: the transaction layer needs
    /// fresh answers and must know whether a send may have been accepted.
    pub(super) async fn call(&self, method: &str, params: &JsValue) -> Result<SuccessValue<JsValue>, CallFailure> {
        if self.closed() {
            return Err(CallFailure::Closed);
        }
        let call = self.encode(method, params, None).map_err(CallFailure::Invalid)?;
        match self.through_front(method, &call, BlockTag::Latest, true, None).await {
            Ok(value) => Ok(value),
            Err(_) if self.closed() => Err(CallFailure::Closed),
            Err((failure, _)) => Err(CallFailure::Failed(failure)),
        }
    }

    /// The JS error for a failed [`Core::call`].
    pub(super) fn call_error(&self, failure: &CallFailure) -> JsValue {
        match failure {
            CallFailure::Closed => self.closed_error(),
            CallFailure::Invalid(e) => e.clone(),
            CallFailure::Failed(f) => self.failure_error(f),
        }
    }

    /// Exactly one attempt on one endpoint, for bound providers.
    pub(super) async fn attempt_once(
        self: Rc<Self>,
        endpoint: usize,
        method: String,
        params: JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        if self.closed() {
            return Err(self.closed_error());
        }
        if endpoint >= self.pipeline.config().endpoints.len() {
            return Err(descriptors::simple_error(kind::INVALID_REQUEST, CODE_INVALID_PARAMS, "no such endpoint"));
        }
        let call = self.encode(&method, &params, signal)?;
        let sends = (method == "eth_sendRawTransaction").then(|| Reflect::get_u32(&params, 0).ok()).flatten();
        let sends = sends.and_then(|raw| raw.as_string());
        let attempt = |target: AttemptTarget| self.transport.send(&call, target);
        match attempt_once(&self.pipeline, &JsRuntime, endpoint, &method, sends.as_deref(), attempt).await {
            Ok(value) => Ok(value),
            Err(SingleFailure { failure, observation }) => {
                let descriptor = descriptors::failure(&failure, &self.redactor, 1);
                let _ =
                    Reflect::set(&descriptor, &"observation".into(), &observation_to_js(&observation, &self.redactor));
                Err(descriptor)
            }
        }
    }

    /// `op(endpointIndex, attempt, timeoutMs)` under the retry policies.
    pub(super) async fn execute(self: Rc<Self>, op: Function, signal: Option<AbortSignal>) -> Result<JsValue, JsValue> {
        if self.closed() {
            return Err(self.closed_error());
        }
        let last_error = RefCell::new(JsValue::UNDEFINED);
        let attempts = Cell::new(0u32);
        let emit = |e: PipelineEvent| self.emit(&e, "executeRpcWithRetry");
        let attempt = |target: AttemptTarget| {
            let (op, last_error, attempts, signal) = (&op, &last_error, &attempts, &signal);
            let core = &self;
            async move {
                if core.closed() || signal.as_ref().is_some_and(|s| s.aborted()) {
                    return Observation::Transport(TransportFailure::Aborted);
                }
                if target.purpose == Purpose::ChainId {
                    // The transport sends its own eth_chainId call for this purpose.
                    return core.transport.send(&FetchCall::none(), target).await;
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
                    return Observation::Answered(get(&report, "value"));
                }
                *last_error.borrow_mut() = get(&report, "error");
                observation_from_js(&get(&report, "observation"))
            }
        };
        let call = Call { method: "executeRpcWithRetry", wants_latest: true, cost: None, signed_chain: None };
        let outcome = self.pipeline.execute(&JsRuntime, call, attempt, &emit).await;
        match outcome {
            Ok(success) => match success.value {
                SuccessValue::Result(value) => Ok(value),
                SuccessValue::AlreadyKnown => Ok(JsValue::UNDEFINED),
            },
            Err(_) if self.closed() => Err(self.closed_error()),
            Err(failure) => {
                let descriptor = descriptors::failure(&failure, &self.redactor, self.pipeline.config().max_attempts());
                let _ = Reflect::set(&descriptor, &"operationError".into(), &last_error.into_inner());
                Err(descriptor)
            }
        }
    }
}

/// The relayer as a transport: the fetch transport, sending nothing once
/// the relayer is closed (batches go through it).
impl Transport for Core {
    type Payload = JsValue;
    type Call = FetchCall;

    async fn send(&self, call: &FetchCall, target: AttemptTarget) -> Observation<JsValue> {
        Core::send(self, call, target).await
    }
}
