//! A plan learned by a fleet on one store, when none was configured: what
//! the whole fleet got through when the key refused, not what the member
//! that met the 429 got through, nor a guess at how far to come down.
//!
//! Members of a fleet lease from one bucket (`fleet.rs`), so the plan one
//! member learns is the whole fleet's rate. Learned from that member's own
//! part, a new user's fleet of two to four processes on Redis learned
//! 1.6–18 reads a second of a 30/s key and failed 40–96 % of its reads: at
//! the first 429 (a second into the reads) the store knew nothing yet of
//! what the others sent (an unknown plan's member asks once per hold), and
//! nothing raised the plan afterwards. So the fleet counts itself, by news
//! (`coord::news`, `Measured`: no store round trip; tabs do it over their
//! channel as processes do over Redis):
//!
//! ```text
//!   plan unknown, leasing from a store that answers:
//!     its own 429 that tells of the plan (`on_limited_sent`: enough sent, no residue) ──┐
//!     a member's measure heard ─────────────────────────────────────────────────────────┴─►
//!       Gathering { until: now + wait, sum: own measure }: its measure told once
//!       (`take_measure`), the group cooling until `until` at least
//!   Gathering ── a measure heard ──► sum += it
//!   Gathering ── a 429 of its own ──► the same episode: nothing more
//!   Gathering ── a plan heard ──► that plan (`hear_plan`); the gathering ends
//!   Gathering ── `until` passed (the next check) ──► learned: ceiling = sum, the rate at
//!       LEARNED_START of it, kept per second, the key's window residue; told to nobody
//!       (each member summed the same measures; a plan told would pull all of them down
//!       to one that missed a measure)
//!   a member whose lease was down at its first 429 learns its own part alone (told to
//!   nobody: it is not the fleet's), and joins the fleet's count when it hears one
//!   a member joins the fleet (its store's first answer), its plan to learn
//!       ──► `planAsked` news; a member with the fleet's plan tells it (`plan` news, once
//!       per REPLY_QUIET), and the newcomer takes it before it sends unpaced
//!   a member with the fleet's plan hears a measure (one started later, counting alone)
//!       ──► tells its plan the same way
//! ```
//! Only the first learning is counted so. A learned plan limited again comes
//! down by AIMD as one relayer's does (`aimd.rs`), its decrease told as the
//! fleet's plan: a provider that keeps a token bucket lets its burst through
//! before it first refuses, so the first count can be up to twice the key's
//! rate (a simulated 20-process fleet learned 2,400 CU/s of a key that
//! sustains about 1,400); counting again at each limit came down a tenth at
//! a time (16–44 429s in 30 s), halving in one step (16–23). A cooldown heard
//! starts nothing: only a member whose own 429 tells of the plan starts a
//! count (a 429 to a fleet's first requests taught one member 0.5 reads a second).
//!
//! A member's measure is what the provider accepted from it over the last
//! second, however little: the sum is the evidence, not each part (four
//! workers on a 30/s key each got 7 or 8 through; taken as too few to
//! tell, what each sent counted the refused too, and the fleet learned
//! 42). The wait covers news both ways through the store: [`GATHER_BASE`]
//! and three of the store's round trips, at most [`GATHER_MAX`]. With no
//! store at all (tabs sharing only news), a member learns its own part and
//! tells it as the plan, as before: members spending alone each take one
//! part.

use std::time::Duration;

use super::QuotaGroup;
use crate::policy::lease::Lease;
use crate::time::Instant;

/// The least a fleet gathers its members' measures for (a busy event loop
/// hears news late).
pub const GATHER_BASE: Duration = Duration::from_millis(250);

/// The most a fleet gathers for, whatever the store's round trip.
pub const GATHER_MAX: Duration = Duration::from_secs(3);

/// How often, at most, a member tells its plan to members that join or count alone.
pub const REPLY_QUIET: Duration = Duration::from_secs(1);

/// A fleet counting what its members got through (see the module doc).
#[derive(Clone, Copy, Debug)]
pub(super) struct Gathering {
    /// When the sum is taken as the plan.
    until: Instant,
    /// The measures heard, this member's own included.
    sum: f64,
}

impl QuotaGroup {
    /// Starts gathering (idempotent) at its own 429 while its plan is
    /// unknown: its own measure counted and queued to tell, the group
    /// cooling until the sum is taken. False when the group does not
    /// gather: a configured or learned plan, or no lease up (the store down:
    /// its 429 is this member's alone).
    pub(super) fn begin_gather(&mut self, now: Instant) -> bool {
        let leasing = self.lease.as_mut().is_some_and(|l| l.up(now));
        self.gather.is_some() || (leasing && !self.allowed.is_finite() && self.join_gather(now))
    }

