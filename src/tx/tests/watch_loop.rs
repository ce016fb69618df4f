//! The watch loop of one nonce: an inclusion reported once, a node whose
//! account count runs ahead of its receipts, the re-broadcast cadence,
//! the options a cancel hands to the loop already watching (its block wait
//! and `hold_at_ceiling` stay the watcher's), and the block wait of a
//! cancel that starts the watch itself.

use std::time::Duration;

use super::sim_chain::{request, world, Task};
use super::*;
use crate::tx::engine::{TxFailure, TxSigner};
use crate::tx::slot::Resolution;

#[test]
fn a_receipt_is_reported_included_once_however_many_polls_see_it() {
    let w = world(0);
    let emit = w.emit();
    w.with_blocks(async {
        let options = TxOptions { confirmations: 3, ..w.engine.options() };
        let outcome = w.send(&request(30 * GWEI), options, &emit).await.unwrap();
        assert_eq!(outcome.confirmations, 3);
    });
    let included: Vec<TxEvent> = w
        .events
        .borrow()
        .iter()
        .filter(|(_, e)| matches!(e, TxEvent::Included { .. }))
        .map(|(_, e)| e.clone())
        .collect();
    let mined = w.chain.borrow().sends[0];
    assert_eq!(included, vec![TxEvent::Included { nonce: Some(0), hash: mined, confirmations: 1 }]);
    assert!(w.chain.borrow().polls.len() >= 6, "several polls saw the receipt before the third block");
}

