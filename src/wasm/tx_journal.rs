//! The journal's entry points on `WasmRelayer`: adopting the unfinished
//! nonces of a worker that died (`tx::engine_journal`), and waiting for a
//! tracked nonce's outcome. Conversions only.

use alloy_primitives::{hex, Address, B256};
use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::contract::kind;
use super::descriptors::{simple_error, Obj, CODE_INVALID_PARAMS};
use super::js_runtime::JsRuntime;
use super::relayer::WasmRelayer;
use super::tx::{emitter, failure_js, hashes_js, outcome_js, JsSigner};
use super::tx_fields::{field_error, tx_options};
use crate::tx::engine::{Signed, TxSigner};
use crate::tx::request::{self, FieldValue, TxFieldError};
use crate::tx::UnsignedTx;

/// An account to watch without a signer: adopted nonces are watched and
/// re-broadcast, never sped up (every signature is refused).
struct WatchOnly(Address);

impl TxSigner<JsValue> for WatchOnly {
    fn address(&self) -> Address {
        self.0
    }
    async fn sign(&self, _tx: &UnsignedTx) -> Result<Signed, JsValue> {
        Err(simple_error(kind::SIGNER, 4001, "no signer was given for this account: watching only"))
    }
}

fn address_of(value: &JsValue, field: &str) -> Result<Address, JsValue> {
    let text = value.as_string().unwrap_or_default();
    request::parse_address(field, &FieldValue::Text(text)).map_err(|e| field_error(&e))?.ok_or_else(|| {
        field_error(&TxFieldError { field: field.into(), reason: "must be a 0x-prefixed 20-byte address".into() })
    })
}

#[wasm_bindgen]
impl WasmRelayer {
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
        let (engine, listener) = (self.tx.clone(), self.core.listener());
        future_to_promise(async move {
            let options = tx_options(&options, engine.options(), "options").map_err(|e| field_error(&e))?;
            if !(max_wait_blocks.is_finite() && max_wait_blocks >= 1.0 && max_wait_blocks.fract() == 0.0) {
                let e = TxFieldError {
                    field: "options.maxWaitBlockCount".into(),
                    reason: "must be a whole number ≥ 1".into(),
                };
                return Err(field_error(&e));
            }
            let options = crate::tx::TxOptions { max_wait_blocks: max_wait_blocks as u64, ..options };
            let has_sign = js_sys::Reflect::get(&signer, &"sign".into()).is_ok_and(|f| f.is_function());
            let (signer, address) = if has_sign {
                let s = JsSigner::from_js(&signer)?;
                let address = s.address();
                (Some(s), address)
            } else {
                (None, address_of(&js_sys::Reflect::get(&signer, &"address".into())?, "address")?)
            };
            let chain = if chain_id.is_finite() && chain_id > 0.0 {
                chain_id as u64
            } else {
                engine.node().signing_chain().await?
            };
            let found = engine.adopt(&JsRuntime, chain, address).await.map_err(failure_js)?;
            let pending = engine.pending(chain, address);
            let adopted: Array = found
                .nonces
                .iter()
                .map(|&nonce| {
                    let hashes = pending.iter().find(|(n, _)| *n == nonce).map(|(_, h)| h.clone()).unwrap_or_default();
                    let (engine, signer, emit) = (engine.clone(), signer.clone(), emitter(listener.clone()));
                    let outcome = future_to_promise(async move {
                        let kept = match &signer {
                            Some(s) => engine.keep(&JsRuntime, s, chain, nonce, options, &emit).await,
                            None => engine.keep(&JsRuntime, &WatchOnly(address), chain, nonce, options, &emit).await,
                        };
                        kept.map(|o| outcome_js(&o)).map_err(failure_js)
                    });
                    Obj::new()
                        .set("nonce", nonce as f64)
                        .set("hashes", hashes_js(&hashes))
                        .set("outcome", outcome)
                        .build()
                })
                .collect();
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
        future_to_promise(async move {
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
