//! The transaction engine on the simulated clock against a simulated
//! chain: a mempool with the 10 % replacement rule, blocks every 12 s, and
//! switches that lose a send's answer or the send itself.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use alloy_primitives::{Address, B256};

use super::engine::{tx_hash, SendOutcome, Signed, TxEngine, TxEvent, TxNode, TxSigner};
use super::fees::{FeeSample, Fees, GWEI};
use super::receipt::ReceiptInfo;
use super::request::TxRequest;
use super::slot::TxKind;
use super::{TxOptions, UnsignedTx};
use crate::runtime::sim::{join_all, SimRuntime};
use crate::runtime::Runtime;
use crate::time::Instant;

const BLOCK: Duration = Duration::from_secs(12);

#[derive(Clone)]
struct Pooled {
    hash: B256,
    max_fee: u128,
    tip: u128,
}

#[derive(Default)]
struct Chain {
    head: u64,
    next_nonce: u64,
    pool: BTreeMap<u64, Pooled>,
    mined: HashMap<B256, u64>,
    /// Pooled transactions paying less than this are never mined.
    min_fee: u128,
    /// The next sends reach the pool but their answers are lost.
    lose_answers: u32,
    /// The next sends are lost entirely.
    lose_sends: u32,
    /// The next sends are delivered twice by a gateway (mined at once on the
    /// first delivery, the second answer — "nonce too low" — is returned).
    deliver_twice: u32,
    sends: Vec<B256>,
    polls: Vec<Instant>,
    /// Refuse every send for certain (say, the balance is gone).
    refuse: bool,
    /// Below this max fee a send is refused as too cheap, and a pooled
    /// transaction is evicted when a block is mined (as anvil does).
    base_fee: u128,
}

impl Chain {
    fn mine(&mut self) {
        self.head += 1;
        let base_fee = self.base_fee;
        self.pool.retain(|_, tx| tx.max_fee >= base_fee);
        while let Some(tx) = self.pool.get(&self.next_nonce).cloned() {
            if tx.max_fee < self.min_fee {
                break;
            }
            self.pool.remove(&self.next_nonce);
            self.mined.insert(tx.hash, self.head);
            self.next_nonce += 1;
        }
    }

    fn admit(&mut self, raw: &[u8]) -> SendOutcome<String> {
        let hash = tx_hash(raw);
        let (nonce, max_fee, tip) = parse(raw);
        self.sends.push(hash);
        if self.refuse {
            return SendOutcome::Rejected("insufficient funds for gas * price + value".into());
        }
        if self.pool.get(&nonce).is_some_and(|p| p.hash == hash) {
            return SendOutcome::Accepted;
        }
        if max_fee < self.base_fee {
            return SendOutcome::FeeTooLow("max fee per gas less than block base fee".into());
        }
        if nonce < self.next_nonce {
            return SendOutcome::NonceTooLow { certain: true, error: "nonce too low".into() };
        }
        if let Some(old) = self.pool.get(&nonce) {
            if max_fee * 10 <= old.max_fee * 11 || tip * 10 <= old.tip * 11 {
                return SendOutcome::Underpriced("replacement transaction underpriced".into());
            }
        }
        self.pool.insert(nonce, Pooled { hash, max_fee, tip });
        SendOutcome::Accepted
    }

    fn pending_count(&self) -> u64 {
        let mut n = self.next_nonce;
        while self.pool.contains_key(&n) {
            n += 1;
        }
        n
    }
}

/// "Signed bytes": the fields as text, so identical inputs give identical bytes and hash.
fn encode(tx: &UnsignedTx) -> Vec<u8> {
    let (max_fee, tip) = match tx.fees {
        Fees::Eip1559 { max_fee, tip } => (max_fee, tip),
        Fees::Legacy { gas_price } => (gas_price, gas_price),
    };
    format!("{}|{}|{}|{}|{:?}|{}", tx.chain_id, tx.nonce, max_fee, tip, tx.to, tx.value).into_bytes()
}

fn parse(raw: &[u8]) -> (u64, u128, u128) {
    let text = String::from_utf8_lossy(raw);
    let parts: Vec<&str> = text.split('|').collect();
    (parts[1].parse().unwrap(), parts[2].parse().unwrap(), parts[3].parse().unwrap())
}

#[derive(Clone)]
struct SimNode {
    chain: Rc<RefCell<Chain>>,
    rt: Rc<SimRuntime>,
}

impl TxNode for SimNode {
    type Receipt = u64;
    type Error = String;

