//! A fleet member whose store failed spends its last share of the fleet,
//! not the whole plan, for [`ALONE_HOLD`], then grows back to the plan
//! over [`ALONE_RAMP`].
//!
//! While the lease is up, a member's own bucket is not asked: the fleet's
//! bucket is the limit. When the store fails (down, killed, unreachable
//! from this member), every member falls back to its own bucket at once,
//! and at the plan's full rate N members would send N plans: a new user's
//! four processes met 26–33 429s in an 8 s Redis outage, and the halvings
//! those 429s caused. So a member that falls from its lease spends its
//! share of what the fleet took lately (its own rate over the fleet's, as
//! the store last said; never below [`ALONE_FLOOR`]), and its own bucket
//! starts empty (what it held was the fleet's).
//!
//! ```text
//!   Leased ── the lease falls (the store failed) ─► Alone { since, share }
//!   Alone: the own bucket's rate = allowed × share for ALONE_HOLD (a store
//!          restart), then + (1 − share) × (t − ALONE_HOLD) / ALONE_RAMP, up to allowed
//!   Alone ── a lease is up again ─► Leased (the own bucket back at the allowed rate)
//! ```
//! The hold covers a store that restarts: members with a backlog of
//! queued requests would otherwise spend what the ramp adds at once (a
//! simulated fleet put 120–160 CU in seconds of a 100 CU/s plan with the
//! ramp starting at the fall). The ramp is for a member that is alone for
//! good (the others died with the store, or it is the one cut off): after
//! [`ALONE_HOLD`] + [`ALONE_RAMP`] it runs its local policies unchanged,
//! and its own 429s (AIMD) govern. Pure: the time is an argument.

use std::time::Duration;

use super::shares::{share_beside, share_by_need};
use super::QuotaGroup;
use crate::policy::lease::Lease;
use crate::time::Instant;

/// How long a member that lost its store keeps to its share of the fleet.
pub const ALONE_HOLD: Duration = Duration::from_secs(10);

/// How long it then takes to grow back to the whole plan.
pub const ALONE_RAMP: Duration = Duration::from_secs(30);

/// The least share a member falls back to (a quiet member's own rate says
/// little of what it will need). Not the store's last share of the burst:
/// that moves with how many members held at that instant (half the fleet
/// with short holds), and four members each took half the plan.
const ALONE_FLOOR: f64 = 0.05;

/// How fast a share may grow while the store answers slowly (of the plan, per second).
const SHARE_GROWTH: f64 = 0.02;

/// How fast a share by need may grow (of the plan, per second): beside a
/// store 300–600 ms away (eight seeds at 75 % of the plan), 2 % left p90
/// waits of 1.0–1.9 s after the first ten seconds; 5 %, 0.7–1.1 s with the
/// busiest second at most 580 CU of 600; 10 %, 0.65–0.9 s but 600.
const NEED_GROWTH: f64 = 0.05;

/// The least change of the own bucket's rate worth applying as the ramp climbs.
const RAMP_STEP: f64 = 0.02;

/// A member spending alone since its lease fell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Alone {
    since: Instant,
    share: f64,
    /// The factor last applied to the own bucket.
    applied: f64,
}

impl Alone {
    /// The share of the plan this member may spend at `now`.
    fn factor(&self, now: Instant) -> f64 {
        let grown = now.saturating_since(self.since + ALONE_HOLD).as_secs_f64() / ALONE_RAMP.as_secs_f64();
        (self.share + (1.0 - self.share) * grown).min(1.0)
    }
}

/// Over how long a member's line of waiting charges counts in its demand
/// (`QuotaGroup::demand`): a line is to drain in a couple of seconds.
const LINE_DRAIN: Duration = Duration::from_secs(2);

