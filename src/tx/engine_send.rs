//! The entry points of the transaction layer: a first send (nonce, sign,
//! broadcast with an outcome that may be unknown) and a cancel.
//!
//! ```text
//!   validate → gas / fees (nothing signed yet; failures lose nothing)
//!   (the ticket, taken at the call, joins the account's queue first)
//!   wait for the ticket's turn (call order) ─ init the book from "pending" once
//!   allocate nonce → sign ─ signer fails → release the nonce
//!   broadcast: Accepted → Live
//!              Unknown  → Live; look the hash up, re-broadcast the same bytes
//!              NonceTooLow, no ambiguous attempt → is our hash known anywhere
//!                   (a gateway may have delivered it)? yes → Live (mined);
//!                   no → not ours: resync the book, sign again with the next nonce
//!              NonceTooLow after an ambiguous attempt → Live (maybe ours, mined)
//!              Rejected / Underpriced, certain → release the nonce, fail
//!   give the turn back → watch the nonce (engine::drive)
//! ```
//! Sends of one account are serialised from allocation to the first
//! answer, in call order (`order.rs`): a failing send gives its nonce back
//! before the next one is handed out, so a failure in the middle of fifty
//! sends leaves no gap, and call 1 always gets the lower nonce.

use std::rc::Rc;

use alloy_primitives::B256;

use super::engine::{
    tx_hash, Account, SendOutcome, Signed, SlotCell, TxEngine, TxEvent, TxFailure, TxNode, TxOutcome, TxSigner,
};
use super::fees;
use super::fleet_nonce::FleetOp;
use super::journal_record::JournalEntry;
use super::order::Ticket;
use super::request::{TxFieldError, TxRequest};
use super::slot::{NonceSlot, SentTx, TxKind};
use super::{TxOptions, UnsignedTx};
use crate::runtime::Runtime;

/// How many times a send re-signs after finding its nonce taken by another sender.
const RESYNC_LIMIT: u32 = 3;

impl<N: TxNode> TxEngine<N> {
    /// Sends `request` from `signer`'s account and watches it until mined,
    /// speeding it up after `options.max_wait_blocks` blocks without inclusion.
    /// `ticket` (from [`TxEngine::ticket`], taken when the caller called)
    /// decides this send's nonce order among the account's sends.
    pub async fn send<R: Runtime, S: TxSigner<N::Error>>(
        &self,
        runtime: &R,
        mut ticket: Ticket,
        signer: &S,
        request: &TxRequest,
        options: TxOptions,
        emit: &dyn Fn(TxEvent),
    ) -> Result<TxOutcome<N::Receipt>, TxFailure<N::Error>> {
        let from = signer.address();
        if let Some(given) = request.from.filter(|f| *f != from) {
            return Err(TxFailure::Invalid(TxFieldError {
                field: "from".into(),
                reason: format!("is {given:#x}, but the signer's address is {from:#x}"),
            }));
        }
        if self.node.is_closed() {
            return Err(TxFailure::Closed { nonce: None, hashes: Vec::new() });
        }
        let account = self.account(request.chain_id, from);
        ticket.bind(account.queue.clone());
        let fees = match request.given_fees() {
            Some(given) => {
                if options.fee_ceiling.is_some_and(|c| given.cap() > c) {
                    return Err(TxFailure::Invalid(TxFieldError {
                        field: if request.is_legacy() { "gasPrice" } else { "maxFeePerGas" }.into(),
                        reason: "is above the fee ceiling".into(),
                    }));
                }
                given
            }
            None => {
                let sample = self.node.fee_sample().await;
                let network = fees::estimate(sample).map_err(TxFailure::Fees)?;
                let merged = match (network, request.max_fee, request.tip) {
                    (fees::Fees::Eip1559 { max_fee, tip }, m, t) => {
                        let tip = t.unwrap_or(tip);
                        fees::Fees::Eip1559 { max_fee: m.unwrap_or(max_fee).max(tip), tip }
                    }
                    (legacy, _, _) => legacy,
                };
                match fees::cap_initial(merged, sample.next_base_fee, options.fee_ceiling) {
                    Ok(fees) => fees,
                    Err(fees::FeeError::AtCeiling { needed, ceiling }) => {
                        return Err(TxFailure::CeilingBelowNetwork { needed, ceiling })
                    }
                    Err(e) => return Err(TxFailure::Fees(e)),
                }
            }
        };
        let mut unsigned = UnsignedTx {
            chain_id: request.chain_id,
            from,
            nonce: 0,
            to: request.to,
            value: request.value,
            data: request.data.clone(),
            gas: request.gas.unwrap_or(0),
            fees,
        };
        if request.gas.is_none() {
            unsigned.gas = self.node.estimate_gas(&unsigned).await.map_err(TxFailure::Node)?;
        }
        let cell = self.submit_first(runtime, ticket, signer, &account, unsigned, emit).await?;
        self.drive(runtime, signer, &account, &cell, options, emit).await
    }

