//! The transaction entry points of `WasmRelayer`: JS signers, request and
//! option parsing, outcomes, typed failures and events.
//!
//! The JS wrapper turns an ethers signer, a viem account or an EIP-1193
//! wallet into one shape, `{ address, sign(tx) → { raw } | { hash } }`, so
//! this side never sees a key and never depends on either library.

use std::rc::Rc;

use alloy_primitives::{hex, Address, B256};
use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::contract::kind;
use super::descriptors::{simple_error, Obj, CODE_INVALID_PARAMS};
use super::js_runtime::JsRuntime;
use super::relayer::WasmRelayer;
use super::tx_events::event_js;
use super::tx_fields::{field_error, js_fields, tx_options};
use super::tx_journal::Adoption;
use super::tx_node::{hex_quantity, CoreNode};
use crate::tx::chain;
use crate::tx::engine::{Signed, TxEngine, TxEvent, TxFailure, TxOutcome, TxSigner};
use crate::tx::engine_raw::{RawStatus, WaitEnd};
use crate::tx::fees::Fees;
use crate::tx::request::{self, FieldValue, TxFieldError};
use crate::tx::slot::Resolution;
use crate::tx::{TxOptions, UnsignedTx};

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A signer adapted by the JS wrapper.
#[derive(Clone)]
pub struct JsSigner {
    address: Address,
    sign: Function,
    /// The chain the signer is bound to, when it knows (an ethers signer
    /// with a provider, a viem client with a chain).
    chain_id: Option<u64>,
    /// A wallet that sends what it signs (`kind: 'wallet'`).
    wallet: bool,
}

impl JsSigner {
    pub(super) fn from_js(value: &JsValue) -> Result<Self, JsValue> {
        let bad = |why: &str| simple_error(kind::INVALID_SIGNER, CODE_INVALID_PARAMS, why);
        let address = get(value, "address").as_string().ok_or_else(|| bad("the signer has no address"))?;
        let address = request::parse_address("signer.address", &FieldValue::Text(address))
            .map_err(|e| bad(&e.to_string()))?
            .ok_or_else(|| bad("the signer has no address"))?;
        let sign = get(value, "sign").dyn_into::<Function>().map_err(|_| bad("the signer has no sign function"))?;
        let chain_id = get(value, "chainId").as_f64().filter(|n| n.is_finite() && *n > 0.0).map(|n| n as u64);
        let wallet = get(value, "kind").as_string().is_none_or(|k| k == "wallet");
        Ok(JsSigner { address, sign, chain_id, wallet })
    }
}

fn tx_to_js(tx: &UnsignedTx) -> JsValue {
    let o = Obj::new()
        .set("chainId", tx.chain_id as f64)
        .set("nonce", tx.nonce as f64)
        .set("from", format!("{:#x}", tx.from))
        .set("to", tx.to.map(|a| JsValue::from_str(&format!("{a:#x}"))).unwrap_or(JsValue::NULL))
        .set("value", format!("{:#x}", tx.value))
        .set("data", format!("0x{}", hex::encode(&tx.data)))
        .set("gas", hex_quantity(tx.gas.into()));
    match tx.fees {
        Fees::Eip1559 { max_fee, tip } => {
            o.set("type", 2).set("maxFeePerGas", hex_quantity(max_fee)).set("maxPriorityFeePerGas", hex_quantity(tip))
        }
        Fees::Legacy { gas_price } => o.set("type", 0).set("gasPrice", hex_quantity(gas_price)),
    }
    .build()
}

impl TxSigner<JsValue> for JsSigner {
    fn address(&self) -> Address {
        self.address
    }

    fn signs_locally(&self) -> bool {
        !self.wallet
    }

    async fn sign(&self, tx: &UnsignedTx) -> Result<Signed, JsValue> {
        let promise = self.sign.call1(&JsValue::UNDEFINED, &tx_to_js(tx))?;
        let out = JsFuture::from(Promise::resolve(&promise)).await?;
        let bad = |why: &str| simple_error(kind::INVALID_SIGNER, CODE_INVALID_PARAMS, why);
        if let Some(raw) = get(&out, "raw").as_string() {
            let bytes = raw.strip_prefix("0x").and_then(|h| hex::decode(h).ok()).filter(|b| !b.is_empty());
            return bytes.map(Signed::Raw).ok_or_else(|| bad("the signer returned raw bytes that are not 0x hex"));
        }
        if let Some(hash) = get(&out, "hash").as_string() {
            let mut bytes = [0u8; 32];
            return match hash.strip_prefix("0x").map(|h| hex::decode_to_slice(h, &mut bytes)) {
                Some(Ok(())) => Ok(Signed::SentByWallet(B256::from(bytes))),
                _ => Err(bad("the wallet returned a transaction hash that is not 32 bytes of 0x hex")),
            };
        }
        Err(bad("the signer returned neither signed bytes nor a hash"))
    }
}

