//! The async shell of the transaction layer: accounts, their nonce books
//! and nonce slots, and the loop that watches one nonce until it resolves.
//!
//! Per nonce, exactly one loop runs (`SlotCell::driven`); a cancel asked
//! for by another caller only flips the slot's intent and wakes that loop,
//! then waits for the same result. That is what keeps speed-up and cancel
//! from racing: there is one writer per nonce.
//!
//! One poll of the loop:
//! ```text
//!   head ← eth_blockNumber; receipt ← first of our hashes with one
//!   receipt → confirmations / reorg (event) → confirmed: done
//!   none    → latest count > nonce twice in a row → replaced by someone else
//!             slot step: Replace(kind) → price (ceiling → typed error), sign, send
//!             every N polls: re-broadcast the newest bytes everywhere; if the
//!             node's pending count is below our nonce, a gap: report, repair
//!   sleep a jittered interval (a cancel request wakes it early)
//! ```

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use alloy_primitives::{keccak256, Address, B256};

use super::fees::{self, Fees};
use super::fleet_nonce::FleetOp;
use super::nonce::NonceBook;
use super::order::{AccountQueue, SendOrder, Ticket};
use super::receipt::{poll_delay, ReceiptEvent, ReceiptWatch};
use super::slot::{NonceSlot, Resolution, Step};
use super::{TxOptions, UnsignedTx};
use crate::pool::notify::{either, Notify, Shutdown};
use crate::runtime::Runtime;
use crate::time::Instant;

pub use super::engine_results::{TxEvent, TxFailure, TxOutcome};
pub use super::engine_seams::{SendOutcome, Signed, TxNode, TxSigner};

/// Every nonce slot's shared state: the slot, its wake-up, its result.
pub struct SlotCell<R, E> {
    pub(super) slot: RefCell<NonceSlot>,
    /// The transaction speed-ups re-sign (fees replaced).
    pub(super) template: RefCell<UnsignedTx>,
    pub(super) wake: Notify,
    /// Thrown when `result` is set; replaced when a new loop starts.
    pub(super) done: RefCell<Rc<Shutdown>>,
    pub(super) result: RefCell<Option<Result<TxOutcome<R>, TxFailure<E>>>>,
    /// Whether a loop is watching this nonce.
    pub(super) driven: Cell<bool>,
    /// Options a later caller (a cancel) gave; the watching loop uses them
    /// from its next poll (keeping its own block wait and `hold_at_ceiling`).
    pub(super) options: Cell<Option<TxOptions>>,
    /// When this engine last renewed its lease on the nonce's journal entry
    /// (`engine_journal.rs`); `None`: not journaled (no shared store).
    pub(super) journaled: Cell<Option<Instant>>,
    /// Another engine took the nonce over (it found our lease lapsed): we
    /// watch it still, but sign nothing more for it.
    pub(super) foreign: Cell<bool>,
    /// Send the newest bytes again at the first poll (an adopted nonce: its
    /// bytes may be nowhere now, its owner having died before or after
    /// the broadcast), before any speed-up is considered.
    pub(super) rebroadcast_first: Cell<bool>,
    /// Whether `template` is what the original transaction signed: yes
    /// for our own sends; for an adopted record, unknown (`None`) until
    /// checked before its first speed-up (`engine_journal.rs`).
    pub(super) template_checked: Cell<Option<bool>>,
}

impl<R, E> SlotCell<R, E> {
    /// A nonce's cell, not driven yet.
    pub(super) fn new(slot: NonceSlot, template: UnsignedTx) -> Self {
        SlotCell {
            slot: slot.into(),
            template: template.into(),
            wake: Notify::default(),
            done: Rc::new(Shutdown::default()).into(),
            result: None.into(),
            driven: false.into(),
            options: None.into(),
            journaled: None.into(),
            foreign: false.into(),
            rebroadcast_first: false.into(),
            template_checked: Some(true).into(),
        }
    }
}

