//! Two engines (two worker processes) sending from one account through the
//! fleet's shared nonce book (`engine_fleet.rs`; the book is the pure model
//! of the Redis script, on the simulated clock): distinct nonces, none
//! skipped; a store that cannot answer fails the send before anything is
//! signed; a send whose reservation lapsed while it signed broadcasts nothing.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use super::sim_chain::{encode, request, world, FakeSigner, SimNode};
use crate::runtime::sim::{join_all, SimRuntime};
use crate::runtime::Runtime;
use crate::tx::engine::{Signed, TxEngine, TxEvent, TxFailure, TxSigner};
use crate::tx::fees::GWEI;
use crate::tx::fleet_nonce::journal::{JournalCall, JournalOp, JournalReply};
use crate::tx::fleet_nonce::{FleetCall, FleetNonceBook, FleetNonces, FleetOp, FleetUnavailable};
use crate::tx::journal_record::JournalEntry;
use crate::tx::{TxOptions, UnsignedTx};

/// The shared book in memory, on the simulated clock; `down` makes every call fail.
struct MemBook {
    book: RefCell<FleetNonceBook>,
    rt: Rc<SimRuntime>,
    down: Cell<bool>,
    calls: RefCell<Vec<FleetOp>>,
    journal_calls: RefCell<Vec<&'static str>>,
}

impl FleetNonces for MemBook {
    fn call(&self, op: FleetOp, _account: u64, member: &str, arg: u64) -> FleetCall<'_> {
        let member = member.to_owned();
        Box::pin(async move {
            self.rt.sleep(Duration::from_millis(1)).await; // a round trip
            self.calls.borrow_mut().push(op);
            if self.down.get() {
                return Err(FleetUnavailable("connection refused".into()));
            }
            Ok(self.book.borrow_mut().apply(self.rt.now(), op, &member, arg))
        })
    }

    fn journal(&self, op: JournalOp, _account: u64, owner: &str, nonce: u64, lease: Duration) -> JournalCall<'_> {
        let owner = owner.to_owned();
        Box::pin(async move {
            self.rt.sleep(Duration::from_millis(1)).await;
            self.journal_calls.borrow_mut().push(op.as_str());
            if self.down.get() {
                return Err(FleetUnavailable("connection refused".into()));
            }
            Ok(self.book.borrow_mut().journal_apply(self.rt.now(), &op, &owner, nonce, lease))
        })
    }
}

fn mem_book(rt: &Rc<SimRuntime>) -> Rc<MemBook> {
    Rc::new(MemBook {
        book: RefCell::default(),
        rt: rt.clone(),
        down: false.into(),
        calls: RefCell::default(),
        journal_calls: RefCell::default(),
    })
}

#[test]
fn two_workers_on_one_account_take_distinct_nonces_none_skipped() {
    let w = world(0);
    let book = mem_book(&w.rt);
    w.engine.share_nonces(book.clone(), "one".into());
    let other = TxEngine::new(SimNode { chain: w.chain.clone(), rt: w.rt.clone() }, w.engine.options());
    other.share_nonces(book.clone(), "two".into());
    let signer = FakeSigner { signatures: Cell::new(0) };
    let emit = w.emit();
    let outcomes = RefCell::new(Vec::new());
    let run = async {
        let req = request(30 * GWEI);
        let mut sends: Vec<super::sim_chain::Task<'_>> = Vec::new();
        for _ in 0..10 {
            sends.push(Box::pin(async {
                let sent = w.send(&req, w.engine.options(), &emit).await;
                outcomes.borrow_mut().push(sent);
            }));
            let ticket = other.ticket();
            let (other, signer, emit, outcomes, req, rt) = (&other, &signer, &emit, &outcomes, &req, &*w.rt);
            sends.push(Box::pin(async move {
                let sent = other.send(rt, ticket, signer, req, other.options(), emit).await;
                outcomes.borrow_mut().push(sent);
            }));
        }
        join_all(sends).await;
    };
    w.with_blocks(run);
    let mut nonces: Vec<u64> = outcomes.borrow().iter().map(|o| o.as_ref().expect("every send mined").nonce).collect();
    nonces.sort_unstable();
    assert_eq!(nonces, (0..20).collect::<Vec<_>>(), "exactly the 20 expected, each once");
    assert_eq!(w.chain.borrow().next_nonce, 20, "all mined, none skipped");
    let calls = book.calls.borrow();
    let journaled = book.journal_calls.borrow().iter().filter(|op| **op == "live").count();
    assert_eq!(journaled, 20, "each marked live and journaled before its broadcast");
    assert_eq!(calls.iter().filter(|op| **op == FleetOp::Settle).count(), 20, "and settled once mined");
}

