//! The pending-transaction journal on the simulated chain (`engine_journal.rs`;
//! the store is the pure model of the Redis script, `fleet_send.rs`'s
//! `MemBook`): a worker killed mid-speed-up has its nonce finished by
//! another with the same bytes and no new nonce; an adopted record's
//! template is checked before it is re-signed; an adopted nonce waits for
//! its signer; a speed-up the journal cannot record never leaves.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use super::fleet_send::{mem_book, MemBook};
use super::sim_chain::{request, world, FakeSigner, SimNode, World};
use crate::runtime::sim::join_all;
use crate::runtime::Runtime;
use crate::tx::engine::{Signed, TxEngine, TxEvent, TxFailure, TxSigner};
use crate::tx::fees::GWEI;
use crate::tx::fleet_nonce::journal::{JournalOp, JournalReply};
use crate::tx::journal_record::JournalEntry;
use crate::tx::{TxOptions, UnsignedTx};

/// Two workers on one account sharing the book: `world`'s engine ("one")
/// and another ("two"), on a chain that mines nothing under 60 gwei, so a
/// 30-gwei send needs several speed-ups.
fn two_workers() -> (World, Rc<MemBook>, TxEngine<SimNode>) {
    let w = world(60 * GWEI);
    let book = mem_book(&w.rt);
    w.engine.share_nonces(book.clone(), "one".into());
    let other = TxEngine::new(SimNode { chain: w.chain.clone(), rt: w.rt.clone() }, w.engine.options());
    other.share_nonces(book.clone(), "two".into());
    (w, book, other)
}

/// Worker one sends a 30-gwei transaction and is killed `after` later
/// (its send dropped: no renewal, no step of any kind after that).
async fn send_then_die(w: &World, options: TxOptions, emit: &dyn Fn(TxEvent), after: Duration) {
    let send = async {
        let _ = w.send(&request(30 * GWEI), options, emit).await;
    };
    crate::pool::notify::either(send, w.rt.sleep(after)).await;
}

#[test]
fn a_worker_killed_mid_speed_up_has_its_nonce_finished_by_another_with_the_same_bytes_and_no_new_nonce() {
    // Nothing under 60 gwei is mined: the 30-gwei send needs several speed-ups.
    let (w, book, other) = two_workers();
    let emit = w.emit();
    let from = w.signer.address();
    let outcome = RefCell::new(None);
    let adopted_early = RefCell::new(None);
    let at_adoption = RefCell::new(Vec::new());
    let run = async {
        // Worker one sends, speeds up once (3 blocks), and is killed at 60 s.
        let options = TxOptions { max_wait_blocks: 3, ..w.engine.options() };
        send_then_die(&w, options, &emit, Duration::from_secs(60)).await;
        assert_eq!(w.replacements().len(), 1, "killed after one speed-up");
        *adopted_early.borrow_mut() = Some(other.adopt(&*w.rt, 1, from).await);
        // Its lease (renewed every 5 s while it watched) runs out 15 s after its last renewal.
        w.rt.sleep(Duration::from_secs(16)).await;
        let adopted = other.adopt(&*w.rt, 1, from).await.expect("the store answers");
        assert_eq!(adopted.nonces, vec![0]);
        let again = other.adopt(&*w.rt, 1, from).await.expect("the store answers");
        assert_eq!(again.nonces, Vec::<u64>::new(), "its own now, watched already: not adopted twice");
        *at_adoption.borrow_mut() = other.pending(1, from);
        let sends_before = w.chain.borrow().sends.len();
        let adopted_at = w.rt.now();
        // Someone asks for its outcome before anything drives it (waitForTransaction right after adoption).
        let asked = RefCell::new(None);
        let tasks: Vec<super::sim_chain::Task<'_>> = vec![
            Box::pin(async { *asked.borrow_mut() = Some(other.outcome_of(Some(1), Some(from), Some(0), None).await) }),
            Box::pin(async { *outcome.borrow_mut() = Some(other.keep(&*w.rt, &w.signer, 1, 0, options, &emit).await) }),
        ];
        join_all(tasks).await;
        let newest = *at_adoption.borrow()[0].1.last().expect("a hash");
        assert_eq!(
            w.chain.borrow().sends.get(sends_before),
            Some(&newest),
            "the adopter's first send: the journaled bytes"
        );
        let first_rebroadcast = w
            .events
            .borrow()
            .iter()
            .find(|(t, e)| *t >= adopted_at && matches!(e, TxEvent::Rebroadcast { .. }))
            .map(|(t, _)| t.saturating_since(adopted_at));
        assert!(
            first_rebroadcast.is_some_and(|d| d < Duration::from_secs(1)),
            "at its first poll: {first_rebroadcast:?}"
        );
        let asked = asked.into_inner().expect("the asker was answered").expect("mined");
        assert_eq!(asked.nonce, 0);
        // Ended: a late caller still gets the outcome, by nonce or by any of its hashes.
        let late = other.outcome_of(Some(1), Some(from), Some(0), None).await.expect("remembered");
        assert_eq!(late.hash, asked.hash);
        let by_hash = other.outcome_of(None, None, None, Some(asked.hashes[0])).await.expect("remembered");
        assert_eq!(by_hash.nonce, 0);
        let unknown = other.outcome_of(None, None, None, Some(alloy_primitives::B256::repeat_byte(9))).await;
        assert!(matches!(unknown, Err(TxFailure::UnknownHash(_))), "{unknown:?}");
    };
    w.with_blocks(run);
    assert_eq!(
        adopted_early.into_inner().unwrap().expect("answers").nonces,
        Vec::<u64>::new(),
        "not while its lease runs"
    );
    let pending = at_adoption.into_inner();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].1.len(), 2, "both hashes of the dead worker are watched: the original and its speed-up");
    let outcome = outcome.into_inner().unwrap().expect("finished by the other worker");
    assert_eq!(outcome.nonce, 0);
    assert!(outcome.hashes.starts_with(&pending[0].1), "the same transactions, sped up further");
    assert_eq!(w.chain.borrow().next_nonce, 1, "one nonce for the intent, mined once");
    assert_eq!(w.chain.borrow().mined.len(), 1);
    let journal = book.journal_calls.borrow();
    assert!(journal.iter().filter(|op| **op == "write").count() >= 2, "every speed-up journaled before its broadcast");
    assert!(journal.contains(&"renew"));
}