pub(super) fn hashes_js(hashes: &[B256]) -> Array {
    hashes.iter().map(|h| JsValue::from_str(&format!("{h:#x}"))).collect()
}

pub(super) fn outcome_js(o: &TxOutcome<JsValue>) -> JsValue {
    let out = Object::assign(&Object::new(), &Object::from(o.receipt.clone()));
    let extra = Obj::new()
        .set("receipt", o.receipt.clone())
        .set("hash", format!("{:#x}", o.hash))
        .set("nonce", o.nonce as f64)
        .set("hashes", hashes_js(&o.hashes))
        .set("outcome", o.resolution.as_str())
        .set("replaced", o.resolution != Resolution::Mined)
        .set("cancelled", o.resolution == Resolution::Cancelled)
        .set("confirmations", o.confirmations as f64)
        .build();
    Object::assign(&out, &Object::from(extra)).into()
}

pub(super) fn failure_js(f: TxFailure<JsValue>) -> JsValue {
    let with_hashes = |kind: &str, code: i64, message: String, nonce: u64, hashes: &[B256]| {
        Obj::new()
            .set("kind", kind)
            .set("code", code as f64)
            .set("message", message)
            .set("nonce", nonce as f64)
            .set("hashes", hashes_js(hashes))
    };
    match f {
        TxFailure::Invalid(e) => field_error(&e),
        TxFailure::Node(e) | TxFailure::Rejected(e) => e,
        TxFailure::Signer(e) => Obj::new()
            .set("kind", kind::SIGNER)
            .set("code", 4001.0)
            .set("message", "the signer refused or failed; nothing was broadcast and the nonce was released")
            .set("cause", e)
            .build(),
        TxFailure::Fees(e) => simple_error(kind::FEE_DATA, -32603, &e.to_string()),
        TxFailure::FeeCeiling { nonce, hashes, needed, ceiling } => with_hashes(
            kind::FEE_CEILING,
            -32603,
            format!("nonce {nonce}: the next replacement must pay at least {needed} wei/gas, above the ceiling of {ceiling}; its transactions are still pending and tracked"),
            nonce,
            &hashes,
        )
        .set("needed", format!("{needed}"))
        .set("ceiling", format!("{ceiling}"))
        .build(),
        TxFailure::CeilingBelowNetwork { needed, ceiling } => Obj::new()
            .set("kind", kind::FEE_CEILING)
            .set("code", -32603.0)
            .set("message", format!("the fee ceiling of {ceiling} wei/gas is below the next block's base fee of {needed}; nothing was signed"))
            .set("needed", format!("{needed}"))
            .set("ceiling", format!("{ceiling}"))
            .build(),
        TxFailure::ReplacedByOther { nonce, hashes } => with_hashes(
            kind::REPLACED_BY_OTHER,
            -32603,
            format!("nonce {nonce} was used by a transaction that is not one of ours"),
            nonce,
            &hashes,
        )
        .build(),
        TxFailure::Settled(nonce) => Obj::new()
            .set("kind", kind::NONCE_STATE)
            .set("code", CODE_INVALID_PARAMS as f64)
            .set("nonce", nonce as f64)
            .set("message", format!("nonce {nonce} is already settled on chain; nothing to cancel"))
            .build(),
        TxFailure::UnknownNonce(nonce) => Obj::new()
            .set("kind", kind::NONCE_STATE)
            .set("code", CODE_INVALID_PARAMS as f64)
            .set("nonce", nonce as f64)
            .set("message", format!("no pending transaction of this account with nonce {nonce} is tracked by this relayer"))
            .build(),
        TxFailure::Dropped { nonce, hashes, error } => with_hashes(
            kind::DROPPED,
            -32603,
            format!("nonce {nonce}: no node has our transaction any more and re-sending it is refused; the nonce is free again"),
            nonce,
            &hashes,
        )
        .set("cause", error)
        .build(),
        TxFailure::NonceContention(nonce) => Obj::new()
            .set("kind", kind::NONCE_STATE)
            .set("code", -32603.0)
            .set("nonce", nonce as f64)
            .set("message", format!("another sender kept taking this account's nonces (last tried {nonce}); nothing of ours was broadcast"))
            .build(),
        TxFailure::Coordination(why) => Obj::new()
            .set("kind", kind::COORDINATION)
            .set("code", -32603.0)
            .set("message", format!("the fleet's store (shared nonce book and journal) could not answer ({why}); no nonce was guessed and nothing was broadcast"))
            .build(),
        TxFailure::Closed { nonce: Some(nonce), hashes } => with_hashes(
            kind::CLOSED,
            4900,
            format!("the relayer closed while nonce {nonce} was pending; its transactions may still be mined"),
            nonce,
            &hashes,
        )
        .build(),
        TxFailure::Closed { nonce: None, .. } => {
            simple_error(kind::CLOSED, 4900, "the relayer is closed; nothing was signed or sent")
        }
    }
}

