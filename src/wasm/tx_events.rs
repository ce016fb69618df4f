//! The JS form of transaction events (`txSubmitted`, `speedUp`, `reorg`…):
//! numbers as numbers, hashes as 0x strings, fees in wei as decimal strings.

use alloy_primitives::B256;
use wasm_bindgen::JsValue;

use super::contract::event_type;
use super::descriptors::Obj;
use crate::tx::engine::TxEvent;
use crate::tx::fees::Fees;
use crate::tx::slot::Resolution;

fn fees_js(o: Obj, fees: Fees) -> Obj {
    match fees {
        Fees::Eip1559 { max_fee, tip } => {
            o.set("maxFeePerGas", format!("{max_fee}")).set("maxPriorityFeePerGas", format!("{tip}"))
        }
        Fees::Legacy { gas_price } => o.set("gasPrice", format!("{gas_price}")),
    }
}

/// The JS form of a transaction event.
pub fn event_js(e: &TxEvent) -> JsValue {
    let h = |h: &B256| format!("{h:#x}");
    match e {
        TxEvent::Adopted { from, nonce, hashes, signer } => Obj::new()
            .set("type", event_type::TX_ADOPTED)
            .set("from", format!("{from:#x}"))
            .set("nonce", *nonce as f64)
            .set("hashes", hashes.iter().map(|x| JsValue::from_str(&h(x))).collect::<js_sys::Array>())
            .set("signer", *signer),
        TxEvent::Submitted { nonce, hash, kind } => Obj::new()
            .set("type", event_type::TX_SUBMITTED)
            .set("nonce", *nonce as f64)
            .set("hash", h(hash))
            .set("kind", kind.as_str()),
        TxEvent::OutcomeUnknown { nonce, hash } => {
            Obj::new().set("type", event_type::TX_UNKNOWN).set("nonce", *nonce as f64).set("hash", h(hash))
        }
        TxEvent::Rebroadcast { nonce, hash } => {
            Obj::new().set("type", event_type::TX_REBROADCAST).set("nonce", *nonce as f64).set("hash", h(hash))
        }
        TxEvent::Replacement { nonce, kind, hash, replaces, fees, block, since } => fees_js(
            Obj::new()
                .set(
                    "type",
                    if *kind == crate::tx::slot::TxKind::Cancel { event_type::CANCEL } else { event_type::SPEED_UP },
                )
                .set("nonce", *nonce as f64)
                .set("hash", h(hash))
                .set("replaces", h(replaces))
                .set("block", *block as f64)
                .maybe("waitedSince", since.map(|b| b as f64)),
            *fees,
        ),
        TxEvent::Included { nonce, hash, confirmations } => Obj::new()
            .set("type", event_type::TX_INCLUDED)
            .maybe("nonce", nonce.map(|n| n as f64))
            .set("hash", h(hash))
            .set("confirmations", *confirmations as f64),
        TxEvent::Reorg { nonce, hash } => {
            Obj::new().set("type", event_type::REORG).maybe("nonce", nonce.map(|n| n as f64)).set("hash", h(hash))
        }
        TxEvent::Resolved { nonce, hash, resolution } => Obj::new()
            .set("type", if *resolution == Resolution::Mined { event_type::TX_MINED } else { event_type::REPLACED })
            .set("nonce", *nonce as f64)
            .set("hash", h(hash))
            .set("outcome", resolution.as_str()),
        TxEvent::NonceResync { from, to } => {
            Obj::new().set("type", event_type::NONCE_RESYNC).set("from", *from as f64).set("to", *to as f64)
        }
        TxEvent::NonceGap { from, to, repaired } => Obj::new()
            .set("type", event_type::NONCE_GAP)
            .set("from", *from as f64)
            .set("to", *to as f64)
            .set("repaired", *repaired),
    }
    .build()
}
