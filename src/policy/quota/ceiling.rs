//! A learned plan's ceiling is a measurement, not a law: it probes upward.
//!
//! An unknown plan learns its ceiling from one moment (what the provider
//! accepted when the first 429 came, or a fleet member's word). That moment can be
//! wrong low: a 429 caused by another client's burst on the key, a
//! window that did not line up, a provider that raised the plan since.
//! Kept forever, it was a ratchet: a new user's fleet learned 8 reads a
//! second on a 30/s key and never sent more.
//!
//! ```text
//!   at the ceiling ── requests waited for CU, no limit for three calm
//!   windows ──► probe: ceiling × (1 + increase × 2^steps), steps + 1;
//!               the ceiling before the step remembered
//!   probing ── the next step waits one calm window (the last was calm)
//!   a limit while probing ──► the ceiling and the rate back to the last
//!               calm ceiling (no decrease: that rate was calm a window);
//!               steps = 0; the first probe's wait doubles per step a
//!               limit sent back (up to [`MAX_BACKOFF`] doublings), and a
//!               step that stays calm does not undo it: a ceiling that is
//!               right costs a 429 episode or two per probe, ever rarer
//!   a limit at a step that stood (calm, never limited since, however
//!               long ago) ──► down to 95 % of it, never below the step
//!               under it (no decrease), twice at most before a new step:
//!               a window's calm is thin evidence. A fleet that sends a
//!               little under its plan passes steps above the key; back
//!               only while a probe's end "settled", a step kept longer met
//!               a 429 later that halved it (30 → 31.5 → 33 on a 30/s key,
//!               then 16.5: 6 of 200 simulated two-minute runs of two
//!               members, and `fleet-raise.test` ended at 16 of 30); sent
//!               back whole (tried), a step that stood after a climb from a
//!               low count went 30 → 25 where 95 % is 28.5. A third limit
//!               without a new step is an ordinary one (below)
//!   any other limit (a learned or settled ceiling) ──► the ceiling to 95 % of
//!               the rate limited (down by a fifth at most), and the usual
//!               decrease below it
//!   idle at the ceiling (nothing waited) ──► no probe: an idle client's
//!               ceiling must not drift past what was ever sent
//! ```
//! A configured plan never probes: the user said what the key allows. A
//! fleet's member probes only while its lease is up, and its step is the
//! fleet's: told as `raised`, taken by every member at its ceiling, and a
//! limit while probing told back as the calm plan (`fleet_raise.rs`). A
//! member probing alone moved the fleet's bucket on its own.

use std::time::Duration;

use super::{QuotaBucket, QuotaGroup, WindowedBucket};
use crate::time::Instant;

/// Calm windows at the ceiling before the first probe above it.
const FIRST_PROBE_WINDOWS: u32 = 3;

/// The most doublings of the first probe's wait after steps sent back.
const MAX_BACKOFF: u32 = 4;

/// How long after a probe ends, or a plan is learned, 429s are the residue
/// of what was sent before (a provider's window of one second, and answers
/// in flight).
pub(super) const WINDOW_RESIDUE: Duration = Duration::from_millis(1500);

/// A plan learned from what the provider accepted in the last second
/// (`accepted_last_second`) starts at this fraction of it: a measure, with
/// a margin for a provider's window that does not line up with ours.
pub(super) const LEARNED_START: f64 = 0.9;

/// A learned ceiling limited comes down to this fraction of the rate it was limited at…
const SETTLE: f64 = 0.95;

/// …but by no more than to this fraction of itself, per limit.
const SETTLE_STEP: f64 = 0.8;

/// The most one probe step multiplies the ceiling by.
pub(super) const MAX_STEP: f64 = 2.0;

/// Limits that may send a step that stood back before a new step: a third
/// is an ordinary limit.
const MAX_BACKS: u32 = 2;

/// How many ceilings stepped up from are kept (past it, the second lowest
/// goes: the lowest, where the last limit left the ceiling, stays).
const MAX_LEVELS: usize = 8;

/// Where a learned ceiling's upward probe stands.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Probe {
    /// Calm steps taken since the last limit (each doubles the next).
    steps: u32,
    /// Probe steps a limit sent back (each doubles the first probe's wait,
    /// up to [`MAX_BACKOFF`] times). A calm step does not undo it: undone
    /// so, a fleet that passed one calm step above its key and stepped back
    /// later probed every third window.
    failed: u32,
    /// The ceilings this one was stepped up from since a limit last learned
    /// or settled it, lowest first: the last is the calm one a limit while
    /// probing returns to, and a limit after it goes back towards the next.
    levels: Vec<f64>,
    /// Limits that sent a step that stood back since the last step.
    backs: u32,
}

