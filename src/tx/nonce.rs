//! The nonce book of one account on one chain.
//!
//! Why: two concurrent sends that both ask the node for the pending count
//! get the same nonce, and one silently replaces the other. The book hands
//! out each nonce once, and takes one back only when it is certain that
//! nothing was broadcast with it.
//!
//! ```text
//!   Unknown ──init(pending count p)──▶ Ready { next = p }
//!   allocate(): lowest hole, else next (next += 1)      ─▶ Reserved(n)
//!   Reserved(n) ──broadcast attempted──▶ Live(n)         (never handed out again)
//!   Reserved(n) ──release (signer failed, certain rejection)──▶ hole(n), reused first
//!   Live(n) ──settle (mined / replaced / abandoned)──▶ forgotten
//!   resync(p): p > next → next = p, holes below p dropped  (someone else sent)
//!   gap(p): live nonces exist but the node's pending count p is below the
//!           lowest of them → nonces [p, lowest) are missing on the node
//! ```
//! A live nonce is never released: a broadcast whose outcome is unknown may
//! still be mined, so its bytes are re-broadcast instead of re-signed.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use thiserror::Error;

/// How a nonce the book handed out is being used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonceUse {
    /// Allocated; nothing broadcast yet.
    Reserved,
    /// At least one broadcast was attempted with it.
    Live,
}

/// A misuse of the book (a bug in the caller, reported instead of a panic).
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum NonceError {
    /// `allocate` before `init`.
    #[error("the nonce book is not initialised from the node yet")]
    NotReady,
    /// `release` of a nonce that was broadcast or never handed out.
    #[error("nonce {0} cannot be released: it was broadcast or never reserved")]
    NotReleasable(u64),
}

/// Nonce allocation for one (chain id, address).
#[derive(Clone, Debug, Default)]
pub struct NonceBook {
    next: Option<u64>,
    holes: BTreeSet<u64>,
    used: BTreeMap<u64, NonceUse>,
}

impl NonceBook {
    /// Whether `init` has run.
    pub fn is_ready(&self) -> bool {
        self.next.is_some()
    }

    /// Starts from the node's pending transaction count. Later calls only
    /// move forward (see [`NonceBook::resync`]).
    pub fn init(&mut self, pending_count: u64) {
        match self.next {
            None => self.next = Some(pending_count),
            Some(_) => {
                self.resync(pending_count);
            }
        }
    }

    /// The next nonce to sign with: a released hole first, so no gap stays.
    pub fn allocate(&mut self) -> Result<u64, NonceError> {
        let next = self.next.ok_or(NonceError::NotReady)?;
        let nonce = match self.holes.pop_first() {
            Some(hole) => hole,
            None => {
                self.next = Some(next.saturating_add(1));
                next
            }
        };
        self.used.insert(nonce, NonceUse::Reserved);
        Ok(nonce)
    }

    /// Records that bytes signed with `nonce` may have reached a node.
    pub fn mark_live(&mut self, nonce: u64) {
        self.used.insert(nonce, NonceUse::Live);
        self.holes.remove(&nonce);
    }

    /// Gives back a reserved nonce nothing was broadcast with.
    pub fn release(&mut self, nonce: u64) -> Result<(), NonceError> {
        match self.used.get(&nonce) {
            Some(NonceUse::Reserved) => {
                self.used.remove(&nonce);
                if self.next == Some(nonce.saturating_add(1)) {
                    self.next = Some(nonce);
                    // Holes just below the new top fold back into `next`.
                    while let Some(&top) = self.holes.last() {
                        if Some(top.saturating_add(1)) != self.next {
                            break;
                        }
                        self.holes.remove(&top);
                        self.next = Some(top);
                    }
                } else {
                    self.holes.insert(nonce);
                }
                Ok(())
            }
            _ => Err(NonceError::NotReleasable(nonce)),
        }
    }

    /// A live nonce whose transactions no node has any more and that the
    /// chain has not consumed (a dropped transaction): handed out again
    /// first, so it does not leave a gap.
    pub fn abandon(&mut self, nonce: u64) {
        if self.used.remove(&nonce).is_some() && self.next.is_some_and(|n| nonce < n) {
            self.holes.insert(nonce);
        }
    }

    /// Forgets a nonce that is done with (mined, replaced or given up).
    pub fn settle(&mut self, nonce: u64) {
        self.used.remove(&nonce);
    }