    /// Starts gathering as a member of a fleet whose store answered once,
    /// its plan unknown or learned alone (see `begin_gather`).
    fn join_gather(&mut self, now: Instant) -> bool {
        // (A configured plan is finite from the start, and only a plan to learn is learned alone.)
        let to_learn = !self.allowed.is_finite() || self.learned_alone;
        if !to_learn || !self.lease.as_ref().is_some_and(Lease::has_answered) {
            return false;
        }
        let round_trip = self.lease.as_ref().map_or(Duration::ZERO, Lease::round_trip);
        let until = now + (GATHER_BASE + round_trip * 3).min(GATHER_MAX);
        let own = self.accepted_in_last_second(now).1;
        self.gather = Some(Gathering { until, sum: own });
        self.to_tell = Some(own);
        self.episode_began = Some(now);
        self.cooldown_until = self.cooldown_until.max(until);
        true
    }

    /// Another member's measure heard: counted while gathering, else it
    /// starts a gathering while the plan is still to learn (a measure heard
    /// late, after the count, starts none: the plan is learned). A member
    /// that learned its own part alone (its lease down for an ask the store
    /// lost) joins the fleet's count of that same episode. True when it was
    /// counted.
    pub fn hear_measure(&mut self, now: Instant, rate: f64) -> bool {
        if !(rate.is_finite() && rate >= 0.0) {
            return false;
        }
        if self.gather.is_none() && !self.join_gather(now) {
            self.reply_with_plan(now);
            return false;
        }
        if let Some(gathering) = self.gather.as_mut() {
            gathering.sum += rate;
        }
        true
    }

    /// A member joined the fleet with its plan to learn (`PlanAsked`): told
    /// the plan if this one learned it (`reply_with_plan`). True when it will.
    pub fn hear_plan_asked(&mut self, now: Instant) -> bool {
        self.reply_with_plan(now);
        self.decreased.is_some()
    }

    /// Whether this group, its plan to learn, just joined its fleet and asks
    /// the others for the plan (once: the host sends `News::PlanAsked`).
    pub fn take_plan_ask(&mut self) -> bool {
        std::mem::take(&mut self.plan_asked)
    }

    /// A member that learned the fleet's plan, asked for it (a member that
    /// joined) or hearing a measure (one that started later counts alone),
    /// tells the plan, at most once per [`REPLY_QUIET`]: the newcomer takes
    /// it (`hear_plan` ends a count), not its own part from a 429 that the
    /// others meet too and halve at (a new user's fleet of three, joined by a
    /// fourth that read unpaced, came down from 27 to 13.5 a second).
    fn reply_with_plan(&mut self, now: Instant) {
        let leasing = self.lease.as_ref().is_some_and(Lease::has_answered);
        let quiet = self.replied.is_none_or(|t| now.saturating_since(t) >= REPLY_QUIET);
        if self.learns_its_plan() && self.allowed.is_finite() && !self.learned_alone && leasing && quiet {
            self.replied = Some(now);
            self.decreased = Some(self.allowed);
        }
    }

    /// The measure to tell the fleet, once (the host sends `News::Measured`).
    pub fn take_measure(&mut self) -> Option<f64> {
        self.to_tell.take()
    }

    /// The gathering's time is up: the fleet's sum becomes the plan (see
    /// the module doc). Called before every check and charge.
    pub(super) fn end_gather(&mut self, now: Instant) {
        let Some(gathering) = self.gather.filter(|g| now >= g.until) else { return };
        self.gather = None;
        if self.allowed.is_finite() && !self.learned_alone {
            return; // a plan was heard meanwhile
        }
        self.learned_alone = false;
        self.take_ceiling(now, gathering.sum);
        self.limit_rate = self.ceiling;
        let floor = self.ceiling * self.config.min_fraction;
        self.allowed = (self.ceiling * super::ceiling::LEARNED_START).max(floor);
        self.bucket.set_rate(now, self.own_rate());
        self.last_increase = now;
        // The fleet's plan now: what a return from spending alone takes back (`lease_granted`).
        if self.leased_rate.is_some() {
            self.leased_rate = Some(self.allowed);
        }
    }

    /// Whether the group is gathering its fleet's measures now.
    pub fn gathering(&self) -> bool {
        self.gather.is_some()
    }

    /// A plan was heard: it stands, and no sum is taken.
    pub(super) fn drop_gather(&mut self) {
        self.gather = None;
        self.learned_alone = false;
    }
}

#[cfg(test)]
#[path = "gather_tests.rs"]
mod tests;