impl QuotaGroup {
    /// A request waited for this group's CU at `now`: demand is at the rate.
    pub(super) fn pressed_at(&mut self, now: Instant) {
        self.pressed = Some(now);
    }

    /// No plan was configured (`cuPerSecond: Infinity`): the group learns
    /// one from 429s. The one test of it, so a rule for learned plans
    /// cannot drift from the others.
    pub(super) fn learns_its_plan(&self) -> bool {
        !self.config.plan().is_finite()
    }

    /// A plan is being learned and a ceiling was learned (a 429 came).
    pub(super) fn has_learned_ceiling(&self) -> bool {
        self.learns_its_plan() && self.ceiling.is_finite()
    }

    /// At the ceiling of a learned plan, calm and pressed long enough:
    /// raises it one step (see the module's diagram). True when it did.
    pub(super) fn probe_ceiling(&mut self, now: Instant) -> bool {
        // Not a fleet's member: its rate is the fleet's, asked of one bucket (`fleet.rs`). Probing
        // alone, a new user's worker raised its ceiling from 58 to 3,353 CU/s without a 429 (the
        // others' windows kept the key's second) and its holds starved them; and a probe's 429s
        // halved the members that were not probing (27 → 34.7 → 17.3 a second, again and again).
        // A member probes the fleet's plan for the fleet, only while its lease is up (`fleet_raise.rs`).
        if !self.has_learned_ceiling() || self.allowed < self.ceiling || !self.may_probe_for_fleet(now) {
            return false;
        }
        let windows = if self.probe.steps == 0 { self.first_probe_windows() } else { 1 };
        let calm = now.saturating_since(self.last_increase) >= self.stable * windows;
        // Refused for want of CU within the window, or requests in the group's line right now.
        let pressed = self.line.waiting() > 0
            || self.pressed.is_some_and(|t| now.saturating_since(t) <= self.stable.max(Duration::from_secs(1)));
        if !(calm && pressed) {
            return false;
        }
        let raised = self.ceiling * (1.0 + self.next_step());
        self.step_ceiling_to(now, raised);
        self.tell_raise();
        true
    }

    /// Calm windows before a probe's first step: three, doubled per step
    /// a limit sent back (up to [`MAX_BACKOFF`] doublings).
    fn first_probe_windows(&self) -> u32 {
        FIRST_PROBE_WINDOWS << self.probe.failed.min(MAX_BACKOFF)
    }

    /// The next probe step's fraction: the configured increase, doubled
    /// per calm step taken, at most [`MAX_STEP`] − 1.
    pub(super) fn next_step(&self) -> f64 {
        (self.config.increase * f64::from(1u32 << self.probe.steps.min(16))).min(MAX_STEP - 1.0)
    }

    /// One probe step, its own or the fleet's: the ceiling before it kept
    /// (a limit goes back to it), the ceiling and the rate at `raised`, the
    /// next step a calm window away.
    pub(super) fn step_ceiling_to(&mut self, now: Instant, raised: f64) {
        if self.probe.levels.len() == MAX_LEVELS {
            self.probe.levels.remove(1);
        }
        self.probe.levels.push(self.ceiling);
        self.probe.steps += 1;
        self.probe.backs = 0;
        self.ceiling = raised;
        self.allowed = self.ceiling;
        self.burst = self.ceiling.max(10.0);
        self.bucket.set_burst(now, self.burst);
        self.bucket.set_rate(now, self.own_rate());
        self.last_increase = now;
    }

    /// A ceiling learned at `now` (a 429 measured, a fleet's sum, a
    /// member's word): the rate at it for now (the caller lowers it), a
    /// second of it as burst, kept per second, and the key's window still
    /// holding what taught it (its 429s lower nothing for a while).
    pub(super) fn take_ceiling(&mut self, now: Instant, ceiling: f64) {
        self.ceiling = ceiling.max(1.0);
        self.probe.levels.clear();
        self.allowed = self.ceiling;
        self.burst = self.ceiling.max(10.0);
        self.keep_learned_per_second(now);
        self.bucket.set_burst(now, self.burst);
        self.residue_until = self.residue_until.max(now + WINDOW_RESIDUE);
    }