#[test]
fn a_store_that_cannot_answer_fails_the_send_before_anything_is_signed() {
    let w = world(0);
    let book = mem_book(&w.rt);
    book.down.set(true);
    w.engine.share_nonces(book, "one".into());
    let emit = w.emit();
    let result = RefCell::new(None);
    w.with_blocks(async { *result.borrow_mut() = Some(w.send(&request(30 * GWEI), w.engine.options(), &emit).await) });
    let result = result.into_inner().unwrap();
    assert!(matches!(result, Err(TxFailure::Coordination(ref why)) if why.contains("refused")), "{result:?}");
    assert_eq!(w.signer.signatures.get(), 0, "no nonce guessed, nothing signed");
    assert!(w.chain.borrow().sends.is_empty(), "nothing broadcast");
}

/// Signs like `FakeSigner`, the first signature after `delay` (a hardware wallet).
struct SlowSigner {
    delay: Cell<Option<Duration>>,
    rt: Rc<SimRuntime>,
    signed: RefCell<Vec<u64>>,
}

impl TxSigner<String> for SlowSigner {
    fn address(&self) -> alloy_primitives::Address {
        alloy_primitives::Address::repeat_byte(0xaa)
    }
    async fn sign(&self, tx: &UnsignedTx) -> Result<Signed, String> {
        if let Some(delay) = self.delay.take() {
            self.rt.sleep(delay).await;
        }
        self.signed.borrow_mut().push(tx.nonce);
        Ok(Signed::Raw(encode(tx)))
    }
}

#[test]
fn a_send_whose_reservation_lapsed_while_it_signed_broadcasts_nothing_and_signs_again() {
    let w = world(0);
    let book = mem_book(&w.rt);
    w.engine.share_nonces(book.clone(), "one".into());
    // Past the 120 s hold: the book may have given nonce 0 to another send meanwhile.
    let slow =
        SlowSigner { delay: Some(Duration::from_secs(130)).into(), rt: w.rt.clone(), signed: RefCell::default() };
    let emit = w.emit();
    let result = RefCell::new(None);
    w.with_blocks(async {
        let ticket = w.engine.ticket();
        let sent = w.engine.send(&*w.rt, ticket, &slow, &request(30 * GWEI), w.engine.options(), &emit).await;
        *result.borrow_mut() = Some(sent);
    });
    let outcome = result.into_inner().unwrap().expect("mined");
    assert_eq!(*slow.signed.borrow(), vec![0, 0], "signed twice: the lapsed bytes were dropped unsent");
    assert_eq!(w.chain.borrow().sends.len(), 1, "one broadcast");
    assert_eq!(outcome.nonce, 0);
    let submitted = w.events.borrow().iter().filter(|(_, e)| matches!(e, TxEvent::Submitted { .. })).count();
    assert_eq!(submitted, 1);
}

#[test]
fn a_gap_below_our_nonce_is_another_workers_to_fill_never_ours() {
    let w = world(0);
    let book = mem_book(&w.rt);
    w.engine.share_nonces(book.clone(), "one".into());
    // Another worker reserved nonce 0 and is slow to broadcast it: ours is nonce 1.
    book.book.borrow_mut().resync(w.rt.now(), 0);
    let _ = book.book.borrow_mut().allocate(w.rt.now(), "two-1", Duration::from_secs(600));
    let emit = w.emit();
    let outcome = RefCell::new(None);
    let run = async {
        let ours = request(30 * GWEI);
        let tasks: Vec<super::sim_chain::Task<'_>> = vec![
            Box::pin(async {
                let sent = w.send(&ours, w.engine.options(), &emit).await;
                *outcome.borrow_mut() = Some(sent);
            }),
            Box::pin(async {
                // A minute later the other worker broadcasts its nonce 0.
                w.rt.sleep(Duration::from_secs(60)).await;
                assert!(!w.chain.borrow().pool.contains_key(&0), "no filler of ours for the other worker's nonce");
                let theirs = UnsignedTx {
                    chain_id: 1,
                    from: alloy_primitives::Address::repeat_byte(0xaa),
                    nonce: 0,
                    to: Some(alloy_primitives::Address::repeat_byte(0xcc)),
                    value: Default::default(),
                    data: Vec::new(),
                    gas: 21_000,
                    fees: crate::tx::fees::Fees::Eip1559 { max_fee: 30 * GWEI, tip: GWEI },
                };
                let _ = w.chain.borrow_mut().admit(&encode(&theirs));
            }),
        ];
        join_all(tasks).await;
    };
    w.with_blocks(run);
    assert_eq!(outcome.into_inner().unwrap().expect("mined").nonce, 1);
    let gaps: Vec<bool> = w
        .events
        .borrow()
        .iter()
        .filter_map(|(_, e)| match e {
            TxEvent::NonceGap { repaired, .. } => Some(*repaired),
            _ => None,
        })
        .collect();
    assert!(!gaps.is_empty() && gaps.iter().all(|r| !r), "reported, never repaired: {gaps:?}");
    assert_eq!(w.replacements(), vec![], "ours cannot be mined before theirs: no speed-up paid for in vain");
}

