//! A quota group in a fleet that shares a store: its spending also goes
//! through a lease on the fleet's bucket for the group (`policy::lease`),
//! and the rate it learns from a 429 is told to the fleet, so every member
//! sends under one learned plan instead of each learning its own.
//!
//! ```text
//!   check/charge ── cooldown? ── lease (when up: the held CU) ── own bucket
//!                      └─ each call may make the next ask (taken by the host)
//!   a 429 lowers the rate ──► take_decrease() ──► the fleet hears the plan
//!   hear_plan(rate) ──► lower to it (never raise), as if limited here
//! ```
//! A plan kept in every second asks the fleet's bucket for burst + rate =
//! the plan (`fleet_terms`), so the fleet keeps every second within it too.

use super::{QuotaDenied, QuotaGroup};

/// The share of a per-second plan a fleet's bucket holds as burst (the
/// rest is its rate: burst + rate = the plan, see `fleet_terms`). Larger
/// bursts cost sustained rate; smaller ones, store round trips (members
/// lease in shares of the burst). Measured on four processes at 78 % of a
/// 1,200 CU/s key: 0.2 gave no 429s, p99 32–48 ms and 0.85 store scripts
/// per request; 0.1, 3.8 scripts per request.
pub const FLEET_WINDOW_BURST: f64 = 0.2;

/// The most of a per-second plan a fleet's burst grows to for its largest
/// charge (`fleet_terms`).
pub const LARGEST_IN_BURST: f64 = 0.4;

/// How long after rejoining the store a 429 is the residue of spending
/// alone (a provider's one-second window, and a round trip), not news of
/// the plan.
pub const ALONE_RESIDUE: std::time::Duration = std::time::Duration::from_millis(1500);

/// How long after joining a fleet, at most, a 429 counts as the residue of
/// starting before the store first answered (`join_fleet`); the first
/// answer ends it [`ALONE_RESIDUE`] later. Counted, two such 429s in a new
/// user's fleet (four processes starting together, Redis 300–600 ms away
/// each way, its first answer some 4 s after the start) halved the
/// configured plan for the whole fleet, the shares beside the slow store
/// then fell below the demand, and 35 % of reads failed.
pub const COLD_RESIDUE: std::time::Duration = std::time::Duration::from_secs(10);

/// The part of a configured plan a member spends alone before its store
/// first answers (a few round trips: connect, then the lease script). It
/// cannot know how many members start with it; at the whole plan, N
/// members starting together send N plans until then (a new user's four
/// workers with a start-up burst, Redis 300–600 ms away each way: 36–44
/// 429s in the first two seconds and reads past their deadline). A
/// quarter: up to four members starting together keep the plan (a
/// simulated four at half the plan put 660 CU in a second of a 600 CU/s
/// plan), and one alone spends a quarter of its plan for that time (its
/// requests wait; none is turned away for it: the line is measured at the
/// whole plan). A store that fails instead (down at start) ends it: the
/// member's local policies govern.
pub const COLD_SHARE: f64 = 0.25;

use crate::policy::lease::{Lease, LeaseAsk, LeaseGrant, DEFAULT_PERIOD};

/// A member's start in its fleet, before the store's verdict (`join_fleet`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Cold {
    /// When the cold share ends without a verdict ([`COLD_RESIDUE`] after joining).
    until: Instant,
    /// What the own bucket held when joining emptied it: given back if the
    /// store fails before its first answer (its local policies govern, as
    /// if it had no store: a relayer beside a Redis refusing connections
    /// paced its first reads at the plan's rate, 250–540 ms for ten reads
    /// that took 50–170 ms without a store, a new user's trial).
    withheld: f64,
}

/// How a fleet member's group spends (`QuotaGroup::fleet_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FleetMode {
    /// From the fleet's bucket (the store answers in time).
    Leased,
    /// From its own bucket at its share of the fleet, reporting what it
    /// spends: the store answers, too slowly to lease from.
    Shares,
    /// Alone: the store not yet answered, down, or unreachable.
    Local,
}
use crate::time::Instant;
use std::time::Duration;

impl QuotaGroup {
    /// From now on this group leases from the fleet's bucket (idempotent).
    /// Its own bucket is emptied when it joins: until the first lease (one
    /// store round trip after the connection is up) the group spends from
    /// it, and processes starting together would otherwise each send their
    /// whole burst first (a fleet restart's first second was its burst
    /// times its processes). It refills meanwhile at `COLD_SHARE` of a
    /// configured plan, until the store's verdict (`end_cold`).
    ///
    /// Until its store first answers (a Redis across a network takes a few
    /// round trips to connect and load the lease script: seconds when it
    /// is far away), a configured plan's 429s are the residue of processes
    /// starting alone, not news of it (`COLD_RESIDUE` at most; an unknown
    /// plan learns from the fleet's rate as before).
    pub fn join_fleet(&mut self, now: Instant) {
        if self.lease.is_none() {
            self.lease = Some(Lease::new(DEFAULT_PERIOD));
            let withheld = self.bucket.drain(now);
            if !self.learns_its_plan() {
                self.residue_until = self.residue_until.max(now + COLD_RESIDUE);
                self.cold = Some(Cold { until: now + COLD_RESIDUE, withheld });
                self.bucket.set_rate(now, self.allowed * COLD_SHARE);
            }
        }
    }

