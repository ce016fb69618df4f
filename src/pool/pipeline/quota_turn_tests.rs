//! Requests waiting for a key's plan are served in turn, oldest first
//! (`policy::quota::line`): a large charge among small ones gets its CU
//! when its turn comes, and no read overtakes an older one.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;

use super::tests::{harness_with, opts, MS};
use super::*;
use crate::config::RawOptions;
use crate::error::StopReason;
use crate::policy::quota::QuotaConfig;
use crate::runtime::scripted::Behaviour::*;
use crate::runtime::Transport;

/// What happened to one call: when it began and ended (ms), and how.
type Outcome = (u64, u64, Result<(), StopReason>);

/// One call's method, how long it took (ms), and how it ended.
type Timed = (&'static str, u64, Result<(), StopReason>);

/// On one node whose key pays 10 CU a second (a burst of 10), 10 s
/// deadlines: 15 reads of 1 CU at once, an 8 CU `eth_getLogs` 10 ms later,
/// then reads at 9 a second for 10 s. (the 8 CU call, the reads.)
fn a_large_call_among_reads() -> (Outcome, Vec<Outcome>) {
    let mut raw = RawOptions { deadline_ms: Some(10_000.0), ..opts() };
    let plan = QuotaConfig { cu_per_second: 10.0, burst: 10.0, ..QuotaConfig::default() };
    raw.pool.quota_groups = vec![("key".to_string(), plan)];
    let h = harness_with(vec![vec![Slow(MS(20), Box::new(Answer("0x1")))]], raw, |specs| {
        specs[0].quota_group = Some("key".into());
        specs[0].costs = vec![("eth_getBalance".to_string(), 1.0), ("eth_getLogs".to_string(), 8.0)];
    });
    let outcomes = RefCell::new(Vec::new());
    let call = |at: u64, method: &'static str| {
        let (h, outcomes) = (&h, &outcomes);
        async move {
            h.rt.sleep(MS(at)).await;
            let began = h.now_ms();
            let result = h.pipeline.execute(&h.rt, Call::new(method), |t| h.net.send(&(), t), &|_| {}).await;
            let outcome = (began, h.now_ms(), result.map(|_| ()).map_err(|f| f.reason));
            outcomes.borrow_mut().push((method, outcome));
        }
    };
    let mut tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>> = Vec::new();
    tasks.extend((0..15).map(|_| Box::pin(call(0, "eth_getBalance")) as _));
    tasks.push(Box::pin(call(10, "eth_getLogs")));
    tasks.extend((0..90).map(|n| Box::pin(call(20 + n * 1000 / 9, "eth_getBalance")) as _));
    h.rt.block_on(crate::runtime::sim::join_all(tasks)).unwrap();
    let outcomes = outcomes.into_inner();
    let large = outcomes.iter().find(|(m, _)| *m == "eth_getLogs").unwrap().1;
    let reads = outcomes.into_iter().filter(|(m, _)| *m == "eth_getBalance").map(|(_, o)| o).collect();
    (large, reads)
}

#[test]
fn a_large_charge_is_served_in_its_turn_not_starved_by_small_ones() {
    let (large, reads) = a_large_call_among_reads();
    // The 5 reads ahead of it wait to 0.5 s; its 8 CU gather by 1.3 s (the reads
    // behind it take none meanwhile). Before, every 1 CU refill went to a read: at
    // 90 % of the plan its 8 CU never gathered, and it failed at its deadline.
    let (began, ended, result) = large;
    assert_eq!(result, Ok(()), "the large call is answered");
    assert!(ended - began <= 1_400, "in its turn: {} ms", ended - began);
    assert!(reads.iter().all(|(_, _, r)| r.is_ok()), "every read is answered: {reads:?}");
    let mut by_start = reads.clone();
    by_start.sort_by_key(|&(began, ended, _)| (began, ended));
    let overtaken = by_start.windows(2).filter(|w| w[1].1 < w[0].1).count();
    assert_eq!(overtaken, 0, "no read is answered before an older one: {by_start:?}");
    let behind: Vec<_> = reads.iter().filter(|&&(b, e, _)| b > began && e < ended).collect();
    assert!(behind.is_empty(), "no read that came after it is answered before it: {behind:?}");
}

#[test]
fn a_large_call_behind_small_ones_is_measured_by_their_cu_not_its_own() {
    // 30 requests/s of plan, 60 reads of 1 CU at once (30 of them wait), then a 20 CU
    // `eth_getLogs` with a 30 s deadline. The line ahead of it is 30 CU, a second of the plan;
    // counted as 30 calls like itself (600 CU, 20 s, twice that past its deadline), it was
    // refused at once (a new user's run: 13 of 22 such calls) where it is answered in 1–2 s.
    let mut raw = RawOptions { deadline_ms: Some(30_000.0), ..opts() };
    raw.pool.quota_groups = vec![("key".to_string(), QuotaConfig { cu_per_second: 30.0, ..QuotaConfig::default() })];
    let h = harness_with(vec![vec![Slow(MS(20), Box::new(Answer("0x1")))]], raw, |specs| {
        specs[0].quota_group = Some("key".into());
        specs[0].costs = vec![("eth_getBalance".to_string(), 1.0), ("eth_getLogs".to_string(), 20.0)];
    });
    let call = |at: u64, method: &'static str| {
        let h = &h;
        async move {
            h.rt.sleep(MS(at)).await;
            let began = h.now_ms();
            let result = h.pipeline.execute(&h.rt, Call::new(method), |t| h.net.send(&(), t), &|_| {}).await;
            (method, h.now_ms() - began, result.map(|_| ()).map_err(|f| f.reason))
        }
    };
    let mut tasks: Vec<Pin<Box<dyn Future<Output = Timed> + '_>>> = Vec::new();
    tasks.extend((0..60).map(|_| Box::pin(call(0, "eth_getBalance")) as _));
    tasks.push(Box::pin(call(5, "eth_getLogs")));
    let outcomes = h.rt.block_on(crate::runtime::sim::join_all(tasks)).unwrap();
    let (_, took, result) = outcomes.iter().find(|(m, _, _)| *m == "eth_getLogs").unwrap();
    assert_eq!(*result, Ok(()), "the large call is answered, not refused");
    assert!(*took <= 3_000, "in about the line's 50 CU at 30 a second: {took} ms");
    assert!(outcomes.iter().all(|(_, _, r)| r.is_ok()), "every read too");
}