    async fn block_number(&self) -> Result<u64, String> {
        let mut chain = self.chain.borrow_mut();
        chain.polls.push(self.rt.now());
        Ok(chain.head)
    }
    async fn transaction_count(&self, _: Address, pending: bool) -> Result<u64, String> {
        let chain = self.chain.borrow();
        Ok(if pending { chain.pending_count() } else { chain.next_nonce })
    }
    async fn fee_sample(&self) -> FeeSample {
        let base = self.chain.borrow().base_fee.max(10 * GWEI);
        FeeSample { next_base_fee: Some(base), tip_hint: Some(GWEI), ..Default::default() }
    }
    async fn estimate_gas(&self, _: &UnsignedTx) -> Result<u64, String> {
        Ok(21_000)
    }
    async fn send_raw(&self, raw: &[u8]) -> SendOutcome<String> {
        let mut chain = self.chain.borrow_mut();
        if chain.lose_sends > 0 {
            chain.lose_sends -= 1;
            chain.sends.push(tx_hash(raw));
            return SendOutcome::Unknown("timeout".into());
        }
        if chain.deliver_twice > 0 {
            chain.deliver_twice -= 1;
            let _ = chain.admit(raw);
            chain.mine();
            return chain.admit(raw);
        }
        let outcome = chain.admit(raw);
        if chain.lose_answers > 0 {
            chain.lose_answers -= 1;
            return SendOutcome::Unknown("timeout".into());
        }
        outcome
    }
    async fn rebroadcast(&self, raw: &[u8]) {
        let _ = self.chain.borrow_mut().admit(raw);
    }
    async fn receipt(&self, hash: B256) -> Result<Option<(ReceiptInfo, u64)>, String> {
        let chain = self.chain.borrow();
        Ok(chain.mined.get(&hash).map(|&block| {
            (ReceiptInfo { hash, block_number: block, block_hash: B256::with_last_byte(block as u8) }, block)
        }))
    }
    async fn known(&self, hash: B256) -> bool {
        let chain = self.chain.borrow();
        chain.mined.contains_key(&hash) || chain.pool.values().any(|p| p.hash == hash)
    }
    async fn closing(&self) {
        std::future::pending::<()>().await
    }
    fn is_closed(&self) -> bool {
        false
    }
}

struct FakeSigner {
    signatures: Cell<u32>,
}

impl TxSigner<String> for FakeSigner {
    fn address(&self) -> Address {
        Address::repeat_byte(0xaa)
    }
    async fn sign(&self, tx: &UnsignedTx) -> Result<Signed, String> {
        self.signatures.set(self.signatures.get() + 1);
        Ok(Signed::Raw(encode(tx)))
    }
}

fn request(max_fee: u128) -> TxRequest {
    TxRequest {
        to: Some(Address::repeat_byte(0xbb)),
        value: Default::default(),
        data: Vec::new(),
        gas: Some(21_000),
        max_fee: Some(max_fee),
        tip: Some(GWEI),
        gas_price: None,
        chain_id: 1,
        from: None,
    }
}

struct World {
    rt: Rc<SimRuntime>,
    chain: Rc<RefCell<Chain>>,
    engine: TxEngine<SimNode>,
    signer: FakeSigner,
    events: RefCell<Vec<(Instant, TxEvent)>>,
}

fn world(min_fee: u128) -> World {
    let rt = Rc::new(SimRuntime::new(7));
    let chain = Rc::new(RefCell::new(Chain { min_fee, ..Default::default() }));
    let options = TxOptions { poll_interval: Duration::from_secs(4), ..Default::default() };
    let engine = TxEngine::new(SimNode { chain: chain.clone(), rt: rt.clone() }, options);
    World { rt, chain, engine, signer: FakeSigner { signatures: Cell::new(0) }, events: RefCell::new(Vec::new()) }
}

impl World {
    /// Mines a block every 12 s until `done` says stop (bounded).
    async fn miner(&self, done: &Cell<bool>) {
        for _ in 0..200 {
            if done.get() {
                return;
            }
            self.rt.sleep(BLOCK).await;
            self.chain.borrow_mut().mine();
        }
    }

    fn emit(&self) -> impl Fn(TxEvent) + '_ {
        move |e| self.events.borrow_mut().push((self.rt.now(), e))
    }

    fn replacements(&self) -> Vec<(u64, TxKind)> {
        let events = self.events.borrow();
        events
            .iter()
            .filter_map(|(_, e)| match e {
                TxEvent::Replacement { nonce, kind, .. } => Some((*nonce, *kind)),
                _ => None,
            })
            .collect()
    }
}

type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

