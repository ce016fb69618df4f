//! Observations as plain JS objects and back: the bridge that lets an
//! `executeRpcWithRetry` operation report what went wrong (from our bound
//! provider's typed errors or from an ethers/viem error) in terms the
//! classifier understands.

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use super::descriptors::{Obj, Redactor};
use crate::policy::classify::{Observation, Reply, RpcErrorInfo, TransportFailure};
use crate::runtime::{parse_quantity, Payload};
use crate::time::duration_from_millis_f64;

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// Results the pipeline reads (`eth_chainId`, `eth_blockNumber`) are hex strings.
impl Payload for JsValue {
    fn quantity(&self) -> Option<u64> {
        self.as_string().and_then(|s| parse_quantity(&s))
    }

    fn is_empty(&self) -> bool {
        self.is_null() || self.is_undefined()
    }

    fn from_text(text: String) -> Self {
        JsValue::from(text)
    }

    /// An item of a batch reply the transport ordered (`reply::summarise_batch`).
    fn batch_item(&self, pos: usize) -> Option<Reply<Self>> {
        if !js_sys::Array::is_array(self) {
            return None;
        }
        let reply = Reflect::get_u32(self, pos as u32).unwrap_or(JsValue::UNDEFINED);
        if !reply.is_object() {
            return None;
        }
        let error = get(&reply, "error");
        if error.is_undefined() || error.is_null() {
            return Some(Reply::Result(get(&reply, "result")));
        }
        Some(Reply::Error(error_info(&error)))
    }
}

/// A plain description of one observation, for the op wrapper.
pub fn observation_to_js(observation: &Observation<JsValue>, redactor: &Redactor) -> JsValue {
    match observation {
        Observation::Transport(t) => {
            let kind = match t {
                TransportFailure::Timeout => "timeout",
                TransportFailure::ConnectionRefused => "refused",
                TransportFailure::ConnectionReset => "reset",
                TransportFailure::Dns => "dns",
                TransportFailure::Aborted => "aborted",
                TransportFailure::Network(_) => "network",
            };
            Obj::new().set("transport", kind).build()
        }
        Observation::Answered(_) => Obj::new().set("status", 200.0).set("body", "answered").build(),
        Observation::Http { status, retry_after, reply } => {
            let obj = Obj::new().set("status", *status as f64).maybe("retryAfter", retry_after.clone());
            match reply {
                Reply::Error(e) => obj
                    .maybe("code", e.code.map(|c| c as f64))
                    .set("message", redactor.scrub(&e.message))
                    .maybe("backoffSeconds", e.backoff_hint.map(|d| d.as_secs_f64()))
                    .build(),
                Reply::NotJson => obj.set("body", "notJson").build(),
                Reply::WrongId => obj.set("body", "wrongId").build(),
                Reply::TooLarge => obj.set("body", "tooLarge").build(),
                Reply::InexactNumber => obj.set("body", "inexactNumber").build(),
                Reply::Malformed | Reply::Result(_) => obj.set("body", "malformed").build(),
            }
        }
    }
}

/// Rebuilds an observation from its plain description (from
/// [`observation_to_js`] or from the JS wrapper's reading of a foreign
/// error). Unknown shapes become a generic network failure.
pub fn observation_from_js(plain: &JsValue) -> Observation<JsValue> {
    if let Some(kind) = get(plain, "transport").as_string() {
        let failure = match kind.as_str() {
            "timeout" => TransportFailure::Timeout,
            "refused" => TransportFailure::ConnectionRefused,
            "reset" => TransportFailure::ConnectionReset,
            "dns" => TransportFailure::Dns,
            "aborted" => TransportFailure::Aborted,
            _ => TransportFailure::Network(get(plain, "message").as_string().unwrap_or_default()),
        };
        return Observation::Transport(failure);
    }
    let status = get(plain, "status").as_f64().filter(|s| (100.0..=599.0).contains(s)).map_or(200, |s| s as u16);
    let retry_after = get(plain, "retryAfter").as_string();
    let code = get(plain, "code").as_f64().filter(|c| c.fract() == 0.0 && c.abs() < 9e15).map(|c| c as i64);
    let message = get(plain, "message").as_string();
    let reply = if code.is_some() || message.is_some() {
        let backoff_hint = get(plain, "backoffSeconds")
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| duration_from_millis_f64(s * 1000.0));
        Reply::Error(RpcErrorInfo { code, message: message.unwrap_or_default(), data: None, backoff_hint })
    } else {
        match get(plain, "body").as_string().as_deref() {
            Some("notJson") => Reply::NotJson,
            Some("wrongId") => Reply::WrongId,
            Some("tooLarge") => Reply::TooLarge,
            Some("inexactNumber") => Reply::InexactNumber,
            _ => Reply::Malformed,
        }
    };
    Observation::Http { status, retry_after, reply }
}

/// A JSON-RPC error object (or a bare string) as the policies read it.
pub(super) fn error_info(error: &JsValue) -> RpcErrorInfo<JsValue> {
    if let Some(text) = error.as_string() {
        return RpcErrorInfo { code: None, message: text, data: None, backoff_hint: None };
    }
    let code =
        get(error, "code").as_f64().filter(|c| c.is_finite() && c.fract() == 0.0 && c.abs() < 9e15).map(|c| c as i64);
    let message = get(error, "message").as_string().unwrap_or_default();
    let data = Some(get(error, "data")).filter(|d| !d.is_undefined());
    let backoff_hint = data
        .as_ref()
        .filter(|d| d.is_object())
        .map(|d| get(&get(d, "rate"), "backoff_seconds"))
        .and_then(|s| s.as_f64())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| duration_from_millis_f64(s * 1000.0));
    RpcErrorInfo { code, message, data, backoff_hint }
}
