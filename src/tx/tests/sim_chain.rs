//! The simulated chain the engine tests run against: a mempool with the
//! 10 % replacement rule and an eviction base fee, blocks mined by a task on
//! the simulated clock, switches that lose a send's answer or the send
//! itself, refuse everything, deliver twice or index receipts late; and a
//! signer whose "signed bytes" are the fields as text (identical inputs,
//! identical hash).

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use alloy_primitives::{Address, B256};

use crate::runtime::sim::SimRuntime;
use crate::runtime::Runtime;
use crate::time::Instant;
use crate::tx::engine::{tx_hash, SendOutcome, Signed, TxEngine, TxEvent, TxFailure, TxNode, TxOutcome, TxSigner};
use crate::tx::fees::{FeeSample, Fees, GWEI};
use crate::tx::receipt::ReceiptInfo;
use crate::tx::request::TxRequest;
use crate::tx::slot::TxKind;
use crate::tx::{TxOptions, UnsignedTx};

pub(super) const BLOCK: Duration = Duration::from_secs(12);

#[derive(Clone)]
pub(super) struct Pooled {
    pub(super) hash: B256,
    pub(super) max_fee: u128,
    pub(super) tip: u128,
}

#[derive(Default)]
pub(super) struct Chain {
    pub(super) head: u64,
    pub(super) next_nonce: u64,
    pub(super) pool: BTreeMap<u64, Pooled>,
    pub(super) mined: HashMap<B256, u64>,
    /// Pooled transactions paying less than this are never mined.
    pub(super) min_fee: u128,
    /// The next sends reach the pool but their answers are lost.
    pub(super) lose_answers: u32,
    /// The next sends are lost entirely.
    pub(super) lose_sends: u32,
    /// The next sends are delivered twice by a gateway (mined at once on the
    /// first delivery, the second answer — "nonce too low" — is returned).
    pub(super) deliver_twice: u32,
    pub(super) sends: Vec<B256>,
    pub(super) polls: Vec<Instant>,
    /// Refuse every send for certain (say, the balance is gone).
    pub(super) refuse: bool,
    /// The next receipt lookups fail (a flaky gateway).
    pub(super) fail_receipts: u32,
    /// Below this max fee a send is refused as too cheap, and a pooled
    /// transaction is evicted when a block is mined (as anvil does).
    pub(super) base_fee: u128,
    /// Sends are answered "accepted" but never reach the pool (a gateway
    /// that swallows them).
    pub(super) swallow: bool,
    /// Once a transaction is mined, the next this many receipt lookups of
    /// it answer "none", and no node knows it until they are used up (a node
    /// whose account count runs ahead of its receipt index).
    pub(super) unindexed: u32,
    /// How long each `eth_estimateGas` takes, in call order (then instant).
    pub(super) estimate_delays: std::collections::VecDeque<Duration>,
}

