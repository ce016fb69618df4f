//! The journal's entry points on `WasmTxEngine`: adopting the unfinished
//! nonces of a worker that died (`tx::engine_journal`), and waiting for a
//! tracked nonce's outcome. Conversions only.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use alloy_primitives::{hex, Address, B256};
use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;

use super::contract::kind;
use super::descriptors::{simple_error, Obj, CODE_INVALID_PARAMS};
use super::js_runtime::JsRuntime;
use super::tx_fields::{field_error, tx_options};
use super::tx_module::WasmTxEngine;
use super::tx_node::JsNode;
use super::tx_outcome::{emitter, failure_js, hashes_js, outcome_js};
use super::tx_signer::{Adoption, JsSigner, WasmSigner};
use crate::runtime::Runtime;
use crate::tx::engine::{TxEngine, TxEvent, TxSigner};
use crate::tx::engine_journal::Adopted;
use crate::tx::request::{self, FieldValue, TxFieldError};
use crate::tx::TxOptions;

/// How often a sending relayer looks for a dead relayer's nonces.
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// Takes over `address`'s orphaned nonces on `chain` and starts a loop on
/// each with `start(nonce, its loop)`; emits `txAdopted` per nonce.
async fn adopt_and_keep(
    engine: &Rc<TxEngine<JsNode>>,
    adoption: &Rc<Adoption>,
    listener: &Option<Function>,
    chain: u64,
    address: Address,
    options: TxOptions,
    mut start: impl FnMut(u64, Vec<B256>, Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>),
) -> Result<Adopted, JsValue> {
    let found = engine.adopt(&JsRuntime, chain, address).await.map_err(failure_js)?;
    let pending = engine.pending(chain, address);
    let emit = emitter(listener.clone());
    for &nonce in &found.nonces {
        let hashes = pending.iter().find(|(n, _)| *n == nonce).map(|(_, h)| h.clone()).unwrap_or_default();
        let signer = adoption.knows(address);
        emit(TxEvent::Adopted { from: address, nonce, hashes: hashes.clone(), signer });
        let (emit, engine) = (sweeping_emitter(engine, adoption, listener.clone()), engine.clone());
        let signer = WasmSigner::Remembered { address, adoption: adoption.clone() };
        let run = async move {
            let kept = engine.keep(&JsRuntime, &signer, chain, nonce, options, &emit).await;
            kept.map(|o| outcome_js(&o)).map_err(failure_js)
        };
        start(nonce, hashes, Box::pin(run));
    }
    Ok(found)
}

/// Where the events of this relayer's transaction loops go; each one also
/// lets the relayer look for a dead worker's nonces when a look is due
/// (`sweep_if_due`): a send stuck behind a dead worker's nonce keeps
/// emitting (re-broadcasts, the gap below it), so it finds that nonce once
/// its lease ran out. Nothing pending, no events, no looks.
pub(super) fn sweeping_emitter(
    engine: &Rc<TxEngine<JsNode>>,
    adoption: &Rc<Adoption>,
    listener: Option<Function>,
) -> impl Fn(TxEvent) {
    let emit = emitter(listener.clone());
    let (engine, adoption) = (engine.clone(), adoption.clone());
    move |e| {
        emit(e);
        sweep_if_due(&engine, &adoption, &listener);
    }
}

/// Looks for orphaned nonces of the accounts this relayer has a signer
/// for, in the background, unless it looked less than `SWEEP_EVERY`
/// ago. Called when it sends and on its transaction events: no timer of
/// its own keeps a process alive. Only a signer's accounts: a relayer that could merely watch
/// a dead worker's nonces must not take them from one that can speed
/// them up (that one asks with `resumeTransactions`).
pub(super) fn sweep_if_due(engine: &Rc<TxEngine<JsNode>>, adoption: &Rc<Adoption>, listener: &Option<Function>) {
    if !engine.shares_nonces() {
        return;
    }
    let now = JsRuntime.now();
    if adoption.last_sweep.get().is_some_and(|last| now.saturating_since(last) < SWEEP_EVERY) {
        return;
    }
    adoption.last_sweep.set(Some(now));
    let (engine, adoption, listener) = (engine.clone(), adoption.clone(), listener.clone());
    super::spawn(async move {
        let Ok(chain) = engine.node().signing_chain().await else { return };
        let accounts = adoption.accounts();
        let options = engine.options();
        for address in accounts {
            let start = |_, _, run: Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>| {
                super::spawn(async move {
                    let _ = run.await; // its end is told through events
                })
            };
            let _ = adopt_and_keep(&engine, &adoption, &listener, chain, address, options, start).await;
        }
    });
}

fn address_of(value: &JsValue, field: &str) -> Result<Address, JsValue> {
    let text = value.as_string().unwrap_or_default();
    request::parse_address(field, &FieldValue::Text(text)).map_err(|e| field_error(&e))?.ok_or_else(|| {
        field_error(&TxFieldError { field: field.into(), reason: "must be a 0x-prefixed 20-byte address".into() })
    })
}

