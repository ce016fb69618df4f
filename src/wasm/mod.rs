//! The only place with `#[wasm_bindgen]`: the JS-facing relayer, the
//! browser/Node runtime, the fetch transport, and conversions between JS
//! values and the pure core. Everything here is a thin shell; decisions
//! live in `policy` and `pool`.

// The transaction module's build compiles the shared modules below for the
// few parts it uses (descriptors, option fields); the rest is the
// relayer's, and link-time optimisation drops it.
#![cfg_attr(feature = "tx-module", allow(dead_code))]

// Both builds.
/// The heap allocator of both wasm modules: talc, smaller and faster on
/// wasm than the default dlmalloc (its benchmarks: BENCHMARKS_WASM.md).
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// The promise of an async export's `future`. Boxed, `future_to_promise`
/// (its promise, its task and the wrapper that settles it) is compiled once
/// for every export, not once per export's future.
pub(crate) fn promise(
    future: impl std::future::Future<Output = Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>> + 'static,
) -> js_sys::Promise {
    boxed_promise(Box::pin(future))
}

#[inline(never)]
fn boxed_promise(
    future: std::pin::Pin<Box<dyn std::future::Future<Output = Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>>>>,
) -> js_sys::Promise {
    wasm_bindgen_futures::future_to_promise(future)
}

/// Runs `task` in the background (`spawn_local`), boxed for the same reason.
pub(crate) fn spawn(task: impl std::future::Future<Output = ()> + 'static) {
    boxed_spawn(Box::pin(task));
}

#[inline(never)]
fn boxed_spawn(task: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>) {
    wasm_bindgen_futures::spawn_local(task);
}

mod config;
mod contract;
mod descriptors;
mod js_runtime;
mod keys;
mod timers;
mod tx_fields;

/// Declares modules compiled into one of the two builds only.
macro_rules! modules_when {
    ($cfg:meta: $($name:ident),* $(,)?) => { $(#[cfg($cfg)] mod $name;)* };
}

// The relayer's module (every app loads it): the pool, its transport and
// coordination, and the node the transaction module calls (`node_bridge`).
modules_when!(not(feature = "tx-module"):
    batch, core, delivery, fetch, head_poll, news, node_bridge, node_exports, observation, relayer, reply, stats,
    store, tab_buckets, traced, wire,
);

// The transaction module (loaded on the first transaction call): the
// engine, its signers, journal and fleet nonces, over the relayer's node.
modules_when!(feature = "tx-module":
    tx, tx_events, tx_fleet, tx_journal, tx_module, tx_node, tx_outcome, tx_signer,
);