impl QuotaGroup {
    /// Follows the lease's state at `now` (`leased`: it pays): falling from
    /// it starts spending alone at the member's share; back on it ends that.
    pub(super) fn follow_lease(&mut self, now: Instant, leased: bool) {
        if leased {
            self.was_leased = true;
            if self.alone.take().is_some() {
                self.apply_factor(now, 1.0);
            }
            return;
        }
        let slow = self.lease.as_ref().is_some_and(Lease::slow);
        // Fallen from a lease, or never on one while the store is too slow to lease from (a plan
        // learned from a 429 meanwhile, spent alone by every member at once, was a 429 storm).
        let fell = std::mem::take(&mut self.was_leased) || (slow && self.alone.is_none());
        // Its share now, with the members the store counts while it still answers: by need when
        // every member said its own, else by what each spent.
        let members = self.lease.as_ref().filter(|_| slow).and_then(Lease::members);
        let others_need = self.lease.as_ref().filter(|_| slow).and_then(Lease::others_demand);
        let need = others_need.zip(members).filter(|_| self.allowed.is_finite());
        let by_need = need.is_some();
        let share = (fell || slow).then(|| {
            let own = self.observed_rate(now);
            match need {
                Some((others, n)) => share_by_need(self.demand(own), others, self.allowed, n, ALONE_FLOOR),
                None => share_beside(own, self.fleet_rate(), self.allowed, members, ALONE_FLOOR),
            }
        });
        if let Some(share) = share.filter(|_| fell && self.allowed.is_finite()) {
            // By need, at first no more than by what it spent: the members still leasing are paid by
            // the fleet's bucket for a round trip yet, which counts nothing this member spends
            // alone until its report arrives (a simulated fleet starting at 75 % beside a slow
            // store met 429s as its members fell one by one to the whole of their need shares);
            // the share then grows by NEED_GROWTH.
            let share = if by_need {
                share.min(share_beside(self.observed_rate(now), self.fleet_rate(), self.allowed, members, ALONE_FLOOR))
            } else {
                share
            };
            self.alone = Some(Alone { since: now, share, applied: f64::NAN });
            self.bucket.drain(now);
            // What the lease paid in the last second still counts in the provider's second.
            self.bucket.seed(&self.charged_last_second(now));
        }
        let Some(alone) = self.alone.as_mut() else { return };
        if let Some(share) = share.filter(|_| slow) {
            // The store still answers, only too slowly to spend from: the fleet is there, so this
            // member keeps to its share (the ramp is for a member alone for good), as the store's
            // fleet rate (every member reports what it spends) says it now: what it spent plus an
            // equal part of the spare (`share_beside`), so a busier member's share grows while
            // the fleet leaves some unused.
            // Lower at once; higher no faster than SHARE_GROWTH a second: the fleet's rate comes
            // a round trip late, and members reading their own rates against it took 720 CU of a
            // 600 CU/s plan in one second at 5 % (a simulated fleet, its store 450 ms away).
            // By need, the shares add up to the handed part from one sum, and may follow it faster.
            let growth = if by_need { NEED_GROWTH } else { SHARE_GROWTH };
            let grown = alone.share + growth * now.saturating_since(alone.since).as_secs_f64();
            alone.since = now;
            alone.share = share.min(grown);
        }
        let factor = alone.factor(now);
        if factor >= 1.0 {
            self.alone = None;
            self.apply_factor(now, 1.0);
        } else if alone.applied.is_nan() || (factor - alone.applied).abs() >= RAMP_STEP {
            alone.applied = factor;
            self.apply_factor(now, factor);
        }
    }

    /// The own bucket at `factor` of the allowed rate and burst (1: the
    /// whole of both; below, the share spent alone).
    fn apply_factor(&mut self, now: Instant, factor: f64) {
        self.bucket.set_rate(now, self.allowed * factor);
        self.bucket.set_burst(now, if factor >= 1.0 { self.burst } else { (self.burst * factor).max(1.0) });
    }

    /// What this realm would spend now (CU/s), told to the store with each
    /// ask (`LeaseAsk::demand`): its rate lately plus its line of waiting
    /// charges (each at its recent mean charge) drained over [`LINE_DRAIN`].
    /// `rate`: its rate lately (`observed_rate`).
    pub(super) fn demand(&self, rate: f64) -> f64 {
        let each = match self.recent.len() {
            0 => self.lease.as_ref().map_or(1.0, Lease::largest),
            n => self.recent.iter().map(|(_, c)| c).sum::<f64>() / n as f64,
        };
        rate + f64::from(self.line.waiting()) * each / LINE_DRAIN.as_secs_f64()
    }