#[wasm_bindgen]
impl WasmTxEngine {
    /// Takes over the journaled nonces of `signer`'s account (an adapted
    /// signer, or `{ address }` to watch only) whose owner stopped renewing,
    /// and drives each in the background. Resolves to `{ adopted: [{ nonce,
    /// hashes, outcome: Promise }], unreadable: [{ nonce, reason }] }`.
    #[wasm_bindgen(js_name = resumeTransactions)]
    pub fn resume_transactions(
        &self,
        signer: JsValue,
        chain_id: f64,
        max_wait_blocks: f64,
        options: JsValue,
    ) -> Promise {
        let (engine, listener, adoption) = (self.tx.clone(), self.listener.clone(), self.adoption.clone());
        super::promise(async move {
            let options = tx_options(&options, engine.options(), "options").map_err(|e| field_error(&e))?;
            if !(max_wait_blocks.is_finite() && max_wait_blocks >= 1.0 && max_wait_blocks.fract() == 0.0) {
                let e = TxFieldError {
                    field: "options.maxWaitBlockCount".into(),
                    reason: "must be a whole number ≥ 1".into(),
                };
                return Err(field_error(&e));
            }
            let options = crate::tx::TxOptions { max_wait_blocks: max_wait_blocks as u64, ..options };
            if !engine.shares_nonces() {
                return Err(simple_error(
                    kind::INVALID_REQUEST,
                    CODE_INVALID_PARAMS,
                    "resumeTransactions() needs a fleet store that keeps the journal: fleet: { redis } (Node) or \
                     fleet: { indexedDB: true } (pages); this relayer keeps none",
                ));
            }
            let has_sign = js_sys::Reflect::get(&signer, &"sign".into()).is_ok_and(|f| f.is_function());
            let address = if has_sign {
                let s = JsSigner::from_js(&signer)?;
                adoption.remember(&s);
                s.address()
            } else {
                address_of(&js_sys::Reflect::get(&signer, &"address".into())?, "address")?
            };
            let chain = if chain_id.is_finite() && chain_id > 0.0 {
                chain_id as u64
            } else {
                engine.node().signing_chain().await?
            };
            let adopted = Array::new();
            let start = |nonce: u64, hashes: Vec<B256>, run| {
                let outcome = super::promise(run);
                let entry =
                    Obj::new().set("nonce", nonce as f64).set("hashes", hashes_js(&hashes)).set("outcome", outcome);
                adopted.push(&entry.build());
            };
            let found = adopt_and_keep(&engine, &adoption, &listener, chain, address, options, start).await?;
            let unreadable: Array = found
                .unreadable
                .iter()
                .map(|(nonce, e)| Obj::new().set("nonce", *nonce as f64).set("reason", e.to_string()).build())
                .collect();
            Ok(Obj::new().set("adopted", adopted).set("unreadable", unreadable).build())
        })
    }

    /// The outcome of a nonce this relayer tracks, by `{ nonce, from,
    /// chainId? }` or `{ hash }`: resolves as `sendTransaction` does.
    #[wasm_bindgen(js_name = waitForTransaction)]
    pub fn wait_for_transaction(&self, target: JsValue) -> Promise {
        let engine = self.tx.clone();
        super::promise(async move {
            let get = |k: &str| js_sys::Reflect::get(&target, &k.into()).unwrap_or(JsValue::UNDEFINED);
            let hash = match get("hash").as_string() {
                Some(text) => {
                    let mut bytes = [0u8; 32];
                    if !matches!(text.strip_prefix("0x").map(|h| hex::decode_to_slice(h, &mut bytes)), Some(Ok(()))) {
                        return Err(field_error(&TxFieldError {
                            field: "hash".into(),
                            reason: "must be a 0x-prefixed 32-byte hex string".into(),
                        }));
                    }
                    Some(B256::from(bytes))
                }
                None => None,
            };
            let nonce = get("nonce").as_f64();
            if nonce.is_some_and(|n| !(n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0)) {
                return Err(field_error(&TxFieldError {
                    field: "nonce".into(),
                    reason: "must be a non-negative integer".into(),
                }));
            }
            let from = if get("from").is_undefined() { None } else { Some(address_of(&get("from"), "from")?) };
            if hash.is_none() && (nonce.is_none() || from.is_none()) {
                return Err(simple_error(
                    kind::INVALID_REQUEST,
                    CODE_INVALID_PARAMS,
                    "waitForTransaction() takes { nonce, from, chainId? } or { hash }",
                ));
            }
            let chain = get("chainId").as_f64().filter(|c| c.is_finite() && *c > 0.0).map(|c| c as u64);
            let outcome = engine.outcome_of(chain, from, nonce.map(|n| n as u64), hash).await;
            outcome.map(|o| outcome_js(&o)).map_err(failure_js)
        })
    }
}
