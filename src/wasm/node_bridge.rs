//! The relayer's side of the transaction module's node (`tx_node.rs` in
//! the `tx-module` build, docs/architecture.md): the calls the engine
//! makes go through this relayer's pipeline (retry, breakers, quota),
//! bypassing the read cache and dedup so every poll sees the chain as it
//! is now. Exported as promise-returning methods the engine's instance
//! calls through JS; values cross as JS (`0x` strings, descriptors).

use std::rc::Rc;

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::core::{CallFailure, Core};
use crate::pool::SuccessValue;
use crate::tx::engine::SendOutcome;
use crate::tx::send_outcome::classify_send;

/// The transaction engine's node over a relayer's core.
pub struct CoreNode {
    pub(super) core: Rc<Core>,
}

fn params(items: &[JsValue]) -> JsValue {
    items.iter().collect::<Array>().into()
}

impl CoreNode {
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
        CoreNode { core }
    }

    /// `eth_sendRawTransaction` of `raw` (`0x` hex) through the pipeline, classified.
    pub async fn send_raw(&self, raw: JsValue) -> SendOutcome<JsValue> {
        match self.core.call("eth_sendRawTransaction", &params(&[raw])).await {
            Ok(_) => SendOutcome::Accepted,
            Err(failure) => self.send_outcome(failure),
        }
    }
}