#[test]
fn a_worker_killed_mid_speed_up_has_its_nonce_finished_by_another_with_the_same_bytes_and_no_new_nonce() {
    // Nothing under 60 gwei is mined: the 30-gwei send needs several speed-ups.
    let w = world(60 * GWEI);
    let book = mem_book(&w.rt);
    w.engine.share_nonces(book.clone(), "one".into());
    let other = TxEngine::new(SimNode { chain: w.chain.clone(), rt: w.rt.clone() }, w.engine.options());
    other.share_nonces(book.clone(), "two".into());
    let emit = w.emit();
    let from = w.signer.address();
    let outcome = RefCell::new(None);
    let adopted_early = RefCell::new(None);
    let at_adoption = RefCell::new(Vec::new());
    let run = async {
        // Worker one sends, speeds up once (3 blocks), and is killed at 60 s.
        let options = TxOptions { max_wait_blocks: 3, ..w.engine.options() };
        let killed = crate::pool::notify::either(
            async {
                let _ = w.send(&request(30 * GWEI), options, &emit).await;
            },
            w.rt.sleep(Duration::from_secs(60)),
        );
        killed.await;
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
        // Someone asks for its outcome before anything drives it (waitForTransaction right after adoption).
        let asked = RefCell::new(None);
        let tasks: Vec<super::sim_chain::Task<'_>> = vec![
            Box::pin(async { *asked.borrow_mut() = Some(other.outcome_of(Some(1), Some(from), Some(0), None).await) }),
            Box::pin(async { *outcome.borrow_mut() = Some(other.keep(&*w.rt, &w.signer, 1, 0, options, &emit).await) }),
        ];
        join_all(tasks).await;
        assert!(w.chain.borrow().sends.len() > sends_before);
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
    let w = world(60 * GWEI);
    let book = mem_book(&w.rt);
    w.engine.share_nonces(book.clone(), "one".into());
    let other = TxEngine::new(SimNode { chain: w.chain.clone(), rt: w.rt.clone() }, w.engine.options());
    other.share_nonces(book.clone(), "two".into());
    let emit = w.emit();
    let from = w.signer.address();
    let signed_before = RefCell::new(0);
    let run = async {
        let options = TxOptions { max_wait_blocks: 3, ..w.engine.options() };
        let killed = crate::pool::notify::either(
            async {
                let _ = w.send(&request(30 * GWEI), options, &emit).await;
            },
            w.rt.sleep(Duration::from_secs(20)),
        );
        killed.await;
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
    let w = world(60 * GWEI);
    let book = mem_book(&w.rt);
    w.engine.share_nonces(book.clone(), "one".into());
    let other = TxEngine::new(SimNode { chain: w.chain.clone(), rt: w.rt.clone() }, w.engine.options());
    other.share_nonces(book.clone(), "two".into());
    let emit = w.emit();
    let from = w.signer.address();
    let later = LaterSigner { inner: &w.signer, known: false.into() };
    let outcome = RefCell::new(None);
    let run = async {
        let options = TxOptions { max_wait_blocks: 3, ..w.engine.options() };
        crate::pool::notify::either(
            async {
                let _ = w.send(&request(30 * GWEI), options, &emit).await;
            },
            w.rt.sleep(Duration::from_secs(20)),
        )
        .await;
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
