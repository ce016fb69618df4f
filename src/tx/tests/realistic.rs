//! Engine tests on a chain as users have it (a head in the millions), and
//! tests written to fail when a guard is removed: the cancel/speed-up race
//! guard, watching every hash (not only the newest), reorg handling, and
//! nonces in call order.

use std::cell::RefCell;
use std::time::Duration;

use alloy_primitives::Address;

use super::sim_chain::{request, world, FakeSigner, SimNode, Task, World};
use super::*;
use crate::tx::engine::{Signed, TxEngine, TxFailure, TxSigner};
use crate::tx::slot::Resolution;
use crate::tx::UnsignedTx;

const MAINNET_HEAD: u64 = 19_000_000;

fn far_world(min_fee: u128) -> World {
    let w = world(min_fee);
    w.chain.borrow_mut().head = MAINNET_HEAD;
    w
}

#[test]
fn far_past_block_zero_a_healthy_send_is_mined_as_the_original_with_one_hash() {
    let w = far_world(0);
    let emit = w.emit();
    w.with_blocks(async {
        let options = TxOptions { max_wait_blocks: 1, ..w.engine.options() };
        let outcome = w.send(&request(30 * GWEI), options, &emit).await.unwrap();
        assert_eq!(outcome.resolution, Resolution::Mined);
        assert_eq!(outcome.hashes.len(), 1, "one hash broadcast");
    });
    assert_eq!(w.signer.signatures.get(), 1, "nothing re-signed");
    assert_eq!(w.replacements(), vec![], "no speed-up on a chain past block 0");
}

#[test]
fn far_past_block_zero_a_stuck_send_is_replaced_after_exactly_max_wait_new_blocks() {
    let w = far_world(5 * GWEI);
    let emit = w.emit();
    w.with_blocks(async {
        let options = TxOptions { max_wait_blocks: 3, ..w.engine.options() };
        let outcome = w.send(&request(2 * GWEI), options, &emit).await.unwrap();
        assert_eq!(outcome.resolution, Resolution::Replaced);
    });
    let events = w.events.borrow();
    let (at, block, since) = events
        .iter()
        .find_map(|(at, e)| match e {
            TxEvent::Replacement { block, since, .. } => Some((*at, *block, *since)),
            _ => None,
        })
        .unwrap();
    assert_eq!(since, Some(MAINNET_HEAD), "the wait counts from the head at broadcast");
    assert_eq!(block, MAINNET_HEAD + 3, "exactly max_wait new blocks, not before");
    // Blocks come every 12 s: the third new block is at 36 s; polls are 2–6 s apart.
    let secs = at.since_epoch().as_secs_f64();
    assert!((36.0..42.0).contains(&secs), "speed-up at {secs} s");
    assert_eq!(w.replacements(), vec![(0, TxKind::SpeedUp)]);
}

/// Asks for a cancel of the nonce while its speed-up is being signed.
struct CancelWhileSigning<'a> {
    inner: &'a FakeSigner,
    engine: &'a TxEngine<SimNode>,
}

impl TxSigner<String> for CancelWhileSigning<'_> {
    fn address(&self) -> Address {
        self.inner.address()
    }
    async fn sign(&self, tx: &UnsignedTx) -> Result<Signed, String> {
        if self.inner.signatures.get() == 1 {
            assert_eq!(self.engine.request_cancel(self.address(), tx.nonce, None), 1);
        }
        self.inner.sign(tx).await
    }
}

#[test]
fn a_speed_up_signed_while_a_cancel_is_asked_for_is_never_broadcast() {
    let w = far_world(5 * GWEI);
    let emit = w.emit();
    let signer = CancelWhileSigning { inner: &w.signer, engine: &w.engine };
    w.with_blocks(async {
        let options = TxOptions { max_wait_blocks: 1, ..w.engine.options() };
        let stuck = request(2 * GWEI);
        let send = w.engine.send(&*w.rt, w.engine.ticket(), &signer, &stuck, options, &emit);
        assert_eq!(send.await.unwrap().resolution, Resolution::Cancelled);
    });
    assert_eq!(w.signer.signatures.get(), 3, "original, the superseded speed-up, the cancel");
    assert_eq!(w.replacements(), vec![(0, TxKind::Cancel)], "the speed-up was dropped unsent");
    let chain = w.chain.borrow();
    let distinct: std::collections::BTreeSet<_> = chain.sends.iter().collect();
    assert_eq!(distinct.len(), 2, "only the original and the cancel reached a node");
}

#[test]
fn the_original_mined_after_its_speed_up_was_sent_is_found_every_hash_is_watched() {
    let w = far_world(5 * GWEI);
    let emit = w.emit();
    let send_and_unstick = async {
        let options = TxOptions { max_wait_blocks: 2, ..w.engine.options() };
        let stuck = request(2 * GWEI);
        let send = w.send(&stuck, options, &emit);
        let mut send = std::pin::pin!(send);
        first_poll(send.as_mut()).await;
        w.chain.borrow_mut().swallow = true; // the speed-up never reaches the pool
        let unstick = async {
            while w.replacements().is_empty() {
                w.rt.sleep(Duration::from_millis(500)).await;
            }
            w.chain.borrow_mut().min_fee = 0; // the original, still pooled, is mined next block
        };
        let tasks: Vec<Task> = vec![
            Box::pin(async {
                let outcome = send.await.unwrap();
                assert_eq!(outcome.resolution, Resolution::Mined);
                assert_eq!(outcome.hash, outcome.hashes[0], "the original's receipt");
                assert_eq!(outcome.hashes.len(), 2);
            }),
            Box::pin(unstick),
        ];
        join_all(tasks).await;
    };
    w.with_blocks(send_and_unstick);
    assert_eq!(w.replacements(), vec![(0, TxKind::SpeedUp)]);
}

