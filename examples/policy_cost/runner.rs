//! The measured loops of the policy-cost benchmark, shared by the native
//! example (`policy_cost`) and its WebAssembly twin (`policy_cost_wasm`),
//! so both time exactly the same work: the full pipeline (budget,
//! routing, breaker, quota, classification) around a scripted transport
//! that answers at once on the simulated clock, and that transport alone
//! (for subtraction).

use std::time::Duration;

use breakwater_rpc::config::{RawOptions, RelayerConfig};
use breakwater_rpc::policy::Classifier;
use breakwater_rpc::pool::options::EndpointSpec;
use breakwater_rpc::pool::{Call, Pipeline};
use breakwater_rpc::redact::EndpointUrl;
use breakwater_rpc::runtime::scripted::{Behaviour, ScriptedTransport};
use breakwater_rpc::runtime::sim::SimRuntime;
use breakwater_rpc::runtime::{AttemptTarget, Purpose, Runtime, Transport};

/// A three-endpoint pipeline over an always-answering scripted transport.
pub struct PolicyBench {
    rt: SimRuntime,
    pipeline: Pipeline,
    net: ScriptedTransport,
}

impl PolicyBench {
    /// Builds the pipeline with default options (what a user gets).
    pub fn new() -> Self {
        let rt = SimRuntime::new(1);
        let specs = (0..3)
            .map(|i| EndpointSpec::from_url(EndpointUrl::parse(&format!("http://n{i}.invalid"), "u").unwrap(), i))
            .collect();
        let config = RelayerConfig::build(specs, RawOptions::default()).unwrap();
        let pipeline = Pipeline::new(config, Classifier::default(), rt.now());
        let net = ScriptedTransport::new(&rt, vec![vec![Behaviour::Answer("0x1")]; 3]);
        PolicyBench { rt, pipeline, net }
    }

    /// `n` transport sends on the simulated executor, no policy at all.
    pub fn transport_only(&self, n: u32) {
        let target = AttemptTarget { endpoint: 0, timeout: Duration::from_secs(1), purpose: Purpose::Request };
        self.rt
            .block_on(async {
                for _ in 0..n {
                    std::hint::black_box(self.net.send(&(), target).await);
                }
            })
            .unwrap();
    }

    /// `n` logical requests through the whole pipeline.
    pub fn pipeline(&self, n: u32) {
        self.rt
            .block_on(async {
                for _ in 0..n {
                    let r = self
                        .pipeline
                        .execute(&self.rt, Call::new("eth_getBalance"), |t| self.net.send(&(), t), &|_| {})
                        .await;
                    std::hint::black_box(r.is_ok());
                }
            })
            .unwrap();
    }
}
