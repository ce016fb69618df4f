//! One attempt on one endpoint, on the simulated clock.
#![allow(clippy::result_large_err)]

use std::time::Duration;

use super::*;
use crate::config::{RawOptions, RelayerConfig};
use crate::policy::Classifier;
use crate::pool::options::EndpointSpec;
use crate::redact::EndpointUrl;
use crate::runtime::scripted::{Behaviour, Behaviour::*, ScriptedTransport};
use crate::runtime::sim::SimRuntime;
use crate::runtime::Transport;

struct Harness {
    rt: SimRuntime,
    net: ScriptedTransport,
    pipeline: Pipeline,
}

fn harness(scripts: Vec<Vec<Behaviour>>, second_timeout: Option<Duration>) -> Harness {
    let rt = SimRuntime::new(5);
    let mut endpoints: Vec<EndpointSpec> = (0..scripts.len())
        .map(|i| EndpointSpec::from_url(EndpointUrl::parse(&format!("http://127.0.0.1:{}", 9200 + i), "u").unwrap(), i))
        .collect();
    if let Some(spec) = endpoints.get_mut(1) {
        spec.timeout = second_timeout;
    }
    let config = RelayerConfig::build(endpoints, RawOptions::default()).unwrap();
    let pipeline = Pipeline::new(config, Classifier::default(), rt.now());
    Harness { net: ScriptedTransport::new(&rt, scripts), rt, pipeline }
}

impl Harness {
    fn once(&self, endpoint: usize, method: &str, sends: Option<&str>) -> Result<String, SingleFailure<String>> {
        let seen = std::cell::Cell::new(None);
        let attempt = |target: AttemptTarget| {
            seen.set(Some(target));
            self.net.send(&(), target)
        };
        let outcome = self.rt.block_on(attempt_once(&self.pipeline, &self.rt, endpoint, method, sends, attempt));
        let target = seen.get().expect("one attempt");
        assert_eq!((target.endpoint, target.purpose), (endpoint, Purpose::Request));
        outcome.unwrap()
    }
}

#[test]
fn answers_from_the_named_endpoint_only_and_never_retries() {
    let h = harness(vec![vec![Status(503, None)], vec![Answer("0x7")]], None);
    assert_eq!(h.once(1, "eth_blockNumber", None).ok().as_deref(), Some("0x7"));
    let failed = h.once(0, "eth_blockNumber", None).expect_err("a 503 is a failure");
    assert_eq!(failed.failure.reason, StopReason::NotRetryable);
    assert_eq!(failed.failure.attempts.len(), 1);
    assert!(matches!(failed.observation, Observation::Http { status: 503, .. }));
    assert_eq!((h.net.calls(0), h.net.calls(1)), (1, 1), "no retry, no failover");
}

#[test]
fn the_endpoints_own_timeout_bounds_the_attempt() {
    let h = harness(vec![vec![Hang], vec![Hang]], Some(Duration::from_millis(700)));
    let start = h.rt.now();
    assert!(h.once(1, "eth_blockNumber", None).is_err());
    assert_eq!(h.rt.now().saturating_since(start), Duration::from_millis(700));
    let start = h.rt.now();
    assert!(h.once(0, "eth_blockNumber", None).is_err());
    assert_eq!(h.rt.now().saturating_since(start), h.pipeline.config().attempt_timeout, "else the relayer's");
}

#[test]
fn a_submission_the_node_already_has_answers_the_hash_of_the_bytes_sent() {
    let h = harness(vec![vec![RpcError(-32000, "already known"), RpcError(-32000, "already known")]], None);
    let hash = "0xbc36789e7a1e281436464229828f817d6612f7b477d66591ff96a9e064bcc98a"; // keccak256(0x00)
    assert_eq!(h.once(0, "eth_sendRawTransaction", Some("0x00")).ok().as_deref(), Some(hash));
    let unhashable = h.once(0, "eth_sendRawTransaction", Some("0xzz")).expect_err("no hash to answer with");
    assert_eq!(unhashable.failure.attempts[0].verdict.class, ErrorClass::AlreadyKnown);
}
