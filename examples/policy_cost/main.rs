//! The policy layer's own cost per request (native): the full pipeline
//! around a transport that answers at once, minus the transport alone.
//! `cargo run --release --example policy_cost [n]`; the WebAssembly twin
//! is `examples/policy_cost_wasm.rs` (run by `benches/policy-wasm.mjs`).

mod runner;

use std::time::Instant as WallClock;

fn main() {
    let n: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let bench = runner::PolicyBench::new();
    // Warm caches and the allocator the same way the wasm twin does.
    bench.pipeline(n.min(10_000));
    let t0 = WallClock::now();
    bench.transport_only(n);
    let transport_only = t0.elapsed().as_nanos() as f64 / f64::from(n);
    let t0 = WallClock::now();
    bench.pipeline(n);
    let total = t0.elapsed().as_nanos() as f64 / f64::from(n);
    println!(
        "{{\"requests\":{n},\"nsPerRequest\":{:.0},\"transportOnlyNs\":{:.0},\"policyNs\":{:.0}}}",
        total,
        transport_only,
        total - transport_only
    );
}
