//! The only place with `#[wasm_bindgen]`: the JS-facing relayer, the
//! browser/Node runtime, the fetch transport, and conversions between JS
//! values and the pure core. Everything here is a thin shell; decisions
//! live in `policy` and `pool`.

mod batch;
mod config;
mod contract;
mod core;
mod delivery;
mod descriptors;
mod fetch;
mod head_poll;
mod js_runtime;
mod keys;
mod news;
mod observation;
mod relayer;
mod reply;
mod stats;
mod store;
mod tab_buckets;
mod timers;
mod tx;
mod tx_events;
mod tx_fields;
mod tx_fleet;
mod tx_journal;
mod tx_node;
mod tx_outcome;
mod tx_signer;
mod wire;
