//! Outcomes, typed failures and events of the transaction layer, as JS
//! values (shared by the send, cancel and journal entry points).

use alloy_primitives::B256;
use js_sys::{Array, Function, Object};
use wasm_bindgen::prelude::*;

use super::contract::kind;
use super::descriptors::{simple_error, Obj, CODE_INVALID_PARAMS};
use super::tx_events::event_js;
use super::tx_fields::field_error;
use crate::tx::engine::{TxEvent, TxFailure, TxOutcome};
use crate::tx::slot::Resolution;

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

/// A `NonceStateError` for a call about a transaction this relayer does not
/// (or no longer) track: the caller's mistake, not the node's.
fn nothing_tracked(message: String) -> Obj {
    Obj::new().set("kind", kind::NONCE_STATE).set("code", CODE_INVALID_PARAMS as f64).set("message", message)
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
        TxFailure::Settled(nonce) => nothing_tracked(format!("nonce {nonce} is already settled on chain; nothing to cancel"))
            .set("nonce", nonce as f64)
            .build(),
        TxFailure::UnknownNonce(nonce) => nothing_tracked(format!(
            "no pending transaction of this account with nonce {nonce} is tracked by this relayer"
        ))
        .set("nonce", nonce as f64)
        .build(),
        TxFailure::UnknownHash(hash) => nothing_tracked(format!(
            "no transaction with hash {hash:#x} is tracked by this relayer (pending, or among the last 256 nonces that ended here)"
        ))
        .set("hash", format!("{hash:#x}"))
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

pub(super) fn emitter(listener: Option<Function>) -> impl Fn(TxEvent) {
    move |e: TxEvent| {
        if let Some(l) = &listener {
            let _ = l.call1(&JsValue::UNDEFINED, &event_js(&e));
        }
    }
}