#[wasm_bindgen]
impl WasmRelayer {
    /// Sends `tx` from `signer` (an adapted signer, or a promise of one),
    /// speeds it up after `maxWaitBlocks` blocks without inclusion, resolves
    /// to the outcome. Its place in the account's nonce order is taken here,
    /// synchronously, before anything awaits: nonces follow call order.
    #[wasm_bindgen(js_name = sendTransaction)]
    pub fn send_transaction(&self, signer: JsValue, tx: JsValue, max_wait_blocks: f64, options: JsValue) -> Promise {
        let (engine, listener, adoption) = (self.tx.clone(), self.core.listener(), self.adoption.clone());
        let ticket = engine.ticket();
        future_to_promise(async move {
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
            Adoption::sweep_if_due(&engine, &adoption, &listener); // a dead worker's nonces, in the background
            let chain = engine.node().signing_chain().await?;
            let request = request::build(&fields, Some(chain)).map_err(|e| field_error(&e))?;
            chain::check_signer(signer.chain_id, chain)
                .map_err(|e| simple_error(kind::INVALID_SIGNER, CODE_INVALID_PARAMS, &e.to_string()))?;
            let emit = emitter(listener.clone());
            let options = TxOptions { max_wait_blocks: max_wait_blocks as u64, ..options };
            let result = engine.send(&JsRuntime, ticket, &signer, &request, options, &emit).await;
            if let Err(TxFailure::FeeCeiling { nonce, .. }) = &result {
                keep_in_background(engine, signer, request.chain_id, *nonce, options, listener);
            }
            result.map(|o| outcome_js(&o)).map_err(failure_js)
        })
    }

    /// The chain this relayer signs for (see `signing_chain`), as a number.
    #[wasm_bindgen(js_name = signingChain)]
    pub fn signing_chain(&self) -> Promise {
        let engine = self.tx.clone();
        future_to_promise(async move { engine.node().signing_chain().await.map(|id| JsValue::from(id as f64)) })
    }

    /// Cancels the tracked transaction of `signer`'s account with `nonce`.
    #[wasm_bindgen(js_name = cancelTransaction)]
    pub fn cancel_transaction(&self, signer: JsValue, chain_id: f64, nonce: f64, options: JsValue) -> Promise {
        let (engine, listener, adoption) = (self.tx.clone(), self.core.listener(), self.adoption.clone());
        future_to_promise(async move {
            let options = tx_options(&options, engine.options(), "options").map_err(|e| field_error(&e))?;
            let signer = JsSigner::from_js(&signer)?;
            adoption.remember(&signer);
            let emit = emitter(listener.clone());
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
        future_to_promise(async move {
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
        let (engine, listener) = (self.tx.clone(), self.core.listener());
        future_to_promise(async move {
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
    pub fn pending_transactions(&self, chain_id: f64, address: String) -> Result<Array, JsValue> {
        let address = request::parse_address("address", &FieldValue::Text(address))
            .map_err(|e| field_error(&e))?
            .ok_or_else(|| field_error(&TxFieldError { field: "address".into(), reason: "is required".into() }))?;
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
    engine: Rc<TxEngine<CoreNode>>,
    signer: JsSigner,
    chain_id: u64,
    nonce: u64,
    options: TxOptions,
    listener: Option<Function>,
) {
    wasm_bindgen_futures::spawn_local(async move {
        let emit = emitter(listener);
        let _ = engine.keep(&JsRuntime, &signer, chain_id, nonce, options, &emit).await;
    });
}

pub(super) fn emitter(listener: Option<Function>) -> impl Fn(TxEvent) {
    move |e: TxEvent| {
        if let Some(l) = &listener {
            let _ = l.call1(&JsValue::UNDEFINED, &event_js(&e));
        }
    }
}
