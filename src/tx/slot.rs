//! One nonce and every transaction sent for it: the single state machine
//! that speed-up and cancel both go through, so they cannot race.
//!
//! ```text
//!   (first tx signed and broadcast) ─▶ Waiting, counting from the head at
//!             broadcast (unknown: from the first head the watcher learns)
//!   Waiting ──no receipt for max_wait blocks while this is the account's
//!             lowest live nonce and the chain's mined count has reached it
//!             (the engine says so: `lowest_live`)──▶ Replacing(SpeedUp) ──sent──▶ Waiting (clock restarts)
//!   any open state ──request_cancel──▶ intent = Cancel
//!             Waiting with intent Cancel and no cancel sent ─▶ Replacing(Cancel) at once
//!             Replacing(SpeedUp) in progress: it finishes, then the cancel goes next
//!             (the cancel wins deterministically: it is priced above the speed-up)
//!             after a cancel is sent, later bumps re-price the cancel, never the original
//!   receipt for any hash sent ─▶ Included(hash)   (receipt gone again = reorg ─▶ Waiting)
//!   Included + confirmations ─▶ Done(Mined | Replaced | Cancelled)
//!   nonce consumed by a transaction that is none of ours ─▶ Done(ReplacedByOther)
//!   next bump above the fee ceiling ─▶ Done(AtCeiling)  (the hashes are reported)
//! ```
//! Hashes are never forgotten: whichever of them is mined is the answer,
//! including the original after a replacement was sent.

use std::rc::Rc;

use alloy_primitives::B256;
use thiserror::Error;

use super::fees::Fees;

/// Why a transaction was sent for this nonce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxKind {
    /// The caller's transaction.
    Original,
    /// The caller's transaction again, with higher fees.
    SpeedUp,
    /// A 0-value self-transfer that takes the nonce.
    Cancel,
}

impl TxKind {
    /// The JS spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            TxKind::Original => "original",
            TxKind::SpeedUp => "speedUp",
            TxKind::Cancel => "cancel",
        }
    }
}

/// One signed transaction for the nonce, kept for re-broadcast.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentTx {
    /// keccak256 of `raw`, computed locally.
    pub hash: B256,
    /// The signed bytes (empty when a wallet broadcast it itself).
    pub raw: Rc<[u8]>,
    /// What it pays.
    pub fees: Fees,
    /// Why it was sent.
    pub kind: TxKind,
}

/// How the nonce ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// The caller's original transaction was mined.
    Mined,
    /// One of our speed-ups was mined.
    Replaced,
    /// Our cancel was mined.
    Cancelled,
}

impl Resolution {
    /// The JS spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Resolution::Mined => "mined",
            Resolution::Replaced => "replaced",
            Resolution::Cancelled => "cancelled",
        }
    }
}

/// What the waiting loop should do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Keep polling.
    Wait,
    /// Sign and send a replacement of this kind now.
    Replace(TxKind),
}

/// Refusals of the slot.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum SlotError {
    /// The nonce is already resolved; nothing can replace it any more.
    #[error("nonce {0} is already settled on chain; there is nothing to cancel or speed up")]
    Settled(u64),
}

/// The state of one nonce.
#[derive(Clone, Debug)]
pub struct NonceSlot {
    nonce: u64,
    sent: Vec<SentTx>,
    cancel_requested: bool,
    replacing: Option<TxKind>,
    /// Block at which the current wait started (None: not counting, e.g. a
    /// lower nonce blocks this one).
    waiting_since: Option<u64>,
    included: Option<B256>,
    settled: bool,
}

impl NonceSlot {
    /// A slot for `nonce` with nothing sent yet.
    pub fn new(nonce: u64) -> Self {
        NonceSlot {
            nonce,
            sent: Vec::new(),
            cancel_requested: false,
            replacing: None,
            waiting_since: None,
            included: None,
            settled: false,
        }
    }

    /// The nonce.
    pub fn nonce(&self) -> u64 {
        self.nonce
    }

    /// Every transaction sent, oldest first.
    pub fn sent(&self) -> &[SentTx] {
        &self.sent
    }

    /// The most recent transaction: the one to re-broadcast and to bump.
    pub fn latest(&self) -> Option<&SentTx> {
        self.sent.last()
    }

    /// Whether a cancel was asked for.
    pub fn cancel_requested(&self) -> bool {
        self.cancel_requested
    }

    /// Whether the nonce is resolved.
    pub fn is_settled(&self) -> bool {
        self.settled
    }

    /// The hash currently seen in a block, if any.
    pub fn included(&self) -> Option<B256> {
        self.included
    }

