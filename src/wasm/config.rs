//! Hands the JS upstream list and options object to the core's options
//! contract (`crate::input`, decoded with `serde-wasm-bindgen`): names,
//! types, ranges, defaults and the typo hints all live there. What stays
//! here is what only JS has: the call functions of wrapped providers.

use js_sys::{Array, Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::config::{ConfigError, RawOptions};
use crate::input;
use crate::policy::classify::UserRule;
use crate::pool::options::EndpointSpec;

/// Whether a JS value is `undefined` or `null`.
pub fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// One upstream: its spec, and for a wrapped provider the JS function that
/// performs its calls (`(body, timeoutMs) → Promise<{ text } | { observation }>`,
/// made by the JS wrapper).
pub type Upstream = (EndpointSpec, Option<Function>);

/// Parses the upstream list: URL strings, endpoint objects or wrapped providers.
pub fn upstreams(value: &JsValue) -> Result<Vec<Upstream>, ConfigError> {
    let specs = input::upstreams(serde_wasm_bindgen::Deserializer::from(value.clone()))?;
    let items = Array::from(value);
    specs
        .into_iter()
        .enumerate()
        .map(|(i, (spec, wrapped))| {
            if !wrapped {
                return Ok((spec, None));
            }
            let provider = Reflect::get(&items.get(i as u32), &"provider".into()).unwrap_or(JsValue::UNDEFINED);
            let call = provider.dyn_into::<Function>().map_err(|_| {
                ConfigError::new(
                    format!("upstreams[{i}].provider"),
                    "must be an EIP-1193 provider (request) or an ethers provider (send)",
                )
            })?;
            Ok((spec, Some(call)))
        })
        .collect()
}

/// Parses the relayer options object (`undefined` means all defaults).
pub fn options(value: &JsValue) -> Result<(RawOptions, Vec<UserRule>), ConfigError> {
    input::options(serde_wasm_bindgen::Deserializer::from(value.clone()))
}
