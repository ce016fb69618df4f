use std::time::Duration;
use breakwater_rpc::simulation::fleet::{Fleet, Provider, SimCall};
use breakwater_rpc::runtime::{sim::SimRuntime, Runtime, Transport};
use breakwater_rpc::pool::{Call, Pipeline};
use breakwater_rpc::pool::options::EndpointSpec;
use breakwater_rpc::redact::EndpointUrl;
use breakwater_rpc::config::{RawOptions, RelayerConfig};
use breakwater_rpc::policy::Classifier;
fn main() {
    let rt = SimRuntime::new(1);
    let mut p = vec![Provider::healthy(40), Provider::healthy(50), Provider::healthy(80)];
    p[0].key = Some(0); p[1].key = Some(0);
    let fleet = Fleet::new(&rt, p, vec![0.2], 3);
    let specs = (0..3).map(|i| { let mut s = EndpointSpec::from_url(EndpointUrl::parse(&format!("http://s{i}.x"), "u").unwrap(), i); if i < 2 { s.quota_group = Some("keyA".into()); } s }).collect();
    let mut o = RawOptions::default();
    o.pool.quota_groups = vec![("keyA".into(), breakwater_rpc::policy::quota::QuotaConfig { cu_per_second: f64::INFINITY, ..Default::default() })];
    let pipeline = Pipeline::new(RelayerConfig::build(specs, o).unwrap(), Classifier::default(), rt.now());
    rt.block_on(async {
        for _ in 0..60 {
            rt.sleep(Duration::from_millis(500)).await;
            let t0 = rt.now();
            let call = SimCall { method: "eth_blockNumber" };
            let r = pipeline.execute(&rt, Call::new("eth_blockNumber"), |t| fleet.send(&call, t), &|e| println!("  {:?} {e:?}", rt.now().since_epoch())).await;
            println!("{:?} -> {:?} in {:?} attempts {:?}", t0.since_epoch(), r.as_ref().map(|s| s.endpoint).map_err(|f| f.reason), rt.now().saturating_since(t0), r.as_ref().map(|s| s.attempts.len()).unwrap_or(0));
        }
    }).unwrap();
}
