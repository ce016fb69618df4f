//! A quota group's answer to limit signals and successes: the cooldown
//! and the AIMD rate (the diagram in `quota.rs`).

use std::time::Duration;

use super::{QuotaGroup, STRIKE_MEMORY};
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
        } else if fresh && self.step_back(now) {
            self.limit_rate = self.allowed;
            self.episode_began = Some(now);
            self.tell_probe_ended();
        } else if fresh && self.begin_gather(now) {
            // A fleet on a store counts what all its members got through first (`gather.rs`).
        } else if fresh {
            // How far the rate comes down: the configured decrease, unless a plan was just measured.
            let mut decrease = self.config.decrease;
            let first = !self.allowed.is_finite();
            if first {
                // Plan unknown: what we were sending when the provider objected is the ceiling,
                // and the burst shrinks to about a second of it. What the provider accepted in
                // the last second, when that holds enough charges to tell a rate
                // (`accepted_last_second`), else what was sent in the current run (`run_rate`):
                // demand that rose from 8 to 40 a second learned 11 on a 30 CU/s key from a
                // ten-second mean; a client at one read a second would take a chance second of
                // two for its plan. (A fleet leasing from a store sums its members': `gather.rs`;
                // a member whose lease is down learns its own part, and joins the fleet's count
                // when it hears one.)
                let accepted = self.accepted_last_second(now);
                let sent = accepted.unwrap_or_else(|| self.run_rate(now));
                // What the provider accepted is a measure of the plan, not a guess at it: the rate
                // starts just below it (`LEARNED_START`), not halved. Halved, a new user's relayer
                // at 40 reads a second on a 30/s key served 16 a second and took two minutes to
                // grow back. What was sent (some of it refused) is no such measure.
                if accepted.is_some() {
                    decrease = super::ceiling::LEARNED_START;
                }
                self.take_ceiling(now, sent);
                self.learned_alone = self.lease.is_some();
            } else {
                self.settle_learned_ceiling(self.allowed);
            }
            let floor = self.ceiling * self.config.min_fraction;
            self.limit_rate = self.allowed;
            self.allowed = (self.allowed * decrease).max(floor);
            self.bucket.set_rate(now, self.own_rate());
            self.episode_began = Some(now);
            // A plan first learned by a member of a fleet on a store is its own part, not the
            // fleet's (its lease was down: `gather.rs` counts the fleet's): not told.
            if !(first && self.lease.is_some()) {
                self.decreased = Some(self.allowed);
            }
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
            self.tell_raise(); // the fleet grows as one (`fleet_raise.rs`)
        }
    }
}
