//! The journal beside the fleet's nonce book: for every live nonce, the
//! record that lets another engine finish it (`tx::journal_record`) and
//! the engine that answers for it, under a lease it renews while alive.
//!
//! ```text
//!   live(member, n) with a record ─▶ Live, journal[n] = record, owner = the engine, until now + lease
//!                                    (one step: no broadcast without its record)
//!   write(owner, n, record) ─▶ the owner's entry: record replaced, lease renewed   (a replacement,
//!                              before its broadcast); not the owner's: Lost (do not broadcast)
//!   renew(owner, n)         ─▶ the owner's entry: lease renewed; else Lost (another adopted it)
//!   orphans(owner)          ─▶ every entry whose lease ran out, or that is owner's already, now
//!                              belongs to owner (its records returned): the engine that wrote it
//!                              died or lost the store, or is owner itself in a new life (a page
//!                              reloaded in the same tab keeps its name)
//!   settle(n) / abandon(n)  ─▶ the entry is gone
//! ```
//! A lapsed lease is only taken over, never dropped: the nonce stays live in
//! the book and its record stays until someone settles it.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::{FleetNonceBook, FleetReply, FleetUnavailable};
use crate::time::Instant;

/// One call of the journal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalOp {
    /// The book's `live` for the send `member`, with the nonce's first record.
    Live {
        /// The reservation's name.
        member: String,
        /// The record (`JournalEntry::encode`).
        record: String,
    },
    /// A new record for a nonce the engine owns (a replacement was signed).
    Write {
        /// The record.
        record: String,
    },
    /// The engine still answers for the nonce.
    Renew,
    /// Take over every nonce whose owner stopped renewing (and list the
    /// caller's own: a reloaded page keeps its name).
    Orphans,
}

impl JournalOp {
    /// The script's name for it.
    pub fn as_str(&self) -> &'static str {
        match self {
            JournalOp::Live { .. } => "live",
            JournalOp::Write { .. } => "write",
            JournalOp::Renew => "renew",
            JournalOp::Orphans => "orphans",
        }
    }
}

/// What the journal answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalReply {
    /// Done.
    Ok,
    /// Not this engine's (any more): do not broadcast; stop speeding up.
    Lost,
    /// The nonces taken over, with their records.
    Orphans(Vec<(u64, String)>),
}

/// A pending answer of the journal.
pub type JournalCall<'a> = Pin<Box<dyn Future<Output = Result<JournalReply, FleetUnavailable>> + 'a>>;

/// One nonce's entry.
#[derive(Clone, Debug)]
pub(super) struct Kept {
    record: String,
    owner: String,
    until: Instant,
}

impl FleetNonceBook {
    /// Runs a journal call (the script's dispatch), at `now`.
    pub fn journal_apply(
        &mut self,
        now: Instant,
        op: &JournalOp,
        owner: &str,
        n: u64,
        lease: Duration,
    ) -> JournalReply {
        match op {
            JournalOp::Live { member, record } => match self.live(now, member, n) {
                FleetReply::Ok(_) => {
                    self.journal
                        .insert(n, Kept { record: record.clone(), owner: owner.to_owned(), until: now + lease });
                    JournalReply::Ok
                }
                _ => JournalReply::Lost,
            },
            JournalOp::Write { record } => self.owned(n, owner, |kept| {
                kept.record = record.clone();
                kept.until = now + lease;
            }),
            JournalOp::Renew => self.owned(n, owner, |kept| kept.until = now + lease),
            JournalOp::Orphans => {
                let mut taken = Vec::new();
                for (n, kept) in self.journal.iter_mut().filter(|(_, k)| k.until <= now || k.owner == owner) {
                    kept.owner = owner.to_owned();
                    kept.until = now + lease;
                    taken.push((*n, kept.record.clone()));
                }
                JournalReply::Orphans(taken)
            }
        }
    }

    fn owned(&mut self, n: u64, owner: &str, change: impl FnOnce(&mut Kept)) -> JournalReply {
        match self.journal.get_mut(&n) {
            Some(kept) if kept.owner == owner => {
                change(kept);
                JournalReply::Ok
            }
            _ => JournalReply::Lost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::at;

    const LEASE: Duration = Duration::from_secs(15);

    fn live(record: &str) -> JournalOp {
        JournalOp::Live { member: "a-1".into(), record: record.into() }
    }

    #[test]
    fn a_live_nonce_is_journaled_at_once_and_an_owner_that_stops_renewing_is_taken_over() {
        let mut b = FleetNonceBook::default();
        b.resync(at(0), 40);
        assert_eq!(b.allocate(at(0), "a-1", LEASE), FleetReply::Ok(40));
        assert_eq!(
            b.journal_apply(at(0), &JournalOp::Live { member: "b-1".into(), record: "x".into() }, "b", 40, LEASE),
            JournalReply::Lost,
            "not b's reservation: no record, no broadcast"
        );
        assert_eq!(b.journal_apply(at(0), &live("r1"), "a", 40, LEASE), JournalReply::Ok);
        assert_eq!(b.journal_apply(at(5_000), &JournalOp::Orphans, "b", 0, LEASE), JournalReply::Orphans(vec![]));
        assert_eq!(
            b.journal_apply(at(10_000), &JournalOp::Write { record: "r2".into() }, "a", 40, LEASE),
            JournalReply::Ok
        );
        assert_eq!(
            b.journal_apply(at(10_000), &JournalOp::Renew, "b", 40, LEASE),
            JournalReply::Lost,
            "only the owner renews"
        );
        assert_eq!(
            b.journal_apply(at(24_999), &JournalOp::Orphans, "b", 0, LEASE),
            JournalReply::Orphans(vec![]),
            "renewed at 10 s"
        );
        let taken = b.journal_apply(at(25_000), &JournalOp::Orphans, "b", 0, LEASE);
        assert_eq!(taken, JournalReply::Orphans(vec![(40, "r2".into())]), "the newest record");
        assert_eq!(
            b.journal_apply(at(25_001), &JournalOp::Orphans, "c", 0, LEASE),
            JournalReply::Orphans(vec![]),
            "taken once"
        );
        let again = b.journal_apply(at(25_002), &JournalOp::Orphans, "b", 0, LEASE);
        assert_eq!(again, JournalReply::Orphans(vec![(40, "r2".into())]), "its own, to the owner in a new life");
        assert_eq!(
            b.journal_apply(at(25_001), &JournalOp::Write { record: "r3".into() }, "a", 40, LEASE),
            JournalReply::Lost,
            "the old owner may not broadcast any more"
        );
        assert_eq!(b.release(at(25_002), "a-1", 40), FleetReply::IsLive, "still live in the book");
        b.settle(at(30_000), 40);
        assert_eq!(
            b.journal_apply(at(99_000), &JournalOp::Orphans, "c", 0, LEASE),
            JournalReply::Orphans(vec![]),
            "settled: gone"
        );
    }

    #[test]
    fn an_abandoned_nonce_leaves_the_journal_and_a_lapsed_reservation_writes_nothing() {
        let mut b = FleetNonceBook::default();
        b.resync(at(0), 1);
        b.allocate(at(0), "a-1", Duration::from_millis(100));
        assert_eq!(b.journal_apply(at(100), &live("r"), "a", 1, LEASE), JournalReply::Lost, "the hold ran out");
        b.allocate(at(200), "a-1", LEASE);
        b.journal_apply(at(200), &live("r"), "a", 1, LEASE);
        b.abandon(at(300), 1);
        assert_eq!(b.journal_apply(at(99_000), &JournalOp::Orphans, "c", 0, LEASE), JournalReply::Orphans(vec![]));
    }
}
