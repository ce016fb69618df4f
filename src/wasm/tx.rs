//! The transaction entry points of `WasmTxEngine`: JS signers, request and
//! option parsing, outcomes, typed failures and events.
//!
//! The JS wrapper turns an ethers signer, a viem account or an EIP-1193
//! wallet into one shape, `{ address, sign(tx) → { raw } | { hash } }`, so
//! this side never sees a key and never depends on either library.

use std::rc::Rc;

use alloy_primitives::{hex, B256};
use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::contract::kind;
use super::descriptors::{simple_error, Obj, CODE_INVALID_PARAMS};
use super::js_runtime::JsRuntime;
use super::tx_fields::{self, field_error, js_fields, tx_options};
use super::tx_journal::{sweep_if_due, sweeping_emitter};
use super::tx_module::WasmTxEngine;
use super::tx_node::JsNode;
use super::tx_outcome::{emitter, failure_js, hashes_js, outcome_js};
use super::tx_signer::{JsSigner, WasmSigner};
use crate::tx::chain;
use crate::tx::engine::{TxEngine, TxFailure};
use crate::tx::engine_raw::{RawStatus, WaitEnd};
use crate::tx::request::{self, FieldValue, TxFieldError};
use crate::tx::TxOptions;

#[wasm_bindgen]
impl WasmTxEngine {
    /// The chain signatures are bound to (`JsNode::signing_chain`), as a
    /// number: a cancel by hash looks the nonce up under it.
    #[wasm_bindgen(js_name = signingChain)]
    pub fn signing_chain(&self) -> Promise {
        let engine = self.tx.clone();
        super::promise(async move { engine.node().signing_chain().await.map(|id| JsValue::from(id as f64)) })
    }

    /// Sends `tx` from `signer` (an adapted signer, or a promise of one),
    /// speeds it up after `maxWaitBlocks` blocks without inclusion, resolves
    /// to the outcome. Its place in the account's nonce order is taken here,
    /// synchronously, before anything awaits: nonces follow call order.
    #[wasm_bindgen(js_name = sendTransaction)]
    pub fn send_transaction(&self, signer: JsValue, tx: JsValue, max_wait_blocks: f64, options: JsValue) -> Promise {
        let (engine, listener, adoption) = (self.tx.clone(), self.listener.clone(), self.adoption.clone());
        let ticket = engine.ticket();
        super::promise(async move {
            let options = tx_options(&options, engine.options(), "options").map_err(|e| field_error(&e))?;
            let fields = js_fields(&tx).map_err(|e| field_error(&e))?;
            if !(max_wait_blocks.is_finite() && max_wait_blocks >= 1.0 && max_wait_blocks.fract() == 0.0) {
                let e =
                    TxFieldError { field: "maxWaitBlockCount".into(), reason: "must be a whole number ≥ 1".into() };
                return Err(field_error(&e));
            }
            let signer = JsFuture::from(Promise::resolve(&signer)).await?;
            let signer = JsSigner::from_js(&signer)?;
            adoption.remember(&signer);
            sweep_if_due(&engine, &adoption, &listener); // a dead worker's nonces, in the background
            let chain = engine.node().signing_chain().await?;
            let request = request::build(&fields, Some(chain)).map_err(|e| field_error(&e))?;
            chain::check_signer(signer.chain_id, chain)
                .map_err(|e| simple_error(kind::INVALID_SIGNER, CODE_INVALID_PARAMS, &e.to_string()))?;
            let emit = sweeping_emitter(&engine, &adoption, listener.clone());
            let options = TxOptions { max_wait_blocks: max_wait_blocks as u64, ..options };
            let signer = WasmSigner::Given(signer);
            let result = engine.send(&JsRuntime, ticket, &signer, &request, options, &emit).await;
            if let Err(TxFailure::FeeCeiling { nonce, .. }) = &result {
                keep_in_background(engine, signer, request.chain_id, *nonce, options, listener);
            }
            result.map(|o| outcome_js(&o)).map_err(failure_js)
        })
    }

    /// Cancels the tracked transaction of `signer`'s account with `nonce`.
    #[wasm_bindgen(js_name = cancelTransaction)]
    pub fn cancel_transaction(&self, signer: JsValue, chain_id: f64, nonce: f64, options: JsValue) -> Promise {
        let (engine, listener, adoption) = (self.tx.clone(), self.listener.clone(), self.adoption.clone());
        super::promise(async move {
            let options = tx_options(&options, engine.options(), "options").map_err(|e| field_error(&e))?;
            let signer = JsSigner::from_js(&signer)?;
            adoption.remember(&signer);
            let emit = sweeping_emitter(&engine, &adoption, listener.clone());
            let signer = WasmSigner::Given(signer);
            let result = engine.cancel(&JsRuntime, &signer, chain_id as u64, nonce as u64, options, &emit).await;
            if let Err(TxFailure::FeeCeiling { nonce, .. }) = &result {
                keep_in_background(engine, signer, chain_id as u64, *nonce, options, listener);
            }
            result.map(|o| outcome_js(&o)).map_err(failure_js)
        })
    }

