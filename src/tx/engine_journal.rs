//! The engine's side of the fleet's pending-transaction journal
//! (`fleet_nonce/journal.rs`, Redis through the wrapper): every nonce it
//! broadcasts is journaled first, it answers for each under a lease it
//! renews while it watches, and it takes over the nonces of an engine that
//! stopped renewing (a worker killed, a process restarted).
//!
//! ```text
//!   first broadcast  ── live + record, one store step (engine_fleet.rs) ── else nothing is sent
//!   watching         ── every RENEW_EVERY: renew ─ Lost ─▶ foreign: watch only, sign nothing
//!   a replacement    ── signed ─▶ write(record + it) ─ Ok ─▶ recorded, broadcast
//!                                                   ─ Lost ─▶ foreign; dropped unsent
//!                                                   ─ store down ─▶ dropped unsent (next step tries again)
//!   adopt(account)   ── orphans: records whose lease ran out ─▶ a slot each, every hash watched,
//!                       the newest bytes re-broadcast; sped up when a signer is given
//! ```
//! The rule of the transaction layer holds across processes: bytes that
//! may have reached a node are in the journal, so whoever finishes their
//! nonce re-broadcasts those bytes and never signs the intent with another
//! nonce.

use std::rc::Rc;
use std::time::Duration;

use alloy_primitives::Address;

use super::engine::{tx_hash, Signed, SlotCell, TxEngine, TxFailure, TxNode, TxSigner};
use super::engine_fleet::account_key;
use super::fleet_nonce::journal::{JournalOp, JournalReply};
use super::journal_record::{JournalEntry, JournalError};
use super::slot::{NonceSlot, SentTx, TxKind};
use super::UnsignedTx;
use crate::runtime::Runtime;

/// How long an engine answers for a journaled nonce without renewing: a
/// worker dead this long has its nonces taken over. At least four poll
/// intervals (a renewal rides on a poll: a slow poller must not lose its
/// nonces while alive).
pub const JOURNAL_LEASE: Duration = Duration::from_secs(15);
/// How often a watching engine renews (three chances per lease).
const RENEW_EVERY: Duration = Duration::from_secs(5);

/// What an adoption found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Adopted {
    /// The nonces taken over, now watched by this engine.
    pub nonces: Vec<u64>,
    /// Records that could not be read (another version, a tampered store):
    /// their nonces stay live in the book, for an engine that can.
    pub unreadable: Vec<(u64, JournalError)>,
}

impl<N: TxNode> TxEngine<N> {
    /// The send named `member` is about to broadcast with `nonce`: marks it
    /// live and journals `record` in one step (`engine_journal.rs`), and
    /// says whether it may (`false`: its reservation lapsed; drop the bytes
    /// unsent). A store that cannot answer fails the send: no broadcast
    /// without its record.
    pub(super) async fn mark_broadcast(
        &self,
        chain_id: u64,
        from: Address,
        nonce: u64,
        member: Option<&str>,
        record: &JournalEntry,
    ) -> Result<bool, TxFailure<N::Error>> {
        let (Some(shared), Some(member)) = (self.fleet.borrow().clone(), member) else { return Ok(true) };
        let op = JournalOp::Live { member: member.to_owned(), record: record.encode() };
        let key = account_key(chain_id, from);
        let reply = shared.book.journal(op, key, &shared.member, nonce, self.journal_lease()).await;
        match reply.map_err(|e| TxFailure::Coordination(e.0))? {
            JournalReply::Ok => Ok(true),
            JournalReply::Lost => Ok(false),
            other => Err(TxFailure::Coordination(format!("the fleet's journal answered {other:?}"))),
        }
    }