    /// Allocation → signature → first broadcast, under the account's turn.
    async fn submit_first<R: Runtime, S: TxSigner<N::Error>>(
        &self,
        runtime: &R,
        ticket: Ticket,
        signer: &S,
        account: &Account<N::Receipt, N::Error>,
        mut unsigned: UnsignedTx,
        emit: &dyn Fn(TxEvent),
    ) -> Result<Rc<SlotCell<N::Receipt, N::Error>>, TxFailure<N::Error>> {
        ticket.turn().await; // held (the ticket) until this returns
        let (chain_id, from) = (unsigned.chain_id, unsigned.from);
        for _ in 0..=RESYNC_LIMIT {
            if self.node.is_closed() {
                return Err(TxFailure::Closed { nonce: None, hashes: Vec::new() });
            }
            let (nonce, member) = self.take_nonce(runtime, account, chain_id, from, unsigned.nonce).await?;
            let member = member.as_deref();
            unsigned.nonce = nonce;
            let signed = match signer.sign(&unsigned).await {
                Ok(signed) => signed,
                Err(e) => {
                    let _ = account.book.borrow_mut().release(nonce);
                    self.tell_book(FleetOp::Release, chain_id, from, member, nonce).await;
                    return Err(TxFailure::Signer(e));
                }
            };
            let (hash, raw) = match signed {
                Signed::Raw(raw) => (tx_hash(&raw), raw),
                Signed::SentByWallet(hash) => (hash, Vec::new()),
            };
            // Shared nonces: live and journaled before the broadcast, or nothing
            // is sent (a wallet that sent by itself already broadcast: best effort).
            let first = SentTx { hash, raw: Rc::from(raw.clone()), fees: unsigned.fees, kind: TxKind::Original };
            let record = JournalEntry { template: unsigned.clone(), sent: vec![first] };
            if !self.mark_broadcast(chain_id, from, nonce, member, &record).await? && !raw.is_empty() {
                continue;
            }
            let outcome = if raw.is_empty() { SendOutcome::Accepted } else { self.node.send_raw(&raw).await };
            let live = |cell_raw: Vec<u8>| {
                account.book.borrow_mut().mark_live(nonce);
                let mut slot = NonceSlot::new(nonce);
                let tx = SentTx { hash, raw: Rc::from(cell_raw), fees: unsigned.fees, kind: TxKind::Original };
                // The wait counts from the head the watcher reads right after
                // this broadcast (its first poll), never from block 0.
                slot.record(tx, None);
                let cell = Rc::new(SlotCell::new(slot, unsigned.clone()));
                cell.journaled.set(member.is_some().then(|| runtime.now()));
                account.slots.borrow_mut().insert(nonce, cell.clone());
                cell
            };
            match outcome {
                SendOutcome::Accepted => {
                    emit(TxEvent::Submitted { nonce, hash, kind: TxKind::Original });
                    return Ok(live(raw));
                }
                SendOutcome::Unknown(_) | SendOutcome::NonceTooLow { certain: false, .. } => {
                    emit(TxEvent::OutcomeUnknown { nonce, hash });
                    let cell = live(raw.clone());
                    if !self.node.known(hash).await {
                        emit(TxEvent::Rebroadcast { nonce, hash });
                        self.node.rebroadcast(&raw).await;
                    }
                    return Ok(cell);
                }
                SendOutcome::NonceTooLow { certain: true, .. } => {
                    // "Certain" only means no attempt of ours was ambiguous; a gateway
                    // may still have delivered our bytes (twice, or to a node that
                    // mined them at once). Ours if any node knows the hash.
                    let ours = matches!(self.node.receipt(hash).await, Ok(Some(_))) || self.node.known(hash).await;
                    if ours {
                        emit(TxEvent::Submitted { nonce, hash, kind: TxKind::Original });
                        return Ok(live(raw));
                    }
                    // Not ours: someone else used the nonce. The book catches up.
                    account.book.borrow_mut().settle(nonce);
                    self.tell_book(FleetOp::Settle, chain_id, from, member, nonce).await;
                    let pending = self.node.transaction_count(unsigned.from, true).await.map_err(TxFailure::Node)?;
                    let skipped = account.book.borrow_mut().resync(pending.max(nonce + 1));
                    self.tell_book(FleetOp::Resync, chain_id, from, member, pending.max(nonce + 1)).await;
                    emit(TxEvent::NonceResync { from: nonce, to: skipped.end.max(nonce + 1) });
                }
                SendOutcome::Rejected(error) | SendOutcome::Underpriced(error) | SendOutcome::FeeTooLow(error) => {
                    let _ = account.book.borrow_mut().release(nonce);
                    // Live in the shared book already; refused for certain: a hole.
                    self.tell_book(FleetOp::Abandon, chain_id, from, member, nonce).await;
                    return Err(TxFailure::Rejected(error));
                }
            }
        }
        Err(TxFailure::NonceContention(unsigned.nonce))
    }