#[test]
fn a_reorg_that_evicts_our_mined_transaction_is_noticed_and_it_is_sped_up_again() {
    let w = far_world(0);
    let emit = w.emit();
    let run = async {
        let options = TxOptions { max_wait_blocks: 2, confirmations: 3, ..w.engine.options() };
        let priced = request(8 * GWEI);
        let send = w.send(&priced, options, &emit);
        let reorg = async {
            while !w.events.borrow().iter().any(|(_, e)| matches!(e, TxEvent::Included { .. })) {
                w.rt.sleep(Duration::from_millis(500)).await;
            }
            // The block with our transaction is replaced by one without it, the
            // new branch never saw it, and fees rose: only a speed-up gets it in.
            let mut chain = w.chain.borrow_mut();
            chain.reorg();
            chain.min_fee = 10 * GWEI;
        };
        let tasks: Vec<Task> = vec![
            Box::pin(async {
                let outcome = send.await.unwrap();
                assert_eq!(outcome.resolution, Resolution::Replaced);
                assert!(outcome.confirmations >= 3);
            }),
            Box::pin(reorg),
        ];
        join_all(tasks).await;
    };
    w.with_blocks(run);
    let events = w.events.borrow();
    let original = events.iter().find_map(|(_, e)| match e {
        TxEvent::Included { hash, .. } => Some(*hash),
        _ => None,
    });
    let reorged = events.iter().find_map(|(_, e)| match e {
        TxEvent::Reorg { hash, .. } => Some(*hash),
        _ => None,
    });
    assert_eq!(reorged, original, "the reorg is reported for the hash that was included");
    assert_eq!(w.replacements(), vec![(0, TxKind::SpeedUp)]);
}

#[test]
fn concurrent_sends_get_nonces_in_call_order_whatever_order_their_estimates_finish() {
    let w = far_world(0);
    // Estimates answer in reverse call order: the last call is ready first.
    w.chain.borrow_mut().estimate_delays = [50u64, 40, 30, 20, 10].map(Duration::from_millis).into();
    let emit = w.emit();
    let unestimated = request(30 * GWEI);
    let unestimated = crate::tx::request::TxRequest { gas: None, ..unestimated };
    let nonces = RefCell::new(vec![None; 5]);
    w.with_blocks(async {
        let sends: Vec<Task> = (0..5)
            .map(|call| {
                let send = w.send(&unestimated, w.engine.options(), &emit);
                let nonces = &nonces;
                Box::pin(async move {
                    nonces.borrow_mut()[call] = Some(send.await.unwrap().nonce);
                }) as Task
            })
            .collect();
        join_all(sends).await;
    });
    assert_eq!(nonces.into_inner(), vec![Some(0), Some(1), Some(2), Some(3), Some(4)]);
    assert_eq!(w.engine.order.outstanding(), 0, "every ticket was given back");
}

#[test]
fn a_nonce_kept_after_the_fee_ceiling_is_re_broadcast_when_fees_fall_and_later_nonces_are_not_stuck() {
    let w = far_world(0);
    let emit = w.emit();
    let options = TxOptions { max_wait_blocks: 1, fee_ceiling: Some(2 * GWEI + GWEI / 20), ..w.engine.options() };
    let run = async {
        let cheap = request(2 * GWEI);
        let send = w.send(&cheap, options, &emit);
        let mut send = std::pin::pin!(send);
        first_poll(send.as_mut()).await;
        w.chain.borrow_mut().base_fee = 5 * GWEI; // a gas spike: the next block evicts it
        let error = send.await.unwrap_err();
        assert!(matches!(error, TxFailure::FeeCeiling { nonce: 0, .. }), "{error:?}");
        // The caller got its error; the nonce is kept (as the wasm layer does in the background).
        let keeper = async {
            let kept = w.engine.keep(&*w.rt, &w.signer, 1, 0, options, &emit).await.unwrap();
            assert_eq!(kept.resolution, Resolution::Mined, "the original, re-broadcast once fees fell");
        };
        let later = async {
            w.rt.sleep(Duration::from_secs(60)).await;
            w.chain.borrow_mut().base_fee = 0; // the spike is over
            let next = request(2 * GWEI);
            let outcome = w.send(&next, options, &emit).await.unwrap();
            assert_eq!(outcome.nonce, 1, "not stuck behind nonce 0");
        };
        let tasks: Vec<Task> = vec![Box::pin(keeper), Box::pin(later)];
        join_all(tasks).await;
    };
    w.with_blocks(run);
    assert_eq!(w.signer.signatures.get(), 2, "nothing signed above the ceiling");
    assert!(w.engine.pending(1, w.signer.address()).is_empty(), "both nonces resolved");
}