    /// The store's verdict (an answer in time, found slow, a failed ask) or
    /// [`COLD_RESIDUE`] passed: the own bucket back at the allowed rate
    /// (unless spending alone at a share).
    fn end_cold(&mut self, now: Instant) -> Option<Cold> {
        let cold = self.cold.take();
        if cold.is_some() && self.alone.is_none() {
            self.bucket.set_rate(now, self.allowed);
        }
        cold
    }

    /// Whether the group leases from a fleet store, and whether the lease is up now.
    pub fn fleet_state(&mut self, now: Instant) -> Option<bool> {
        self.lease.as_mut().map(|lease| lease.up(now))
    }

    /// How the group spends in its fleet now (`None`: no store), as
    /// `stats()` tells it: a member beside a store too slow to lease from
    /// is coordinated all the same (its share, from what every member
    /// reports), and told apart from one spending alone; shown as alone, a
    /// new user's fleet on a far Redis read `'local'` for a whole run and
    /// could not tell it from one that never reached Redis.
    pub fn fleet_mode(&mut self, now: Instant) -> Option<FleetMode> {
        let lease = self.lease.as_mut()?;
        Some(if lease.up(now) {
            FleetMode::Leased
        } else if lease.slow() {
            FleetMode::Shares
        } else {
            FleetMode::Local
        })
    }

    /// The lease's verdict on `cost`: `Ok(true)` when a lease that is up
    /// pays for it (the own bucket is not asked), `Ok(false)` when the own
    /// bucket governs (no lease, not up, or an unknown plan).
    pub(super) fn lease_check(&mut self, now: Instant, cost: f64, waits: bool) -> Result<bool, QuotaDenied> {
        self.end_gather(now);
        if self.cold.is_some_and(|cold| now >= cold.until) {
            self.end_cold(now);
        }
        let limited = self.allowed.is_finite();
        let Some(lease) = self.lease.as_mut() else { return Ok(false) };
        let verdict = if waits { lease.check(now, cost, limited) } else { lease.check_quietly(now, cost, limited) };
        let verdict = verdict.map_err(QuotaDenied::Exhausted);
        let leased = limited && lease.up(now);
        self.follow_lease(now, leased);
        self.queue_ask(now);
        verdict.map(|()| leased)
    }

    pub(super) fn lease_spend(&mut self, now: Instant, cost: f64) {
        let limited = self.allowed.is_finite();
        if let Some(lease) = self.lease.as_mut() {
            lease.spend(now, cost, limited);
            self.queue_ask(now);
        }
    }

    /// What the fleet took lately (CU/s), as the store last said; zero without one.
    pub(super) fn fleet_rate(&self) -> f64 {
        self.lease.as_ref().map_or(0.0, Lease::fleet_rate)
    }

    fn queue_ask(&mut self, now: Instant) {
        if self.ask.is_some() {
            return;
        }
        let (rate, burst, window) = self.fleet_terms();
        let recent = self.observed_rate(now);
        let learning = self.learns_its_plan() && !self.allowed.is_finite();
        let Some(mut ask) = self.lease.as_mut().and_then(|lease| lease.ask(now, recent, rate, burst, window)) else {
            return;
        };
        // The need goes with each ask (and sets when its answer counts as late), worked out only
        // when an ask goes: this runs at every charge.
        // Before a plan is learned, what the group sends in its current run: a ten-second mean
        // counts the idle seconds before a worker's first read.
        let sending = if learning { self.run_rate(now) } else { recent };
        ask.demand = self.demand(sending);
        // How long its oldest read will have waited when the store reads the ask (half a round
        // trip on: counted as of the ask, a member a message away would look younger by it than
        // one beside the store, which asks with no round trip). Nothing when none waits (a read
        // that is not waiting has no place in the fleet's line: dated by its ask, the members
        // would be served by arrival).
        let one_way = self.lease.as_ref().map_or(Duration::ZERO, |l| l.round_trip() / 2);
        ask.waited = self.line.oldest_wait(now).map(|waited| waited + one_way);
        // What its line costs (the store sums the others': `fleet_line`).
        ask.line = self.line.cu();
        if let Some(lease) = self.lease.as_mut() {
            lease.demand(ask.demand);
        }
        self.ask = Some(ask);
    }