    /// Renews this engine's lease on `cell`'s journal entry when due. A
    /// store that does not answer costs nothing now (the next poll tries
    /// again); one that says another engine took the nonce over makes this
    /// one watch only.
    pub(super) async fn renew_journal<R: Runtime>(&self, runtime: &R, cell: &SlotCell<N::Receipt, N::Error>) {
        let Some(last) = cell.journaled.get() else { return };
        let now = runtime.now();
        if cell.foreign.get() || now.saturating_since(last) < RENEW_EVERY {
            return;
        }
        let Some(shared) = self.fleet.borrow().clone() else { return };
        let (key, nonce) = self.journal_key(cell);
        match shared.book.journal(JournalOp::Renew, key, &shared.member, nonce, self.journal_lease()).await {
            Ok(JournalReply::Lost) => cell.foreign.set(true),
            Ok(_) => cell.journaled.set(Some(now)),
            Err(_) => {}
        }
    }

    /// Journals `tx`, a replacement signed for `cell`'s nonce, before its
    /// broadcast: whether it may go out.
    pub(super) async fn journal_replacement(&self, cell: &SlotCell<N::Receipt, N::Error>, tx: &SentTx) -> bool {
        if cell.foreign.get() {
            return false;
        }
        if cell.journaled.get().is_none() {
            return true;
        }
        let Some(shared) = self.fleet.borrow().clone() else { return true };
        let mut sent = cell.slot.borrow().sent().to_vec();
        sent.push(tx.clone());
        let record = JournalEntry { template: cell.template.borrow().clone(), sent }.encode();
        let (key, nonce) = self.journal_key(cell);
        match shared.book.journal(JournalOp::Write { record }, key, &shared.member, nonce, self.journal_lease()).await {
            Ok(JournalReply::Ok) => true,
            Ok(JournalReply::Lost) => {
                cell.foreign.set(true);
                false
            }
            _ => false,
        }
    }

    /// Whether a speed-up may re-sign `cell`'s template: an adopted record's
    /// template came from the store, and someone who can write there could
    /// change its recipient or calldata. So before the first speed-up the
    /// template is signed again at the original's fees (local signers are
    /// deterministic, RFC 6979): the bytes must hash to the original's hash.
    /// A mismatch, or no original bytes to check against, means never a
    /// speed-up (the nonce stays watched and re-broadcast); no local signer
    /// yet (none known, or a wallet that would broadcast what it signs)
    /// means not now.
    pub(super) async fn template_trusted<S: TxSigner<N::Error>>(
        &self,
        signer: &S,
        cell: &SlotCell<N::Receipt, N::Error>,
    ) -> bool {
        if let Some(known) = cell.template_checked.get() {
            return known;
        }
        let original =
            cell.slot.borrow().sent().iter().find(|s| s.kind == TxKind::Original && !s.raw.is_empty()).cloned();
        let Some(original) = original else {
            cell.template_checked.set(Some(false));
            return false;
        };
        if !signer.signs_locally() {
            return false;
        }
        let again = UnsignedTx { fees: original.fees, ..cell.template.borrow().clone() };
        let same = match signer.sign(&again).await {
            Ok(Signed::Raw(raw)) => tx_hash(&raw) == original.hash,
            Ok(Signed::SentByWallet(_)) => false,
            Err(_) => return false, // the signer failed: ask again at the next speed-up
        };
        cell.template_checked.set(Some(same));
        same
    }

    /// This engine's lease on its journaled nonces (`JOURNAL_LEASE`, or four
    /// of its poll intervals if that is longer).
    fn journal_lease(&self) -> Duration {
        JOURNAL_LEASE.max(self.options.poll_interval.saturating_mul(4))
    }

    fn journal_key(&self, cell: &SlotCell<N::Receipt, N::Error>) -> (u64, u64) {
        let template = cell.template.borrow();
        (account_key(template.chain_id, template.from), cell.slot.borrow().nonce())
    }

