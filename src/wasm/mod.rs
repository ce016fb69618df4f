//! The only place with `#[wasm_bindgen]`: the JS-facing relayer, the
//! browser/Node runtime, the fetch transport, and conversions between JS
//! values and the pure core. Everything here is a thin shell; decisions
//! live in `policy` and `pool`.

// The transaction module's build compiles the shared modules below for the
// few parts it uses (descriptors, option fields); the rest is the
// relayer's, and link-time optimisation drops it.
#![cfg_attr(feature = "tx-module", allow(dead_code))]

// Both builds.
mod config;
mod contract;
mod descriptors;
mod js_runtime;
mod keys;
mod timers;
mod tx_fields;

// The relayer's module (every app loads it): the pool, its transport and
// coordination, and the node the transaction module calls (`node_bridge`).
#[cfg(not(feature = "tx-module"))]
mod batch;
#[cfg(not(feature = "tx-module"))]
mod core;
#[cfg(not(feature = "tx-module"))]
mod delivery;
#[cfg(not(feature = "tx-module"))]
mod fetch;
#[cfg(not(feature = "tx-module"))]
mod head_poll;
#[cfg(not(feature = "tx-module"))]
mod news;
#[cfg(not(feature = "tx-module"))]
mod node_bridge;
#[cfg(not(feature = "tx-module"))]
mod node_exports;
#[cfg(not(feature = "tx-module"))]
mod observation;
#[cfg(not(feature = "tx-module"))]
mod relayer;
#[cfg(not(feature = "tx-module"))]
mod reply;
#[cfg(not(feature = "tx-module"))]
mod stats;
#[cfg(not(feature = "tx-module"))]
mod store;
#[cfg(not(feature = "tx-module"))]
mod tab_buckets;
#[cfg(not(feature = "tx-module"))]
mod wire;

// The transaction module (loaded on the first transaction call): the
// engine, its signers, journal and fleet nonces, over the relayer's node.
#[cfg(feature = "tx-module")]
mod tx;
#[cfg(feature = "tx-module")]
mod tx_events;
#[cfg(feature = "tx-module")]
mod tx_fleet;
#[cfg(feature = "tx-module")]
mod tx_journal;
#[cfg(feature = "tx-module")]
mod tx_module;
#[cfg(feature = "tx-module")]
mod tx_node;
#[cfg(feature = "tx-module")]
mod tx_outcome;
#[cfg(feature = "tx-module")]
mod tx_signer;