#[test]
fn a_stuck_transaction_is_sped_up_after_max_wait_blocks_and_the_replacement_wins() {
    let w = world(5 * GWEI);
    let done = Cell::new(false);
    let outcome = RefCell::new(None);
    let emit = w.emit();
    let send = async {
        let options = TxOptions { max_wait_blocks: 3, ..w.engine.options() };
        *outcome.borrow_mut() = Some(w.engine.send(&*w.rt, &w.signer, &request(2 * GWEI), options, &emit).await);
        done.set(true);
    };
    let tasks: Vec<Task> = vec![Box::pin(send), Box::pin(w.miner(&done))];
    w.rt.block_on(join_all(tasks)).unwrap();
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
    let done = Cell::new(false);
    let finished = Cell::new(0);
    let emit = w.emit();
    let send = |max_fee: u128| {
        let (w, emit, done, finished) = (&w, &emit, &done, &finished);
        async move {
            let options = TxOptions { max_wait_blocks: 2, ..w.engine.options() };
            w.engine.send(&*w.rt, &w.signer, &request(max_fee), options, emit).await.unwrap();
            finished.set(finished.get() + 1);
            if finished.get() == 2 {
                done.set(true);
            }
        }
    };
    // Nonce 0 pays too little; nonce 1 pays enough but cannot be mined before 0.
    let tasks: Vec<Task> = vec![Box::pin(send(2 * GWEI)), Box::pin(send(30 * GWEI)), Box::pin(w.miner(&done))];
    w.rt.block_on(join_all(tasks)).unwrap();
    assert_eq!(w.replacements(), vec![(0, TxKind::SpeedUp)], "nonce 1 was never bumped uselessly");
    assert_eq!(w.chain.borrow().next_nonce, 2);
}

