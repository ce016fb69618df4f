//! A quota group's answer to limit signals and successes: the cooldown
//! and the AIMD rate (the diagram in `quota.rs`).

use std::time::Duration;

use super::{QuotaGroup, STRIKE_MEMORY};
use crate::policy::lease::Lease;
use crate::time::Instant;

impl QuotaGroup {
    /// A limit signal for an attempt sent just now (see `on_limited_sent`).
    pub fn on_limited(
        &mut self,
        now: Instant,
        retry_after: Option<Duration>,
        long_horizon: bool,
        unit_random: f64,
    ) -> Instant {
        self.on_limited_sent(now, now, retry_after, long_horizon, unit_random)
    }

    /// A limit signal at `now` for an attempt sent at `sent`: cools the
    /// whole group and lowers its rate, once per episode. Returns when the
    /// group may be used again.
    ///
    /// Why the send time: 429s for attempts that were already in flight
    /// when the rate was lowered say nothing about the lowered rate (TCP
    /// counts one loss event per window the same way). Without it, a slow
    /// node's late answers halved the rate again and again: one over-quota
    /// second drove a learned plan to its floor, from which it climbs back
    /// 5 % per stable window (found by the rotating-fault soak).
    pub fn on_limited_sent(
        &mut self,
        now: Instant,
        sent: Instant,
        retry_after: Option<Duration>,
        long_horizon: bool,
        unit_random: f64,
    ) -> Instant {
        self.limited += 1;
        // One step of backoff per wave: the requests a released queue sent
        // together before the first of their 429s came back are one signal.
        // Counting each doubled the cooldown per 429: sixteen requests out
        // at once after a 1 s `Retry-After` held the key for 52 s.
        if self.last_counted_limit.is_none_or(|heard| sent >= heard) {
            self.consecutive_limits = self.consecutive_limits.saturating_add(1);
            self.last_counted_limit = Some(now);
        }
        let step = self.config.cooldown_base.saturating_mul(1u32 << self.consecutive_limits.saturating_sub(1).min(16));
        let ceiling = step.min(self.config.cooldown_max);
        // Equal jitter: never shorter than half, so a group is not hit again at once.
        let own = ceiling / 2 + (ceiling / 2).mul_f64(crate::policy::bound(unit_random, 0.0, 1.0));
        let cooldown = if long_horizon {
            self.config.long_ejection
        } else if let Some(after) = retry_after {
            // The server's wait is a floor. Limited again with no success in
            // between (a key other clients keep exhausting), the group backs
            // off further, or every client re-probes it each `Retry-After`.
            let own = if self.consecutive_limits > 1 { own } else { Duration::ZERO };
            after.max(own).min(self.config.cooldown_max)
        } else {
            own
        };
        self.cooldown_until = self.cooldown_until.max(now + cooldown);
        // Grown past its share alone (its store down): the others are still there (`quota/alone.rs`).
        if self.alone_ramp_limited(now, sent) {
            self.last_limit = Some(now);
            return self.cooldown_until;
        }
        // One decrease per burst of signals: several in-flight 429s are one event.
        // A plan unknown and too little sent to tell it (a 429 to the first requests): what was sent
        // says nothing of the plan, so the group only cools down. Learned from one early 429, a new
        // user's relayer took 0.5 reads a second as its plan and crawled for minutes.
        let telling = self.allowed.is_finite() || self.fleet_rate() > 0.0 || self.rate_evidence(now);
        let fresh = telling
            && self.last_limit.is_none_or(|t| now.saturating_since(t) >= Duration::from_millis(100))
            && self.episode_began.is_none_or(|t| sent >= t)
            && sent >= self.residue_until; // the residue of spending alone lowers nothing (`lease_granted`)
                                           // A configured plan at its full rate takes one episode as a warning: a provider's window
                                           // that does not line up with ours, or another client's burst on the key. Halving on it cost a
                                           // new user's fleet on a 20 CU/s key half its rate for two minutes after one early 429.
                                           // Repeated (another episode within `STRIKE_MEMORY`), the rate comes down as below.
        let warning = fresh
            && !self.learns_its_plan()
            && self.allowed >= self.ceiling
            && self.strike.is_none_or(|t| now.saturating_since(t) >= STRIKE_MEMORY);
        if warning {
            self.strike = Some(now);
            self.episode_began = Some(now);
        } else if fresh && self.end_probe(now) {
            self.limit_rate = self.allowed;
            self.episode_began = Some(now);
        } else if fresh {
            // How far the rate comes down: the configured decrease, unless a plan was just measured.
            let mut decrease = self.config.decrease;
            if !self.allowed.is_finite() {
                // Plan unknown: what we were sending when the provider objected
                // (the whole fleet, when a store says) is the ceiling, and the
                // burst shrinks to about a second of it. What the provider accepted
                // in the last second, when that holds enough charges to tell a rate
                // (`accepted_last_second`), else the ten-second mean of what was
                // sent: demand that rose from 8 to 40 a second learned 11 on a
                // 30 CU/s key from the mean alone; a client at one read a second
                // would take a chance second of two for its plan.
                let accepted = self.accepted_last_second(now);
                let sent = accepted.unwrap_or_else(|| self.run_rate(now));
                // What the provider accepted is a measure of the plan, not a guess at it: the rate
                // starts just below it (`LEARNED_START`), not halved. Halved, a new user's relayer
                // at 40 reads a second on a 30/s key served 16 a second and took two minutes to
                // grow back. A mean of what was sent (some of it refused) is no such measure.
                if accepted.is_some() {
                    decrease = super::ceiling::LEARNED_START;
                }
                // The fleet's rate only with others in it (the store says what they need):
                // alone, it is this realm's grants, held ones included (a relayer on Redis
                // starting at 40 reads a second learned 38 on a 30/s key from it). With others,
                // also what this realm sent in the last second plus what they need (each its own
                // rate, nothing waits before a plan is known): the store's rate, decayed over ten
                // seconds from the bucket's birth, is a fraction of the fleet's when the workers
                // were made seconds before they read (a new user's two workers learned 9 and 18 of
                // a 30/s key). A fleet's measure, told to the others, who hear it as one (`hear_plan`).
                let others = self.lease.as_ref().and_then(Lease::others_demand).filter(|&d| d > 0.0);
                let fleet = others
                    .map_or(0.0, |d| self.fleet_rate().max(self.sent_last_second(now) + d) * self.accepted_part(now));
                if others.is_some() {
                    decrease = super::ceiling::LEARNED_START;
                }
                self.ceiling = sent.max(fleet).max(1.0);
                self.allowed = self.ceiling;
                self.burst = self.ceiling.max(10.0);
                self.keep_learned_per_second(now);
                self.bucket.set_burst(now, self.burst);
                // The provider's window still holds what was sent unpaced: its 429s are one episode.
                self.residue_until = self.residue_until.max(now + super::ceiling::WINDOW_RESIDUE);
            } else {
                self.settle_learned_ceiling();
            }
            let floor = self.ceiling * self.config.min_fraction;
            self.limit_rate = self.allowed;
            self.allowed = (self.allowed * decrease).max(floor);
            self.bucket.set_rate(now, self.own_rate());
            self.episode_began = Some(now);
            self.decreased = Some(self.allowed);
        }
        self.last_limit = Some(now);
        self.last_increase = now;
        self.stable = self.config.stable_window.mul_f64(0.5 + crate::policy::bound(unit_random, 0.0, 1.0));
        self.cooldown_until
    }

    /// A successful attempt: grows the rate back after a stable window.
    /// `unit_random` re-jitters the next window.
    pub fn on_success(&mut self, now: Instant, unit_random: f64) {
        self.consecutive_limits = 0;
        self.last_counted_limit = None;
        let plan = self.ceiling;
        if !plan.is_finite() || self.allowed >= plan {
            self.probe_ceiling(now);
            return;
        }
        let next = (self.allowed + plan * self.config.increase).min(plan);
        // Below the rate that was limited last time, grow every stable
        // window; past it, probe only after three calm windows.
        let wait = if next < 0.9 * self.limit_rate { 1 } else { 3 };
        if now.saturating_since(self.last_increase) >= self.stable * wait {
            self.stable = self.config.stable_window.mul_f64(0.5 + crate::policy::bound(unit_random, 0.0, 1.0));
            self.allowed = next;
            self.bucket.set_rate(now, self.own_rate());
            self.last_increase = now;
        }
    }
}
