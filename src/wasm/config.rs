//! Hands the JS upstream list and options object to the core's options
//! contract (`crate::input`): names, types, ranges, defaults and the typo
//! hints all live there. What stays here is what only JS has: how a JS
//! value looks to the contract (`Source`), and the call functions of
//! wrapped providers.

use js_sys::{Array, BigInt, Function, Map, Object, Reflect, Symbol};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::config::{ConfigError, RawOptions};
use crate::input::{self, Shape, Source};
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
    let specs = input::upstreams(value.clone())?;
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
    input::options(value.clone())
}

/// A JS value as the options contract reads it. An object is a plain
/// object or a `Map` (its own enumerable string keys); other iterables
/// (a `Set`, a typed array) and functions are `Other`.
impl Source for JsValue {
    fn is_absent(&self) -> bool {
        absent(self)
    }

    fn shape(self) -> Shape<JsValue> {
        if absent(&self) {
            Shape::Absent
        } else if let Some(b) = self.as_bool() {
            Shape::Bool(b)
        } else if let Some(n) = self.as_f64() {
            Shape::Number(n)
        } else if self.is_bigint() {
            let digits = self.unchecked_ref::<BigInt>().to_string(10).map(String::from);
            digits.map_or(Shape::Other, Shape::BigInt)
        } else if let Some(s) = self.as_string() {
            Shape::Text(s)
        } else if Array::is_array(&self) {
            Shape::List(Array::from(&self).iter().collect())
        } else if let Some(map) = self.dyn_ref::<Map>() {
            let mut entries = Vec::new();
            let mut keyed = true;
            map.for_each(&mut |v, k| match k.as_string() {
                Some(k) => entries.push((k, v)),
                None => keyed = false,
            });
            if keyed {
                Shape::Object(entries)
            } else {
                Shape::Other
            }
        } else if self.is_object() && !Reflect::has(&self, &Symbol::iterator()).unwrap_or(true) {
            let pairs = Object::entries(self.unchecked_ref::<Object>());
            let entries = pairs.iter().map(|pair| {
                let pair = Array::from(&pair);
                (pair.get(0).as_string().unwrap_or_default(), pair.get(1))
            });
            Shape::Object(entries.collect())
        } else {
            Shape::Other
        }
    }
}