    /// Records a transaction sent for this nonce (kept even if its
    /// broadcast failed: it may still have reached a node). `head` is the
    /// block at broadcast: the wait for inclusion counts from there. `None`
    /// (the head is not known yet) starts the count at the first head the
    /// watcher learns, never at block 0.
    pub fn record(&mut self, tx: SentTx, head: Option<u64>) {
        if !self.sent.iter().any(|s| s.hash == tx.hash) {
            self.sent.push(tx);
        }
        self.waiting_since = head;
    }

    /// The block the current wait counts from, if counting.
    pub fn waiting_since(&self) -> Option<u64> {
        self.waiting_since
    }

    /// Asks for a cancel. Idempotent; refused once the nonce is settled.
    pub fn request_cancel(&mut self) -> Result<(), SlotError> {
        if self.settled {
            return Err(SlotError::Settled(self.nonce));
        }
        self.cancel_requested = true;
        Ok(())
    }

    /// Whether a cancel transaction was already sent.
    pub fn cancel_sent(&self) -> bool {
        self.sent.iter().any(|s| s.kind == TxKind::Cancel)
    }

    /// Decides the next step. `lowest_live` says whether this nonce is the
    /// lowest unsettled one of the account: only that one is worth bumping,
    /// the others wait behind it with their block count paused.
    pub fn next_step(&mut self, head: u64, max_wait_blocks: u64, lowest_live: bool) -> Step {
        if self.settled || self.replacing.is_some() || self.included.is_some() || self.sent.is_empty() {
            return Step::Wait;
        }
        if self.cancel_requested && !self.cancel_sent() {
            return Step::Replace(TxKind::Cancel);
        }
        if !lowest_live {
            self.waiting_since = None;
            return Step::Wait;
        }
        let since = *self.waiting_since.get_or_insert(head);
        if head.saturating_sub(since) < max_wait_blocks {
            return Step::Wait;
        }
        Step::Replace(if self.cancel_sent() { TxKind::Cancel } else { TxKind::SpeedUp })
    }

    /// Marks a replacement as being signed and sent; `next_step` waits
    /// until [`NonceSlot::end_replacement`].
    pub fn begin_replacement(&mut self, kind: TxKind) {
        self.replacing = Some(kind);
    }

    /// The replacement finished (sent or not); the block count restarts.
    pub fn end_replacement(&mut self, head: u64) {
        self.replacing = None;
        self.waiting_since = Some(head);
    }

    /// A receipt was found for `hash`. Returns the resolution it implies,
    /// or `None` if the hash is not one of ours.
    pub fn saw_receipt(&mut self, hash: B256) -> Option<Resolution> {
        let kind = self.sent.iter().find(|s| s.hash == hash)?.kind;
        self.included = Some(hash);
        Some(match kind {
            TxKind::Original => Resolution::Mined,
            TxKind::SpeedUp => Resolution::Replaced,
            TxKind::Cancel => Resolution::Cancelled,
        })
    }

    /// The receipt seen before is gone (a reorg): back to waiting.
    pub fn lost_receipt(&mut self, head: Option<u64>) {
        self.included = None;
        self.waiting_since = head;
    }

    /// The nonce is resolved for good.
    pub fn settle(&mut self) {
        self.settled = true;
        self.replacing = None;
    }

