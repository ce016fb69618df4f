//! A value as the host hands it over, seen only as far as the options
//! contract needs: its shape. The package reads JS values (`wasm/config.rs`
//! implements [`Source`] for `JsValue`); native tests read JSON (below).
//!
//! Why not serde: the contract was decoded through serde's traits with
//! `serde-wasm-bindgen`, and serde's generic visitors, its `Deserializer`
//! for JS and the formatting its errors pull in were ~21 KB of the
//! relayer's gzipped wasm (measured 2026-12-03: 246.3 KB with serde, 224.8
//! KB with the decoding stubbed out). One small trait with one
//! implementation per host does the same job: the decoder asks a value
//! for its shape once and walks what it gets.

/// What a value is, with its parts.
#[derive(Debug)]
pub enum Shape<S> {
    /// `undefined` or `null`: the default.
    Absent,
    /// A boolean.
    Bool(bool),
    /// A number (NaN and the infinities included: the range checks refuse them).
    Number(f64),
    /// A bigint, as its decimal digits (a leading `-` when negative).
    BigInt(String),
    /// A string.
    Text(String),
    /// An array's items.
    List(Vec<S>),
    /// A plain object's (or a `Map`'s) entries, in the order written.
    Object(Vec<(String, S)>),
    /// Anything else (a function, a symbol, a `Set`): refused wherever it appears.
    Other,
}

/// A host value the options contract can read.
pub trait Source: Sized {
    /// Whether this is `undefined` or `null` (read without taking the value
    /// apart: a value the wrapper reads itself is never walked).
    fn is_absent(&self) -> bool;

    /// This value's shape (an object's entries and an array's items are
    /// read once, here).
    fn shape(self) -> Shape<Self>;
}

#[cfg(test)]
impl Source for serde_json::Value {
    fn is_absent(&self) -> bool {
        self.is_null()
    }

    fn shape(self) -> Shape<Self> {
        use serde_json::Value;
        match self {
            Value::Null => Shape::Absent,
            Value::Bool(b) => Shape::Bool(b),
            // A whole number past what a JS number holds exactly can only be a bigint in JS.
            Value::Number(n) => match n.as_u64() {
                Some(u) if u > 1 << 53 => Shape::BigInt(u.to_string()),
                _ => Shape::Number(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Shape::Text(s),
            Value::Array(items) => Shape::List(items),
            Value::Object(map) => Shape::Object(map.into_iter().collect()),
        }
    }
}