    /// The account and the slot of a nonce this engine tracks.
    #[allow(clippy::type_complexity)]
    fn tracked(
        &self,
        chain_id: u64,
        address: alloy_primitives::Address,
        nonce: u64,
    ) -> Result<(Rc<Account<N::Receipt, N::Error>>, Rc<SlotCell<N::Receipt, N::Error>>), TxFailure<N::Error>> {
        let account = self.account(chain_id, address);
        let cell = account.slots.borrow().get(&nonce).cloned();
        cell.map(|cell| (account, cell)).ok_or(TxFailure::UnknownNonce(nonce))
    }

    /// Keeps watching a nonce whose caller got `FeeCeilingError`: its bytes
    /// are re-broadcast, its receipts watched, and it is bumped if fees fall
    /// under the ceiling, until it resolves (or the relayer closes). Without
    /// this, a transaction a node dropped at a gas spike would never be sent
    /// again, and every later nonce of the account would wait behind it.
    /// A cancel for the nonce joins this loop.
    pub async fn keep<R: Runtime, S: TxSigner<N::Error>>(
        &self,
        runtime: &R,
        signer: &S,
        chain_id: u64,
        nonce: u64,
        options: TxOptions,
        emit: &dyn Fn(TxEvent),
    ) -> Result<TxOutcome<N::Receipt>, TxFailure<N::Error>> {
        let (account, cell) = self.tracked(chain_id, signer.address(), nonce)?;
        let options = TxOptions { hold_at_ceiling: true, ..options };
        self.drive(runtime, signer, &account, &cell, options, emit).await
    }

    /// Cancels the transaction of `signer`'s account with `nonce`: a 0-value
    /// self-transfer priced above everything sent for it. If a loop already
    /// watches the nonce (a speed-up may be mid-flight), the cancel is handed
    /// to it and goes next; both callers get the same result.
    pub async fn cancel<R: Runtime, S: TxSigner<N::Error>>(
        &self,
        runtime: &R,
        signer: &S,
        chain_id: u64,
        nonce: u64,
        options: TxOptions,
        emit: &dyn Fn(TxEvent),
    ) -> Result<TxOutcome<N::Receipt>, TxFailure<N::Error>> {
        if self.node.is_closed() {
            return Err(TxFailure::Closed { nonce: None, hashes: Vec::new() });
        }
        let (account, cell) = self.tracked(chain_id, signer.address(), nonce)?;
        cell.slot.borrow_mut().request_cancel().map_err(|_| TxFailure::Settled(nonce))?;
        cell.options.set(Some(options));
        if cell.driven.get() {
            cell.wake.notify_one();
            return self.join(&cell).await;
        }
        // Nobody watches it (an earlier call gave up at the ceiling): watch it here.
        // The cancel goes at once whatever the block wait; the wait spaces its
        // re-pricings (a wait of 0 re-priced it on every poll, several per block).
        self.drive(runtime, signer, &account, &cell, options, emit).await
    }

    /// Flags a cancel on every tracked slot of `address` with `nonce` (on
    /// `chain_id`, or on any chain) and wakes its watcher, synchronously:
    /// a speed-up being signed at this moment is then dropped unsent.
    /// Returns how many slots were flagged.
    pub fn request_cancel(&self, address: alloy_primitives::Address, nonce: u64, chain_id: Option<u64>) -> usize {
        let accounts: Vec<_> = self
            .accounts
            .borrow()
            .iter()
            .filter(|((chain, a), _)| *a == address && chain_id.is_none_or(|c| c == *chain))
            .map(|(_, account)| account.clone())
            .collect();
        let mut flagged = 0;
        for account in accounts {
            let cell = account.slots.borrow().get(&nonce).cloned();
            if let Some(cell) = cell {
                if cell.slot.borrow_mut().request_cancel().is_ok() {
                    cell.wake.notify_one();
                    flagged += 1;
                }
            }
        }
        flagged
    }

    /// The hashes of every transaction still tracked for an account.
    pub fn pending(&self, chain_id: u64, address: alloy_primitives::Address) -> Vec<(u64, Vec<B256>)> {
        let account = self.accounts.borrow().get(&(chain_id, address)).cloned();
        let Some(account) = account else { return Vec::new() };
        let slots = account.slots.borrow();
        slots.iter().map(|(n, c)| (*n, c.slot.borrow().sent().iter().map(|s| s.hash).collect())).collect()
    }
}
