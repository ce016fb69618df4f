//! The small shapes the options are made of, each with the words a
//! refusal uses ("must be a number", "must be a boolean or an object").
//!
//! Every shape reads a host value through [`Source::shape`]: an object's
//! entries are all seen (an unknown key is refused with a hint), an array
//! is a list and nothing else is (a JS string is iterable, not a list).
//! Objects are decoded by the structs `input_struct!` declares. A refusal
//! ([`Refusal`]) carries its path up: each level that decodes a nested
//! value adds its segment (`.breaker`, `[2]`) on the way out.

use super::errors::Refusal;
use super::source::{Shape, Source};
use super::EndpointInput;

/// Decodes `f`'s value one level down, at `segment` (`.key` or `[i]`).
pub fn within<T>(segment: impl FnOnce() -> String, decoded: Result<T, Refusal>) -> Result<T, Refusal> {
    decoded.map_err(|mut refusal| {
        refusal.segments.push(segment());
        refusal
    })
}

/// A shape of the options contract, read from any host value.
pub trait Decode: Sized {
    /// Reads `value`, or says why not.
    fn decode<S: Source>(value: S) -> Result<Self, Refusal>;
}

/// An object decoded from its entries (what `input_struct!` makes).
pub trait FromEntries: Sized {
    /// Reads every entry, refusing keys it does not know.
    fn from_entries<S: Source>(entries: Vec<(String, S)>) -> Result<Self, Refusal>;
}

/// Declares an input struct (every field optional) and its decoding: the
/// JS name of each field is written once, here.
macro_rules! input_struct {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ty = $js:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Default)]
        pub struct $name {
            $($(#[$fmeta])* #[allow(missing_docs)] pub $field: Option<$ty>,)*
        }

        impl $crate::input::decode::FromEntries for $name {
            fn from_entries<S: $crate::input::source::Source>(
                entries: Vec<(String, S)>,
            ) -> Result<Self, $crate::input::Refusal> {
                const FIELDS: &[&str] = &[$($js),*];
                let mut out = $name::default();
                for (key, value) in entries {
                    match key.as_str() {
                        $($js => out.$field = $crate::input::decode::field(&key, value)?,)*
                        _ => return Err($crate::input::decode::unknown(key, FIELDS)),
                    }
                }
                Ok(out)
            }
        }

        impl $crate::input::decode::Decode for $name {
            fn decode<S: $crate::input::source::Source>(value: S) -> Result<Self, $crate::input::Refusal> {
                $crate::input::decode::object(value)
            }
        }
    };
}
pub(crate) use input_struct;

/// Decodes an object's field `key`: absent is `None`, a refusal names the key.
pub fn field<T: Decode, S: Source>(key: &str, value: S) -> Result<Option<T>, Refusal> {
    within(|| format!(".{key}"), Option::<T>::decode(value))
}

/// Refuses an unknown key, naming the known one it most likely meant.
pub fn unknown(key: String, known: &[&str]) -> Refusal {
    let reason = match super::errors::nearest(&key, known) {
        Some(name) => format!("unknown option (did you mean `{name}`?)"),
        None => "unknown option".to_string(),
    };
    // The path names the unknown key itself.
    Refusal { segments: vec![format!(".{key}")], reason }
}

/// Reads a plain object into a `FromEntries` type.
pub fn object<T: FromEntries, S: Source>(value: S) -> Result<T, Refusal> {
    match value.shape() {
        Shape::Object(entries) => T::from_entries(entries),
        _ => Err(Refusal::expected("an object")),
    }
}

/// A field: absent (`undefined` or `null`) is `None`, its default.
impl<T: Decode> Decode for Option<T> {
    fn decode<S: Source>(value: S) -> Result<Self, Refusal> {
        if value.is_absent() {
            return Ok(None);
        }
        T::decode(value).map(Some)
    }
}

/// A JS number (NaN and the infinities included: the range checks refuse
/// them), or a bigint within 64 bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f64);

impl Decode for Num {
    fn decode<S: Source>(value: S) -> Result<Self, Refusal> {
        match value.shape() {
            Shape::Number(n) => Ok(Num(n)),
            Shape::BigInt(digits) => bigint(&digits).map(Num),
            _ => Err(Refusal::expected("a number")),
        }
    }
}

/// A bigint's value as a JS number, if it is within 64 bits.
fn bigint(digits: &str) -> Result<f64, Refusal> {
    let fits = digits.parse::<i64>().map(|v| v as f64).or_else(|_| digits.parse::<u64>().map(|v| v as f64));
    fits.map_err(|_| Refusal::new("is a bigint out of range"))
}

impl Decode for String {
    fn decode<S: Source>(value: S) -> Result<Self, Refusal> {
        match value.shape() {
            Shape::Text(s) => Ok(s),
            _ => Err(Refusal::expected("a string")),
        }
    }
}

