//! Transaction requests and options, converted from JS: each property
//! to a [`FieldValue`] the core parses (`tx::request`, `tx::option_fields`),
//! and a field error back to the descriptor the wrapper throws.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::config::absent;
use super::contract::kind;
use super::descriptors::{Obj, CODE_INVALID_PARAMS};
use crate::tx::request::{FieldValue, TxFieldError};
use crate::tx::TxOptions;

fn field_value(value: &JsValue) -> FieldValue {
    if absent(value) {
        FieldValue::Absent
    } else if let Some(s) = value.as_string() {
        FieldValue::Text(s)
    } else if let Some(n) = value.as_f64() {
        FieldValue::Number(n)
    } else if let Some(b) = value.as_bool() {
        FieldValue::Bool(b)
    } else if value.is_bigint() {
        let text = value.clone().unchecked_into::<js_sys::BigInt>().to_string(10).ok().and_then(|s| s.as_string());
        text.map_or(FieldValue::Other("an unreadable bigint"), FieldValue::BigInt)
    } else if value.is_object() {
        FieldValue::Other("an object")
    } else {
        FieldValue::Other("a symbol")
    }
}

/// The own properties of a request object, as named fields.
pub fn js_fields(value: &JsValue) -> Result<Vec<(String, FieldValue)>, TxFieldError> {
    if absent(value) || !value.is_object() || Array::is_array(value) {
        return Err(TxFieldError { field: "tx".into(), reason: "must be a transaction request object".into() });
    }
    let keys = Object::keys(&Object::from(value.clone()));
    let get = |k: &str| Reflect::get(value, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED);
    Ok(keys.iter().filter_map(|k| k.as_string()).map(|k| (k.clone(), field_value(&get(&k)))).collect())
}

/// An account address argument (`pendingTransactions(chainId, address)`),
/// or the `InvalidTransactionError` descriptor that refuses it: the same
/// rules whether the transaction engine is loaded or not (the relayer's
/// module answers for a page that has not loaded it: `checkTxAddress`).
pub fn account_address(value: &JsValue) -> Result<alloy_primitives::Address, JsValue> {
    crate::tx::request::parse_address("address", &field_value(value))
        .map_err(|e| field_error(&e))?
        .ok_or_else(|| field_error(&TxFieldError { field: "address".into(), reason: "is required".into() }))
}

/// The descriptor of a bad transaction field (`InvalidTransactionError` in JS).
pub fn field_error(e: &TxFieldError) -> JsValue {
    Obj::new()
        .set("kind", kind::INVALID_TRANSACTION)
        .set("code", CODE_INVALID_PARAMS as f64)
        .set("field", e.field.as_str())
        .set("message", e.to_string())
        .build()
}

/// Options `value` (absent: `base` unchanged) over `base`; `path` names
/// the option in errors.
pub fn tx_options(value: &JsValue, base: TxOptions, path: &str) -> Result<TxOptions, TxFieldError> {
    if absent(value) {
        return Ok(base);
    }
    let not_object = |_| TxFieldError { field: format!("{path}."), reason: "must be an object".into() };
    base.with_fields(path, &js_fields(value).map_err(not_object)?)
}