    /// A 429 for an attempt sent while growing back alone past its share
    /// (after [`ALONE_HOLD`]): the other members still spend (the store is
    /// down, not the fleet), so the member goes back to its share for
    /// another hold, and the plan is not lowered (`true`: the caller skips
    /// its decrease). Counted as the plan's news, a new user's four workers
    /// at 90 % of a key, Redis down for 50 s, met 18 429s as their ramps
    /// passed the key, each halved its own plan, unevenly, and 9 reads
    /// failed. A 429 within the hold is the plan's news as before.
    pub(super) fn alone_ramp_limited(&mut self, now: Instant, sent: Instant) -> bool {
        let Some(alone) = self.alone.as_mut() else { return false };
        if sent < alone.since + ALONE_HOLD {
            return false;
        }
        alone.since = now;
        alone.applied = alone.share;
        let share = alone.share;
        self.apply_factor(now, share);
        self.bucket.drain(now); // the ramp just overshot: no burst on top
                                // What the ramp sent is still in the provider's window for a moment: its 429s lower nothing.
        self.residue_until = self.residue_until.max(now + super::fleet::ALONE_RESIDUE);
        true
    }

    /// The rate the own bucket runs at now: the allowed rate, or while
    /// spending alone, the share of it last applied.
    pub(super) fn own_rate(&self) -> f64 {
        self.alone.map_or(self.allowed, |alone| {
            if alone.applied.is_nan() {
                self.allowed
            } else {
                self.allowed * alone.applied
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::policy::lease::LeaseGrant;
    use crate::policy::quota::QuotaConfig;
    use crate::time::at;

    /// Spends `cu_per_s` for 20 s on a lease the store grants in full,
    /// telling a fleet rate four times that, and a share of a quarter of
    /// the burst; returns the group and the instant (ms) it stopped.
    fn leased_member(cu_per_s: u64) -> (QuotaGroup, u64) {
        let plan = QuotaConfig { cu_per_second: 100.0, burst: 100.0, ..QuotaConfig::default() };
        let mut g = QuotaGroup::new(plan, at(0));
        g.join_fleet(at(0));
        let fleet = 4.0 * cu_per_s as f64;
        let grant = |want: f64| LeaseGrant {
            granted: want,
            short_for: Duration::ZERO,
            fleet_rate: fleet,
            share: 25.0,
            others_demand: None,
            others_line: None,
            windowed: false,
        };
        for ms in (0..20_000).step_by((1000 / cu_per_s) as usize) {
            let _ = g.charge(at(ms), 1.0);
            if let Some(ask) = g.take_lease_ask() {
                g.lease_granted(at(ms), ask.want, grant(ask.want));
            }
        }
        assert_eq!(g.fleet_state(at(20_000)), Some(true));
        (g, 20_000)
    }

    /// The store refuses the next ask (down); returns when (ms).
    fn lose_store(g: &mut QuotaGroup, from: u64) -> u64 {
        let _ = g.take_lease_ask();
        for ms in from.. {
            let _ = g.check(at(ms), 1.0);
            if g.take_lease_ask().is_some() {
                g.lease_failed(at(ms));
                assert_eq!(g.fleet_state(at(ms)), Some(false));
                return ms;
            }
        }
        unreachable!()
    }

    /// How many 1-CU charges the group pays in the second from `from` ms, trying one every ms.
    fn paid_in_a_second(g: &mut QuotaGroup, from: u64) -> usize {
        (from..from + 1000).filter(|&ms| g.charge(at(ms), 1.0).is_ok()).count()
    }

    #[test]
    fn a_member_that_loses_its_store_spends_its_share_then_grows_back_to_the_plan() {
        let (mut g, t) = leased_member(20);
        let t = lose_store(&mut g, t);
        // Trying a charge every ms from the fall on (a backlog of queued requests).
        let per_second: Vec<usize> = (0..45).map(|s| paid_in_a_second(&mut g, t + s * 1000)).collect();
        // Its share: 20 of the fleet's 80 CU/s, as it measured its own (21-22 a second).
        assert!((16..=26).contains(&per_second[0]), "about a quarter of the 100 CU/s plan, no burst: {per_second:?}");
        assert!(
            per_second[1..10].iter().all(|&n| (19..=26).contains(&n)),
            "held through a store restart: {per_second:?}"
        );
        assert!((50..=70).contains(&per_second[25]), "half way up the ramp: {per_second:?}");
        assert!(per_second[41] >= 99, "alone for good: its local policies, the whole plan: {per_second:?}");
    }

    #[test]
    fn a_429_met_growing_back_alone_returns_to_the_share_and_lowers_no_plan() {
        let (mut g, t) = leased_member(20);
        let t = lose_store(&mut g, t);
        // A backlog: a charge tried every ms, up to half way up the ramp.
        let per_second: Vec<usize> = (0..25).map(|s| paid_in_a_second(&mut g, t + s * 1000)).collect();
        let up = t + 25_000;
        assert!(per_second[24] >= 45, "half way up: {per_second:?}");
        g.on_limited(at(up), Some(Duration::from_secs(1)), false, 0.5);
        g.on_limited(at(up + 1_000), Some(Duration::from_secs(1)), false, 0.5); // the ramp's residue
        assert_eq!(g.stats().allowed_rate, 100.0, "the plan stays");
        let after: Vec<usize> = (1..12).map(|s| paid_in_a_second(&mut g, up + s * 1000)).collect();
        // (The second after its cooldown also pays what refilled at its share meanwhile.)
        assert!(
            after[1] <= 35 && after[2..9].iter().all(|&n| n <= 26),
            "back to its share for another hold: {after:?}"
        );
        let again: Vec<usize> = (12..30).map(|s| paid_in_a_second(&mut g, up + s * 1000)).collect();
        assert!(again[17] >= 45, "then up the ramp again: {again:?}");
    }

    #[test]
    fn back_on_the_lease_the_own_bucket_is_the_plans_again() {
        let (mut g, t) = leased_member(20);
        let t = lose_store(&mut g, t);
        assert!(paid_in_a_second(&mut g, t) <= 26);
        let share = g.own_rate() / 100.0;
        assert!((0.2..=0.26).contains(&share), "about a quarter: 20 of the fleet's 80 CU/s: {share}");
        g.lease_store_back(at(t + 2_000));
        let ask = g.lease_ask_now(at(t + 2_000)).expect("asks again");
        let grant = LeaseGrant {
            granted: ask.want,
            short_for: Duration::ZERO,
            fleet_rate: 80.0,
            share: 25.0,
            others_demand: None,
            others_line: None,
            windowed: false,
        };
        g.lease_granted(at(t + 2_001), ask.want, grant);
        assert_eq!(g.charge(at(t + 2_002), 1.0), Ok(()));
        assert_eq!(g.own_rate(), 100.0, "not alone any more");
        // A rate lowered by a 429 while alone is kept as a share of it.
        let (mut g, t) = leased_member(20);
        let t = lose_store(&mut g, t);
        paid_in_a_second(&mut g, t);
        g.on_limited(at(t + 1_000), None, false, 0.5);
        g.on_limited(at(t + 2_000), None, false, 0.5);
        let kept = g.own_rate() / g.stats().allowed_rate;
        assert!((0.2..=0.26).contains(&kept), "the same share of the lowered rate: {kept}");
    }

    #[test]
    fn a_members_need_is_its_rate_and_its_line_drained_over_two_seconds() {
        let mut group = QuotaGroup::new(QuotaConfig { cu_per_second: 600.0, ..QuotaConfig::default() }, at(0));
        for ms in [0, 100, 200] {
            group.charge(at(ms), 20.0).unwrap();
        }
        group.join_fleet(at(200));
        let rate = group.observed_rate(at(200));
        assert_eq!(group.demand(rate), 60.0, "60 CU in its first second");
        (0..10).for_each(|place| group.join_line(place, 20.0));
        assert_eq!(group.demand(rate), 60.0 + 10.0 * 20.0 / 2.0, "ten 20 CU charges waiting");
        let ask = group.lease_ask_now(at(200)).expect("an ask");
        assert_eq!(ask.demand, 160.0, "told with each ask");
    }
}
