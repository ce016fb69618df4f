//! The engine's entry points as a caller sees them: `from` and the fee
//! ceiling checked before signing, a first broadcast whose outcome is
//! unknown, "nonce too low" for bytes of ours or someone else's, cancel
//! requests addressed by account and chain, and what the engine reports
//! (its options, an account's book, the hashes still tracked).

use std::time::Duration;

use alloy_primitives::Address;

use super::sim_chain::{first_poll, request, world};
use super::*;
use crate::tx::engine::{TxEngine, TxFailure, TxSigner};
use crate::tx::request::TxRequest;
use crate::tx::slot::Resolution;

#[test]
fn a_request_from_the_signers_address_is_sent_and_one_from_another_is_refused_unsigned() {
    let w = world(0);
    let emit = w.emit();
    w.with_blocks(async {
        let own = TxRequest { from: Some(w.signer.address()), ..request(30 * GWEI) };
        assert_eq!(w.send(&own, w.engine.options(), &emit).await.unwrap().resolution, Resolution::Mined);
        let other = TxRequest { from: Some(Address::repeat_byte(0xcc)), ..request(30 * GWEI) };
        match w.send(&other, w.engine.options(), &emit).await {
            Err(TxFailure::Invalid(e)) => assert_eq!(e.field, "from"),
            other => panic!("{other:?}"),
        }
    });
    assert_eq!(w.signer.signatures.get(), 1);
}

#[test]
fn given_fees_at_the_ceiling_are_sent_and_above_it_are_refused_naming_the_field() {
    let w = world(0);
    let emit = w.emit();
    w.with_blocks(async {
        let at = TxOptions { fee_ceiling: Some(30 * GWEI), ..w.engine.options() };
        assert_eq!(w.send(&request(30 * GWEI), at, &emit).await.unwrap().nonce, 0);
        let below = TxOptions { fee_ceiling: Some(30 * GWEI - 1), ..at };
        let refused = |result| match result {
            Err(TxFailure::Invalid(e)) => (e.field, e.reason),
            other => panic!("{other:?}"),
        };
        let above = refused(w.send(&request(30 * GWEI), below, &emit).await);
        assert_eq!(above, ("maxFeePerGas".to_string(), "is above the fee ceiling".to_string()));
        let legacy = TxRequest { max_fee: None, tip: None, gas_price: Some(30 * GWEI), ..request(0) };
        assert_eq!(refused(w.send(&legacy, below, &emit).await).0, "gasPrice");
    });
    assert_eq!(w.signer.signatures.get(), 1, "nothing above the ceiling was signed");
}

/// The events of the first broadcast (all at t = 0, before any block).
fn first_events(lose: impl FnOnce(&mut super::sim_chain::Chain)) -> Vec<TxEvent> {
    let w = world(0);
    lose(&mut w.chain.borrow_mut());
    let emit = w.emit();
    w.with_blocks(async {
        w.send(&request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
    });
    let events = w.events.borrow();
    events.iter().filter(|(at, _)| at.since_epoch() == Duration::ZERO).map(|(_, e)| e.clone()).collect()
}

#[test]
fn a_first_send_lost_on_the_way_is_rebroadcast_at_once_and_one_that_reached_a_node_is_not() {
    let lost = first_events(|chain| chain.lose_sends = 1);
    assert!(
        matches!(lost[..], [TxEvent::OutcomeUnknown { nonce: 0, hash }, TxEvent::Rebroadcast { nonce: 0, hash: again }] if hash == again),
        "{lost:?}"
    );
    let answer_lost = first_events(|chain| chain.lose_answers = 1);
    assert!(matches!(answer_lost[..], [TxEvent::OutcomeUnknown { nonce: 0, .. }]), "{answer_lost:?}");
}

#[test]
fn nonce_too_low_for_bytes_a_node_knows_is_ours_even_when_the_receipt_lookup_fails() {
    let w = world(0);
    {
        let mut chain = w.chain.borrow_mut();
        chain.deliver_twice = 1; // mined at the first delivery; the second answers "nonce too low"
        chain.fail_receipts = 1; // and the lookup of its receipt fails
    }
    let emit = w.emit();
    w.with_blocks(async {
        let outcome = w.send(&request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!((outcome.nonce, outcome.resolution), (0, Resolution::Mined));
    });
    assert_eq!(w.signer.signatures.get(), 1, "known on a node: ours, never signed again");
    assert_eq!(w.chain.borrow().fail_receipts, 0);
}

#[test]
fn nonce_zero_taken_by_someone_else_is_resynced_and_the_send_signed_again_with_nonce_one() {
    let w = world(0);
    let emit = w.emit();
    w.with_blocks(async {
        w.chain.borrow_mut().refuse = true; // the book starts at 0; the refusal gives nonce 0 back
        assert!(matches!(w.send(&request(30 * GWEI), w.engine.options(), &emit).await, Err(TxFailure::Rejected(_))));
        {
            let mut chain = w.chain.borrow_mut();
            chain.refuse = false;
            chain.next_nonce = 1; // another wallet's nonce 0 is mined meanwhile
        }
        let outcome = w.send(&request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!(outcome.nonce, 1);
    });
    let resyncs: Vec<TxEvent> = w
        .events
        .borrow()
        .iter()
        .filter(|(_, e)| matches!(e, TxEvent::NonceResync { .. }))
        .map(|(_, e)| e.clone())
        .collect();
    assert_eq!(resyncs, vec![TxEvent::NonceResync { from: 0, to: 1 }]);
}

#[test]
fn a_cancel_request_flags_the_nonce_of_the_named_address_on_the_named_chain_only() {
    let w = world(5 * GWEI); // the original never pays enough; the cancel does
    let emit = w.emit();
    let me = w.signer.address();
    w.with_blocks(async {
        let options = TxOptions { max_wait_blocks: 1000, ..w.engine.options() };
        let stuck = request(2 * GWEI);
        let send = w.send(&stuck, options, &emit);
        let mut send = std::pin::pin!(send);
        first_poll(send.as_mut()).await;
        let sent = w.chain.borrow().sends.clone();
        assert_eq!(w.engine.pending(1, me), vec![(0, sent)]);
        assert_eq!(w.engine.pending(2, me), vec![]);
        assert_eq!(w.engine.request_cancel(Address::repeat_byte(0xcc), 0, Some(1)), 0, "another address");
        assert_eq!(w.engine.request_cancel(me, 0, Some(2)), 0, "another chain");
        assert_eq!(w.engine.request_cancel(me, 1, None), 0, "another nonce");
        assert_eq!(w.engine.request_cancel(me, 0, Some(1)), 1);
        assert_eq!(send.await.unwrap().resolution, Resolution::Cancelled);
    });
    assert_eq!(w.replacements(), vec![(0, TxKind::Cancel)]);
    assert_eq!(w.engine.pending(1, me), vec![]);
}

#[test]
fn the_engine_reports_its_options_and_each_accounts_nonce_book() {
    let w = world(0);
    let options = TxOptions { max_wait_blocks: 9, confirmations: 4, ..TxOptions::default() };
    assert_eq!(TxEngine::new(w.engine.node().clone(), options).options(), options);
    let emit = w.emit();
    let me = w.signer.address();
    assert!(w.engine.book(1, me).is_none(), "no send yet");
    w.with_blocks(async {
        w.send(&request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
    });
    let book = w.engine.book(1, me).expect("the account's book");
    assert_eq!((book.next(), book.lowest_live()), (Some(1), None));
    assert!(w.engine.book(2, me).is_none(), "another chain has no book");
}