    /// The terms the fleet's bucket is asked to keep (rate, burst, window). A plan
    /// kept in every second (no configured `burst`: `policy::plan_window`)
    /// is kept so fleet-wide: a token bucket lets `burst + rate × T`
    /// through in any span T, so the fleet's bucket runs at
    /// [`FLEET_WINDOW_BURST`] of the allowed rate as burst and the rest as
    /// rate, and no second of the whole fleet carries more than the plan.
    /// Each member's own window cannot do that: it sees only its own
    /// charges, and at the plan's full rate and burst, a fleet of four near
    /// its limit met 429s every few seconds, whose halvings left it queueing
    /// for seconds below its demand (a new user's run). A configured burst
    /// is token-bucket terms already, and is asked as it is.
    ///
    /// The burst is never below the largest charge seen, up to
    /// [`LARGEST_IN_BURST`] of the plan (the rate gives way): a bucket
    /// whose burst is below one charge pays it only from a full bucket
    /// (`least`), and then burst + rate is above the plan (a new user's
    /// fleet on a 100 CU/s plan put 104 CU in a second with 26 CU calls).
    /// A rarer, larger charge (a 250 CU send on a 300 CU/s plan) is still
    /// paid from a full bucket: sized for it, the bucket's rate fell to a
    /// fifth of the plan and a page's transaction, polled for its receipt,
    /// never got through.
    ///
    /// The third term is the one-second window the store keeps for a plan
    /// kept per second (0: none): `spent in the last second + everything
    /// held ≤ window` (`policy::fleet_bucket::window`), so its bucket may
    /// refill at the whole plan. As token-bucket terms alone (burst + rate
    /// = the plan) a fleet sustained 80 % of its plan, and four workers at
    /// 75 % of a key queued for seconds where one relayer alone would not.
    /// Until the store says it keeps the window (an older version does
    /// not), the rate asked stays the plan less the burst.
    ///
    /// A plan learned from a 429 (no configured burst) is kept per second
    /// too, as its own bucket is (`ceiling.rs`): asked as token-bucket terms
    /// with a second of the learned rate as burst, a new user's relayer on a
    /// store sent 33 in a second on a learned 14 and met a 429 every
    /// minute or two.
    /// It costs store round trips: grants sized by a fifth of the rate took
    /// the 10,000-relayer simulation (an unknown plan) from 52 to 95 per
    /// 1,000 requests. A second of the rate as burst cost 58, but members
    /// then held so much that a relayer on Redis spent 60 % of its rate.
    pub(super) fn fleet_terms(&self) -> (f64, f64, f64) {
        let learned_per_second = self.config.burst <= 0.0 && self.learns_its_plan() && self.allowed.is_finite();
        if self.config.kept_per_second() || learned_per_second {
            let kept = self.lease.as_ref().is_some_and(Lease::store_keeps_window);
            let largest = self.lease.as_ref().map_or(0.0, Lease::largest);
            let burst = (self.allowed * FLEET_WINDOW_BURST).max(largest.min(self.allowed * LARGEST_IN_BURST));
            (if kept { self.allowed } else { self.allowed - burst }, burst, self.allowed)
        } else {
            (self.allowed, self.burst, 0.0)
        }
    }

    /// What this realm may spend of the plan now (CU/s), as `stats()` tells
    /// it: the [serving rate](QuotaGroup::serving_rate), but before the
    /// store's first verdict the cold share it actually spends at (the
    /// line's estimate keeps the whole plan then: the share lasts a few
    /// round trips, and reads turned away for it would fail for nothing).
    pub fn spending_rate(&mut self, now: Instant) -> f64 {
        let cold = self.cold.is_some_and(|cold| now < cold.until) && self.alone.is_none();
        let rate = self.serving_rate(now);
        let leased = self.lease.as_mut().is_some_and(|lease| lease.up(now));
        if cold && !leased {
            rate * COLD_SHARE
        } else {
            rate
        }
    }

    /// The ask for the store, if the lease made one (the host sends it and
    /// answers with [`QuotaGroup::lease_granted`] or [`QuotaGroup::lease_failed`]).
    pub fn take_lease_ask(&mut self) -> Option<LeaseAsk> {
        self.ask.take()
    }

    /// The ask due now, if any, made now rather than at the next charge
    /// (a relayer just joined, or the store just came back): a lease is
    /// then held before the first request needs it.
    pub fn lease_ask_now(&mut self, now: Instant) -> Option<LeaseAsk> {
        self.queue_ask(now);
        self.ask.take()
    }

