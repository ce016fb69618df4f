//! The caller's signer as the engine sees it: the JS wrapper turns an
//! ethers signer, a viem account or an EIP-1193 wallet into one shape,
//! `{ address, kind, sign(tx) → { raw } | { hash } }`, so this side never
//! sees a key and never depends on either library. And the signers a
//! relayer was given, remembered by account, so that a nonce it adopts
//! from a dead worker (`tx_journal.rs`) can be sped up.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use alloy_primitives::{hex, Address, B256};
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::contract::kind;
use super::descriptors::{simple_error, Obj, CODE_INVALID_PARAMS};
use super::tx_node::hex_quantity;
use crate::time::Instant;
use crate::tx::engine::{Signed, TxSigner};
use crate::tx::fees::Fees;
use crate::tx::request::{self, FieldValue};
use crate::tx::UnsignedTx;

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
    pub(super) chain_id: Option<u64>,
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

/// The signers this relayer was given (sends, cancels, resumes), by
/// account: an adopted nonce is sped up with its account's signer once one
/// is known, and only watched until then. And when the relayer last looked
/// for orphaned nonces (`tx_journal.rs`).
#[derive(Default)]
pub struct Adoption {
    signers: RefCell<Vec<JsSigner>>,
    pub(super) last_sweep: Cell<Option<Instant>>,
}

impl Adoption {
    /// Keeps `signer` (replacing an older one of its account).
    pub(super) fn remember(&self, signer: &JsSigner) {
        let mut signers = self.signers.borrow_mut();
        signers.retain(|s| s.address() != signer.address());
        signers.push(signer.clone());
    }

    /// The accounts a signer is known for.
    pub(super) fn accounts(&self) -> Vec<Address> {
        self.signers.borrow().iter().map(|s| s.address()).collect()
    }

    fn signer_for(&self, address: Address) -> Option<JsSigner> {
        self.signers.borrow().iter().find(|s| s.address() == address).cloned()
    }

    /// Whether a signer is known for `address`.
    pub(super) fn knows(&self, address: Address) -> bool {
        self.signer_for(address).is_some()
    }
}

/// The one signer type the engine runs with here (each type would
/// instantiate its whole async state machine again: ~14 KB of wasm): the
/// caller's, or for an adopted nonce its account's remembered one, looked
/// up at each signature (a later send may bring it; none: watched only).
pub enum WasmSigner {
    /// The signer a call was given.
    Given(JsSigner),
    /// An adopted nonce's: whatever signer is remembered for `address`.
    Remembered {
        /// The account.
        address: Address,
        /// Where its signer may be.
        adoption: Rc<Adoption>,
    },
}

impl WasmSigner {
    fn current(&self) -> Option<JsSigner> {
        match self {
            WasmSigner::Given(signer) => Some(signer.clone()),
            WasmSigner::Remembered { address, adoption } => adoption.signer_for(*address),
        }
    }
}

impl TxSigner<JsValue> for WasmSigner {
    fn address(&self) -> Address {
        match self {
            WasmSigner::Given(signer) => signer.address(),
            WasmSigner::Remembered { address, .. } => *address,
        }
    }
    fn signs_locally(&self) -> bool {
        self.current().is_some_and(|s| s.signs_locally())
    }
    async fn sign(&self, tx: &UnsignedTx) -> Result<Signed, JsValue> {
        match self.current() {
            Some(signer) => signer.sign(tx).await,
            None => Err(simple_error(kind::SIGNER, 4001, "no signer is known for this account: watching only")),
        }
    }
}