/// One account on one chain.
pub struct Account<R, E> {
    pub(super) book: RefCell<NonceBook>,
    /// Sends waiting to allocate, in call order; the front one holds the
    /// account from nonce allocation to the first broadcast's answer.
    pub(super) queue: Rc<AccountQueue>,
    pub(super) slots: RefCell<BTreeMap<u64, Rc<SlotCell<R, E>>>>,
}

impl<R, E> Default for Account<R, E> {
    fn default() -> Self {
        Account { book: RefCell::default(), queue: Rc::default(), slots: RefCell::default() }
    }
}

/// Accounts by (chain id, address).
pub(super) type Accounts<R, E> = RefCell<BTreeMap<(u64, Address), Rc<Account<R, E>>>>;

/// The transaction layer over one node (pool).
pub struct TxEngine<N: TxNode> {
    pub(super) node: N,
    pub(super) options: TxOptions,
    pub(super) accounts: Accounts<N::Receipt, N::Error>,
    pub(super) order: Rc<SendOrder>,
    /// The fleet's shared nonce book, if this engine's nonces come from one.
    pub(super) fleet: RefCell<Option<Rc<super::fleet_nonce::SharedNonces>>>,
    /// The last nonces that ended here, for a caller that asks late (`outcome_of`).
    pub(super) finished: RefCell<std::collections::VecDeque<Finished<N::Receipt, N::Error>>>,
}

/// A nonce that ended: where, every hash sent for it, and how.
pub(super) struct Finished<R, E> {
    pub(super) chain_id: u64,
    pub(super) from: Address,
    pub(super) nonce: u64,
    pub(super) hashes: Vec<B256>,
    pub(super) result: Result<TxOutcome<R>, TxFailure<E>>,
}

/// How many ended nonces an engine remembers.
const FINISHED_KEPT: usize = 256;

/// The local hash of signed bytes: what a node reports for them.
pub fn tx_hash(raw: &[u8]) -> B256 {
    keccak256(raw)
}

impl<N: TxNode> TxEngine<N> {
    /// An engine over `node` with default `options` for every call.
    pub fn new(node: N, options: TxOptions) -> Self {
        TxEngine {
            node,
            options,
            accounts: RefCell::new(BTreeMap::new()),
            order: Rc::default(),
            fleet: None.into(),
            finished: RefCell::default(),
        }
    }

    /// A place in line for a send: take it when the caller calls, before
    /// anything awaits, so nonces follow the order of the calls.
    pub fn ticket(&self) -> Ticket {
        self.order.ticket()
    }

    /// The node the engine talks to.
    pub fn node(&self) -> &N {
        &self.node
    }

    /// The default options.
    pub fn options(&self) -> TxOptions {
        self.options
    }

    pub(super) fn account(&self, chain_id: u64, address: Address) -> Rc<Account<N::Receipt, N::Error>> {
        self.accounts.borrow_mut().entry((chain_id, address)).or_default().clone()
    }

    /// The nonce book of an account, for stats and tests.
    pub fn book(&self, chain_id: u64, address: Address) -> Option<NonceBook> {
        self.accounts.borrow().get(&(chain_id, address)).map(|a| a.book.borrow().clone())
    }

    pub(super) async fn network_fees(&self) -> Option<Fees> {
        fees::estimate(self.node.fee_sample().await).ok()
    }

    /// Waits for the result of a nonce another call is driving.
    pub(super) async fn join(
        &self,
        cell: &SlotCell<N::Receipt, N::Error>,
    ) -> Result<TxOutcome<N::Receipt>, TxFailure<N::Error>> {
        loop {
            if let Some(result) = cell.result.borrow().clone() {
                return result;
            }
            let done = cell.done.borrow().clone();
            done.wait().await;
        }
    }

