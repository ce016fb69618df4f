//! Head polls of a fleet member whose key is leased near its plan, through
//! the pipeline: a poll its group cannot pay at the round's start waits its
//! turn, and the ask its check makes of the store goes out at once (left
//! untaken, nothing answered it and the poll, with the reads behind it in
//! the key's line, waited out the ask's one-second period).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;

use super::*;
use crate::config::RawOptions;
use crate::policy::fleet_bucket::FleetBucket;
use crate::policy::lease::LeaseAsk;
use crate::policy::quota::{QuotaConfig, QuotaGroup};
use crate::pool::options::EndpointSpec;
use crate::redact::EndpointUrl;
use crate::runtime::scripted::{Behaviour::*, ScriptedTransport};
use crate::runtime::sim::{join_all, SimRuntime};
use crate::runtime::Transport;

const SECONDS: u64 = 15;

/// A head round's heads and how long it took (ms).
type HeardRound = (Vec<(usize, u64)>, u64);

/// One member's pipeline (two URLs of a 20 CU/s key, 1 CU a call, head
/// polls every 3 s) reading one read after another every 130 ms, beside
/// another member (policy only) sending 8 a second on the same simulated
/// fleet bucket; the store answers each ask 1 ms later. Each round's heads
/// and how long it took (ms), and the reads answered.
fn member_beside_another() -> (Vec<HeardRound>, usize) {
    let rt = SimRuntime::new(5);
    let realm = Realm::new();
    realm.attach_store();
    let plan = QuotaConfig { cu_per_second: 20.0, ..QuotaConfig::default() };
    let urls = (0..2)
        .map(|i| {
            let mut url =
                EndpointSpec::from_url(EndpointUrl::parse(&format!("http://127.0.0.1:{}", 9600 + i), "u").unwrap(), i);
            url.quota_group = Some("key".into());
            url.costs = vec![("*".to_string(), 1.0)];
            url
        })
        .collect();
    let mut raw = RawOptions { deadline_ms: Some(10_000.0), ..Default::default() };
    raw.pool.check_chain = false;
    raw.pool.hedge = None;
    raw.pool.head_poll = Duration::from_secs(3);
    raw.pool.quota_groups = vec![("key".into(), plan)];
    let config = RelayerConfig::build(urls, raw).unwrap();
    let p = Pipeline::in_realm(config, Classifier::default(), rt.now(), Some(&realm));
    let slow = |head: &'static str| vec![Slow(Duration::from_millis(5), Box::new(Answer(head)))];
    let net = ScriptedTransport::new(&rt, vec![slow("0x64"), slow("0x65")]);
    let asks: RefCell<Vec<(u64, LeaseAsk)>> = RefCell::default();
    let emit = |e: PipelineEvent| {
        if let PipelineEvent::LeaseAsk { group, ask } = e {
            asks.borrow_mut().push((group, ask));
        }
    };
    let stop = Cell::new(false);
    let store = async {
        let mut bucket = FleetBucket::default();
        let mut other = QuotaGroup::new(plan, rt.now());
        other.join_fleet(rt.now());
        let mut owed = 0u32;
        for ms in 0..SECONDS * 1000 {
            rt.sleep(Duration::from_millis(1)).await;
            let now = rt.now();
            let answered: Vec<_> = asks.borrow_mut().drain(..).collect();
            for (key, ask) in answered {
                realm.lease_granted(key, now, ask.want, bucket.ask(now, 0, ask));
            }
            owed += u32::from(ms % 125 == 0);
            while owed > 0 && other.charge(now, 1.0).is_ok() {
                owed -= 1;
            }
            if let Some(ask) = other.take_lease_ask() {
                other.lease_granted(now, ask.want, bucket.ask(now, 1, ask));
            }
        }
        stop.set(true);
    };
    let answered = Cell::new(0);
    let rounds = RefCell::new(Vec::new());
    let reader = async {
        while !stop.get() {
            if p.execute(&rt, Call::new("eth_getBalance"), |t| net.send(&(), t), &emit).await.is_ok() {
                answered.set(answered.get() + 1);
            }
            rt.sleep(Duration::from_millis(130)).await;
        }
    };
    // What the wrapper does: a read that finds a round due starts it in the background.
    let poller = async {
        while !stop.get() {
            rt.sleep(Duration::from_millis(10)).await;
            if p.head_poll_due(rt.now()) {
                let began = rt.now();
                let heads = p.poll_heads(&rt, |t| net.send(&(), t), &emit).await;
                let took = rt.now().saturating_since(began).as_millis() as u64;
                rounds.borrow_mut().push((heads, took));
            }
        }
    };
    let tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>> = vec![Box::pin(store), Box::pin(reader), Box::pin(poller)];
    rt.block_on(join_all(tasks)).unwrap();
    (rounds.into_inner(), answered.get())
}

#[test]
fn a_fleet_members_polls_wait_their_turn_and_their_asks_go_out_at_once() {
    let (rounds, answered) = member_beside_another();
    assert_eq!(rounds.len(), 4, "rounds at 3, 6, 9 and 12 s: {rounds:?}");
    for (heads, took) in &rounds {
        assert_eq!(heads, &vec![(0, 100), (1, 101)], "both nodes heard in every round: {rounds:?}");
        assert!(*took < 300, "a round waits a grant or two, not an ask's period: {rounds:?}");
    }
    assert!(answered >= 100, "the reads kept their pace: {answered}");
}
