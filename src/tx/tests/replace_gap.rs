//! What the watcher signs on its own: a cancel is a 0-value self-transfer
//! (not the original re-priced), a replacement's broadcast is reported as
//! submitted or unknown, and a gap below our nonce is filled only when
//! repair is on and the gap is at most 16 nonces, wherever it starts.

use alloy_primitives::B256;

use super::sim_chain::{encode, first_poll, request, world, Pooled};
use super::*;
use crate::tx::engine::{tx_hash, TxSigner};
use crate::tx::fees::Fees;
use crate::tx::slot::Resolution;
use crate::tx::UnsignedTx;

fn replacement_of(w: &super::sim_chain::World) -> (B256, Fees) {
    w.events
        .borrow()
        .iter()
        .find_map(|(_, e)| match e {
            TxEvent::Replacement { hash, fees, .. } => Some((*hash, *fees)),
            _ => None,
        })
        .expect("a replacement")
}

#[test]
fn a_cancel_is_a_zero_value_transfer_to_the_sender_itself() {
    let w = world(5 * GWEI);
    let emit = w.emit();
    let stuck = request(2 * GWEI);
    w.with_blocks(async {
        let send = w.send(&stuck, TxOptions { max_wait_blocks: 1000, ..w.engine.options() }, &emit);
        let mut send = std::pin::pin!(send);
        first_poll(send.as_mut()).await;
        assert_eq!(w.engine.request_cancel(w.signer.address(), 0, Some(1)), 1);
        assert_eq!(send.await.unwrap().resolution, Resolution::Cancelled);
    });
    let (hash, fees) = replacement_of(&w);
    let me = w.signer.address();
    let original = UnsignedTx {
        chain_id: 1,
        from: me,
        nonce: 0,
        to: stuck.to,
        value: stuck.value,
        data: Vec::new(),
        gas: 21_000,
        fees: Fees::Eip1559 { max_fee: 2 * GWEI, tip: GWEI },
    };
    assert_eq!(tx_hash(&encode(&original)), w.chain.borrow().sends[0], "the template as sent");
    assert_eq!(hash, tx_hash(&encode(&original.cancel(fees))), "to the sender, no value, the cancel's fees");
    assert_eq!(original.cancel(fees).to, Some(me));
}

#[test]
fn a_speed_up_a_node_took_is_reported_submitted_and_one_whose_answer_was_lost_unknown() {
    for lose_answer in [false, true] {
        let w = world(5 * GWEI);
        let emit = w.emit();
        w.with_blocks(async {
            let options = TxOptions { max_wait_blocks: 2, ..w.engine.options() };
            let stuck = request(2 * GWEI);
            let send = w.send(&stuck, options, &emit);
            let mut send = std::pin::pin!(send);
            first_poll(send.as_mut()).await;
            // The next answer lost is the speed-up's (re-broadcasts of pooled bytes send nothing else).
            w.chain.borrow_mut().lose_answers = u32::from(lose_answer);
            assert_eq!(send.await.unwrap().resolution, Resolution::Replaced);
        });
        let (hash, _) = replacement_of(&w);
        let told: Vec<TxEvent> = w
            .events
            .borrow()
            .iter()
            .filter(|(_, e)| matches!(e, TxEvent::Submitted { hash: h, .. } | TxEvent::OutcomeUnknown { hash: h, .. } if *h == hash))
            .map(|(_, e)| e.clone())
            .collect();
        let expected = if lose_answer {
            TxEvent::OutcomeUnknown { nonce: 0, hash }
        } else {
            TxEvent::Submitted { nonce: 0, hash, kind: TxKind::SpeedUp }
        };
        assert_eq!(told, vec![expected]);
    }
}

/// Someone else's transactions hold `outsiders` in the pool, so ours takes
/// the nonce after them; once ours is out they vanish: a gap below ours.
/// Returns the gap event and the chain's next nonce two minutes on.
fn gap_of(outsiders: std::ops::Range<u64>, repair_gaps: bool) -> (Option<TxEvent>, u64) {
    let w = world(0);
    {
        let mut chain = w.chain.borrow_mut();
        chain.next_nonce = outsiders.start;
        for nonce in outsiders.clone() {
            let hash = B256::with_last_byte(nonce as u8 + 1);
            chain.pool.insert(nonce, Pooled { hash, max_fee: 30 * GWEI, tip: GWEI });
        }
    }
    let emit = w.emit();
    w.with_blocks(async {
        let options = TxOptions { repair_gaps, ..w.engine.options() };
        let ours = request(30 * GWEI);
        let send = w.send(&ours, options, &emit);
        let mut send = std::pin::pin!(send);
        first_poll(send.as_mut()).await;
        w.chain.borrow_mut().pool.retain(|nonce, _| !outsiders.contains(nonce));
        // Watch for two minutes at most: without repair, ours is never mined.
        crate::pool::notify::either(
            async {
                let _ = send.await;
            },
            w.rt.sleep(std::time::Duration::from_secs(120)),
        )
        .await;
    });
    let gap = w.events.borrow().iter().find(|(_, e)| matches!(e, TxEvent::NonceGap { .. })).map(|(_, e)| e.clone());
    let next = w.chain.borrow().next_nonce;
    (gap, next)
}

#[test]
fn a_gap_is_reported_but_not_filled_when_repair_is_off() {
    assert_eq!(gap_of(0..1, false), (Some(TxEvent::NonceGap { from: 0, to: 1, repaired: false }), 0));
}

#[test]
fn a_short_gap_far_from_nonce_zero_is_filled() {
    assert_eq!(gap_of(10..12, true), (Some(TxEvent::NonceGap { from: 10, to: 12, repaired: true }), 13));
}
