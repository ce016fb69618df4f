//! The seam between pure policies and the world: a clock, a sleep, a
//! source of randomness and a transport.
//!
//! Two implementations exist. On wasm32 the clock is `performance.now()`,
//! sleeps share one `gloo-timers` host timer (`wasm/timers.rs`),
//! randomness comes from `getrandom` (the platform CSPRNG; never
//! `RandomState`, which is identical in every wasm instance and would make
//! every browser retry in lockstep), and the transport is `fetch` (through
//! the wrapper's HTTP sender, `wasm/fetch.rs`). For native tests, `sim` provides a virtual clock
//! that jumps straight to the next deadline and a scripted transport, so
//! minutes of retry schedule run in microseconds and deterministically.

use std::future::Future;
use std::time::Duration;

use crate::policy::classify::{Reply, RpcErrorInfo};
use crate::policy::Observation;
use crate::time::Instant;

pub mod join;
pub mod notify;
#[cfg(any(test, feature = "sim"))]
pub mod scripted;
#[cfg(any(test, feature = "sim"))]
pub mod sim;

/// Clock, sleep and randomness for the async shells.
pub trait Runtime {
    /// The current time on this runtime's clock.
    fn now(&self) -> Instant;
    /// A future that completes `duration` from now.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()>;
    /// A uniform draw in `[0, 1)`.
    fn random_unit(&self) -> f64;
    /// Wall-clock time since the Unix epoch (only for HTTP-date headers).
    fn unix_time(&self) -> Duration;
}

/// Where and how long one attempt may run, as the pipeline decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptTarget {
    /// The endpoint index in the relayer's list.
    pub endpoint: usize,
    /// How long this attempt may take before the transport gives up.
    pub timeout: Duration,
    /// What to send.
    pub purpose: Purpose,
}

/// What an attempt sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The caller's request.
    Request,
    /// `eth_chainId`, before the first request to an endpoint.
    ChainId,
    /// `[eth_chainId, the caller's request]` as one JSON-RPC batch: a
    /// fresh endpoint checked and asked in one round trip. The reply is the
    /// batch's, in that order (`Payload::batch_item`).
    CheckedRequest,
}

/// What the pipeline reads from a successful result: a hex quantity (for
/// `eth_chainId` and `eth_blockNumber`). Everything else passes through.
pub trait Payload {
    /// The result as a `0x…` quantity, if it is one.
    fn quantity(&self) -> Option<u64>;

    /// Whether the result is empty (JSON `null`: a block or receipt the
    /// node does not have yet), which is never cached.
    fn is_empty(&self) -> bool {
        false
    }

    /// A JSON string result made here rather than by a node (the hash of
    /// a transaction the node already had).
    fn from_text(text: String) -> Self;

    /// Item `pos` of a batch reply (the transport orders the items as they
    /// were sent): its result or error, `None` when the node left it out or
    /// this is no batch reply.
    fn batch_item(&self, pos: usize) -> Option<Reply<Self>>
    where
        Self: Sized;
}

/// Parses a `0x`-prefixed hex quantity of at most 64 bits.
pub fn parse_quantity(s: &str) -> Option<u64> {
    let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    if hex.is_empty() || hex.len() > 16 {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// Simulated payloads: the result's JSON text.
impl Payload for String {
    fn quantity(&self) -> Option<u64> {
        parse_quantity(self)
    }

    fn is_empty(&self) -> bool {
        self == "null"
    }

    fn from_text(text: String) -> Self {
        text
    }

    fn batch_item(&self, pos: usize) -> Option<Reply<Self>> {
        let items = self.strip_prefix(BATCH_MARK)?;
        let item = items.split(ITEM_SEPARATOR).nth(pos)?;
        if let Some(result) = item.strip_prefix('r') {
            return Some(Reply::Result(result.to_string()));
        }
        let (code, message) = item.strip_prefix('e')?.split_once(' ')?;
        let code = code.parse().ok();
        Some(Reply::Error(RpcErrorInfo { code, message: message.to_string(), data: None, backoff_hint: None }))
    }
}

/// How a simulated batch reply starts (`batch_text`).
const BATCH_MARK: &str = "\u{1d}";
/// Between a simulated batch reply's items.
const ITEM_SEPARATOR: char = '\u{1e}';

/// A simulated batch reply: each item's result or error, in order, as
/// `String::batch_item` reads them (`None`: an item the node left out).
#[cfg(any(test, feature = "sim"))]
pub fn batch_text(items: &[Option<Reply<String>>]) -> String {
    let item = |reply: &Option<Reply<String>>| match reply {
        Some(Reply::Result(text)) => format!("r{text}"),
        Some(Reply::Error(e)) => format!("e{} {}", e.code.unwrap_or_default(), e.message),
        _ => String::new(),
    };
    let items: Vec<String> = items.iter().map(item).collect();
    format!("{BATCH_MARK}{}", items.join(&ITEM_SEPARATOR.to_string()))
}

/// Sends one attempt and reports what happened, never panicking and never
/// retrying by itself: retry decisions belong to the pipeline.
pub trait Transport {
    /// The payload type of a successful `result` (a `JsValue` in wasm, so
    /// results pass through untouched; plain text in simulations).
    type Payload;
    /// One prepared call (the encoded body in wasm, a method in simulations).
    type Call;
    /// Performs one attempt of `call` against `target.endpoint`.
    fn send(&self, call: &Self::Call, target: AttemptTarget) -> impl Future<Output = Observation<Self::Payload>>;
}

/// Splitmix64: a tiny, seedable generator for simulations. Not for
/// production jitter (that must come from the platform CSPRNG).
#[derive(Clone, Debug)]
pub struct SeededRandom(u64);

impl SeededRandom {
    /// A generator with a fixed seed, for reproducible simulations.
    pub const fn new(seed: u64) -> Self {
        SeededRandom(seed)
    }

    /// Next uniform draw in `[0, 1)`.
    pub fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A uniform draw in `[0, 1)` from the platform CSPRNG (crypto.getRandomValues
/// in browsers and Node, the OS elsewhere). Falls back to 0.5 if the
/// platform refuses, which only removes jitter instead of panicking.
pub fn crypto_unit() -> f64 {
    let mut bytes = [0u8; 8];
    match getrandom::fill(&mut bytes) {
        Ok(()) => (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64,
        Err(_) => 0.5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_random_is_reproducible_and_in_range() {
        let mut a = SeededRandom::new(7);
        let mut b = SeededRandom::new(7);
        for _ in 0..1000 {
            let x = a.next_unit();
            assert_eq!(x, b.next_unit());
            assert!((0.0..1.0).contains(&x));
        }
    }

    #[test]
    fn crypto_unit_is_in_range_and_varies() {
        let draws: Vec<f64> = (0..64).map(|_| crypto_unit()).collect();
        assert!(draws.iter().all(|x| (0.0..1.0).contains(x)));
        assert!(draws.windows(2).any(|w| w[0] != w[1]));
    }
}