    /// The store granted an ask for `want`. Back from spending alone (the
    /// store was down), the group takes back the rate it had while leased:
    /// the 429s it met alone came from every member spending the plan at
    /// once, which says nothing of the plan (a new user's fleet kept those
    /// halvings after Redis restarted and sent 10–45 % of its plan for 40 s).
    /// Nor do they count as a first strike, and a 429 in the first
    /// `ALONE_RESIDUE` back (the provider's window still holds what the
    /// members sent alone) lowers nothing: one such 429 after a 429 met
    /// alone halved a new user's key for the whole fleet, which took 100 s
    /// to grow back.
    pub fn lease_granted(&mut self, now: Instant, want: f64, grant: LeaseGrant) {
        // Joined with a plan to learn: the others may know it (`gather.rs`).
        let to_learn = self.learns_its_plan() && !self.allowed.is_finite();
        let Some(lease) = self.lease.as_mut() else { return };
        let rejoined = !lease.up(now);
        let first = !lease.has_answered();
        lease.granted(now, want, grant);
        self.plan_asked |= first && to_learn && lease.has_answered();
        // The cold share ends with a verdict on the store: in time (the lease is up) or slow
        // (shares by need from then on); a first answer late but not yet judged keeps it.
        let (up, slow) = (lease.up(now), lease.slow());
        if up || slow {
            self.end_cold(now);
        }
        if !up {
            return;
        }
        if rejoined && self.leased_rate.is_some() {
            self.strike = None;
            self.residue_until = now + ALONE_RESIDUE;
        } else if self.leased_rate.is_none() && !self.learns_its_plan() {
            // The first answer: what was sent before it went out uncoordinated (`join_fleet`).
            self.strike = None;
            self.residue_until = now + ALONE_RESIDUE;
        }
        // Not an unknown plan's infinity: a plan learned since stands (a store's blip just after
        // a fleet learned its plan took it back to no plan at all).
        if let Some(rate) = self.leased_rate.filter(|&rate| rejoined && rate.is_finite() && rate > self.allowed) {
            self.allowed = rate;
            self.bucket.set_rate(now, rate);
            self.last_increase = now;
        }
        self.leased_rate = Some(self.allowed);
    }

    /// The store failed an ask: the group's own bucket governs until one
    /// succeeds. Failed before its first answer (down at start), the group
    /// gets back what joining withheld from its bucket (`Cold`).
    pub fn lease_failed(&mut self, now: Instant) {
        if let Some(cold) = self.end_cold(now) {
            if self.alone.is_none() {
                self.bucket.give_back(now, cold.withheld);
            }
        }
        if let Some(lease) = self.lease.as_mut() {
            lease.failed(now);
        }
    }

    /// The fleet's store went down: the lease falls now (its own bucket
    /// governs), and a start's cold share ends as at a failed ask.
    pub fn lease_store_down(&mut self, now: Instant) {
        self.lease_failed(now);
        if let Some(lease) = self.lease.as_mut() {
            lease.store_down(now);
        }
    }

    /// The fleet's store is reachable again: ask at the next charge.
    pub fn lease_store_back(&mut self, now: Instant) {
        if let Some(lease) = self.lease.as_mut() {
            lease.store_back(now);
        }
    }

    /// The rate a limit signal lowered the group to, once, for the fleet.
    pub fn take_decrease(&mut self) -> Option<f64> {
        self.decreased.take()
    }

    /// Another member of the fleet was limited and lowered the plan to
    /// `rate`: lower to it too (a higher rate is not taken here: a raise
    /// is news of its own, `fleet_raise.rs`).
    pub fn hear_plan(&mut self, now: Instant, rate: f64) -> bool {
        if !(rate.is_finite() && rate > 0.0 && rate < self.allowed) {
            return false;
        }
        let stepped_back = self.step_back_to(now, rate);
        self.drop_gather();
        // The rate the teller was limited at: its ceiling when it learned the plan just now.
        let limited_at = if self.allowed.is_finite() {
            let limited_at = rate / self.config.decrease;
            // Its learned ceiling settles as the teller's did (a step back is no such limit).
            if !stepped_back {
                self.settle_learned_ceiling(limited_at);
            }
            limited_at
        } else {
            // An unknown plan learns the ceiling the teller learned: a plan measured starts at
            // `LEARNED_START` of it (`on_limited_sent`). Taken as halved, the hearers' ceiling
            // was twice the rate, past the key: their growth met 429s, each halved and told
            // it, and a new user's fleet of four learned 9 reads a second of a 30/s key, then 1.6.
            self.take_ceiling(now, rate / super::ceiling::LEARNED_START);
            self.ceiling
        };
        self.limit_rate = self.allowed.min(limited_at);
        self.allowed = rate.max(self.ceiling * self.config.min_fraction);
        self.bucket.set_rate(now, self.own_rate());
        self.episode_began = Some(now);
        self.last_increase = now;
        true
    }
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
