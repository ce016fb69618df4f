//! A capacity outage: the nodes that are not open all wait for their key's
//! quota, and a node that failed a while ago is the only capacity left to
//! find. Its early probes (`router/early_probe.rs`) bring it back within
//! a second or two of its return, not after its whole open time.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;

use super::tests::{harness_with, opts, MS};
use super::*;
use crate::config::RawOptions;
use crate::policy::quota::QuotaConfig;
use crate::runtime::scripted::Behaviour::*;
use crate::runtime::Transport;

/// 16 readers (10 s deadlines) on two nodes of two keys: node 0 on a key
/// that pays 10 reads a second, node 1 down (503) until `back_at` ms, then
/// healthy. Returns when each answer from node 1 came (ms).
fn quota_bound_beside_a_node_back(back_at: u64, until: u64) -> Vec<u64> {
    let mut raw = RawOptions { deadline_ms: Some(10_000.0), ..opts() };
    raw.pool.quota_groups = vec![
        ("small".to_string(), QuotaConfig { cu_per_second: 10.0, ..QuotaConfig::default() }),
        ("big".to_string(), QuotaConfig::default()),
    ];
    let h = harness_with(
        vec![vec![Slow(MS(20), Box::new(Answer("0x1")))], vec![Slow(MS(20), Box::new(Status(503, None)))]],
        raw,
        |specs| {
            specs[0].quota_group = Some("small".into());
            specs[1].quota_group = Some("big".into());
            for spec in specs.iter_mut() {
                spec.costs = vec![("eth_getBalance".to_string(), 1.0)];
            }
        },
    );
    let from_node_1 = RefCell::new(Vec::new());
    let stop = std::cell::Cell::new(false);
    let reader = || async {
        while !stop.get() {
            let before = h.net.calls(1);
            let answered =
                h.pipeline.execute(&h.rt, Call::new("eth_getBalance"), |t| h.net.send(&(), t), &|_| {}).await;
            if answered.is_ok() && h.net.calls(1) > before {
                from_node_1.borrow_mut().push(h.now_ms());
            }
            if answered.is_err() {
                h.rt.sleep(MS(5)).await;
            }
        }
    };
    let clock = async {
        h.rt.sleep(MS(back_at)).await;
        h.net.set(1, vec![Slow(MS(20), Box::new(Answer("0x1")))]);
        h.rt.sleep(MS(until - back_at)).await;
        stop.set(true);
    };
    let mut tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>> = (0..16).map(|_| Box::pin(reader()) as _).collect();
    tasks.push(Box::pin(clock));
    h.rt.block_on(crate::runtime::sim::join_all(tasks)).unwrap();
    from_node_1.into_inner()
}

#[test]
fn a_node_back_beside_a_quota_bound_one_is_found_by_its_early_probes() {
    // Node 1's breaker opens within the first second, for 30 s; it is back at 3 s.
    let answers = quota_bound_beside_a_node_back(3_000, 12_000);
    let first = answers.iter().copied().find(|&t| t >= 3_000);
    assert!(first.is_some_and(|t| t <= 8_000), "node 1 serves again within its early probes' spacing: {first:?}");
    let late = answers.iter().filter(|&&t| t >= 10_000).count();
    assert!(late > 200, "and carries the readers the small key cannot: {late} answers in the last 2 s");
}
