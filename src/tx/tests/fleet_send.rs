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
use crate::tx::fleet_nonce::journal::{JournalCall, JournalOp};
use crate::tx::fleet_nonce::{FleetCall, FleetNonceBook, FleetNonces, FleetOp, FleetUnavailable};
use crate::tx::UnsignedTx;

/// The shared book in memory, on the simulated clock; `down` makes every call fail.
pub(super) struct MemBook {
    pub(super) book: RefCell<FleetNonceBook>,
    rt: Rc<SimRuntime>,
    pub(super) down: Cell<bool>,
    calls: RefCell<Vec<FleetOp>>,
    pub(super) journal_calls: RefCell<Vec<&'static str>>,
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

pub(super) fn mem_book(rt: &Rc<SimRuntime>) -> Rc<MemBook> {
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