#[test]
fn adoption_without_a_shared_store_is_a_coordination_failure() {
    let w = world(0);
    let result = w.rt.block_on(w.engine.adopt(&*w.rt, 1, w.signer.address())).unwrap();
    assert!(matches!(result, Err(TxFailure::Coordination(ref why)) if why.contains("no shared store")), "{result:?}");
}

#[test]
fn an_adopted_record_whose_template_was_changed_in_the_store_is_watched_and_never_re_signed() {
    let (w, book, other) = two_workers();
    let emit = w.emit();
    let from = w.signer.address();
    let signed_before = RefCell::new(0);
    let run = async {
        let options = TxOptions { max_wait_blocks: 3, ..w.engine.options() };
        send_then_die(&w, options, &emit, Duration::from_secs(20)).await;
        // Someone with access to the store points the record's template at their own address.
        w.rt.sleep(Duration::from_secs(16)).await;
        let now = w.rt.now();
        let taken = book.book.borrow_mut().journal_apply(now, &JournalOp::Orphans, "attacker", 0, Duration::ZERO);
        let JournalReply::Orphans(found) = taken else { panic!("{taken:?}") };
        let mut entry = JournalEntry::decode(&found[0].1).unwrap();
        entry.template.to = Some(alloy_primitives::Address::repeat_byte(0x66));
        let write = JournalOp::Write { record: entry.encode() };
        book.book.borrow_mut().journal_apply(now, &write, "attacker", 0, Duration::ZERO);
        let adopted = other.adopt(&*w.rt, 1, from).await.expect("answers");
        assert_eq!(adopted.nonces, vec![0], "the record reads (its hashes match its bytes)");
        *signed_before.borrow_mut() = w.signer.signatures.get();
        let kept = crate::pool::notify::either(
            async {
                let _ = other.keep(&*w.rt, &w.signer, 1, 0, options, &emit).await;
            },
            w.rt.sleep(Duration::from_secs(120)),
        );
        kept.await;
    };
    w.with_blocks(run);
    assert_eq!(w.signer.signatures.get(), *signed_before.borrow() + 1, "one signature: the check, which did not match");
    let replacements_after_adoption = w
        .events
        .borrow()
        .iter()
        .filter(|(t, e)| *t > crate::time::at(36_000) && matches!(e, TxEvent::Replacement { .. }))
        .count();
    assert_eq!(replacements_after_adoption, 0, "the changed template was never sent");
    let ours: Vec<_> = other.pending(1, from).into_iter().flat_map(|(_, h)| h).collect();
    assert!(
        w.chain.borrow().sends.iter().all(|h| ours.contains(h)),
        "only the dead worker's bytes ever reached the chain"
    );
}

