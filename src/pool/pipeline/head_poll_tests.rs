//! Head polling on the simulated clock: a round hears every endpoint's
//! head, and reads that want `latest` then skip the one that lags.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::tests::{harness, harness_with, opts, Harness};
use super::*;
use crate::config::RawOptions;
use crate::runtime::scripted::Behaviour::*;
use crate::runtime::Transport;

/// Two endpoints; endpoint 0 (first by priority) is 50 blocks behind.
/// Scripted endpoints answer every call alike, so reads return the head too.
fn stale_and_fresh(raw: RawOptions) -> Harness {
    harness(vec![vec![Answer("0x64")], vec![Answer("0x96")]], raw)
}

fn polling() -> RawOptions {
    let mut o = opts();
    o.pool.max_lag_blocks = 5;
    o.pool.head_poll = Duration::from_secs(12);
    o.pool.check_chain = false;
    o
}

fn poll(h: &Harness) -> Vec<(usize, u64)> {
    let emit = |e: PipelineEvent| h.events.borrow_mut().push(e);
    h.rt.block_on(h.pipeline.poll_heads(&h.rt, |t| h.net.send(&(), t), &emit)).unwrap()
}

fn wait(h: &Harness, ms: u64) {
    h.rt.block_on(h.rt.sleep(Duration::from_millis(ms))).unwrap();
}

#[test]
fn once_a_round_has_heard_both_heads_latest_reads_skip_the_lagging_endpoint() {
    let h = stale_and_fresh(polling());
    assert_eq!(h.run("eth_getBalance").unwrap().endpoint, 0, "by priority; no head known yet");
    assert!(!h.pipeline.head_poll_due(h.rt.now()), "the first round waits one interval");
    wait(&h, 12_000);
    assert!(h.pipeline.head_poll_due(h.rt.now()));
    assert_eq!(poll(&h), vec![(0, 100), (1, 150)]);
    assert_eq!((h.net.calls(0), h.net.calls(1)), (2, 1), "one eth_blockNumber each");
    for _ in 0..3 {
        assert_eq!(h.run("eth_getBalance").unwrap().endpoint, 1, "endpoint 0 lags by 50 blocks");
    }
    let pinned = h.rt.block_on(h.pipeline.execute(
        &h.rt,
        Call { method: "eth_getBalance", wants_latest: false, ..Call::new("eth_getBalance") },
        |t| h.net.send(&(), t),
        &|_| {},
    ));
    assert_eq!(pinned.unwrap().unwrap().endpoint, 0, "a read pinned to a block may still use it");
}

#[test]
fn at_most_one_round_per_interval_and_none_when_off_or_alone() {
    let h = stale_and_fresh(polling());
    wait(&h, 12_000);
    assert_eq!(poll(&h).len(), 2);
    assert!(poll(&h).is_empty(), "the next round is due 12 s after this one ended");
    wait(&h, 11_999);
    assert!(!h.pipeline.head_poll_due(h.rt.now()));
    wait(&h, 1);
    assert_eq!(poll(&h).len(), 2);
    assert_eq!((h.net.calls(0), h.net.calls(1)), (2, 2));

    let mut off = polling();
    off.pool.head_poll = Duration::ZERO;
    let h = stale_and_fresh(off);
    wait(&h, 60_000);
    assert!(!h.pipeline.head_poll_due(h.rt.now()) && poll(&h).is_empty());
    let h = harness(vec![vec![Answer("0x64")]], polling());
    wait(&h, 60_000);
    assert!(poll(&h).is_empty(), "a pool of one has no head to compare with");
    assert_eq!(h.net.calls(0), 0);
}

#[test]
fn an_endpoint_whose_breaker_is_open_is_not_polled_and_polls_pay_their_quota() {
    let mut o = polling();
    o.max_retries = Some(1.0);
    let h = harness(vec![vec![Status(503, None)], vec![Answer("0x96")], vec![Answer("0x97")]], o);
    for _ in 0..3 {
        h.run("eth_getBalance").unwrap();
    }
    assert_eq!(h.net.calls(0), 3, "three failures open its breaker");
    wait(&h, 12_000);
    assert_eq!(poll(&h), vec![(1, 150), (2, 151)]);
    assert_eq!(h.net.calls(0), 3, "not polled while open");
    let charged: f64 = h.pipeline.with_router(|r| r.groups.iter().map(|g| g.quota.borrow().stats().cu_charged).sum());
    assert_eq!(charged, 3.0 * 19.0 * 2.0 + 2.0 * 10.0, "reads (19 CU, one retry each) and two polls (10 CU)");
}

/// A head round's heads and how long it took (ms).
type HeardRound = (Vec<(usize, u64)>, u64);

