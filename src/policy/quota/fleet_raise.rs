//! A fleet's rate goes up as one: a growth step after a limit and a probe
//! step past a learned ceiling are the fleet's, told as news.
//!
//! Members of a fleet lease from one bucket, and the store keeps each
//! asker's second within the plan that asker names (`fleet_terms`). So a
//! member whose rate grew first took the key's whole second, the others'
//! asks found it spent, their reads never got through, and without
//! successes they never grew: two members halved to 11 CU/s by a 429 on a
//! 30/s key were at 21 and 14 three minutes later (the simulation in
//! `learned_fleet_sim_tests.rs`). And a fleet learns its plan by counting
//! what its members got through at the first 429 (`gather.rs`); the count
//! can come out low (another client on the key that second), and nothing
//! raised it: a new user's fleet kept 28 of a 30/s key, 25.5 % of its
//! reads failing at 120 % demand against 18–20 % on 30. One relayer
//! alone probes its ceiling (`ceiling.rs`), but a member probing alone
//! raised only its own window on the fleet's bucket, took the others' part
//! without a 429, and its ceiling ran from 58 to 3,353 CU/s.
//!
//! ```text
//!   a growth step (`aimd.rs`), or a probe step past a learned ceiling taken
//!     while its lease is up and the plan is the fleet's (not learned alone,
//!     no count under way) ──► told as `raised` (the new rate)
//!   `raised` r heard, r above its rate, no limit of its own or heard in the
//!     last WINDOW_RESIDUE (a step that crossed a limit):
//!       r within its ceiling ──► its rate to r, its next growth a window away
//!       r past it, its rate near the ceiling, r ≤ ceiling × (1 + its own
//!         next step) ──► the same probe step: the old ceiling kept as calm
//!   a limit at a ceiling stepped up to (its own 429) ──► back to the one
//!     it was stepped up from (`step_back`), told as the fleet's plan: every
//!     member that took the step goes back there too (`step_back_to`)
//! ```
//! No lease decides which member steps: every member waits its own
//! jittered window, the first to pass it steps and the others hear the
//! step and wait a window from it. Two that step at once (within one news
//! delay) step from the same rate by the same fraction, to the same rate.
//! A hearer never takes more than its own ceiling, or its own next probe
//! step past it, so a word from a member that missed a limit, or a hostile
//! one, moves it by one step at most. A member that misses a word keeps its
//! lower rate until its own next step. Members of an older version ignore
//! `raised` and grow on their own, as before.

use super::ceiling::WINDOW_RESIDUE;
use super::QuotaGroup;
use crate::policy::lease::Lease;
use crate::time::Instant;

/// How near its ceiling a member takes a heard probe step: within the
/// last growth steps (`QuotaConfig::increase`, 5 % of the ceiling each).
const NEAR_CEILING: f64 = 0.9;

impl QuotaGroup {
    /// Whether this group may probe its learned ceiling now: no store (one
    /// relayer's, or a fleet sharing only news), or a fleet's member whose
    /// lease is up and whose plan is the fleet's (not its own part learned
    /// while its lease was down, no count under way).
    pub(super) fn may_probe_for_fleet(&mut self, now: Instant) -> bool {
        let (alone, counting) = (self.learned_alone, self.gather.is_some());
        self.lease.as_mut().is_none_or(|lease| lease.up(now) && !alone && !counting)
    }

    /// Its rate just went up (a growth or a probe step): told to the fleet when there is one.
    pub(super) fn tell_raise(&mut self) {
        if self.lease.is_some() {
            self.raised = Some(self.allowed);
        }
    }

    /// A limit ended a probe: a fleet's member tells the calm ceiling it
    /// returned to as the fleet's plan, so every member that took the step
    /// returns too.
    pub(super) fn tell_probe_ended(&mut self) {
        if self.lease.is_some() {
            self.decreased = Some(self.allowed);
        }
    }

    /// The step this member's rate took for its fleet, once (the host tells it as `raised`).
    pub fn take_raise(&mut self) -> Option<f64> {
        self.raised.take()
    }

    /// Another member's rate went up to `rate` (a growth or a probe step):
    /// the same step here (see the module doc). True when taken.
    pub fn hear_raise(&mut self, now: Instant, rate: f64) -> bool {
        let member = self.lease.as_ref().is_some_and(Lease::has_answered) && !self.learned_alone;
        let calm = self.episode_began.is_none_or(|t| now.saturating_since(t) >= WINDOW_RESIDUE);
        if !(member && calm && self.allowed.is_finite() && self.gather.is_none() && rate.is_finite()) {
            return false;
        }
        if rate > self.allowed && rate <= self.ceiling {
            self.allowed = rate;
            self.bucket.set_rate(now, self.own_rate());
            self.last_increase = now;
            return true;
        }
        let near = self.allowed >= self.ceiling * NEAR_CEILING;
        let bound = self.ceiling * (1.0 + self.next_step()) * (1.0 + 1e-9);
        let probe = self.has_learned_ceiling() && near && rate > self.ceiling && rate <= bound;
        if probe {
            self.step_ceiling_to(now, rate);
        }
        probe
    }
}

#[cfg(test)]
#[path = "fleet_raise_tests.rs"]
mod tests;
