//! Pipelines of one realm on the simulated clock: one breaker per node for
//! all of them, a request waiting on another member's probe woken by its
//! verdict, and a quota group's lease asks for the fleet's store.
#![allow(clippy::result_large_err)]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use super::*;
use crate::config::RawOptions;
use crate::policy::breaker::BreakerConfig;
use crate::policy::lease::LeaseGrant;
use crate::policy::quota::QuotaConfig;
use crate::pool::options::EndpointSpec;
use crate::redact::EndpointUrl;
use crate::runtime::scripted::{Behaviour::*, ScriptedTransport};
use crate::runtime::sim::{join_all, SimRuntime};
use crate::runtime::Transport;

fn member(realm: &Realm, rt: &SimRuntime) -> Rc<Pipeline> {
    let url = EndpointSpec::from_url(EndpointUrl::parse("http://127.0.0.1:9500", "u").unwrap(), 0);
    let mut raw = RawOptions { max_retries: Some(0.0), ..Default::default() };
    raw.pool.check_chain = false;
    raw.pool.hedge = None;
    raw.pool.breaker = BreakerConfig {
        consecutive_failures: 1,
        open_base: Duration::from_secs(1),
        jitter: 0.0,
        ..BreakerConfig::default()
    };
    let config = RelayerConfig::build(vec![url], raw).unwrap();
    Rc::new(Pipeline::in_realm(config, Classifier::default(), rt.now(), Some(realm)))
}

#[test]
fn a_request_waiting_on_another_members_probe_goes_when_the_probe_answers() {
    let rt = SimRuntime::new(3);
    let realm = Realm::new();
    let (a, b) = (member(&realm, &rt), member(&realm, &rt));
    let net = Rc::new(ScriptedTransport::new(
        &rt,
        vec![vec![Status(503, None), Slow(Duration::from_millis(500), Box::new(Answer("0x1"))), Answer("0x2")]],
    ));
    let run = |p: Rc<Pipeline>, at_ms: u64| {
        let (rt2, net) = (rt.clone(), net.clone());
        rt.spawn(async move {
            rt2.sleep(Duration::from_millis(at_ms)).await;
            let outcome = p.execute(&rt2, Call::new("eth_blockNumber"), |t| net.send(&(), t), &|_| {}).await;
            (outcome.is_ok(), rt2.now().since_epoch().as_millis())
        })
    };
    // a's failure opens the node's breaker for both; at 2 s it is HalfOpen
    // and a holds its one probe (answered at 2.5 s); b arrives at 2.1 s.
    let done = rt.block_on(join_all(vec![run(a.clone(), 0), run(a.clone(), 2000), run(b.clone(), 2100)])).unwrap();
    assert!(!done[0].0, "the 503");
    assert_eq!(done[1], (true, 2500), "a's probe");
    assert!(done[2].0, "b is answered");
    assert_eq!(done[2].1, 2500, "b went when a's probe answered, not at its deadline");
    assert_eq!(net.calls(0), 3, "b sent nothing while the probe was out");
    assert!(Rc::ptr_eq(&a.router.borrow().endpoints[0].breaker, &b.router.borrow().endpoints[0].breaker));
}

#[test]
fn one_members_failures_open_the_node_for_every_member() {
    let rt = SimRuntime::new(4);
    let realm = Realm::new();
    let (a, b) = (member(&realm, &rt), member(&realm, &rt));
    let net = ScriptedTransport::new(&rt, vec![vec![Status(503, None), Answer("0x1")]]);
    let ask = |p: &Pipeline| rt.block_on(p.execute(&rt, Call::new("eth_blockNumber"), |t| net.send(&(), t), &|_| {}));
    assert!(ask(&a).unwrap().is_err());
    let started = rt.now();
    let b_outcome = ask(&b).unwrap();
    assert!(b_outcome.is_ok(), "b waits for the node's first probe and gets its answer");
    assert!(rt.now().saturating_since(started) >= Duration::from_millis(400), "b did not try the open node at once");
    assert_eq!(net.calls(0), 2, "one failure, one probe: b never met the 503");
    drop((a, b));
    assert_eq!(realm.live(), (0, 0));
}

#[test]
fn a_members_charge_asks_the_fleets_store_for_its_groups_lease() {
    let rt = SimRuntime::new(5);
    let realm = Realm::new();
    realm.attach_store();
    let mut url = EndpointSpec::from_url(EndpointUrl::parse("http://127.0.0.1:9500", "u").unwrap(), 0);
    url.quota_group = Some("plan".into());
    let mut raw = RawOptions { max_retries: Some(0.0), ..Default::default() };
    raw.pool.check_chain = false;
    raw.pool.quota_groups = vec![("plan".into(), QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() })];
    let config = RelayerConfig::build(vec![url], raw).unwrap();
    let p = Pipeline::in_realm(config, Classifier::default(), rt.now(), Some(&realm));
    let net = ScriptedTransport::new(&rt, vec![vec![Answer("0x1")]]);
    let events = RefCell::new(Vec::new());
    let emit = |e: PipelineEvent| events.borrow_mut().push(e);
    rt.block_on(p.execute(&rt, Call::new("eth_blockNumber"), |t| net.send(&(), t), &emit)).unwrap().unwrap();
    let asks: Vec<_> = events
        .borrow()
        .iter()
        .filter_map(|e| match e {
            PipelineEvent::LeaseAsk { group, ask } => Some((*group, *ask)),
            _ => None,
        })
        .collect();
    assert_eq!(asks.len(), 1, "one ask out at a time: {asks:?}");
    let (key, ask) = asks[0];
    assert!(ask.want > 0.0 && ask.window == 100.0 && ask.rate + ask.burst == 100.0, "a per-second plan: {ask:?}");
    let grant = LeaseGrant {
        granted: ask.want,
        short_for: Duration::ZERO,
        fleet_rate: 0.0,
        share: f64::INFINITY,
        others_demand: None,
        others_line: None,
        windowed: false,
    };
    assert!(realm.lease_granted(key, rt.now(), ask.want, grant), "the ask names the realm's group");
}
