//! The transaction module's node (the `tx-module` build): [`TxNode`] over
//! the relayer it was made for, whose exported `node*` methods
//! (`node_bridge.rs`, in the relayer's own wasm instance) run every call
//! through that relayer's pipeline. The two instances share no memory:
//! values cross as JS (`0x` strings, failure descriptors), and what the
//! answers mean (fees, receipts) is read here.

use alloy_primitives::{hex, Address, B256};
use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::contract::kind;
use crate::runtime::parse_quantity;
use crate::tx::engine::{SendOutcome, TxNode};
use crate::tx::fees::FeeSample;
use crate::tx::receipt::ReceiptInfo;
use crate::tx::UnsignedTx;

/// [`TxNode`] over a relayer (the JS object of the relayer's instance).
pub struct JsNode {
    relayer: JsValue,
    /// The chain every answering endpoint reported, once asked (no `chainId` option).
    verified_chain: std::cell::Cell<Option<u64>>,
    /// How many endpoints the relayer has (fixed for its life), once asked.
    endpoints: std::cell::Cell<Option<usize>>,
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

fn raw_hex(raw: &[u8]) -> JsValue {
    JsValue::from_str(&format!("0x{}", hex::encode(raw)))
}

impl JsNode {
    /// The node of `relayer` (the relayer instance's JS object).
    pub fn new(relayer: JsValue) -> Self {
        JsNode { relayer, verified_chain: None.into(), endpoints: None.into() }
    }

    /// Calls the relayer's method `name` with `args`; a promise's outcome when it returns one.
    async fn invoke(&self, name: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
        let method: Function = get(&self.relayer, name).dyn_into()?;
        let returned = method.apply(&self.relayer, &args.iter().collect::<Array>())?;
        match returned.dyn_into::<Promise>() {
            Ok(promise) => JsFuture::from(promise).await,
            Err(value) => Ok(value),
        }
    }

    /// The chain signatures are bound to (rules in `tx/chain.rs`): the
    /// relayer's `chainId` option, else the chain every answering endpoint
    /// reports, asked of all of them once before the first signature (the
    /// pool's own chain check of those is then done too: `noteChainChecked`).
    pub async fn signing_chain(&self) -> Result<u64, JsValue> {
        if self.is_closed() {
            return Err(super::descriptors::simple_error(
                kind::CLOSED,
                super::descriptors::CODE_DISCONNECTED,
                "the relayer is closed",
            ));
        }
        let configured = self.invoke("configuredChain", &[]).await?.as_f64();
        if let Some(id) = configured.filter(|id| id.is_finite() && *id >= 0.0).map(|id| id as u64) {
            return Ok(id);
        }
        if let Some(id) = self.verified_chain.get() {
            return Ok(id);
        }
        let labels = Array::from(&self.invoke("endpoints", &[]).await?);
        self.endpoints.set(Some(labels.length() as usize));
        let answers = self.on_each_endpoint("eth_chainId", None, usize::MAX).await;
        let mut seen = Vec::new();
        let mut answered = Vec::new();
        let mut last_error = None;
        for (endpoint, answer) in answers.into_iter().enumerate() {
            match answer.map(|v| v.as_string().as_deref().and_then(parse_quantity)) {
                Ok(Some(id)) => {
                    seen.push((labels.get(endpoint as u32).as_string().unwrap_or_default(), id));
                    answered.push(endpoint);
                }
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
        }
        match crate::tx::chain::agreed(&seen) {
            Ok(Some(id)) => {
                self.verified_chain.set(Some(id));
                for endpoint in answered {
                    let _ = self.invoke("noteChainChecked", &[(endpoint as f64).into(), (id as f64).into()]).await;
                }
                Ok(id)
            }
            Ok(None) => Err(last_error.unwrap_or_else(|| {
                super::descriptors::simple_error(kind::INVALID_RESPONSE, -32603, "no endpoint reported its chain id")
            })),
            Err(e) => {
                let chains: Array = seen
                    .iter()
                    .map(|(label, id)| {
                        super::descriptors::Obj::new().set("endpoint", label.as_str()).set("chainId", *id as f64).build()
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
        self.invoke("nodeCall", &[method.into(), params(items)]).await
    }

    /// `method(item)` to each of the relayer's endpoints (the first `limit`),
    /// together, one attempt each (its `attemptOnce`: breakers, quota and
    /// slots as any attempt, no retry): what each answered. For the calls
    /// that ask every node alike (a broadcast of the same bytes, whether
    /// any node knows a hash), made here rather than by exports of the
    /// relayer's module, which every read-only page downloads.
    async fn on_each_endpoint(&self, method: &str, item: Option<JsValue>, limit: usize) -> Vec<Result<JsValue, JsValue>> {
        let count = match self.endpoints.get() {
            Some(count) => count,
            // Asked once: the relayer's labels are built afresh at each call, and a watcher
            // rebroadcasts and looks hashes up every few polls.
            None => {
                let count = self.invoke("endpoints", &[]).await.ok().map(|list| Array::from(&list).length() as usize);
                self.endpoints.set(count);
                count.unwrap_or(0)
            }
        };
        let params = params(item.as_slice());
        let attempts = (0..count.min(limit))
            .map(|endpoint| {
                let args = [JsValue::from(endpoint as f64), method.into(), params.clone()];
                async move { self.invoke("attemptOnce", &args).await }
            })
            .collect();
        crate::runtime::join::join_all(attempts).await
    }

    async fn quantity(&self, method: &str, items: &[JsValue]) -> Result<u64, JsValue> {
        let v = self.call(method, items).await?;
        v.as_string().as_deref().and_then(parse_quantity).ok_or_else(|| {
            super::descriptors::simple_error(kind::INVALID_RESPONSE, -32603, &format!("{method} returned no quantity"))
        })
    }
}

/// A send's outcome as the relayer classified it (`node_bridge.rs outcome_js`).
fn send_outcome(value: Result<JsValue, JsValue>) -> SendOutcome<JsValue> {
    let value = match value {
        Ok(value) => value,
        Err(error) => return SendOutcome::Unknown(error),
    };
    let error = get(&value, "error");
    match get(&value, "outcome").as_string().as_deref() {
        Some("accepted") => SendOutcome::Accepted,
        Some("nonceTooLow") => SendOutcome::NonceTooLow { certain: get(&value, "certain").is_truthy(), error },
        Some("underpriced") => SendOutcome::Underpriced(error),
        Some("feeTooLow") => SendOutcome::FeeTooLow(error),
        Some("rejected") => SendOutcome::Rejected(error),
        _ => SendOutcome::Unknown(error),
    }
}

impl TxNode for JsNode {
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
        send_outcome(self.invoke("nodeSendRaw", &[raw_hex(raw)]).await)
    }

    async fn rebroadcast(&self, raw: &[u8]) {
        let _ = self.on_each_endpoint("eth_sendRawTransaction", Some(raw_hex(raw)), usize::MAX).await;
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
        let found = self.on_each_endpoint("eth_getTransactionByHash", Some(format!("{hash:#x}").into()), 3).await;
        found.into_iter().any(|found| found.is_ok_and(|tx| tx.is_object()))
    }

    async fn closing(&self) {
        let _ = self.invoke("nodeClosing", &[]).await;
    }

    fn is_closed(&self) -> bool {
        get(&self.relayer, "nodeIsClosed")
            .dyn_into::<Function>()
            .and_then(|f| f.call0(&self.relayer))
            .is_ok_and(|closed| closed.is_truthy())
    }
}
