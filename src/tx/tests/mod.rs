//! The transaction engine on the simulated clock against a simulated
//! chain (`sim_chain`): speed-up timing, head-of-line, lost sends, resyncs,
//! gaps, drops, replaced-by-others, duplicate delivery and gas spikes; and
//! the request parser's fields (`request_parse`, `request_build`).

mod fleet_send;
mod journal_adoption;
mod raw_calls;
mod realistic;
mod replace_gap;
mod request_build;
mod request_parse;
mod send_entry;
mod sim_chain;
mod watch_loop;

use std::cell::RefCell;
use std::time::Duration;

use alloy_primitives::{Address, B256};

use super::engine::TxEvent;
use super::fees::GWEI;
use super::slot::TxKind;
use super::TxOptions;
use crate::runtime::sim::join_all;
use crate::runtime::Runtime;
use sim_chain::{first_poll, request, world, Pooled};

#[test]
fn a_stuck_transaction_is_sped_up_after_max_wait_blocks_and_the_replacement_wins() {
    let w = world(5 * GWEI);
    let outcome = RefCell::new(None);
    let emit = w.emit();
    let send = async {
        let options = TxOptions { max_wait_blocks: 3, ..w.engine.options() };
        *outcome.borrow_mut() = Some(w.send(&request(2 * GWEI), options, &emit).await);
    };
    w.with_blocks(send);
    let outcome = outcome.into_inner().unwrap().unwrap();
    assert_eq!(outcome.resolution, super::slot::Resolution::Replaced);
    assert_eq!(w.signer.signatures.get(), 2, "one original, one speed-up");
    assert_eq!(w.replacements(), vec![(0, TxKind::SpeedUp)]);
    // Submitted at t≈0 on block 0; the speed-up follows the poll that sees block 3 (t = 36 s).
    let events = w.events.borrow();
    let at = events.iter().find(|(_, e)| matches!(e, TxEvent::Replacement { .. })).unwrap().0;
    let secs = at.since_epoch().as_secs_f64();
    assert!((36.0..36.0 + 6.0).contains(&secs), "speed-up at {secs} s");
}

#[test]
fn only_the_lowest_stuck_nonce_is_bumped_and_the_next_one_waits_behind_it() {
    let w = world(5 * GWEI);
    let emit = w.emit();
    let send = |max_fee: u128| {
        let (w, emit) = (&w, &emit);
        async move {
            let options = TxOptions { max_wait_blocks: 2, ..w.engine.options() };
            w.send(&request(max_fee), options, emit).await.unwrap();
        }
    };
    // Nonce 0 pays too little; nonce 1 pays enough but cannot be mined before 0.
    w.with_blocks(async {
        join_all(vec![send(2 * GWEI), send(30 * GWEI)]).await;
    });
    assert_eq!(w.replacements(), vec![(0, TxKind::SpeedUp)], "nonce 1 was never bumped uselessly");
    assert_eq!(w.chain.borrow().next_nonce, 2);
}