impl Chain {
    pub(super) fn mine(&mut self) {
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

    /// A reorg of the head block: its transactions leave the chain and the
    /// pool too (the new branch's node never saw them).
    pub(super) fn reorg(&mut self) {
        let head = self.head;
        let orphans: Vec<B256> = self.mined.iter().filter(|(_, b)| **b == head).map(|(h, _)| *h).collect();
        for hash in orphans {
            self.mined.remove(&hash);
            self.next_nonce -= 1;
        }
        self.head -= 1;
    }

    pub(super) fn admit(&mut self, raw: &[u8]) -> SendOutcome<String> {
        let hash = tx_hash(raw);
        let (nonce, max_fee, tip) = parse(raw);
        self.sends.push(hash);
        if self.swallow {
            return SendOutcome::Accepted;
        }
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

    pub(super) fn pending_count(&self) -> u64 {
        let mut n = self.next_nonce;
        while self.pool.contains_key(&n) {
            n += 1;
        }
        n
    }
}

/// "Signed bytes": the fields as text, so identical inputs give identical bytes and hash.
pub(super) fn encode(tx: &UnsignedTx) -> Vec<u8> {
    let (max_fee, tip) = match tx.fees {
        Fees::Eip1559 { max_fee, tip } => (max_fee, tip),
        Fees::Legacy { gas_price } => (gas_price, gas_price),
    };
    format!("{}|{}|{}|{}|{:?}|{}", tx.chain_id, tx.nonce, max_fee, tip, tx.to, tx.value).into_bytes()
}

pub(super) fn parse(raw: &[u8]) -> (u64, u128, u128) {
    let text = String::from_utf8_lossy(raw);
    let parts: Vec<&str> = text.split('|').collect();
    (parts[1].parse().unwrap(), parts[2].parse().unwrap(), parts[3].parse().unwrap())
}

#[derive(Clone)]
pub(super) struct SimNode {
    pub(super) chain: Rc<RefCell<Chain>>,
    pub(super) rt: Rc<SimRuntime>,
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
        let delay = self.chain.borrow_mut().estimate_delays.pop_front();
        if let Some(delay) = delay {
            self.rt.sleep(delay).await;
        }
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
        let mut chain = self.chain.borrow_mut();
        if chain.fail_receipts > 0 {
            chain.fail_receipts -= 1;
            return Err("502".into());
        }
        if chain.unindexed > 0 && chain.mined.contains_key(&hash) {
            chain.unindexed -= 1;
            return Ok(None);
        }
        Ok(chain.mined.get(&hash).map(|&block| {
            (ReceiptInfo { hash, block_number: block, block_hash: B256::with_last_byte(block as u8) }, block)
        }))
    }
    async fn known(&self, hash: B256) -> bool {
        let chain = self.chain.borrow();
        let indexed = chain.mined.contains_key(&hash) && chain.unindexed == 0;
        indexed || chain.pool.values().any(|p| p.hash == hash)
    }
    async fn closing(&self) {
        std::future::pending::<()>().await
    }
    fn is_closed(&self) -> bool {
        false
    }
}

pub(super) struct FakeSigner {
    pub(super) signatures: Cell<u32>,
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

pub(super) fn request(max_fee: u128) -> TxRequest {
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

pub(super) struct World {
    pub(super) rt: Rc<SimRuntime>,
    pub(super) chain: Rc<RefCell<Chain>>,
    pub(super) engine: TxEngine<SimNode>,
    pub(super) signer: FakeSigner,
    pub(super) events: RefCell<Vec<(Instant, TxEvent)>>,
}

pub(super) fn world(min_fee: u128) -> World {
    let rt = Rc::new(SimRuntime::new(7));
    let chain = Rc::new(RefCell::new(Chain { min_fee, ..Default::default() }));
    let options = TxOptions { poll_interval: Duration::from_secs(4), ..Default::default() };
    let engine = TxEngine::new(SimNode { chain: chain.clone(), rt: rt.clone() }, options);
    World { rt, chain, engine, signer: FakeSigner { signatures: Cell::new(0) }, events: RefCell::new(Vec::new()) }
}

impl World {
    /// `engine.send` from the test signer; the ticket (call order) is taken
    /// now, as the wasm entry point takes it when JS calls.
    pub(super) fn send<'a>(
        &'a self,
        request: &'a TxRequest,
        options: TxOptions,
        emit: &'a dyn Fn(TxEvent),
    ) -> impl Future<Output = Result<TxOutcome<u64>, TxFailure<String>>> + 'a {
        let ticket = self.engine.ticket();
        self.engine.send(&*self.rt, ticket, &self.signer, request, options, emit)
    }

    /// Mines a block every 12 s until `done` says stop (bounded).
    pub(super) async fn miner(&self, done: &Cell<bool>) {
        for _ in 0..200 {
            if done.get() {
                return;
            }
            self.rt.sleep(BLOCK).await;
            self.chain.borrow_mut().mine();
        }
    }

    /// Runs `scenario` with a block every 12 s beside it, until it ends;
    /// a scenario still running after the miner's 200 blocks fails the
    /// test (a send that never resolves must not hang the suite).
    pub(super) fn with_blocks<'a>(&'a self, scenario: impl Future<Output = ()> + 'a) {
        let done = Cell::new(false);
        let run = async {
            scenario.await;
            done.set(true);
        };
        self.rt.block_on(crate::pool::notify::either(run, self.miner(&done))).unwrap();
        assert!(done.get(), "the scenario did not finish within 200 simulated blocks");
    }

    pub(super) fn emit(&self) -> impl Fn(TxEvent) + '_ {
        move |e| self.events.borrow_mut().push((self.rt.now(), e))
    }

    pub(super) fn replacements(&self) -> Vec<(u64, TxKind)> {
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

pub(super) type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Polls `send` once: far enough for its first broadcast (every simulated
/// node call completes at once), then lets the test change the world.
pub(super) async fn first_poll<F: Future>(send: Pin<&mut F>) {
    let mut send = send;
    std::future::poll_fn(|cx| {
        let _ = send.as_mut().poll(cx);
        std::task::Poll::Ready(())
    })
    .await;
}
