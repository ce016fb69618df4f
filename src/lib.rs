//! breakwater-rpc: a fault-tolerant Ethereum JSON-RPC client whose retry,
//! failover and classification policies are pure Rust, compiled to
//! WebAssembly and driven by thin async shells.
//!
//! Layers, from the bottom up:
//! - [`time`]: the one clock type every policy takes as an argument;
//!   [`ranges`]: the numeric limits every option obeys.
//! - [`policy`]: pure decisions (backoff, retry budget, classification).
//! - [`runtime`]: the seam to the outside world (clock, sleep, randomness);
//!   a deterministic simulated runtime lives here for native tests.
//! - [`rpc`]: what the library knows about JSON-RPC methods and replies.
//! - [`input`]: the options contract, read from JS values (JSON in tests) and resolved into
//!   the [`config`] types.
//! - [`pool`]: the request pipeline that combines the policies per request.
//! - [`tx`]: nonces, fees, outcome-unknown submission, speed-up and cancel.
//! - `simulation` (native, feature `sim`; tests and examples only): thousands of clients against a simulated
//!   fleet on virtual time, to prove the pool's promises at scale.
//! - `wasm` (wasm32 only): the `#[wasm_bindgen]` surface, the fetch
//!   transport and the browser/Node runtime.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
pub mod config_error;
pub mod coord;
pub mod error;
pub mod input;
pub mod options;
pub mod policy;
pub mod pool;
pub mod ranges;
pub mod redact;
pub mod retry;
pub mod rpc;
pub mod runtime;
#[cfg(all(any(test, feature = "sim"), not(target_arch = "wasm32")))]
pub mod simulation;
pub mod small_sort;
pub mod text;
pub mod time;
pub mod tx;
pub mod url_credentials;
pub mod wait_map;

#[cfg(target_arch = "wasm32")]
mod wasm;