    /// Watches one nonce until it resolves: receipts of every hash,
    /// confirmations, reorgs, speed-ups (after `options.max_wait_blocks`),
    /// the cancel, re-broadcasts, gaps.
    pub async fn drive<R: Runtime, S: TxSigner<N::Error>>(
        &self,
        runtime: &R,
        signer: &S,
        account: &Account<N::Receipt, N::Error>,
        cell: &SlotCell<N::Receipt, N::Error>,
        options: TxOptions,
        emit: &dyn Fn(TxEvent),
    ) -> Result<TxOutcome<N::Receipt>, TxFailure<N::Error>> {
        if cell.driven.replace(true) {
            return self.join(cell).await;
        }
        // A loop that ended earlier (at the fee ceiling) left its result: start afresh. A
        // cell never driven keeps its signal: someone may already wait on it (`outcome_of`).
        if cell.result.borrow_mut().take().is_some() {
            *cell.done.borrow_mut() = Rc::new(Shutdown::default());
        }
        let result = self.watch(runtime, signer, account, cell, options, emit).await;
        let nonce = cell.slot.borrow().nonce();
        let settles = matches!(result, Ok(_) | Err(TxFailure::ReplacedByOther { .. }));
        let dropped = matches!(result, Err(TxFailure::Dropped { .. }));
        if settles || dropped {
            cell.slot.borrow_mut().settle();
            account.slots.borrow_mut().remove(&nonce);
            if dropped {
                account.book.borrow_mut().abandon(nonce); // not consumed on chain: the next send reuses it
            } else {
                account.book.borrow_mut().settle(nonce);
            }
            let template = cell.template.borrow().clone();
            let op = if dropped { FleetOp::Abandon } else { FleetOp::Settle };
            self.tell_book(op, template.chain_id, template.from, None, nonce).await;
            let hashes = cell.slot.borrow().sent().iter().map(|s| s.hash).collect();
            let mut finished = self.finished.borrow_mut();
            if finished.len() >= FINISHED_KEPT {
                finished.pop_front();
            }
            let (chain_id, from, result) = (template.chain_id, template.from, result.clone());
            finished.push_back(Finished { chain_id, from, nonce, hashes, result });
        }
        cell.driven.set(false);
        *cell.result.borrow_mut() = Some(result.clone());
        cell.done.borrow().trigger();
        result
    }

    async fn watch<R: Runtime, S: TxSigner<N::Error>>(
        &self,
        runtime: &R,
        signer: &S,
        account: &Account<N::Receipt, N::Error>,
        cell: &SlotCell<N::Receipt, N::Error>,
        options: TxOptions,
        emit: &dyn Fn(TxEvent),
    ) -> Result<TxOutcome<N::Receipt>, TxFailure<N::Error>> {
        let nonce = cell.slot.borrow().nonce();
        let hashes = || cell.slot.borrow().sent().iter().map(|s| s.hash).collect::<Vec<_>>();
        let mut watch = ReceiptWatch::new(options.confirmations);
        // Unknown until a block number answers: nothing is counted from a guess.
        let mut head: Option<u64> = None;
        let mut polls = 0u32;
        let mut consumed_seen = false;
        loop {
            let options = cell.options.get().map_or(options, |o| TxOptions {
                hold_at_ceiling: options.hold_at_ceiling,
                max_wait_blocks: options.max_wait_blocks,
                ..o
            });
            if self.node.is_closed() {
                return Err(TxFailure::Closed { nonce: Some(nonce), hashes: hashes() });
            }
            polls = polls.wrapping_add(1);
            if let Ok(h) = self.node.block_number().await {
                head = Some(head.map_or(h, |known| known.max(h)));
            }
            self.renew_journal(runtime, cell).await;
            let (found, answered) = self.find_receipt(&hashes()).await;
            let info = found.as_ref().map(|(i, _)| *i);
            let seen_head = head.or(info.map(|i| i.block_number)).unwrap_or(0);
            match watch.observe(info, seen_head) {
                ReceiptEvent::Reorged { previous } => {
                    emit(TxEvent::Reorg { nonce: Some(nonce), hash: previous.hash });
                    cell.slot.borrow_mut().lost_receipt(head);
                    // Judge what this poll found on the next one.
                    watch = ReceiptWatch::new(options.confirmations);
                    continue;
                }
                ReceiptEvent::Confirmed { confirmations } => {
                    let (info, receipt) = found.expect("confirmed implies a receipt");
                    let resolution = cell.slot.borrow_mut().saw_receipt(info.hash).unwrap_or(Resolution::Mined);
                    emit(TxEvent::Resolved { nonce, hash: info.hash, resolution });
                    return Ok(TxOutcome {
                        receipt,
                        hash: info.hash,
                        resolution,
                        nonce,
                        hashes: hashes(),
                        confirmations,
                    });
                }
                ReceiptEvent::Included { confirmations } => {
                    if let Some((info, _)) = found {
                        let first = cell.slot.borrow().included() != Some(info.hash);
                        cell.slot.borrow_mut().saw_receipt(info.hash);
                        if first {
                            emit(TxEvent::Included { nonce: Some(nonce), hash: info.hash, confirmations });
                        }
                    }
                }
                ReceiptEvent::Waiting => {
                    // The nonce is used on chain yet no node has a receipt for any
                    // of our hashes: seen on two polls where every lookup answered
                    // (a failed lookup proves nothing), and no endpoint knows any
                    // of our hashes, means someone else's transaction took it.
                    let latest = self.node.transaction_count(signer.address(), false).await.ok();
                    if latest.is_some_and(|count| count > nonce) {
                        if answered && consumed_seen && !self.any_known(&hashes()).await {
                            return Err(TxFailure::ReplacedByOther { nonce, hashes: hashes() });
                        }
                        consumed_seen = answered;
                    } else {
                        consumed_seen = false;
                        if let Some(head) = head {
                            let watched = Watched { signer, account, cell, emit };
                            self.step(&watched, head, polls, options, latest).await?;
                        }
                    }
                }
            }
            let delay = poll_delay(options.poll_interval, runtime.random_unit());
            either(either(runtime.sleep(delay), cell.wake.notified()), self.node.closing()).await;
        }
    }