    /// The hashes sent, as `0x…` strings (for errors and outcomes).
    pub fn hashes(&self) -> Vec<String> {
        self.sent.iter().map(|s| format!("{:#x}", s.hash)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tx(byte: u8, kind: TxKind) -> SentTx {
        SentTx { hash: B256::repeat_byte(byte), raw: Rc::from(vec![byte]), fees: Fees::Legacy { gas_price: 1 }, kind }
    }

    fn sent_at(head: u64) -> NonceSlot {
        let mut slot = NonceSlot::new(4);
        slot.record(tx(1, TxKind::Original), Some(head));
        slot
    }

    #[test]
    fn a_speed_up_comes_after_max_wait_blocks_and_restarts_the_count() {
        let mut slot = sent_at(10);
        assert_eq!(slot.next_step(12, 3, true), Step::Wait);
        assert_eq!(slot.next_step(13, 3, true), Step::Replace(TxKind::SpeedUp));
        slot.begin_replacement(TxKind::SpeedUp);
        assert_eq!(slot.next_step(20, 3, true), Step::Wait, "one replacement at a time");
        slot.record(tx(2, TxKind::SpeedUp), Some(13));
        slot.end_replacement(13);
        assert_eq!(slot.next_step(15, 3, true), Step::Wait);
        assert_eq!(slot.next_step(16, 3, true), Step::Replace(TxKind::SpeedUp));
    }

    #[test]
    fn the_wait_counts_from_the_block_at_broadcast_not_from_block_zero() {
        let mut slot = sent_at(19_000_000);
        assert_eq!(slot.next_step(19_000_002, 3, true), Step::Wait);
        assert_eq!(slot.next_step(19_000_003, 3, true), Step::Replace(TxKind::SpeedUp));
        // Broadcast with the head unknown: the first head learned starts the count.
        let mut slot = NonceSlot::new(4);
        slot.record(tx(1, TxKind::Original), None);
        assert_eq!(slot.next_step(19_000_000, 3, true), Step::Wait, "a head in the millions is not a wait");
        assert_eq!(slot.waiting_since(), Some(19_000_000));
        assert_eq!(slot.next_step(19_000_002, 3, true), Step::Wait);
        assert_eq!(slot.next_step(19_000_003, 3, true), Step::Replace(TxKind::SpeedUp));
    }

    #[test]
    fn a_nonce_behind_a_stuck_one_is_not_bumped_and_its_count_starts_when_it_leads() {
        let mut slot = sent_at(10);
        assert_eq!(slot.next_step(30, 3, false), Step::Wait);
        assert_eq!(slot.next_step(31, 3, true), Step::Wait, "counting starts when it becomes the lowest");
        assert_eq!(slot.next_step(34, 3, true), Step::Replace(TxKind::SpeedUp));
    }

    #[test]
    fn a_cancel_during_a_speed_up_goes_next_and_later_bumps_reprice_the_cancel() {
        let mut slot = sent_at(0);
        assert_eq!(slot.next_step(3, 3, true), Step::Replace(TxKind::SpeedUp));
        slot.begin_replacement(TxKind::SpeedUp);
        slot.request_cancel().unwrap();
        assert_eq!(slot.next_step(3, 3, true), Step::Wait, "the speed-up in flight finishes first");
        slot.record(tx(2, TxKind::SpeedUp), Some(3));
        slot.end_replacement(3);
        assert_eq!(slot.next_step(3, 3, false), Step::Replace(TxKind::Cancel), "a cancel does not wait its turn");
        slot.begin_replacement(TxKind::Cancel);
        slot.record(tx(3, TxKind::Cancel), Some(3));
        slot.end_replacement(3);
        assert_eq!(slot.next_step(6, 3, true), Step::Replace(TxKind::Cancel));
    }

    #[test]
    fn whichever_hash_is_mined_decides_the_resolution() {
        let mut slot = sent_at(0);
        slot.record(tx(2, TxKind::SpeedUp), Some(3));
        slot.record(tx(3, TxKind::Cancel), Some(4));
        assert_eq!(slot.saw_receipt(B256::repeat_byte(9)), None);
        assert_eq!(slot.saw_receipt(B256::repeat_byte(1)), Some(Resolution::Mined));
        assert_eq!(slot.saw_receipt(B256::repeat_byte(2)), Some(Resolution::Replaced));
        assert_eq!(slot.saw_receipt(B256::repeat_byte(3)), Some(Resolution::Cancelled));
        assert_eq!(slot.next_step(100, 3, true), Step::Wait, "included: nothing to replace");
        slot.lost_receipt(Some(100));
        assert_eq!(slot.next_step(103, 3, true), Step::Replace(TxKind::Cancel));
    }

    #[test]
    fn a_settled_nonce_refuses_a_cancel_and_a_resend_of_a_hash_is_not_a_new_tx() {
        let mut slot = sent_at(0);
        slot.record(tx(1, TxKind::Original), Some(5));
        assert_eq!(slot.sent().len(), 1);
        slot.settle();
        assert_eq!(slot.request_cancel(), Err(SlotError::Settled(4)));
        assert_eq!(slot.hashes(), vec![format!("{:#x}", B256::repeat_byte(1))]);
    }

    #[test]
    fn kinds_and_resolutions_have_their_js_spellings() {
        let kinds = [TxKind::Original, TxKind::SpeedUp, TxKind::Cancel].map(TxKind::as_str);
        assert_eq!(kinds, ["original", "speedUp", "cancel"]);
        let resolutions = [Resolution::Mined, Resolution::Replaced, Resolution::Cancelled].map(Resolution::as_str);
        assert_eq!(resolutions, ["mined", "replaced", "cancelled"]);
    }

    #[test]
    fn a_slot_tells_which_hash_is_included_and_whether_it_is_settled() {
        let mut slot = sent_at(0);
        assert_eq!((slot.included(), slot.is_settled()), (None, false));
        slot.saw_receipt(B256::repeat_byte(1));
        assert_eq!(slot.included(), Some(B256::repeat_byte(1)));
        slot.lost_receipt(Some(2));
        assert_eq!(slot.included(), None);
        slot.settle();
        assert!(slot.is_settled());
    }
}