/// The test signer once `known` (a relayer that learns the account's signer from a later send).
struct LaterSigner<'s> {
    inner: &'s FakeSigner,
    known: Cell<bool>,
}

impl TxSigner<String> for LaterSigner<'_> {
    fn address(&self) -> alloy_primitives::Address {
        self.inner.address()
    }
    fn signs_locally(&self) -> bool {
        self.known.get()
    }
    async fn sign(&self, tx: &UnsignedTx) -> Result<Signed, String> {
        if !self.known.get() {
            return Err("no signer known: watching only".into());
        }
        self.inner.sign(tx).await
    }
}

#[test]
fn an_adopted_nonce_is_watched_until_its_signer_is_known_then_sped_up_until_mined() {
    let (w, _book, other) = two_workers();
    let emit = w.emit();
    let from = w.signer.address();
    let later = LaterSigner { inner: &w.signer, known: false.into() };
    let outcome = RefCell::new(None);
    let run = async {
        let options = TxOptions { max_wait_blocks: 3, ..w.engine.options() };
        send_then_die(&w, options, &emit, Duration::from_secs(20)).await;
        w.rt.sleep(Duration::from_secs(16)).await;
        assert_eq!(other.adopt(&*w.rt, 1, from).await.expect("answers").nonces, vec![0]);
        let tasks: Vec<super::sim_chain::Task<'_>> = vec![
            Box::pin(async { *outcome.borrow_mut() = Some(other.keep(&*w.rt, &later, 1, 0, options, &emit).await) }),
            Box::pin(async {
                w.rt.sleep(Duration::from_secs(120)).await; // ten blocks watched only
                later.known.set(true);
            }),
        ];
        join_all(tasks).await;
    };
    w.with_blocks(run);
    let replacements: Vec<_> =
        w.events.borrow().iter().filter(|(_, e)| matches!(e, TxEvent::Replacement { .. })).map(|(t, _)| *t).collect();
    assert!(
        replacements.iter().all(|t| *t > crate::time::at(156_000)),
        "no speed-up before the signer was known: {replacements:?}"
    );
    assert!(replacements.len() >= 3, "then sped up to the 60 gwei the chain wants: {}", replacements.len());
    let outcome = outcome.into_inner().unwrap().expect("mined");
    assert_eq!((outcome.nonce, w.chain.borrow().next_nonce), (0, 1));
}

#[test]
fn a_speed_up_the_journal_cannot_record_is_never_broadcast() {
    // Nothing under 60 gwei is mined: the send needs speed-ups; the store goes away after the first broadcast.
    let w = world(60 * GWEI);
    let book = mem_book(&w.rt);
    w.engine.share_nonces(book.clone(), "one".into());
    let emit = w.emit();
    let run = async {
        let options = TxOptions { max_wait_blocks: 2, ..w.engine.options() };
        let tasks: Vec<super::sim_chain::Task<'_>> = vec![
            Box::pin(async {
                let _ = w.send(&request(30 * GWEI), options, &emit).await;
            }),
            Box::pin(async {
                w.rt.sleep(Duration::from_secs(1)).await;
                book.down.set(true); // Redis gone: the speed-ups cannot be journaled
                w.rt.sleep(Duration::from_secs(120)).await;
                assert_eq!(
                    w.chain.borrow().sends.iter().collect::<std::collections::HashSet<_>>().len(),
                    1,
                    "only the original ever left"
                );
                book.down.set(false);
            }),
        ];
        let all = async {
            join_all(tasks).await;
        };
        crate::pool::notify::either(all, w.rt.sleep(Duration::from_secs(400))).await;
    };
    w.with_blocks(run);
    let journal = book.journal_calls.borrow();
    assert!(
        journal.iter().filter(|op| **op == "write").count() >= 2,
        "it tried, and tried again once the store was back"
    );
    assert!(w.chain.borrow().next_nonce == 1, "sped up and mined once the store answered");
}
