//! The policy layer's own cost per request (native): the full pipeline —
//! budget, routing, breaker, quota, classification — around a transport
//! that answers at once. `cargo run --release --example policy_cost [n]`.

use std::time::Instant as WallClock;

use breakwater_rpc::config::{RawOptions, RelayerConfig};
use breakwater_rpc::policy::Classifier;
use breakwater_rpc::pool::options::EndpointSpec;
use breakwater_rpc::pool::{Call, Pipeline};
use breakwater_rpc::redact::EndpointUrl;
use breakwater_rpc::runtime::scripted::{Behaviour, ScriptedTransport};
use breakwater_rpc::runtime::sim::SimRuntime;
use breakwater_rpc::runtime::{Runtime, Transport};

fn main() {
    let n: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let rt = SimRuntime::new(1);
    let specs = (0..3)
        .map(|i| EndpointSpec::from_url(EndpointUrl::parse(&format!("http://n{i}.invalid"), "u").unwrap(), i))
        .collect();
    let config = RelayerConfig::build(specs, RawOptions::default()).unwrap();
    let pipeline = Pipeline::new(config, Classifier::default(), rt.now());
    let net = ScriptedTransport::new(&rt, vec![vec![Behaviour::Answer("0x1")]; 3]);
    // The simulated executor alone, for subtraction.
    let t0 = WallClock::now();
    rt.block_on(async {
        for _ in 0..n {
            std::hint::black_box(
                net.send(
                    &(),
                    breakwater_rpc::runtime::AttemptTarget {
                        endpoint: 0,
                        timeout: std::time::Duration::from_secs(1),
                        purpose: breakwater_rpc::runtime::Purpose::Request,
                    },
                )
                .await,
            );
        }
    })
    .unwrap();
    let transport_only = t0.elapsed().as_nanos() as f64 / f64::from(n);
    let t0 = WallClock::now();
    rt.block_on(async {
        for _ in 0..n {
            let r = pipeline.execute(&rt, Call::new("eth_getBalance"), |t| net.send(&(), t), &|_| {}).await;
            std::hint::black_box(r.is_ok());
        }
    })
    .unwrap();
    let total = t0.elapsed().as_nanos() as f64 / f64::from(n);
    println!(
        "{{\"requests\":{n},\"nsPerRequest\":{:.0},\"transportOnlyNs\":{:.0},\"policyNs\":{:.0}}}",
        total,
        transport_only,
        total - transport_only
    );
}