impl Decode for bool {
    fn decode<S: Source>(value: S) -> Result<Self, Refusal> {
        match value.shape() {
            Shape::Bool(b) => Ok(b),
            _ => Err(Refusal::expected("a boolean")),
        }
    }
}

/// A value the JS wrapper reads itself (`logger`, `fleet.redis`, a
/// wrapped provider): only its presence counts here, and it is never walked.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ignored;

impl Decode for Ignored {
    fn decode<S: Source>(_: S) -> Result<Self, Refusal> {
        Ok(Ignored)
    }
}

/// A map object (`headers`, `costs`, `quota`): its entries in the order written.
#[derive(Debug, Default, PartialEq)]
pub struct Entries<T>(pub Vec<(String, T)>);

impl<T: Decode> Decode for Entries<T> {
    fn decode<S: Source>(value: S) -> Result<Self, Refusal> {
        let Shape::Object(entries) = value.shape() else { return Err(Refusal::expected("an object")) };
        let decoded = entries.into_iter().map(|(key, v)| {
            let value = within(|| format!(".{key}"), T::decode(v))?;
            Ok((key, value))
        });
        decoded.collect::<Result<_, _>>().map(Entries)
    }
}

/// An array.
#[derive(Debug, Default, PartialEq)]
pub struct List<T>(pub Vec<T>);

impl<T: Decode> Decode for List<T> {
    fn decode<S: Source>(value: S) -> Result<Self, Refusal> {
        list(value, "an array").map(List)
    }
}

/// Reads an array's items; `expected` is what a refusal says it must be.
fn list<T: Decode, S: Source>(value: S, expected: &str) -> Result<Vec<T>, Refusal> {
    let Shape::List(items) = value.shape() else { return Err(Refusal::expected(expected)) };
    let decoded = items.into_iter().enumerate().map(|(i, item)| within(|| format!("[{i}]"), T::decode(item)));
    decoded.collect()
}

/// An option that takes `true`/`false` or an object of settings
/// (`cache`, `hedge`, `adaptiveTimeout`).
#[derive(Debug, PartialEq)]
pub enum Switch<T> {
    /// `true` (the defaults) or `false` (off).
    On(bool),
    /// Settings, which also mean on.
    Settings(T),
}

impl<T: FromEntries> Decode for Switch<T> {
    fn decode<S: Source>(value: S) -> Result<Self, Refusal> {
        match value.shape() {
            Shape::Bool(b) => Ok(Switch::On(b)),
            Shape::Object(entries) => T::from_entries(entries).map(Switch::Settings),
            _ => Err(Refusal::expected("a boolean or an object")),
        }
    }
}

/// `chainId` as written: a number or bigint, or a decimal or `0x` string.
#[derive(Debug, PartialEq)]
pub enum ChainIdInput {
    /// A number, or a negative bigint.
    Number(f64),
    /// A string, or a bigint's decimal digits (exact, up to 2^64 − 1).
    Text(String),
}

impl Decode for ChainIdInput {
    fn decode<S: Source>(value: S) -> Result<Self, Refusal> {
        match value.shape() {
            Shape::Number(n) => Ok(ChainIdInput::Number(n)),
            Shape::BigInt(digits) if digits.parse::<u64>().is_ok() => Ok(ChainIdInput::Text(digits)),
            Shape::BigInt(digits) => bigint(&digits).map(ChainIdInput::Number),
            Shape::Text(s) => Ok(ChainIdInput::Text(s)),
            _ => Err(Refusal::expected("a positive integer: a number, a bigint, or a decimal or 0x hex string")),
        }
    }
}

/// One entry of the upstream list.
#[derive(Debug)]
pub enum UpstreamInput {
    /// An RPC URL.
    Url(String),
    /// An endpoint object (with a `url` or a wrapped `provider`).
    Endpoint(Box<EndpointInput>),
}

impl Decode for UpstreamInput {
    fn decode<S: Source>(value: S) -> Result<Self, Refusal> {
        match value.shape() {
            Shape::Text(url) => Ok(UpstreamInput::Url(url)),
            Shape::Object(entries) => {
                EndpointInput::from_entries(entries).map(|e| UpstreamInput::Endpoint(Box::new(e)))
            }
            _ => Err(Refusal::expected("an http(s) URL string, an endpoint object or an EIP-1193 provider")),
        }
    }
}

/// The upstream list (`new FaultTolerantRelayer(upstreams, …)`).
#[derive(Debug)]
pub struct UpstreamList(pub Vec<UpstreamInput>);

impl Decode for UpstreamList {
    fn decode<S: Source>(value: S) -> Result<Self, Refusal> {
        list(value, "an array of RPC URLs, endpoint objects or providers").map(UpstreamList)
    }
}