#[test]
fn a_lost_send_is_rebroadcast_as_the_same_bytes_and_never_re_signed() {
    let w = world(0);
    w.chain.borrow_mut().lose_sends = 1;
    let done = Cell::new(false);
    let emit = w.emit();
    let send = async {
        let outcome = w.engine.send(&*w.rt, &w.signer, &request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!(outcome.resolution, super::slot::Resolution::Mined);
        done.set(true);
    };
    let tasks: Vec<Task> = vec![Box::pin(send), Box::pin(w.miner(&done))];
    w.rt.block_on(join_all(tasks)).unwrap();
    assert_eq!(w.signer.signatures.get(), 1);
    let chain = w.chain.borrow();
    assert!(chain.sends.len() >= 2 && chain.sends.iter().all(|h| *h == chain.sends[0]), "{:?}", chain.sends);
    assert!(w.events.borrow().iter().any(|(_, e)| matches!(e, TxEvent::OutcomeUnknown { .. })));
}

#[test]
fn a_nonce_used_by_someone_else_is_resynced_and_signed_again_with_the_next() {
    let w = world(0);
    let emit = w.emit();
    let done = Cell::new(false);
    let run = async {
        let first = w.engine.send(&*w.rt, &w.signer, &request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!(first.nonce, 0);
        // Another wallet sends nonce 1 from the same account.
        {
            let mut chain = w.chain.borrow_mut();
            chain.next_nonce += 1;
        }
        let second = w.engine.send(&*w.rt, &w.signer, &request(30 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!(second.nonce, 2);
        done.set(true);
    };
    let tasks: Vec<Task> = vec![Box::pin(run), Box::pin(w.miner(&done))];
    w.rt.block_on(join_all(tasks)).unwrap();
    assert!(w.events.borrow().iter().any(|(_, e)| matches!(e, TxEvent::NonceResync { from: 1, .. })));
}

#[test]
fn receipt_polls_are_jittered_not_periodic() {
    let w = world(u128::MAX); // never mined: the loop polls until the miner stops it
    let emit = w.emit();
    let done = Cell::new(false);
    let watcher = async {
        let options = TxOptions { max_wait_blocks: 1000, ..w.engine.options() };
        let stuck = request(2 * GWEI);
        let send = w.engine.send(&*w.rt, &w.signer, &stuck, options, &emit);
        crate::pool::notify::either(
            async {
                let _ = send.await;
            },
            w.rt.sleep(Duration::from_secs(120)),
        )
        .await;
        done.set(true);
    };
    let tasks: Vec<Task> = vec![Box::pin(watcher), Box::pin(w.miner(&done))];
    w.rt.block_on(join_all(tasks)).unwrap();
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
    let done = Cell::new(false);
    let run = async {
        let ours = request(30 * GWEI);
        let send = w.engine.send(&*w.rt, &w.signer, &ours, w.engine.options(), &emit);
        let mut send = std::pin::pin!(send);
        // Once ours is accepted, the outsider vanishes from the pool: nonce 0 is a gap.
        std::future::poll_fn(|cx| {
            let _ = send.as_mut().poll(cx);
            std::task::Poll::Ready(())
        })
        .await;
        w.chain.borrow_mut().pool.remove(&0);
        let outcome = send.await.unwrap();
        assert_eq!(outcome.nonce, 1);
        done.set(true);
    };
    let tasks: Vec<Task> = vec![Box::pin(run), Box::pin(w.miner(&done))];
    w.rt.block_on(join_all(tasks)).unwrap();
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
    let done = Cell::new(false);
    let run = async {
        let ours = request(30 * GWEI);
        let send = w.engine.send(&*w.rt, &w.signer, &ours, w.engine.options(), &emit);
        let mut send = std::pin::pin!(send);
        std::future::poll_fn(|cx| {
            let _ = send.as_mut().poll(cx);
            std::task::Poll::Ready(())
        })
        .await;
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
        let next = w.engine.send(&*w.rt, &w.signer, &request(31 * GWEI), w.engine.options(), &emit).await.unwrap();
        assert_eq!(next.nonce, 0, "the dropped nonce is reused: no gap");
        done.set(true);
    };
    let tasks: Vec<Task> = vec![Box::pin(run), Box::pin(w.miner(&done))];
    w.rt.block_on(join_all(tasks)).unwrap();
}

#[test]
fn a_gas_spike_that_evicts_our_transaction_is_cured_by_a_speed_up_not_reported_as_dropped() {
    let w = world(0);
    let emit = w.emit();
    let done = Cell::new(false);
    let run = async {
        let ours = request(30 * GWEI);
        let options = TxOptions { max_wait_blocks: 2, rebroadcast_every: 1, ..w.engine.options() };
        let send = w.engine.send(&*w.rt, &w.signer, &ours, options, &emit);
        let mut send = std::pin::pin!(send);
        std::future::poll_fn(|cx| {
            let _ = send.as_mut().poll(cx);
            std::task::Poll::Ready(())
        })
        .await;
        w.chain.borrow_mut().base_fee = 40 * GWEI; // the next block evicts it; re-sends are refused as too cheap
        let outcome = send.await.unwrap();
        assert_eq!(outcome.resolution, super::slot::Resolution::Replaced);
        done.set(true);
    };
    let tasks: Vec<Task> = vec![Box::pin(run), Box::pin(w.miner(&done))];
    w.rt.block_on(join_all(tasks)).unwrap();
    assert_eq!(w.replacements(), vec![(0, TxKind::SpeedUp)], "priced at the spiked estimate: one bump is enough");
}

#[test]
fn a_nonce_taken_by_a_transaction_that_is_not_ours_is_reported_with_our_hashes() {
    let w = world(u128::MAX); // ours is never mined
    let emit = w.emit();
    let done = Cell::new(false);
    let run = async {
        let ours = request(30 * GWEI);
        let send = w.engine.send(&*w.rt, &w.signer, &ours, w.engine.options(), &emit);
        let mut send = std::pin::pin!(send);
        std::future::poll_fn(|cx| {
            let _ = send.as_mut().poll(cx);
            std::task::Poll::Ready(())
        })
        .await;
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
        done.set(true);
    };
    let tasks: Vec<Task> = vec![Box::pin(run), Box::pin(w.miner(&done))];
    w.rt.block_on(join_all(tasks)).unwrap();
    assert_eq!(w.engine.pending(1, Address::repeat_byte(0xaa)), vec![], "settled: nothing left to watch");
}

#[test]
fn nonce_too_low_for_bytes_a_gateway_delivered_twice_is_ours_and_never_re_signed() {
    // Found by the chaos test on anvil: the first delivery was mined at once,
    // the second answered "nonce too low"; re-signing would have paid twice.
    let w = world(0);
    w.chain.borrow_mut().deliver_twice = 1;
    let emit = w.emit();
    let done = Cell::new(false);
    let run = async {
        let ours = request(30 * GWEI);
        let outcome = w.engine.send(&*w.rt, &w.signer, &ours, w.engine.options(), &emit).await.unwrap();
        assert_eq!(outcome.nonce, 0);
        assert_eq!(outcome.resolution, super::slot::Resolution::Mined);
        done.set(true);
    };
    let tasks: Vec<Task> = vec![Box::pin(run), Box::pin(w.miner(&done))];
    w.rt.block_on(join_all(tasks)).unwrap();
    assert_eq!(w.signer.signatures.get(), 1, "never signed again");
    assert_eq!(w.chain.borrow().next_nonce, 1, "one transaction mined");
    assert!(!w.events.borrow().iter().any(|(_, e)| matches!(e, TxEvent::NonceResync { .. })));
}