/// Eight readers, each reading again as soon as it is answered, on two
/// nodes of one 10 CU/s key (1 CU a call): reads always wait in the key's
/// line. Every 3 s a head round; returns each round's heads and how long
/// it took (ms), and the reads answered.
fn rounds_under_a_busy_key() -> (Vec<HeardRound>, usize) {
    let mut raw = RawOptions { deadline_ms: Some(10_000.0), ..polling() };
    raw.pool.head_poll = Duration::from_secs(3);
    raw.pool.quota_groups =
        vec![("key".to_string(), crate::policy::quota::QuotaConfig { cu_per_second: 10.0, ..Default::default() })];
    let slow = |head: &'static str| vec![Slow(Duration::from_millis(20), Box::new(Answer(head)))];
    let h = harness_with(vec![slow("0x64"), slow("0x65")], raw, |specs| {
        for spec in specs.iter_mut() {
            spec.quota_group = Some("key".into());
            spec.costs = vec![("*".to_string(), 1.0)];
        }
    });
    let stop = std::cell::Cell::new(false);
    let answered = std::cell::Cell::new(0);
    let rounds = std::cell::RefCell::new(Vec::new());
    let reader = || async {
        while !stop.get() {
            if h.request("eth_getBalance").await.is_ok() {
                answered.set(answered.get() + 1);
            }
        }
    };
    let poller = async {
        wait_async(&h, 250).await; // rounds start a quarter second into the key's second
        for _ in 0..4 {
            wait_async(&h, 3_000).await;
            let began = h.now_ms();
            let emit = |_| {};
            let heads = h.pipeline.poll_heads(&h.rt, |t| h.net.send(&(), t), &emit).await;
            rounds.borrow_mut().push((heads, h.now_ms() - began));
        }
        stop.set(true);
    };
    let mut tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>> = (0..8).map(|_| Box::pin(reader()) as _).collect();
    tasks.push(Box::pin(poller));
    h.rt.block_on(crate::runtime::sim::join_all(tasks)).unwrap();
    (rounds.into_inner(), answered.get())
}

async fn wait_async(h: &Harness, ms: u64) {
    h.rt.sleep(Duration::from_millis(ms)).await;
}

#[test]
fn a_poll_the_key_cannot_pay_at_once_waits_its_turn_in_the_keys_line() {
    let (rounds, answered) = rounds_under_a_busy_key();
    assert_eq!(rounds.len(), 4);
    for (heads, took) in &rounds {
        assert_eq!(heads, &vec![(0, 100), (1, 101)], "both nodes heard in every round");
        // Behind the reads already waiting (up to eight, at 10 a second), not skipped.
        assert!((20..=1_500).contains(took), "the round took {took} ms");
    }
    assert!(rounds.iter().any(|(_, took)| *took > 100), "some round waited for the key: {rounds:?}");
    // The key paid ~10 a second for 13 s and its first second's burst: eight of those went to polls.
    assert!((130..=145).contains(&answered), "reads answered: {answered}");
}

/// Sixty readers, each reading again as soon as it is answered, on two
/// nodes of four slots each (100 ms a call): every slot is always taken
/// and fifty-two reads wait for one. Every 3 s a head round; each round's
/// heads, and the most calls a node had in flight at once.
fn rounds_with_every_slot_taken() -> (Vec<Vec<(usize, u64)>>, usize) {
    let mut raw = RawOptions { deadline_ms: Some(10_000.0), ..polling() };
    raw.pool.head_poll = Duration::from_secs(3);
    let slow = |head: &'static str| vec![Slow(Duration::from_millis(100), Box::new(Answer(head)))];
    let h = harness_with(vec![slow("0x64"), slow("0x65")], raw, |specs| {
        for spec in specs.iter_mut() {
            spec.max_concurrency = 4;
        }
    });
    let stop = std::cell::Cell::new(false);
    let rounds = std::cell::RefCell::new(Vec::new());
    let most = std::cell::Cell::new(0);
    let reader = || async {
        while !stop.get() {
            let _ = h.request("eth_getBalance").await;
            let out = h.pipeline.with_router(|r| r.endpoints.iter().map(|e| e.in_flight as usize).max().unwrap_or(0));
            most.set(most.get().max(out));
        }
    };
    let poller = async {
        for _ in 0..4 {
            wait_async(&h, 3_000).await;
            let emit = |_| {};
            let heads = h.pipeline.poll_heads(&h.rt, |t| h.net.send(&(), t), &emit).await;
            rounds.borrow_mut().push(heads);
        }
        stop.set(true);
    };
    let mut tasks: Vec<Pin<Box<dyn Future<Output = ()> + '_>>> = (0..60).map(|_| Box::pin(reader()) as _).collect();
    tasks.push(Box::pin(poller));
    h.rt.block_on(crate::runtime::sim::join_all(tasks)).unwrap();
    (rounds.into_inner(), most.get())
}

#[test]
fn a_node_whose_every_slot_is_taken_is_still_polled_one_call_past_its_limit() {
    // Skipped while its slots were full, a relayer with thousands of reads waiting never
    // learned a head: a lagging node served `latest` reads unseen.
    let (rounds, most) = rounds_with_every_slot_taken();
    assert_eq!(rounds.len(), 4);
    for heads in &rounds {
        assert_eq!(heads, &vec![(0, 100), (1, 101)], "both nodes heard in every round: {rounds:?}");
    }
    assert!(most <= 5, "reads kept to the four slots, the poll one past them: {most} in flight");
}

#[test]
fn when_the_node_in_sync_fails_a_latest_read_fails_over_to_the_one_behind() {
    // Endpoint 1 (in sync) answers its head poll, then 503 to everything; endpoint 0 lags by 50.
    let h = harness(vec![vec![Answer("0x64")], vec![Answer("0x96"), Status(503, None)]], polling());
    wait(&h, 12_000);
    assert_eq!(poll(&h), vec![(0, 100), (1, 150)]);
    let began = h.now_ms();
    let served = h.run("eth_getBalance").expect("answered by the node behind");
    assert_eq!(served.endpoint, 0, "an answer 50 blocks old beats none");
    assert_eq!(h.net.calls(1), 2, "the poll, then one attempt: no retries of the node in sync first");
    assert!(h.now_ms() - began < 100, "failed over at once: {} ms", h.now_ms() - began);
}
