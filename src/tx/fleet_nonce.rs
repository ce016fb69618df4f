//! The nonce book one account shares across processes: the contract of
//! the Redis script (`pkg-template/src/fleet-nonces.js`), as a pure model
//! the engine's tests and the simulation can run without a store.
//!
//! Why: workers in several processes sending from one account each kept a
//! [`NonceBook`](super::nonce::NonceBook) and took the same nonces. One
//! book for them all keeps the local book's rule (a nonce whose bytes may
//! have reached a node is never handed out again) although a worker can die
//! at any point: it marks its nonce live *before* it broadcasts, and a
//! reservation that was never marked live is recycled once its hold runs
//! out (its worker is gone and broadcast nothing).
//!
//! ```text
//!   allocate(member, hold) ─▶ lowest hole, else next (next + 1): Reserved(member, now + hold)
//!                             (NeedsInit while the book has no next)
//!   live(member, n)        ─▶ Reserved by member and still held (or Live by it) ─▶ Live
//!                             else Lost: it must not broadcast
//!   Reserved, hold run out ─▶ a hole (swept at every call)
//!   release(member, n)     ─▶ Reserved by member ─▶ a hole; Live ─▶ refused (IsLive)
//!   abandon(n)             ─▶ Live (no node has it) ─▶ a hole
//!   settle(n)              ─▶ forgotten
//!   resync(p)              ─▶ Busy(until) while a reservation is held; else
//!                             next = max(next, p), holes below p dropped
//! ```
//! Time and members are arguments; the store's clock is the only clock. A
//! member id names one reservation (one send), never a process: a send
//! whose hold lapsed must not match a later reservation of the same nonce
//! by its own process.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use crate::time::Instant;

/// One call of the shared book (the script's `op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FleetOp {
    /// A nonce for a send (`arg`: the hold, ms).
    Allocate,
    /// About to broadcast with nonce `arg`.
    Live,
    /// Nothing was broadcast with nonce `arg`.
    Release,
    /// Nonce `arg` was broadcast but no node kept it and the chain did not use it.
    Abandon,
    /// Nonce `arg` is done with.
    Settle,
    /// The chain's pending count is `arg`.
    Resync,
}

impl FleetOp {
    /// The script's name for it.
    pub const fn as_str(self) -> &'static str {
        match self {
            FleetOp::Allocate => "allocate",
            FleetOp::Live => "live",
            FleetOp::Release => "release",
            FleetOp::Abandon => "abandon",
            FleetOp::Settle => "settle",
            FleetOp::Resync => "resync",
        }
    }
}

/// The store could not answer (down, refused, a book of another layout):
/// a send must not guess a nonce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetUnavailable(pub String);

/// A pending answer of the shared book.
pub type FleetCall<'a> = Pin<Box<dyn Future<Output = Result<FleetReply, FleetUnavailable>> + 'a>>;

/// Where the engine's shared book lives (Redis through the wrapper; the
/// model in tests): `account` is the book's key (a hash of chain and
/// address), `member` names one reservation.
pub trait FleetNonces {
    /// One call.
    fn call(&self, op: FleetOp, account: u64, member: &str, arg: u64) -> FleetCall<'_>;
    /// One call of the book's journal (`fleet_nonce/journal.rs`): `owner`
    /// names the engine (not one send), `lease` how long it answers for
    /// the nonce without renewing.
    fn journal(
        &self,
        op: journal::JournalOp,
        account: u64,
        owner: &str,
        nonce: u64,
        lease: Duration,
    ) -> journal::JournalCall<'_>;
}

/// How a nonce of the book is out.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Out {
    Reserved { member: String, until: Instant },
    Live { member: String },
}

/// The fleet's book as one engine uses it (`engine_fleet.rs`).
pub struct SharedNonces {
    /// The book.
    pub book: std::rc::Rc<dyn FleetNonces>,
    /// Names the engine's reservations (with a counter: one per send).
    pub member: String,
    /// Sends so far.
    pub sends: std::cell::Cell<u64>,
}

/// What the book answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FleetReply {
    /// Done; the nonce (allocate, live, release…) or the next one (resync).
    Ok(u64),
    /// No next nonce yet: resync from the chain's pending count first.
    NeedsInit,
    /// Not this member's reservation (any more): do not broadcast with it.
    Lost,
    /// A live nonce is never given back.
    IsLive,
    /// A reservation is held, not broadcast yet, for this long: the
    /// chain's count may not include it.
    Busy(Duration),
}

