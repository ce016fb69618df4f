//! Property names read on every attempt, made into JS strings once per
//! instance instead of once per read: each `JsValue::from_str` decodes
//! UTF-8 into a fresh JS string, and the hot path reads about ten of them
//! per request (measured in benches/README.md).

use js_sys::Reflect;
use wasm_bindgen::JsValue;

/// A property name the hot path reads.
#[derive(Clone, Copy)]
pub enum Key {
    /// JSON-RPC `id`.
    Id,
    /// JSON-RPC `error`.
    Error,
    /// JSON-RPC `result`.
    Result,
    /// The HTTP sender's `status`.
    Status,
    /// The HTTP sender's or a provider's `text`.
    Text,
    /// The HTTP sender's `retryAfter`.
    RetryAfter,
    /// The HTTP sender's `timedOut`.
    TimedOut,
    /// The HTTP sender's `inexact` (a number JSON.parse would round).
    Inexact,
}

const NAMES: [&str; 8] = ["id", "error", "result", "status", "text", "retryAfter", "timedOut", "inexact"];

thread_local! {
    static KEYS: Vec<JsValue> = NAMES.iter().map(|n| JsValue::from_str(n)).collect();
}

/// `target[key]`, or `undefined` if reading it throws.
pub fn get(target: &JsValue, key: Key) -> JsValue {
    KEYS.with(|keys| Reflect::get(target, &keys[key as usize]).unwrap_or(JsValue::UNDEFINED))
}

/// Whether `target` has `key` (own or inherited).
pub fn has(target: &JsValue, key: Key) -> bool {
    KEYS.with(|keys| Reflect::has(target, &keys[key as usize]).unwrap_or(false))
}
