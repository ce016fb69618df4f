//! The rate a fleet member's line drains at (`quota/fleet.rs`): what a
//! line's estimate counts on (`Router::plan_backlog`).

use super::QuotaGroup;
use crate::policy::lease::Lease;
use crate::time::Instant;

impl QuotaGroup {
    /// The rate this realm's waiting charges are paid at now (CU/s): what
    /// a line of requests queued for the plan drains at (`Router::plan_backlog`).
    /// Alone, the own bucket's rate. On a lease that is up, the realm's
    /// part of the fleet's rate: what it took lately (its last 10 s) plus
    /// what the fleet leaves unused (none when the store's last answer was
    /// short: its 10-second fleet rate lags a fleet that just got busy by
    /// seconds). A realm that took nothing lately, or whose lease is young
    /// (`Lease::young`), is counted at least at the store's share of the burst (the burst over the
    /// members holding: too few with short holds, so a generous part; the
    /// store's fairness queue serves a member that just got busy first).
    /// That share is no floor otherwise: six saturated members each read
    /// half the fleet's rate from it, three times their part. Counted at the
    /// whole plan, a fleet member's line looked six times shorter than it
    /// was on six processes: requests it should have turned away at once
    /// waited 29.5 s and failed (a new user's fleet). And at least its part
    /// of what the fleet took, of the fleet's whole rate: after a total
    /// outage every member took little, and what it took is no measure.
    pub fn serving_rate(&mut self, now: Instant) -> f64 {
        let leased = self.allowed.is_finite() && self.lease.as_mut().is_some_and(|lease| lease.up(now));
        if !leased {
            return self.own_rate();
        }
        let (rate, burst, _) = self.fleet_terms();
        // Within a one-second window the fleet is sure of its plan less its burst (what all
        // members may hold, counted beside what they spent); what they hold less is a bonus a
        // line's estimate does not count on.
        let sure = self.fleet_sure_rate();
        let lease = self.lease.as_ref().expect("leased");
        let equal = if burst > 0.0 { (lease.share() / burst).min(1.0) } else { 1.0 };
        let spare = if lease.short() { 0.0 } else { (sure - lease.fleet_rate()).max(0.0) };
        let young = lease.young(now);
        let fleet_took = lease.fleet_rate();
        let taken = self.observed_rate(now);
        // A realm that took nothing lately, or whose lease is young (its first seconds' pay, asking
        // beside members that started with it, says little: a new user's fleet turned reads away at
        // once 1.2 s after starting, paced at 28-45 CU/s of a 600 CU/s plan).
        let unknown = if taken > 0.0 && !young { 0.0 } else { sure * equal };
        // At least its part of what the fleet took, of the fleet's whole rate: what it took says
        // little when the whole fleet took little (every member held its requests through a total
        // outage, and all come back at once, the store short). Counted at what it took, such a
        // fleet shed 16-33 % of its held reads at once as past their deadlines, where the lines
        // drained in 2 s (benches/fleet-redis.mjs). Saturated, its part of the fleet's take is
        // what it took.
        let part = if taken > 0.0 && fleet_took > 0.0 { sure * (taken / fleet_took).min(1.0) } else { 0.0 };
        (taken + spare).max(unknown).max(part).min(rate)
    }

    /// The fleet's line beside this realm's, while its lease is up and the
    /// store said the other members' lines: what they cost (CU), and the
    /// rate the fleet is sure of (CU/s: its plan less what its members may
    /// hold, as `serving_rate` counts it). At the whole plan the estimate
    /// was short of the wait (a fleet spends 86–91 % of its plan, and a
    /// learned plan may sit a step above the key): a new user's four
    /// workers at 120 % of a key had their answered reads wait 55–60 % of
    /// their deadline (p50 16.5 s of 30 s) where a shed is promised past
    /// half. The
    /// store serves the fleet's charges in one line, the oldest first
    /// (`policy::fleet_bucket`), so a new charge waits behind every
    /// member's, at the fleet's rate. Reckoned by its own line at its own
    /// part of the rate instead, each member shed on its own estimate: one
    /// that was served less lately reckoned a longer wait, shed more,
    /// kept younger reads and was served later still (a new user's four
    /// workers at 120 % of a key: in 14 of 96 seconds one failed ≥ 80 % of
    /// its reads while another failed none).
    pub fn fleet_line(&mut self, now: Instant) -> Option<(f64, f64)> {
        let leased = self.allowed.is_finite() && self.lease.as_mut().is_some_and(|lease| lease.up(now));
        let others = self.lease.as_ref().and_then(Lease::others_line).filter(|_| leased)?;
        let sure = self.fleet_sure_rate();
        (sure > 0.0).then_some((others, sure))
    }

    /// What the fleet's plan pays for certain (CU/s): within a one-second
    /// window, the plan less the burst its members may hold; else the rate.
    fn fleet_sure_rate(&self) -> f64 {
        let (rate, burst, window) = self.fleet_terms();
        if window > 0.0 {
            (window - burst).max(0.0)
        } else {
            rate
        }
    }
}
