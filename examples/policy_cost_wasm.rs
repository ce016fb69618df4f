//! The policy-cost benchmark compiled to WebAssembly: the same loops as
//! the native `policy_cost` example, exported as plain functions that
//! `benches/policy-wasm.mjs` times from Node with `performance.now()`.
//! Built with `cargo build --release --example policy_cost_wasm --target
//! wasm32-unknown-unknown` (a cdylib: no wasm-bindgen glue; the library's
//! own JS imports are never called here and are stubbed by the harness).

#[path = "policy_cost/runner.rs"]
mod runner;

use std::cell::OnceCell;

thread_local! {
    static BENCH: OnceCell<runner::PolicyBench> = const { OnceCell::new() };
}

/// `n` sends through the scripted transport alone.
#[no_mangle]
pub extern "C" fn transport_only(n: u32) {
    BENCH.with(|b| b.get_or_init(runner::PolicyBench::new).transport_only(n));
}

/// `n` logical requests through the full pipeline.
#[no_mangle]
pub extern "C" fn pipeline(n: u32) {
    BENCH.with(|b| b.get_or_init(runner::PolicyBench::new).pipeline(n));
}
