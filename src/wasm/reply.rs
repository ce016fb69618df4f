//! What a node's reply says, read on the host's side: the body parsed by
//! the host's own `JSON.parse` (no copy into wasm memory), and only `id`,
//! `error.code`, `error.message` read; the `result` stays a JS value for the
//! caller. Shared by the transport (`fetch.rs`) and the wire's batches
//! (`wire.rs`).

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use super::keys::{self, Key};
use super::observation::error_info;
use crate::policy::classify::{Reply, TransportFailure};

#[wasm_bindgen]
extern "C" {
    /// The host's `JSON.parse`, taking the JS string as is (no copy into
    /// wasm memory and back).
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    pub(super) fn json_parse(text: &JsValue) -> Result<JsValue, JsValue>;
}

/// A reply's `id` as a number: a JSON number, or a string holding one
/// (some proxies echo ids as strings). Single and batch replies read ids
/// the same way.
pub(super) fn reply_id(id: &JsValue) -> Option<f64> {
    id.as_f64().or_else(|| id.as_string().and_then(|s| crate::ranges::decimal(&s)))
}

/// Reduces a batch reply to one entry per item, in item order: the reply
/// object with our id, or `undefined` when the node left it out.
pub(super) fn summarise_batch(text: &js_sys::JsString, ids: &[f64]) -> Reply<JsValue> {
    let Ok(value) = json_parse(text) else { return Reply::NotJson };
    if !js_sys::Array::is_array(&value) {
        // A single error object: the node refused the whole batch.
        if value.is_object() && !get_key(&value, "error").is_undefined() {
            return Reply::Error(error_info(&get_key(&value, "error")));
        }
        return Reply::Malformed;
    }
    let replies = js_sys::Array::from(&value);
    let reply_ids: Vec<Option<f64>> = replies.iter().map(|reply| reply_id(&get_key(&reply, "id"))).collect();
    let ordered = js_sys::Array::new_with_length(ids.len() as u32);
    for (pos, k) in crate::rpc::batch_match::match_replies(ids, &reply_ids).into_iter().enumerate() {
        if let Some(k) = k {
            ordered.set(pos as u32, replies.get(k as u32));
        }
    }
    Reply::Result(ordered.into())
}

fn get_key(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// Reduces a reply body to what the policies read.
pub(super) fn summarise(text: &js_sys::JsString, our_id: f64) -> Reply<JsValue> {
    let Ok(value) = json_parse(text) else { return Reply::NotJson };
    summarise_value(&value, our_id)
}

/// Reduces one parsed reply object (a whole body, or a batch's item) to
/// what the policies read.
pub(super) fn summarise_value(value: &JsValue, our_id: f64) -> Reply<JsValue> {
    let value = value.clone();
    if !value.is_object() || js_sys::Array::is_array(&value) {
        return Reply::Malformed;
    }
    let id = keys::get(&value, Key::Id);
    let error = keys::get(&value, Key::Error);
    let has_error = !error.is_undefined() && !error.is_null();
    let has_result = keys::has(&value, Key::Result);
    let id_matches = reply_id(&id) == Some(our_id) || (has_error && id.is_null());
    if !id_matches {
        return Reply::WrongId;
    }
    match (has_error, has_result) {
        (true, true) => Reply::Malformed,
        (true, false) => Reply::Error(error_info(&error)),
        (false, true) => Reply::Result(keys::get(&value, Key::Result)),
        (false, false) => Reply::Malformed,
    }
}

/// Maps a rejected fetch to a failure kind. Node's undici puts the socket
/// error code in `cause.code`; browsers only say "Failed to fetch".
pub(super) fn transport_failure(error: &JsValue, timed_out: bool) -> TransportFailure {
    let get = get_key;
    let name = get(error, "name").as_string().unwrap_or_default();
    if name == "AbortError" || name == "TimeoutError" {
        return if timed_out { TransportFailure::Timeout } else { TransportFailure::Aborted };
    }
    let cause = get(error, "cause");
    let code = get(&cause, "code").as_string().or_else(|| get(error, "code").as_string()).unwrap_or_default();
    match code.as_str() {
        "ECONNREFUSED" => TransportFailure::ConnectionRefused,
        "ENOTFOUND" | "EAI_AGAIN" => TransportFailure::Dns,
        "ECONNRESET" | "EPIPE" | "UND_ERR_SOCKET" | "UND_ERR_CLOSED" => TransportFailure::ConnectionReset,
        "UND_ERR_HEADERS_TIMEOUT" | "UND_ERR_BODY_TIMEOUT" | "ETIMEDOUT" => TransportFailure::Timeout,
        _ => {
            let message = get(error, "message").as_string().unwrap_or_else(|| "network error".into());
            let detail = if code.is_empty() { message } else { format!("{message} ({code})") };
            TransportFailure::Network(detail)
        }
    }
}