    /// A plan just learned (`aimd.rs`, `hear_plan`) is kept in every second
    /// as a configured one is (`policy::plan_window`), unless a burst was
    /// configured: a token bucket lets burst + rate through in one second,
    /// and a backlog released by the cooldown met a second 429 at once, which
    /// halved again (a learned 31 CU/s down to 4 in one second).
    pub(super) fn keep_learned_per_second(&mut self, now: Instant) {
        if self.config.burst > 0.0 {
            return;
        }
        let mut bucket = WindowedBucket::new(self.ceiling, self.burst, now);
        bucket.seed(&self.charged_last_second(now));
        bucket.drain(now);
        self.bucket = Box::new(bucket);
    }

    /// A limit on a learned plan (not probing): the rate it came at is too
    /// much, so the ceiling comes down to 95 % of it, by at most a fifth per
    /// limit (a foreign burst's 429 far below it costs little); probing
    /// finds the way back up if it was not. Kept, a ceiling learned high
    /// drew a 429 and a halving each time growth reached it (a relayer
    /// starting at 40 reads a second learned 42 on a 30/s key).
    /// `limited_at` is the rate the limit came at (this group's, or the
    /// teller's of a plan heard: every member settles the same ceiling, or
    /// the fleet's probe steps from ceilings that differ).
    pub(super) fn settle_learned_ceiling(&mut self, limited_at: f64) {
        if self.has_learned_ceiling() {
            let settled = (limited_at * SETTLE).max(self.ceiling * SETTLE_STEP);
            self.probe.levels.clear();
            self.probe.steps = 0;
            self.ceiling = self.ceiling.min(settled).max(1.0);
        }
    }

    /// A limit arrived at a ceiling stepped up to and never limited since:
    /// a step just taken goes back whole, to the ceiling it was stepped up
    /// from; one that stood comes down as a limit settles a ceiling (to 95 %
    /// of it), never below the step under it, twice at most before a new
    /// step (a third limit is an ordinary one: a key that really shrank, or
    /// another client that came to share it, is answered as before). The
    /// rate with it (true: the limit answered a probe step and lowers
    /// nothing further). See the diagram. Halving below a rate that was
    /// calm a whole window, for the probe past it, cost a learned 24 CU/s
    /// half its rate for two minutes; and a step that stood, sent back
    /// whole after a climb from a low count, would go 30 → 25 on a 30/s key
    /// (a +20 % step) where 95 % is 28.5.
    pub(super) fn step_back(&mut self, now: Instant) -> bool {
        let probing = self.probe.steps > 0;
        let level = self.probe.levels.last().copied();
        let stood_again = !probing && self.probe.backs >= MAX_BACKS;
        let Some(level) = level.filter(|&level| self.allowed >= level && !stood_again) else {
            // No step to go back from, lowered below it since, or sent back twice already: an
            // ordinary limit, whose settling forgets the steps (`settle_learned_ceiling`).
            return false;
        };
        let back = if probing { level } else { level.max(self.allowed * SETTLE) };
        self.go_back_to(now, back);
        true
    }

    /// Another member's plan `rate`, told when a limit sent it back from a
    /// step (`hear_plan`): when this one took the same steps (the rate at or
    /// above the lowest ceiling it stepped up from), it goes back to the
    /// same place, and true. A rate below that is a decrease (false).
    pub(super) fn step_back_to(&mut self, now: Instant, rate: f64) -> bool {
        let bottom = self.probe.levels.first().copied().unwrap_or(f64::INFINITY);
        if rate < bottom * (1.0 - 1e-9) || rate >= self.ceiling {
            return false;
        }
        self.go_back_to(now, rate);
        true
    }

    /// The ceiling and the rate back at `ceiling`, the steps above it
    /// forgotten. A step that stood (no step since the last back) counts
    /// one back more, the same for a member's own limit and a plan heard,
    /// so every member of a fleet counts alike. The next probe waits longer;
    /// the provider's window still holds what the steps sent, so its 429s
    /// lower nothing for a while.
    fn go_back_to(&mut self, now: Instant, ceiling: f64) {
        if self.probe.steps == 0 {
            self.probe.backs = self.probe.backs.saturating_add(1);
        }
        self.probe.levels.retain(|&below| below < ceiling * (1.0 - 1e-9));
        self.probe.failed = self.probe.failed.saturating_add(1);
        self.probe.steps = 0;
        self.raised = None; // a step that ended is no news to tell
        self.ceiling = ceiling;
        self.allowed = ceiling;
        self.burst = ceiling.max(10.0);
        self.bucket.set_burst(now, self.burst);
        self.bucket.set_rate(now, self.own_rate());
        self.residue_until = self.residue_until.max(now + WINDOW_RESIDUE);
    }
}

#[cfg(test)]
#[path = "ceiling_tests.rs"]
mod tests;
