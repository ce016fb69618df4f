//! Typed reads of JS option objects. Every error names the exact option
//! path (`upstreams[1].methods.allow`, `breaker.openMs`), and unknown keys
//! are refused, so a typo is an error instead of a silently ignored option.

use std::time::Duration;

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::config::ConfigError;

/// Longest duration accepted (one day): anything longer is a unit mistake.
const MAX_MS: f64 = 86_400_000.0;

/// Whether a JS value is `undefined` or `null`.
pub fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// A JS object being read, with its option path.
pub struct Fields {
    obj: JsValue,
    path: String,
}

impl Fields {
    /// Wraps `value` (which must be a plain object) at `path`, refusing keys
    /// not in `allowed`.
    pub fn new(value: &JsValue, path: &str, allowed: &[&str]) -> Result<Self, ConfigError> {
        if !value.is_object() || Array::is_array(value) || value.is_function() {
            return Err(ConfigError::new(if path.is_empty() { "options" } else { path }, "must be an object"));
        }
        let fields = Fields { obj: value.clone(), path: path.to_string() };
        for key in Object::keys(value.unchecked_ref::<Object>()).iter() {
            let key = key.as_string().unwrap_or_default();
            if !allowed.contains(&key.as_str()) {
                return Err(ConfigError::new(fields.field(&key), "unknown option"));
            }
        }
        Ok(fields)
    }

    /// The option path of `key`.
    pub fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The raw value of `key` (undefined when absent).
    pub fn raw(&self, key: &str) -> JsValue {
        Reflect::get(&self.obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    }

    /// A number.
    pub fn num(&self, key: &str) -> Result<Option<f64>, ConfigError> {
        let v = self.raw(key);
        if absent(&v) {
            return Ok(None);
        }
        v.as_f64().map(Some).ok_or_else(|| ConfigError::new(self.field(key), "must be a number"))
    }

    /// A finite number in `[min, max]`.
    pub fn ranged(&self, key: &str, min: f64, max: f64) -> Result<Option<f64>, ConfigError> {
        match self.num(key)? {
            Some(v) if !(v.is_finite() && v >= min && v <= max) => {
                Err(ConfigError::new(self.field(key), "is out of range"))
            }
            other => Ok(other),
        }
    }

    /// A whole number in `[min, max]`.
    pub fn whole(&self, key: &str, min: u32, max: u32) -> Result<Option<u32>, ConfigError> {
        match self.num(key)? {
            Some(v) if !(v.fract() == 0.0 && v >= f64::from(min) && v <= f64::from(max)) => {
                Err(ConfigError::new(self.field(key), format!("must be a whole number between {min} and {max}")))
            }
            Some(v) => Ok(Some(v as u32)),
            None => Ok(None),
        }
    }

    /// A duration in milliseconds, between 0 and one day.
    pub fn ms(&self, key: &str) -> Result<Option<Duration>, ConfigError> {
        match self.num(key)? {
            Some(v) if !(v.is_finite() && (0.0..=MAX_MS).contains(&v)) => {
                Err(ConfigError::new(self.field(key), "must be a number of milliseconds between 0 and 86400000"))
            }
            Some(v) => Ok(Some(Duration::from_micros((v * 1000.0) as u64))),
            None => Ok(None),
        }
    }

    /// A string.
    pub fn string(&self, key: &str) -> Result<Option<String>, ConfigError> {
        let v = self.raw(key);
        if absent(&v) {
            return Ok(None);
        }
        v.as_string().map(Some).ok_or_else(|| ConfigError::new(self.field(key), "must be a string"))
    }

    /// A boolean.
    pub fn boolean(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        let v = self.raw(key);
        if absent(&v) {
            return Ok(None);
        }
        v.as_bool().map(Some).ok_or_else(|| ConfigError::new(self.field(key), "must be true or false"))
    }

    /// An array of strings.
    pub fn strings(&self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        let v = self.raw(key);
        if absent(&v) {
            return Ok(None);
        }
        if !Array::is_array(&v) {
            return Err(ConfigError::new(self.field(key), "must be an array of strings"));
        }
        Array::from(&v)
            .iter()
            .enumerate()
            .map(|(i, s)| {
                s.as_string().ok_or_else(|| ConfigError::new(format!("{}[{i}]", self.field(key)), "must be a string"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// A nested object with its own allowed keys.
    pub fn object(&self, key: &str, allowed: &[&str]) -> Result<Option<Fields>, ConfigError> {
        let v = self.raw(key);
        if absent(&v) {
            return Ok(None);
        }
        Fields::new(&v, &self.field(key), allowed).map(Some)
    }

    /// A map object: every own key with its value.
    pub fn entries(&self, key: &str) -> Result<Option<Vec<(String, JsValue)>>, ConfigError> {
        let v = self.raw(key);
        if absent(&v) {
            return Ok(None);
        }
        if !v.is_object() || Array::is_array(&v) {
            return Err(ConfigError::new(self.field(key), "must be an object"));
        }
        let keys = Object::keys(v.unchecked_ref::<Object>());
        Ok(Some(
            keys.iter()
                .map(|k| {
                    let name = k.as_string().unwrap_or_default();
                    let value = Reflect::get(&v, &k).unwrap_or(JsValue::UNDEFINED);
                    (name, value)
                })
                .collect(),
        ))
    }
}
