//! The transaction layer's node: its calls go through the relayer's
//! pipeline (retry, breakers, quota), bypassing the read cache and dedup
//! so every poll sees the chain as it is now.

use std::rc::Rc;

use alloy_primitives::{hex, Address, B256};
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::contract::kind;
use super::core::{CallFailure, Core};
use crate::pool::SuccessValue;
use crate::runtime::join::join_all;
use crate::runtime::parse_quantity;
use crate::tx::chain;
use crate::tx::engine::{SendOutcome, TxNode};
use crate::tx::fees::FeeSample;
use crate::tx::receipt::ReceiptInfo;
use crate::tx::send_outcome::classify_send;
use crate::tx::UnsignedTx;

/// [`TxNode`] over a relayer's core.
pub struct CoreNode {
    pub(super) core: Rc<Core>,
    /// The chain every answering endpoint reported, once asked (no `chainId` option).
    pub(super) verified_chain: std::cell::Cell<Option<u64>>,
}

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A `0x` quantity of up to 128 bits.
pub fn quantity128(value: &JsValue) -> Option<u128> {
    let s = value.as_string()?;
    let digits = s.strip_prefix("0x")?;
    if digits.is_empty() || digits.len() > 32 {
        return None;
    }
    u128::from_str_radix(digits, 16).ok()
}

fn b256(value: &JsValue) -> Option<B256> {
    let s = value.as_string()?;
    let mut out = [0u8; 32];
    hex::decode_to_slice(s.strip_prefix("0x")?, &mut out).ok()?;
    Some(B256::from(out))
}

/// Hex of a quantity as JSON-RPC wants it (no leading zeros).
pub fn hex_quantity(v: u128) -> String {
    format!("{v:#x}")
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

    async fn call(&self, method: &str, items: &[JsValue]) -> Result<JsValue, JsValue> {
        match self.core.call(method, &params(items)).await {
            Ok(SuccessValue::Result(v)) => Ok(v),
            Ok(SuccessValue::AlreadyKnown) => Ok(JsValue::NULL),
            Err(f) => Err(self.core.call_error(&f)),
        }
    }

    async fn quantity(&self, method: &str, items: &[JsValue]) -> Result<u64, JsValue> {
        let v = self.call(method, items).await?;
        v.as_string().as_deref().and_then(parse_quantity).ok_or_else(|| {
            super::descriptors::simple_error(kind::INVALID_RESPONSE, -32603, &format!("{method} returned no quantity"))
        })
    }

    fn raw_param(raw: &[u8]) -> JsValue {
        JsValue::from_str(&format!("0x{}", hex::encode(raw)))
    }

    fn send_outcome(&self, failure: CallFailure) -> SendOutcome<JsValue> {
        let error = self.core.call_error(&failure);
        let CallFailure::Failed(f) = failure else { return SendOutcome::Unknown(error) };
        classify_send(&f, error)
    }
}

impl TxNode for CoreNode {
    type Receipt = JsValue;
    type Error = JsValue;

    async fn block_number(&self) -> Result<u64, JsValue> {
        self.quantity("eth_blockNumber", &[]).await
    }

    async fn transaction_count(&self, address: Address, pending: bool) -> Result<u64, JsValue> {
        let tag = if pending { "pending" } else { "latest" };
        self.quantity("eth_getTransactionCount", &[format!("{address:#x}").into(), tag.into()]).await
    }

    async fn fee_sample(&self) -> FeeSample {
        let mut sample = FeeSample::default();
        let history = self.call("eth_feeHistory", &["0x5".into(), "latest".into(), params(&[50.into()])]).await;
        if let Ok(history) = history {
            let bases = get(&history, "baseFeePerGas");
            if Array::is_array(&bases) {
                let bases = Array::from(&bases);
                sample.next_base_fee = quantity128(&bases.get(bases.length().saturating_sub(1)));
            }
            let rewards = get(&history, "reward");
            if Array::is_array(&rewards) {
                let mut tips: Vec<u128> = Array::from(&rewards)
                    .iter()
                    .filter_map(|row| quantity128(&Reflect::get_u32(&row, 0).ok()?))
                    .collect();
                tips.sort_unstable();
                sample.reward_median = tips.get(tips.len() / 2).copied().filter(|_| !tips.is_empty());
            }
        }
        if sample.next_base_fee.is_some() {
            sample.tip_hint = self.call("eth_maxPriorityFeePerGas", &[]).await.ok().and_then(|v| quantity128(&v));
        } else {
            sample.gas_price = self.call("eth_gasPrice", &[]).await.ok().and_then(|v| quantity128(&v));
        }
        sample
    }

    async fn estimate_gas(&self, tx: &UnsignedTx) -> Result<u64, JsValue> {
        let request = Object::new();
        let set = |k: &str, v: JsValue| {
            let _ = Reflect::set(&request, &k.into(), &v);
        };
        set("from", format!("{:#x}", tx.from).into());
        if let Some(to) = tx.to {
            set("to", format!("{to:#x}").into());
        }
        set("value", format!("{:#x}", tx.value).into());
        set("data", format!("0x{}", hex::encode(&tx.data)).into());
        self.quantity("eth_estimateGas", &[request.into()]).await
    }

    async fn send_raw(&self, raw: &[u8]) -> SendOutcome<JsValue> {
        match self.core.call("eth_sendRawTransaction", &params(&[Self::raw_param(raw)])).await {
            Ok(_) => SendOutcome::Accepted,
            Err(failure) => self.send_outcome(failure),
        }
    }

    async fn rebroadcast(&self, raw: &[u8]) {
        let count = self.core.pipeline.config().endpoints.len();
        let sends = (0..count).map(|endpoint| {
            let core = self.core.clone();
            let params = params(&[Self::raw_param(raw)]);
            async move {
                let _ = core.attempt_once(endpoint, "eth_sendRawTransaction".into(), params, None).await;
            }
        });
        join_all(sends.collect()).await;
    }

    async fn receipt(&self, hash: B256) -> Result<Option<(ReceiptInfo, JsValue)>, JsValue> {
        let receipt = self.call("eth_getTransactionReceipt", &[format!("{hash:#x}").into()]).await?;
        if receipt.is_null() || receipt.is_undefined() || !receipt.is_object() {
            return Ok(None);
        }
        let number = get(&receipt, "blockNumber").as_string().as_deref().and_then(parse_quantity);
        let block_hash = b256(&get(&receipt, "blockHash"));
        Ok(match (number, block_hash) {
            (Some(block_number), Some(block_hash)) => Some((ReceiptInfo { hash, block_number, block_hash }, receipt)),
            _ => None, // a pending receipt (some nodes) is not an inclusion
        })
    }

    async fn known(&self, hash: B256) -> bool {
        let count = self.core.pipeline.config().endpoints.len().min(3);
        let lookups = (0..count).map(|endpoint| {
            let core = self.core.clone();
            let params = params(&[format!("{hash:#x}").into()]);
            async move {
                let found = core.attempt_once(endpoint, "eth_getTransactionByHash".into(), params, None).await;
                found.is_ok_and(|v| v.is_object())
            }
        });
        join_all(lookups.collect()).await.into_iter().any(|found| found)
    }

    async fn closing(&self) {
        self.core.pipeline.closing().await;
    }

    fn is_closed(&self) -> bool {
        self.core.closed()
    }
}
