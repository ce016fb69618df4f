//! The small shapes the options are made of, each with the words a
//! refusal uses ("must be a number", "must be a boolean or an object"):
//! serde's own visitors would say "f64" or "a sequence".
//!
//! Every shape is read through `deserialize_any`: an object as a map, so
//! all of its keys are seen (`serde-wasm-bindgen` reads only a struct's
//! known fields, so an unknown key would pass unnoticed); an array as a
//! sequence, and nothing else as one (a JS string is iterable, not a list).
//! Objects are decoded by the structs `input_struct!` declares, without
//! serde's derive: one small visitor each, which also tracks the path.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::path;
use super::EndpointInput;

/// An object decoded from a map's entries (what `input_struct!` makes).
pub trait FromMap: Sized {
    /// Reads every entry of `map`, refusing keys it does not know.
    fn from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
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

        impl $crate::input::decode::FromMap for $name {
            fn from_map<'de, A: serde::de::MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
                const FIELDS: &[&str] = &[$($js),*];
                let mut out = $name::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        $($js => out.$field = $crate::input::path::within(format!(".{key}"), || map.next_value())?,)*
                        _ => return Err($crate::input::decode::unknown(key, FIELDS)),
                    }
                }
                Ok(out)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any($crate::input::decode::ObjectVisitor(std::marker::PhantomData))
            }
        }
    };
}
pub(crate) use input_struct;

/// Refuses an unknown key, naming the known one it most likely meant.
pub fn unknown<E: serde::de::Error>(key: String, known: &[&str]) -> E {
    let reason = match super::errors::nearest(&key, known) {
        Some(name) => format!("unknown option (did you mean `{name}`?)"),
        None => "unknown option".to_string(),
    };
    // The path names the unknown key itself.
    path::within(format!(".{key}"), || Err::<(), E>(path::refuse(reason))).unwrap_err()
}

/// Reads a plain object into a `FromMap` type.
pub struct ObjectVisitor<T>(pub PhantomData<T>);

impl<'de, T: FromMap> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
}

/// A JS number (NaN and the infinities included: the range checks refuse them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_f64<E>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
        }
        d.deserialize_f64(V)
    }
}

/// A map object (`headers`, `costs`, `quota`): its entries in the order written.
#[derive(Debug, Default, PartialEq)]
pub struct Entries<T>(pub Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Entries<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Entries<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = path::within(format!(".{key}"), || map.next_value())?;
                    out.push((key, value));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// An array.
#[derive(Debug, Default, PartialEq)]
pub struct List<T>(pub Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListVisitor("an array", PhantomData)).map(List)
    }
}

/// Collects a sequence; `.0` is what a refusal says was expected.
struct ListVisitor<T>(&'static str, PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut out = Vec::new();
        while let Some(item) = path::within(format!("[{}]", out.len()), || seq.next_element())? {
            out.push(item);
        }
        Ok(out)
    }
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

impl<'de, T: FromMap> Deserialize<'de> for Switch<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: FromMap> Visitor<'de> for V<T> {
            type Value = Switch<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a boolean or an object")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Switch<T>, E> {
                Ok(Switch::On(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Switch<T>, A::Error> {
                T::from_map(map).map(Switch::Settings)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// `chainId` as written: a number or bigint, or a decimal or `0x` string.
#[derive(Debug, PartialEq)]
pub enum ChainIdInput {
    /// A number, or a bigint up to 2^63.
    Number(f64),
    /// A string, or a bigint beyond 2^63 (its decimal digits).
    Text(String),
}

impl<'de> Deserialize<'de> for ChainIdInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ChainIdInput;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a positive integer: a number, a bigint, or a decimal or 0x hex string")
            }
            fn visit_f64<E>(self, v: f64) -> Result<ChainIdInput, E> {
                Ok(ChainIdInput::Number(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<ChainIdInput, E> {
                Ok(ChainIdInput::Number(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<ChainIdInput, E> {
                Ok(ChainIdInput::Text(v.to_string()))
            }
            fn visit_str<E>(self, v: &str) -> Result<ChainIdInput, E> {
                Ok(ChainIdInput::Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
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

impl<'de> Deserialize<'de> for UpstreamInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = UpstreamInput;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an http(s) URL string, an endpoint object or an EIP-1193 provider")
            }
            fn visit_str<E>(self, v: &str) -> Result<UpstreamInput, E> {
                Ok(UpstreamInput::Url(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<UpstreamInput, A::Error> {
                EndpointInput::from_map(map).map(|e| UpstreamInput::Endpoint(Box::new(e)))
            }
        }
        d.deserialize_any(V)
    }
}

/// The upstream list (`new FaultTolerantRelayer(upstreams, …)`).
#[derive(Debug)]
pub struct UpstreamList(pub Vec<UpstreamInput>);

impl<'de> Deserialize<'de> for UpstreamList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let expected = "an array of RPC URLs, endpoint objects or providers";
        d.deserialize_any(ListVisitor(expected, PhantomData)).map(UpstreamList)
    }
}