    /// Broadcasts signed bytes with the outcome-unknown rules. Resolves to
    /// `{ hash, status: 'accepted' | 'unknown' | 'mined' }`.
    #[wasm_bindgen(js_name = submitRaw)]
    pub fn submit_raw(&self, raw: String) -> Promise {
        let engine = self.tx.clone();
        super::promise(async move {
            let bytes = request::parse_data("raw", &FieldValue::Text(raw)).map_err(|e| field_error(&e))?;
            if bytes.is_empty() {
                return Err(field_error(&TxFieldError { field: "raw".into(), reason: "is empty".into() }));
            }
            let (hash, status) = engine.submit_raw(&bytes).await;
            let status = match status {
                RawStatus::Accepted => "accepted",
                RawStatus::Unknown => "unknown",
                RawStatus::Mined => "mined",
                RawStatus::Refused(error) => return Err(error),
                RawStatus::Closed => {
                    return Err(simple_error(kind::CLOSED, 4900, "the relayer is closed; nothing was sent"))
                }
            };
            Ok(Obj::new().set("hash", format!("{hash:#x}")).set("status", status).build())
        })
    }

    /// Waits for `hash`'s receipt with `options.confirmations`, polling with
    /// jitter and noticing reorgs; `timeoutMs` (0: none) bounds the wait.
    #[wasm_bindgen(js_name = waitForReceipt)]
    pub fn wait_for_receipt(&self, hash: String, options: JsValue, timeout_ms: f64) -> Promise {
        let (engine, listener) = (self.tx.clone(), self.listener.clone());
        super::promise(async move {
            let options = tx_options(&options, engine.options(), "options").map_err(|e| field_error(&e))?;
            let mut bytes = [0u8; 32];
            let parsed = hash.strip_prefix("0x").map(|h| hex::decode_to_slice(h, &mut bytes));
            if !matches!(parsed, Some(Ok(()))) {
                let e =
                    TxFieldError { field: "hash".into(), reason: "must be a 0x-prefixed 32-byte hex string".into() };
                return Err(field_error(&e));
            }
            let timeout =
                (timeout_ms.is_finite() && timeout_ms > 0.0).then(|| crate::time::duration_from_millis_f64(timeout_ms));
            let emit = emitter(listener);
            match engine.wait_for_receipt(&JsRuntime, B256::from(bytes), options, timeout, &emit).await {
                Ok(receipt) => Ok(receipt),
                Err(WaitEnd::Closed) => {
                    Err(simple_error(kind::CLOSED, 4900, "the relayer closed while waiting for the receipt"))
                }
                Err(WaitEnd::TimedOut) => Err(Obj::new()
                    .set("kind", kind::DEADLINE)
                    .set("code", -32002.0)
                    .set("hash", hash.as_str())
                    .set("message", format!("no receipt for {hash} within the time limit; it may still be mined"))
                    .build()),
            }
        })
    }

    /// Flags a cancel for `nonce` of `address` at once (the async cancel
    /// call follows); `chainId` NaN means any chain. Returns the count flagged.
    #[wasm_bindgen(js_name = requestCancel)]
    pub fn request_cancel(&self, address: String, nonce: f64, chain_id: f64) -> u32 {
        let Ok(Some(address)) = request::parse_address("address", &FieldValue::Text(address)) else { return 0 };
        let chain = chain_id.is_finite().then_some(chain_id as u64);
        self.tx.request_cancel(address, nonce as u64, chain) as u32
    }

    /// The nonces and hashes still pending for an account.
    #[wasm_bindgen(js_name = pendingTransactions)]
    pub fn pending_transactions(&self, chain_id: f64, address: JsValue) -> Result<Array, JsValue> {
        let address = tx_fields::account_address(&address)?;
        let list = self.tx.pending(chain_id as u64, address);
        Ok(list
            .into_iter()
            .map(|(nonce, hashes)| Obj::new().set("nonce", nonce as f64).set("hashes", hashes_js(&hashes)).build())
            .collect())
    }
}

/// After a `FeeCeilingError` the caller has its answer, but the nonce's
/// transactions are still out there (or dropped by nodes at a gas spike):
/// a background loop keeps re-broadcasting and watching them, bumping only
/// under the ceiling, until one is mined or the relayer closes. Its end is
/// reported through events; a cancel for the nonce joins it.
fn keep_in_background(
    engine: Rc<TxEngine<JsNode>>,
    signer: WasmSigner,
    chain_id: u64,
    nonce: u64,
    options: TxOptions,
    listener: Option<Function>,
) {
    super::spawn(async move {
        let emit = emitter(listener);
        let _ = engine.keep(&JsRuntime, &signer, chain_id, nonce, options, &emit).await;
    });
}
