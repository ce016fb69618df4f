//! The transaction module's calls into this relayer (`node_bridge.rs`),
//! exported on `WasmRelayer`: promise-returning methods the engine's own
//! wasm instance calls through JS (`tx_node.rs` in the `tx-module` build).

use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;

use super::descriptors::Obj;
use super::relayer::WasmRelayer;
use crate::tx::engine::SendOutcome;

/// A send's outcome as the transaction module reads it (`tx_node.rs`).
fn outcome_js(outcome: SendOutcome<JsValue>) -> JsValue {
    let (name, error, certain) = match outcome {
        SendOutcome::Accepted => ("accepted", JsValue::UNDEFINED, false),
        SendOutcome::Unknown(e) => ("unknown", e, false),
        SendOutcome::NonceTooLow { certain, error } => ("nonceTooLow", error, certain),
        SendOutcome::Underpriced(e) => ("underpriced", e, false),
        SendOutcome::FeeTooLow(e) => ("feeTooLow", e, false),
        SendOutcome::Rejected(e) => ("rejected", e, false),
    };
    Obj::new().set("outcome", name).set("error", error).set("certain", certain).build()
}

#[wasm_bindgen]
impl WasmRelayer {
    /// Refuses an account address the transaction engine would refuse, with
    /// its descriptor (`pendingTransactions` on a page that has not loaded
    /// the engine: nothing is pending there, but a bad address is still bad).
    #[wasm_bindgen(js_name = checkTxAddress)]
    pub fn check_tx_address(&self, address: JsValue) -> Result<(), JsValue> {
        super::tx_fields::account_address(&address).map(drop)
    }

    /// The transaction module's read: `method(params)` through the
    /// pipeline, no cache, no dedup. Resolves to the result (`null` for
    /// "already known"); rejects with a failure descriptor.
    #[wasm_bindgen(js_name = nodeCall)]
    pub fn node_call(&self, method: String, params: JsValue) -> Promise {
        let node = self.node.clone();
        super::promise(async move { node.call(&method, &Array::from(&params).to_vec()).await })
    }

    /// The transaction module's broadcast of signed `0x` bytes: resolves to
    /// `{ outcome, error, certain }` (`SendOutcome`, classified here, where
    /// the attempts' verdicts are).
    #[wasm_bindgen(js_name = nodeSendRaw)]
    pub fn node_send_raw(&self, raw: String) -> Promise {
        let node = self.node.clone();
        super::promise(async move { Ok(outcome_js(node.send_raw(raw.into()).await)) })
    }

    /// The `chainId` option, if given (the transaction module's
    /// `signingChain` asks the endpoints otherwise).
    #[wasm_bindgen(js_name = configuredChain)]
    pub fn configured_chain(&self) -> Option<f64> {
        self.core.pipeline.config().pool.chain_id.map(|id| id as f64)
    }

    /// `endpoint` answered `eth_chainId` with `chain` to the transaction
    /// module's `signingChain`: the pool's own chain check of it is done too
    /// (its first request does not ask again).
    #[wasm_bindgen(js_name = noteChainChecked)]
    pub fn note_chain_checked(&self, endpoint: usize, chain: f64) {
        if chain.is_finite() && chain >= 0.0 && chain <= u64::MAX as f64 {
            let now = crate::runtime::Runtime::now(&super::js_runtime::JsRuntime);
            self.core.pipeline.with_router(|router| {
                let _ = router.chain_checked(endpoint, chain as u64, now);
            });
        }
    }

    /// Resolves when the relayer closes.
    #[wasm_bindgen(js_name = nodeClosing)]
    pub fn node_closing(&self) -> Promise {
        let core = self.core.clone();
        super::promise(async move {
            core.pipeline.closing().await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Whether the relayer is closed.
    #[wasm_bindgen(js_name = nodeIsClosed)]
    pub fn node_is_closed(&self) -> bool {
        self.core.closed()
    }
}
