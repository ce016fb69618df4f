//! The relayer's side of the transaction module's node (`tx_node.rs` in
//! the `tx-module` build, docs/architecture.md): the calls the engine
//! makes go through this relayer's pipeline (retry, breakers, quota),
//! bypassing the read cache and dedup so every poll sees the chain as it
//! is now. Exported as promise-returning methods the engine's instance
//! calls through JS; values cross as JS (`0x` strings, descriptors).

use std::rc::Rc;

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::contract::kind;
use super::core::{CallFailure, Core};
use crate::pool::SuccessValue;
use crate::runtime::join::join_all;
use crate::runtime::parse_quantity;
use crate::tx::chain;
use crate::tx::engine::SendOutcome;
use crate::tx::send_outcome::classify_send;

/// The transaction engine's node over a relayer's core.
pub struct CoreNode {
    pub(super) core: Rc<Core>,
    /// The chain every answering endpoint reported, once asked (no `chainId` option).
    pub(super) verified_chain: std::cell::Cell<Option<u64>>,
}

fn params(items: &[JsValue]) -> JsValue {
    items.iter().collect::<Array>().into()
}

impl CoreNode {
    /// The chain signatures are bound to (rules in `tx/chain.rs`): the
    /// `chainId` option, else the chain every answering endpoint reports,
    /// asked of all of them once before the first signature.
    pub async fn signing_chain(&self) -> Result<u64, JsValue> {
        if self.core.closed() {
            return Err(self.core.closed_error());
        }
        if let Some(id) = self.core.pipeline.config().pool.chain_id.or(self.verified_chain.get()) {
            return Ok(id);
        }
        let count = self.core.pipeline.config().endpoints.len();
        let asks = (0..count).map(|endpoint| {
            let core = self.core.clone();
            async move { (endpoint, core.attempt_once(endpoint, "eth_chainId".into(), params(&[]), None).await) }
        });
        let labels = self.core.redactor.labels();
        let mut seen = Vec::new();
        let mut answered = Vec::new();
        let mut last_error = None;
        for (endpoint, answer) in join_all(asks.collect()).await {
            match answer.map(|v| v.as_string().as_deref().and_then(parse_quantity)) {
                Ok(Some(id)) => {
                    seen.push((labels.get(endpoint as u32).as_string().unwrap_or_default(), id));
                    answered.push(endpoint);
                }
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
        }
        match chain::agreed(&seen) {
            Ok(Some(id)) => {
                self.verified_chain.set(Some(id));
                // The pool's own chain check of these endpoints is done too:
                // their first request does not ask eth_chainId again.
                let now = crate::runtime::Runtime::now(&super::js_runtime::JsRuntime);
                self.core.pipeline.with_router(|router| {
                    for endpoint in answered {
                        let _ = router.chain_checked(endpoint, id, now);
                    }
                });
                Ok(id)
            }
            Ok(None) => Err(last_error.unwrap_or_else(|| {
                super::descriptors::simple_error(kind::INVALID_RESPONSE, -32603, "no endpoint reported its chain id")
            })),
            Err(e) => {
                let chains: Array = seen
                    .iter()
                    .map(|(label, id)| {
                        super::descriptors::Obj::new()
                            .set("endpoint", label.as_str())
                            .set("chainId", *id as f64)
                            .build()
                    })
                    .collect();
                Err(super::descriptors::Obj::new()
                    .set("kind", kind::NO_ENDPOINT)
                    .set("code", super::descriptors::CODE_CHAIN_DISCONNECTED)
                    .set("message", e.to_string())
                    .set("chains", chains)
                    .build())
            }
        }
    }

    /// `method(items)` through the pipeline: the result, `null` for "already known".
    pub async fn call(&self, method: &str, items: &[JsValue]) -> Result<JsValue, JsValue> {
        match self.core.call(method, &params(items)).await {
            Ok(SuccessValue::Result(v)) => Ok(v),
            Ok(SuccessValue::AlreadyKnown) => Ok(JsValue::NULL),
            Err(f) => Err(self.core.call_error(&f)),
        }
    }

    fn send_outcome(&self, failure: CallFailure) -> SendOutcome<JsValue> {
        let error = self.core.call_error(&failure);
        let CallFailure::Failed(f) = failure else { return SendOutcome::Unknown(error) };
        classify_send(&f, error)
    }
}

impl CoreNode {
    /// A node the pipeline answers.
    pub fn new(core: Rc<Core>) -> Self {
        CoreNode { core, verified_chain: None.into() }
    }

    /// `eth_sendRawTransaction` of `raw` (`0x` hex) through the pipeline, classified.
    pub async fn send_raw(&self, raw: JsValue) -> SendOutcome<JsValue> {
        match self.core.call("eth_sendRawTransaction", &params(&[raw])).await {
            Ok(_) => SendOutcome::Accepted,
            Err(failure) => self.send_outcome(failure),
        }
    }
}