/// One account's book, as the store keeps it.
#[derive(Clone, Debug, Default)]
pub struct FleetNonceBook {
    next: Option<u64>,
    out: BTreeMap<u64, Out>,
    holes: BTreeSet<u64>,
    /// The journal of its live nonces (`fleet_nonce/journal.rs`).
    journal: BTreeMap<u64, journal::Kept>,
}

impl FleetNonceBook {
    /// Reservations whose hold ran out were never marked live: holes again.
    fn sweep(&mut self, now: Instant) {
        let lapsed: Vec<u64> = self
            .out
            .iter()
            .filter(|(_, out)| matches!(out, Out::Reserved { until, .. } if *until <= now))
            .map(|(n, _)| *n)
            .collect();
        for n in lapsed {
            self.out.remove(&n);
            self.holes.insert(n);
        }
    }

    /// A nonce for `member`, reserved for `hold` (long enough to sign and
    /// mark it live).
    pub fn allocate(&mut self, now: Instant, member: &str, hold: Duration) -> FleetReply {
        self.sweep(now);
        let Some(next) = self.next else { return FleetReply::NeedsInit };
        let n = match self.holes.pop_first() {
            Some(hole) => hole,
            None => {
                self.next = Some(next.saturating_add(1));
                next
            }
        };
        self.out.insert(n, Out::Reserved { member: member.to_owned(), until: now + hold });
        FleetReply::Ok(n)
    }

    /// Runs `op` (the script's dispatch), at `now`.
    pub fn apply(&mut self, now: Instant, op: FleetOp, member: &str, arg: u64) -> FleetReply {
        match op {
            FleetOp::Allocate => self.allocate(now, member, Duration::from_millis(arg)),
            FleetOp::Live => self.live(now, member, arg),
            FleetOp::Release => self.release(now, member, arg),
            FleetOp::Abandon => self.abandon(now, arg),
            FleetOp::Settle => self.settle(now, arg),
            FleetOp::Resync => self.resync(now, arg),
        }
    }

    /// `member` is about to broadcast with `n`: from now on it is never
    /// handed out again. `Lost` when its reservation lapsed (or was never its).
    pub fn live(&mut self, now: Instant, member: &str, n: u64) -> FleetReply {
        self.sweep(now);
        match self.out.get(&n) {
            Some(Out::Reserved { member: m, .. } | Out::Live { member: m }) if m == member => {
                self.out.insert(n, Out::Live { member: member.to_owned() });
                FleetReply::Ok(n)
            }
            _ => FleetReply::Lost,
        }
    }

    /// `member` gives back a reservation nothing was broadcast with.
    pub fn release(&mut self, now: Instant, member: &str, n: u64) -> FleetReply {
        self.sweep(now);
        match self.out.get(&n) {
            Some(Out::Live { .. }) => FleetReply::IsLive,
            Some(Out::Reserved { member: m, .. }) if m == member => {
                self.out.remove(&n);
                self.holes.insert(n);
                FleetReply::Ok(n)
            }
            _ => FleetReply::Lost,
        }
    }

    /// A live nonce no node has and the chain did not consume: a hole.
    pub fn abandon(&mut self, now: Instant, n: u64) -> FleetReply {
        self.sweep(now);
        self.journal.remove(&n);
        if matches!(self.out.get(&n), Some(Out::Live { .. })) {
            self.out.remove(&n);
            self.holes.insert(n);
        }
        FleetReply::Ok(n)
    }

    /// A nonce done with (mined, or used by another sender).
    pub fn settle(&mut self, now: Instant, n: u64) -> FleetReply {
        self.sweep(now);
        self.out.remove(&n);
        self.holes.remove(&n);
        self.journal.remove(&n);
        FleetReply::Ok(n)
    }

    /// Catches up with the chain's pending count `p`, unless a reservation
    /// is held unbroadcast (`Busy` until the earliest hold ends). Never
    /// moves back.
    pub fn resync(&mut self, now: Instant, p: u64) -> FleetReply {
        self.sweep(now);
        let held = self
            .out
            .values()
            .filter_map(|out| match out {
                Out::Reserved { until, .. } => Some(*until),
                Out::Live { .. } => None,
            })
            .min();
        if let Some(until) = held {
            return FleetReply::Busy(until.saturating_since(now));
        }
        let to = self.next.unwrap_or(p).max(p);
        self.next = Some(to);
        self.holes.retain(|&h| h >= p);
        FleetReply::Ok(to)
    }
}

pub mod journal;
#[cfg(test)]
mod tests;