    /// Takes over the journaled nonces of `from` on `chain_id` whose owner
    /// stopped renewing, and tracks each (its hashes, its bytes): drive
    /// them with [`TxEngine::keep`]. Without a shared store there is no
    /// journal to adopt from (a coordination failure says so).
    pub async fn adopt<R: Runtime>(
        &self,
        runtime: &R,
        chain_id: u64,
        from: Address,
    ) -> Result<Adopted, TxFailure<N::Error>> {
        let Some(shared) = self.fleet.borrow().clone() else {
            return Err(TxFailure::Coordination("no shared store is attached: there is no journal".into()));
        };
        let key = account_key(chain_id, from);
        let reply = shared.book.journal(JournalOp::Orphans, key, &shared.member, 0, self.journal_lease()).await;
        let JournalReply::Orphans(found) = reply.map_err(|e| TxFailure::Coordination(e.0))? else {
            return Err(TxFailure::Coordination("the fleet's journal answered something else than orphans".into()));
        };
        let account = self.account(chain_id, from);
        let mut adopted = Adopted::default();
        for (nonce, text) in found {
            let entry = match JournalEntry::decode(&text) {
                Ok(e) if e.template.nonce == nonce && e.template.chain_id == chain_id && e.template.from == from => e,
                Ok(_) => {
                    adopted.unreadable.push((nonce, JournalError("a record of another nonce or account".into())));
                    continue;
                }
                Err(e) => {
                    adopted.unreadable.push((nonce, e));
                    continue;
                }
            };
            let known = account.slots.borrow().get(&nonce).cloned();
            if let Some(cell) = known {
                // Ours all along (our own, or our lease lapsed while the store was away): watched
                // here already, so not adopted again.
                cell.foreign.set(false);
                cell.journaled.set(Some(runtime.now()));
                continue;
            }
            let mut slot = NonceSlot::new(nonce);
            for tx in entry.sent {
                slot.record(tx, None); // the wait counts from the first head the watcher reads
            }
            account.book.borrow_mut().mark_live(nonce);
            let cell = Rc::new(SlotCell::new(slot, entry.template));
            cell.journaled.set(Some(runtime.now()));
            cell.template_checked.set(None);
            cell.rebroadcast_first.set(true);
            account.slots.borrow_mut().insert(nonce, cell);
            adopted.nonces.push(nonce);
        }
        Ok(adopted)
    }
}

impl<N: TxNode> TxEngine<N> {
    /// The outcome of a nonce this engine tracks (sent here or adopted),
    /// found by `(chain, from, nonce)` or by any hash sent for it: waits
    /// for the loop that drives it; one that ended lately (the last 256)
    /// answers at once. `UnknownNonce` / `UnknownHash` when nothing matches.
    pub async fn outcome_of(
        &self,
        chain_id: Option<u64>,
        from: Option<Address>,
        nonce: Option<u64>,
        hash: Option<alloy_primitives::B256>,
    ) -> Result<super::engine::TxOutcome<N::Receipt>, TxFailure<N::Error>> {
        let found = self.accounts.borrow().iter().find_map(|((chain, address), account)| {
            if chain_id.is_some_and(|c| c != *chain) || from.is_some_and(|f| f != *address) {
                return None;
            }
            let slots = account.slots.borrow();
            slots
                .iter()
                .find(|(n, cell)| {
                    nonce.is_none_or(|wanted| wanted == **n)
                        && hash.is_none_or(|h| cell.slot.borrow().sent().iter().any(|s| s.hash == h))
                })
                .map(|(_, cell)| cell.clone())
        });
        if let Some(cell) = found {
            return self.join(&cell).await;
        }
        let finished = self.finished.borrow();
        let ended = finished.iter().rev().find(|f| {
            chain_id.is_none_or(|c| c == f.chain_id)
                && from.is_none_or(|a| a == f.from)
                && nonce.is_none_or(|n| n == f.nonce)
                && hash.is_none_or(|h| f.hashes.contains(&h))
        });
        match (ended, hash) {
            (Some(f), _) => f.result.clone(),
            (None, Some(h)) => Err(TxFailure::UnknownHash(h)),
            (None, None) => Err(TxFailure::UnknownNonce(nonce.unwrap_or(0))),
        }
    }
}