    /// One poll's work while nothing is mined: a replacement when due,
    /// otherwise now and then a re-broadcast and a gap check.
    async fn step<S: TxSigner<N::Error>>(
        &self,
        watched: &Watched<'_, S, N::Receipt, N::Error>,
        head: u64,
        polls: u32,
        options: TxOptions,
        mined_count: Option<u64>,
    ) -> Result<(), TxFailure<N::Error>> {
        let Watched { signer, account, cell, emit } = *watched;
        let nonce = cell.slot.borrow().nonce();
        let lowest = account.book.borrow().lowest_live() == Some(nonce);
        // A lower nonce still unmined on chain (another worker's, or one missing) blocks ours
        // whatever it pays: no speed-up until the chain's count reaches it (the wait is paused).
        let next_on_chain = mined_count.is_none_or(|count| count >= nonce);
        if cell.rebroadcast_first.take() {
            if let Some(error) = self.rebroadcast(cell, emit).await {
                let hashes = cell.slot.borrow().sent().iter().map(|s| s.hash).collect();
                return Err(TxFailure::Dropped { nonce, hashes, error });
            }
        }
        let step = cell.slot.borrow_mut().next_step(head, options.max_wait_blocks, lowest && next_on_chain);
        let replaced = match step {
            // Taken over by another engine: it decides the replacements now.
            Step::Replace(_) if cell.foreign.get() => {
                cell.slot.borrow_mut().end_replacement(head);
                false
            }
            Step::Replace(kind) => self.replace(signer, cell, kind, head, options, emit).await?,
            Step::Wait => false,
        };
        if !replaced && polls % options.rebroadcast_every.max(1) == 0 {
            if let Some(error) = self.rebroadcast(cell, emit).await {
                let hashes = cell.slot.borrow().sent().iter().map(|s| s.hash).collect();
                return Err(TxFailure::Dropped { nonce, hashes, error });
            }
            if lowest {
                self.check_gap(signer, account, nonce, options, emit).await;
            }
        }
        Ok(())
    }
}

/// One nonce being watched: who signs for it, its account, its slot and
/// where its events go (what every step of the watch needs).
struct Watched<'w, S, Rc, E> {
    signer: &'w S,
    account: &'w Account<Rc, E>,
    cell: &'w SlotCell<Rc, E>,
    emit: &'w dyn Fn(TxEvent),
}

impl<S, Rc, E> Clone for Watched<'_, S, Rc, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S, Rc, E> Copy for Watched<'_, S, Rc, E> {}
