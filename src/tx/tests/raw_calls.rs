//! The low-level calls: `submit_raw` (bytes lost on the way are sent again
//! at once; "nonce too low" for bytes already mined is `Mined`) and
//! `wait_for_receipt`'s time limit, to the exact instant.

use std::time::Duration;

use alloy_primitives::Address;

use super::sim_chain::{encode, world};
use super::*;
use crate::runtime::sim::SimRuntime;
use crate::tx::engine::tx_hash;
use crate::tx::engine_raw::{RawStatus, WaitEnd};
use crate::tx::fees::Fees;
use crate::tx::receipt::poll_delay;
use crate::tx::UnsignedTx;

fn raw(nonce: u64) -> Vec<u8> {
    encode(&UnsignedTx {
        chain_id: 1,
        from: Address::repeat_byte(0xaa),
        nonce,
        to: Some(Address::repeat_byte(0xbb)),
        value: Default::default(),
        data: Vec::new(),
        gas: 21_000,
        fees: Fees::Eip1559 { max_fee: 30 * GWEI, tip: GWEI },
    })
}

#[test]
fn raw_bytes_lost_on_the_way_are_sent_again_at_once_and_bytes_that_arrived_are_not() {
    let w = world(0);
    w.chain.borrow_mut().lose_sends = 1;
    let (hash, status) = w.rt.block_on(w.engine.submit_raw(&raw(0))).unwrap();
    assert_eq!((hash, status), (tx_hash(&raw(0)), RawStatus::Unknown));
    assert_eq!(w.chain.borrow().sends, vec![hash, hash], "the lost send, then the re-broadcast");
    assert_eq!(w.chain.borrow().pool.get(&0).map(|p| p.hash), Some(hash), "pooled by the re-broadcast");

    let w = world(0);
    w.chain.borrow_mut().lose_answers = 1;
    let (hash, status) = w.rt.block_on(w.engine.submit_raw(&raw(0))).unwrap();
    assert_eq!(status, RawStatus::Unknown);
    assert_eq!(w.chain.borrow().sends, vec![hash], "a node has it: not sent again");
}

#[test]
fn raw_bytes_answered_nonce_too_low_are_mined_if_their_receipt_exists_and_refused_otherwise() {
    let w = world(0);
    w.chain.borrow_mut().deliver_twice = 1;
    let (hash, status) = w.rt.block_on(w.engine.submit_raw(&raw(0))).unwrap();
    assert_eq!(status, RawStatus::Mined);
    assert!(w.chain.borrow().mined.contains_key(&hash));
    let (_, again) = w.rt.block_on(w.engine.submit_raw(&raw(0))).unwrap();
    assert_eq!(again, RawStatus::Mined, "sent again: still the mined hash");
    let (_, other) = w.rt.block_on(w.engine.submit_raw(&encode_other())).unwrap();
    assert_eq!(other, RawStatus::Refused("nonce too low".to_string()), "someone else's nonce 0");
}

fn encode_other() -> Vec<u8> {
    let mut tx = raw(0);
    tx.extend_from_slice(b"|other");
    tx
}

/// `wait_for_receipt` for a hash never sent, with `limit`; `None` if it is
/// still waiting at twice the limit.
fn wait_limited(w: &super::sim_chain::World, options: TxOptions, limit: Duration) -> Option<Result<u64, WaitEnd>> {
    let never = tx_hash(b"never sent");
    let ignore = |_: TxEvent| {};
    let ended = std::cell::RefCell::new(None);
    let wait = async {
        *ended.borrow_mut() = Some(w.engine.wait_for_receipt(&*w.rt, never, options, Some(limit), &ignore).await);
    };
    w.rt.block_on(crate::pool::notify::either(wait, w.rt.sleep(limit * 2))).unwrap();
    ended.into_inner()
}

#[test]
fn a_receipt_wait_ends_at_the_last_poll_whose_next_delay_would_pass_the_limit() {
    // The first poll delay, drawn as the engine will draw it (same seed, first draw).
    let options = TxOptions { poll_interval: Duration::from_secs(4), ..TxOptions::default() };
    let first = poll_delay(options.poll_interval, SimRuntime::new(7).random_unit());
    let w = world(0);
    // A limit equal to the first delay: the wait polls once more, at the limit, then ends.
    assert_eq!(wait_limited(&w, options, first), Some(Err(WaitEnd::TimedOut)));
    assert_eq!(w.rt.now().since_epoch(), first);
    assert_eq!(w.chain.borrow().polls.len(), 2);
    // A longer limit: it ends at a poll within the last 6 s (the longest delay) before it.
    let started = w.rt.now();
    let limit = Duration::from_secs(30);
    assert_eq!(wait_limited(&w, options, limit), Some(Err(WaitEnd::TimedOut)));
    let waited = w.rt.now().saturating_since(started);
    assert!(waited <= limit && waited > limit - Duration::from_secs(6), "ended after {waited:?}");
}