#[test]
fn a_lost_send_is_rebroadcast_as_the_same_bytes_and_never_re_signed() {
    let w = world(0);
    w.chain.borrow_mut().lose_sends = 1;
    let emit = w.emit();
    let send = async {
        let outcome = w.send(&request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!(outcome.resolution, super::slot::Resolution::Mined);
    };
    w.with_blocks(send);
    assert_eq!(w.signer.signatures.get(), 1);
    let chain = w.chain.borrow();
    assert!(chain.sends.len() >= 2 && chain.sends.iter().all(|h| *h == chain.sends[0]), "{:?}", chain.sends);
    assert!(w.events.borrow().iter().any(|(_, e)| matches!(e, TxEvent::OutcomeUnknown { .. })));
}

#[test]
fn a_nonce_used_by_someone_else_is_resynced_and_signed_again_with_the_next() {
    let w = world(0);
    let emit = w.emit();
    let run = async {
        let first = w.send(&request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!(first.nonce, 0);
        // Another wallet sends nonce 1 from the same account.
        {
            let mut chain = w.chain.borrow_mut();
            chain.next_nonce += 1;
        }
        let second = w.send(&request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!(second.nonce, 2);
    };
    w.with_blocks(run);
    assert!(w.events.borrow().iter().any(|(_, e)| matches!(e, TxEvent::NonceResync { from: 1, .. })));
}

#[test]
fn receipt_polls_are_jittered_not_periodic() {
    let w = world(u128::MAX); // never mined: the loop polls until the miner stops it
    let emit = w.emit();
    let watcher = async {
        let options = TxOptions { max_wait_blocks: 1000, ..w.engine.options() };
        let stuck = request(2 * GWEI);
        let send = w.send(&stuck, options, &emit);
        crate::pool::notify::either(
            async {
                let _ = send.await;
            },
            w.rt.sleep(Duration::from_secs(120)),
        )
        .await;
    };
    w.with_blocks(watcher);
    let polls = w.chain.borrow().polls.clone();
    let gaps: Vec<f64> = polls.windows(2).map(|p| p[1].saturating_since(p[0]).as_secs_f64()).collect();
    assert!(gaps.len() >= 15, "{} polls", gaps.len());
    assert!(gaps.iter().all(|g| (2.0..6.0).contains(g)), "{gaps:?}");
    let distinct: std::collections::BTreeSet<u64> = gaps.iter().map(|g| (g * 1000.0) as u64).collect();
    assert!(distinct.len() > gaps.len() / 2, "intervals repeat: {gaps:?}");
}

#[test]
fn a_gap_below_our_nonce_is_reported_and_filled() {
    let w = world(0);
    // Someone else's transaction with nonce 0 sits in the pool: our send takes nonce 1.
    let outsider = Pooled { hash: B256::repeat_byte(0xee), max_fee: 30 * GWEI, tip: GWEI };
    w.chain.borrow_mut().pool.insert(0, outsider);
    let emit = w.emit();
    let run = async {
        let ours = request(30 * GWEI);
        let send = w.send(&ours, w.engine.options(), &emit);
        let mut send = std::pin::pin!(send);
        // Once ours is accepted, the outsider vanishes from the pool: nonce 0 is a gap.
        first_poll(send.as_mut()).await;
        w.chain.borrow_mut().pool.remove(&0);
        let outcome = send.await.unwrap();
        assert_eq!(outcome.nonce, 1);
    };
    w.with_blocks(run);
    let gap = w.events.borrow().iter().find_map(|(_, e)| match e {
        TxEvent::NonceGap { from, to, repaired } => Some((*from, *to, *repaired)),
        _ => None,
    });
    assert_eq!(gap, Some((0, 1, true)));
    assert_eq!(w.chain.borrow().next_nonce, 2, "the filler took nonce 0, ours nonce 1");
}

#[test]
fn a_transaction_no_node_keeps_and_every_node_refuses_is_dropped_and_its_nonce_reused() {
    let w = world(u128::MAX); // never mined
    let emit = w.emit();
    let run = async {
        let ours = request(30 * GWEI);
        let send = w.send(&ours, w.engine.options(), &emit);
        let mut send = std::pin::pin!(send);
        first_poll(send.as_mut()).await;
        {
            // The node evicts it, and the account can no longer pay for it.
            let mut chain = w.chain.borrow_mut();
            chain.pool.clear();
            chain.refuse = true;
        }
        let failure = send.await.unwrap_err();
        assert!(matches!(failure, super::engine::TxFailure::Dropped { nonce: 0, .. }), "{failure:?}");
        w.chain.borrow_mut().refuse = false;
        w.chain.borrow_mut().min_fee = 0;
        let next = w.send(&request(31 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!(next.nonce, 0, "the dropped nonce is reused: no gap");
    };
    w.with_blocks(run);
}

#[test]
fn a_gas_spike_that_evicts_our_transaction_is_cured_by_a_speed_up_not_reported_as_dropped() {
    let w = world(0);
    let emit = w.emit();
    let run = async {
        let ours = request(30 * GWEI);
        let options = TxOptions { max_wait_blocks: 2, rebroadcast_every: 1, ..w.engine.options() };
        let send = w.send(&ours, options, &emit);
        let mut send = std::pin::pin!(send);
        first_poll(send.as_mut()).await;
        w.chain.borrow_mut().base_fee = 40 * GWEI; // the next block evicts it; re-sends are refused as too cheap
        let outcome = send.await.unwrap();
        assert_eq!(outcome.resolution, super::slot::Resolution::Replaced);
    };
    w.with_blocks(run);
    assert_eq!(w.replacements(), vec![(0, TxKind::SpeedUp)], "priced at the spiked estimate: one bump is enough");
}

#[test]
fn a_nonce_taken_by_a_transaction_that_is_not_ours_is_reported_with_our_hashes() {
    let w = world(u128::MAX); // ours is never mined
    let emit = w.emit();
    let run = async {
        let ours = request(30 * GWEI);
        let send = w.send(&ours, w.engine.options(), &emit);
        let mut send = std::pin::pin!(send);
        first_poll(send.as_mut()).await;
        {
            // Another wallet with the same key gets its own nonce-0 transaction mined.
            let mut chain = w.chain.borrow_mut();
            chain.pool.clear();
            chain.next_nonce = 1;
            let head = chain.head;
            chain.mined.insert(B256::repeat_byte(0xee), head);
        }
        match send.await {
            Err(super::engine::TxFailure::ReplacedByOther { nonce: 0, hashes }) => assert_eq!(hashes.len(), 1),
            other => panic!("{other:?}"),
        }
    };
    w.with_blocks(run);
    assert_eq!(w.engine.pending(1, Address::repeat_byte(0xaa)), vec![], "settled: nothing left to watch");
}

#[test]
fn nonce_too_low_for_bytes_a_gateway_delivered_twice_is_ours_and_never_re_signed() {
    // Found by the chaos test on anvil: the first delivery was mined at once,
    // the second answered "nonce too low"; re-signing would have paid twice.
    let w = world(0);
    w.chain.borrow_mut().deliver_twice = 1;
    let emit = w.emit();
    let run = async {
        let ours = request(30 * GWEI);
        let outcome = w.send(&ours, w.engine.options(), &emit).await.unwrap();
        assert_eq!(outcome.nonce, 0);
        assert_eq!(outcome.resolution, super::slot::Resolution::Mined);
    };
    w.with_blocks(run);
    assert_eq!(w.signer.signatures.get(), 1, "never signed again");
    assert_eq!(w.chain.borrow().next_nonce, 1, "one transaction mined");
    assert!(!w.events.borrow().iter().any(|(_, e)| matches!(e, TxEvent::NonceResync { .. })));
}

#[test]
fn failed_receipt_lookups_never_make_our_mined_transaction_someone_elses() {
    // Found by the chaos test on anvil: lookups that failed were read as
    // "no receipt", and with the nonce used on chain the caller was told
    // its own mined transaction was replaced by someone else.
    let w = world(0);
    w.chain.borrow_mut().fail_receipts = 8;
    let emit = w.emit();
    w.with_blocks(async {
        let outcome = w.send(&request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!(outcome.resolution, super::slot::Resolution::Mined);
    });
    assert_eq!(w.chain.borrow().fail_receipts, 0, "the lookups did fail first");
}
