//! `WasmTxEngine`: the class of the transaction module (the `tx-module`
//! build, docs/architecture.md), which the wrapper loads on a relayer's
//! first transaction call, so an app that only reads never downloads it.
//! One per relayer: its engine's node is that relayer (`tx_node.rs`), so
//! every read and send still goes through the relayer's one pool.

use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::descriptors;
use super::tx_fields;
use super::tx_node::JsNode;
use super::tx_signer::Adoption;
use crate::config::ConfigError;
use crate::tx::engine::TxEngine;
use crate::tx::TxOptions;

/// The transaction engine of one relayer. Use the `FaultTolerantRelayer`
/// wrapper; this class is its transaction layer.
#[wasm_bindgen]
pub struct WasmTxEngine {
    pub(super) tx: Rc<TxEngine<JsNode>>,
    pub(super) listener: Option<Function>,
    /// Signers given, and the orphan sweep's clock (`tx_journal.rs`).
    pub(super) adoption: Rc<Adoption>,
}

#[wasm_bindgen]
impl WasmTxEngine {
    /// The engine of `relayer` (its `WasmRelayer`); `listener(event)`
    /// receives the transaction events; `transactions`: the relayer's
    /// `transactions` option (already checked by the relayer).
    #[wasm_bindgen(constructor)]
    pub fn new(relayer: JsValue, listener: JsValue, transactions: JsValue) -> Result<WasmTxEngine, JsValue> {
        let options = tx_fields::tx_options(&transactions, TxOptions::default(), "transactions")
            .map_err(|e| descriptors::config_error(&ConfigError::new(&e.field, e.reason)))?;
        Ok(WasmTxEngine {
            tx: Rc::new(TxEngine::new(JsNode::new(relayer), options)),
            listener: listener.dyn_into::<Function>().ok(),
            adoption: Rc::default(),
        })
    }
}