#[test]
fn a_node_whose_count_runs_ahead_of_its_receipts_does_not_make_our_transaction_someone_elses() {
    // For two polls after our transaction is mined, its receipt is not served
    // and no node knows it; the third poll finds it. The loop takes a nonce
    // for someone else's only when two polls in a row saw it used and, on
    // the second, no node knows any of our hashes.
    let w = world(0);
    w.chain.borrow_mut().unindexed = 2;
    let emit = w.emit();
    w.with_blocks(async {
        let outcome = w.send(&request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!((outcome.nonce, outcome.resolution), (0, Resolution::Mined));
    });
    assert_eq!(w.chain.borrow().unindexed, 0, "both unindexed lookups happened");
}

#[test]
fn the_pending_bytes_are_rebroadcast_on_every_third_poll_only() {
    let w = world(u128::MAX); // never mined
    let emit = w.emit();
    w.with_blocks(async {
        let options = TxOptions { max_wait_blocks: 1000, rebroadcast_every: 3, ..w.engine.options() };
        let stuck = request(2 * GWEI);
        let send = w.send(&stuck, options, &emit);
        crate::pool::notify::either(
            async {
                let _ = send.await;
            },
            w.rt.sleep(Duration::from_secs(60)),
        )
        .await;
    });
    let polls = w.chain.borrow().polls.clone();
    let events = w.events.borrow();
    let rebroadcasts: Vec<_> =
        events.iter().filter(|(_, e)| matches!(e, TxEvent::Rebroadcast { .. })).map(|(at, _)| *at).collect();
    assert!(polls.len() >= 12, "{} polls", polls.len());
    let every_third: Vec<_> = polls.iter().skip(2).step_by(3).copied().collect();
    assert_eq!(rebroadcasts, every_third, "polls at {polls:?}");
}

#[test]
fn a_cancel_joining_a_kept_nonce_holds_at_the_ceiling_with_it_instead_of_failing() {
    let w = world(0);
    let me = w.signer.address();
    let emit = w.emit();
    // Any replacement of the 2 gwei original costs 2.24 gwei: above this ceiling.
    let ceiling = TxOptions { max_wait_blocks: 1, fee_ceiling: Some(2 * GWEI + GWEI / 20), ..w.engine.options() };
    w.with_blocks(async {
        w.chain.borrow_mut().min_fee = 5 * GWEI; // not mined at 2 gwei for now
        let error = w.send(&request(2 * GWEI), ceiling, &emit).await.unwrap_err();
        assert!(matches!(error, TxFailure::FeeCeiling { nonce: 0, .. }), "{error:?}");
        let keeper = async {
            let kept = w.engine.keep(&*w.rt, &w.signer, 1, 0, ceiling, &emit).await;
            assert_eq!(kept.unwrap().resolution, Resolution::Mined);
        };
        let canceller = async {
            w.rt.sleep(Duration::from_secs(10)).await;
            // The cancel's own options do not hold at the ceiling; the keeper's loop does.
            let cancel = TxOptions { hold_at_ceiling: false, ..ceiling };
            let cancelled = w.engine.cancel(&*w.rt, &w.signer, 1, 0, cancel, &emit).await;
            assert_eq!(cancelled.unwrap().resolution, Resolution::Mined, "the original won; nothing failed");
        };
        let fees_fall = async {
            w.rt.sleep(Duration::from_secs(60)).await;
            w.chain.borrow_mut().min_fee = 0;
        };
        let tasks: Vec<Task> = vec![Box::pin(keeper), Box::pin(canceller), Box::pin(fees_fall)];
        join_all(tasks).await;
    });
    assert_eq!(w.signer.signatures.get(), 1, "no cancel could be signed under the ceiling");
    assert!(w.engine.pending(1, me).is_empty());
}

#[test]
fn after_a_cancel_joins_a_watched_nonce_the_cancel_is_re_priced_on_the_watchers_block_wait() {
    let w = world(22 * GWEI); // the first cancel (21 gwei) is not mined, its bump (23.5 gwei) is
    let emit = w.emit();
    w.with_blocks(async {
        let watcher = TxOptions { max_wait_blocks: 4, ..w.engine.options() };
        let stuck = request(2 * GWEI);
        let send = w.send(&stuck, watcher, &emit);
        let cancel = async {
            w.rt.sleep(Duration::from_secs(1)).await;
            let eager = TxOptions { max_wait_blocks: 1, ..watcher };
            w.engine.cancel(&*w.rt, &w.signer, 1, 0, eager, &emit).await.unwrap().resolution
        };
        let tasks: Vec<Task> = vec![
            Box::pin(async {
                assert_eq!(send.await.unwrap().resolution, Resolution::Cancelled);
            }),
            Box::pin(async {
                assert_eq!(cancel.await, Resolution::Cancelled);
            }),
        ];
        join_all(tasks).await;
    });
    let cancels = cancels_sent(&w.events.borrow());
    assert_eq!(cancels.len(), 2, "{cancels:?}");
    let (first_block, _) = cancels[0];
    assert_eq!(cancels[1], (first_block + 4, Some(first_block)), "four blocks after the first cancel, not one");
}

#[test]
fn a_cancel_of_a_nonce_nobody_watches_is_re_priced_after_the_cancels_block_wait_not_every_poll() {
    let w = world(0);
    let emit = w.emit();
    let ceiling = TxOptions { max_wait_blocks: 1, fee_ceiling: Some(2 * GWEI + GWEI / 20), ..w.engine.options() };
    w.with_blocks(async {
        w.chain.borrow_mut().min_fee = 100 * GWEI; // nothing is mined for a while
        let error = w.send(&request(2 * GWEI), ceiling, &emit).await.unwrap_err();
        assert!(matches!(error, TxFailure::FeeCeiling { nonce: 0, .. }), "{error:?}");
        let cancel = async {
            let options = TxOptions { max_wait_blocks: 3, fee_ceiling: None, ..w.engine.options() };
            w.engine.cancel(&*w.rt, &w.signer, 1, 0, options, &emit).await.unwrap().resolution
        };
        let fees_fall = async {
            w.rt.sleep(Duration::from_secs(120)).await;
            w.chain.borrow_mut().min_fee = 0;
        };
        let tasks: Vec<Task> =
            vec![Box::pin(async { assert_eq!(cancel.await, Resolution::Cancelled) }), Box::pin(fees_fall)];
        join_all(tasks).await;
    });
    let cancels = cancels_sent(&w.events.borrow());
    // The cancel at once (head 1), then one re-pricing per three blocks until
    // fees fall at 120 s (block 10); it used to be re-priced on every poll.
    assert_eq!(cancels, vec![(1, Some(0)), (4, Some(1)), (7, Some(4)), (10, Some(7))]);
}

/// The cancels the engine sent, as (head block, block the nonce had waited since).
fn cancels_sent(events: &[(crate::time::Instant, TxEvent)]) -> Vec<(u64, Option<u64>)> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            TxEvent::Replacement { kind: TxKind::Cancel, block, since, .. } => Some((*block, *since)),
            _ => None,
        })
        .collect()
}