    /// The lowest nonce broadcast and not yet settled: the one that blocks
    /// every higher nonce of the account, so the only one worth bumping.
    pub fn lowest_live(&self) -> Option<u64> {
        self.used.iter().find(|(_, u)| **u == NonceUse::Live).map(|(n, _)| *n)
    }

    /// How `nonce` is used now, if the book tracks it.
    pub fn usage(&self, nonce: u64) -> Option<NonceUse> {
        self.used.get(&nonce).copied()
    }

    /// The next fresh nonce (after holes).
    pub fn next(&self) -> Option<u64> {
        self.next
    }

    /// Nonces handed back and waiting to be reused.
    pub fn holes(&self) -> impl Iterator<Item = u64> + '_ {
        self.holes.iter().copied()
    }

    /// Catches up with a node whose pending count is ahead of the book
    /// (another wallet or process sent from this account). Returns the
    /// nonces skipped, for a report.
    pub fn resync(&mut self, pending_count: u64) -> Range<u64> {
        let Some(next) = self.next else {
            self.next = Some(pending_count);
            return pending_count..pending_count;
        };
        self.holes.retain(|&h| h >= pending_count);
        if pending_count > next {
            self.next = Some(pending_count);
            return next..pending_count;
        }
        next..next
    }

    /// Nonces below our lowest live one that the node does not have: a gap
    /// that keeps every live transaction from being mined.
    pub fn gap(&self, node_pending_count: u64) -> Option<Range<u64>> {
        let lowest = self.lowest_live()?;
        (node_pending_count < lowest).then_some(node_pending_count..lowest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ready(at: u64) -> NonceBook {
        let mut book = NonceBook::default();
        book.init(at);
        book
    }

    #[test]
    fn allocation_needs_init_then_counts_up_from_the_pending_count() {
        let mut book = NonceBook::default();
        assert_eq!(book.allocate(), Err(NonceError::NotReady));
        book.init(7);
        assert_eq!((book.allocate(), book.allocate()), (Ok(7), Ok(8)));
    }

    #[test]
    fn a_released_top_nonce_is_reused_and_a_middle_one_fills_first() {
        let mut book = ready(0);
        let (a, b, c) = (book.allocate().unwrap(), book.allocate().unwrap(), book.allocate().unwrap());
        book.mark_live(a);
        book.mark_live(c);
        book.release(b).unwrap();
        assert_eq!(book.allocate(), Ok(b), "the hole is filled before a fresh nonce");
        assert_eq!(book.allocate(), Ok(3));
        book.release(3).unwrap();
        assert_eq!(book.next(), Some(3));
    }

    #[test]
    fn a_broadcast_nonce_is_never_released() {
        let mut book = ready(0);
        let n = book.allocate().unwrap();
        book.mark_live(n);
        assert_eq!(book.release(n), Err(NonceError::NotReleasable(n)));
        assert_eq!(book.release(42), Err(NonceError::NotReleasable(42)));
        assert_eq!(book.allocate(), Ok(1));
    }

    #[test]
    fn an_abandoned_nonce_is_reused_first() {
        let mut book = ready(0);
        for _ in 0..3 {
            let n = book.allocate().unwrap();
            book.mark_live(n);
        }
        book.abandon(1);
        assert_eq!(book.allocate(), Ok(1));
        assert_eq!(book.allocate(), Ok(3));
    }

    #[test]
    fn the_lowest_live_nonce_blocks_the_rest_until_settled() {
        let mut book = ready(5);
        for _ in 0..3 {
            let n = book.allocate().unwrap();
            book.mark_live(n);
        }
        assert_eq!(book.lowest_live(), Some(5));
        book.settle(5);
        assert_eq!(book.lowest_live(), Some(6));
    }

    #[test]
    fn resync_jumps_forward_only_and_reports_the_skipped_nonces() {
        let mut book = ready(3);
        assert_eq!(book.resync(9), 3..9);
        assert_eq!(book.allocate(), Ok(9));
        assert_eq!(book.resync(4), 10..10);
        assert_eq!(book.allocate(), Ok(10));
        book.init(20);
        assert_eq!(book.allocate(), Ok(20), "a second init resyncs");
    }

    #[test]
    fn a_node_missing_lower_nonces_is_a_gap() {
        let mut book = ready(0);
        for _ in 0..4 {
            let n = book.allocate().unwrap();
            book.mark_live(n);
        }
        book.settle(0);
        book.settle(1);
        assert_eq!(book.gap(0), Some(0..2));
        assert_eq!(book.gap(2), None);
    }

    #[test]
    fn the_book_tells_how_each_nonce_is_used() {
        let mut book = ready(0);
        assert_eq!(book.usage(0), None);
        let n = book.allocate().unwrap();
        assert_eq!(book.usage(n), Some(NonceUse::Reserved));
        book.mark_live(n);
        assert_eq!(book.usage(n), Some(NonceUse::Live));
        book.settle(n);
        assert_eq!(book.usage(n), None);
    }

    #[test]
    fn released_nonces_are_listed_as_holes_until_reused() {
        let mut book = ready(5);
        assert_eq!(book.holes().collect::<Vec<_>>(), Vec::<u64>::new());
        let (a, b, c) = (book.allocate().unwrap(), book.allocate().unwrap(), book.allocate().unwrap());
        book.mark_live(a);
        book.mark_live(c);
        book.release(b).unwrap();
        assert_eq!(book.holes().collect::<Vec<_>>(), vec![6]);
        book.allocate().unwrap();
        assert_eq!(book.holes().count(), 0);
    }

    #[test]
    fn resync_drops_only_the_holes_below_the_nodes_count() {
        let mut book = ready(0);
        let nonces: Vec<u64> = (0..4).map(|_| book.allocate().unwrap()).collect();
        book.mark_live(nonces[0]);
        book.mark_live(nonces[3]);
        book.release(1).unwrap();
        book.release(2).unwrap();
        assert_eq!(book.holes().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(book.resync(2), 4..4, "behind the book: nothing skipped");
        assert_eq!(book.holes().collect::<Vec<_>>(), vec![2], "nonce 1 is used on the node: no longer a hole");
        assert_eq!(book.allocate(), Ok(2));
        assert_eq!(book.allocate(), Ok(4));
    }

    #[test]
    fn abandoning_a_nonce_the_book_does_not_track_leaves_no_hole() {
        let mut book = ready(0);
        let n = book.allocate().unwrap();
        book.mark_live(n);
        book.settle(n);
        book.abandon(n); // mined, then reported dropped: it must not be handed out again
        assert_eq!(book.holes().count(), 0);
        assert_eq!(book.allocate(), Ok(1));
        // A nonce marked live at the book's next (never handed out) is not a hole
        // either: it would be handed out twice, as the hole and as the next.
        let mut book = ready(3);
        book.mark_live(3);
        book.abandon(3);
        assert_eq!(book.holes().count(), 0);
        assert_eq!((book.allocate(), book.allocate()), (Ok(3), Ok(4)));
    }

    proptest! {
        /// Any sequence of operations: a nonce is never handed out while it
        /// is in use, and live nonces stay tracked.
        #[test]
        fn no_nonce_is_ever_handed_out_twice(ops in proptest::collection::vec((0u8..5, 0usize..8), 1..200)) {
            let mut book = ready(100);
            let mut in_use: BTreeSet<u64> = BTreeSet::new();
            let mut live: BTreeSet<u64> = BTreeSet::new();
            let mut consumed: BTreeSet<u64> = BTreeSet::new();
            for (op, pick) in ops {
                let choose = |set: &BTreeSet<u64>| set.iter().nth(pick % set.len().max(1)).copied();
                match op {
                    0 | 1 => {
                        let n = book.allocate().unwrap();
                        prop_assert!(!consumed.contains(&n), "settled nonce {} handed out again", n);
                        prop_assert!(in_use.insert(n), "nonce {} handed out twice", n);
                    }
                    2 => if let Some(n) = choose(&in_use) { if !live.contains(&n) { book.mark_live(n); live.insert(n); } },
                    3 => if let Some(n) = choose(&in_use) {
                        let released = book.release(n).is_ok();
                        prop_assert_eq!(released, !live.contains(&n));
                        if released { in_use.remove(&n); }
                    },
                    _ => if let Some(n) = choose(&live) {
                        book.settle(n);
                        live.remove(&n);
                        in_use.remove(&n);
                        consumed.insert(n);
                    },
                }
                prop_assert_eq!(book.lowest_live(), live.first().copied());
            }
        }
    }
}
