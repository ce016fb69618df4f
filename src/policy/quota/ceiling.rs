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
//!               the ceiling before the step remembered as calm
//!   probing ── the next step waits one calm window (the last was calm)
//!   a limit while probing ──► the ceiling and the rate back to the last
//!               calm ceiling (no decrease: that rate was calm a window;
//!               limited again there, it decreases as usual); steps = 0; the first
//!               probe's wait doubles per probe that ended so (up to
//!               [`MAX_BACKOFF`] doublings), back to three windows once a
//!               step stays calm: a ceiling that is right costs one 429
//!               episode per probe, ever rarer
//!   limited, not probing ──► the ceiling to 95 % of the rate limited
//!               (down by a fifth at most), and the usual decrease below it
//!   idle at the ceiling (nothing waited) ──► no probe: an idle client's
//!               ceiling must not drift past what was ever sent
//! ```
//! A configured plan never probes: the user said what the key allows. Nor
//! does a fleet's member (a store attached): its plan is the fleet's,
//! counted together (`gather.rs`), and a member probing alone moved the
//! fleet's bucket on its own.

use std::time::Duration;

use super::{QuotaBucket, QuotaGroup, WindowedBucket};
use crate::time::Instant;

/// Calm windows at the ceiling before the first probe above it.
const FIRST_PROBE_WINDOWS: u32 = 3;

/// The most doublings of the first probe's wait after probes that failed.
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
const MAX_STEP: f64 = 2.0;

/// Where a learned ceiling's upward probe stands.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Probe {
    /// Calm steps taken since the last limit (each doubles the next).
    steps: u32,
    /// The ceiling before the last step (calm for a window, or the learned
    /// one): what a limit while probing returns to.
    calm: f64,
    /// Probes in a row that a limit ended before a step stayed calm.
    failed: u32,
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
    fn has_learned_ceiling(&self) -> bool {
        self.learns_its_plan() && self.ceiling.is_finite()
    }

    /// At the ceiling of a learned plan, calm and pressed long enough:
    /// raises it one step (see the module's diagram). True when it did.
    pub(super) fn probe_ceiling(&mut self, now: Instant) -> bool {
        // Not a fleet's member: its rate is the fleet's, asked of one bucket (`fleet.rs`). Probing
        // alone, a new user's worker raised its ceiling from 58 to 3,353 CU/s without a 429 (the
        // others' windows kept the key's second) and its holds starved them; and a probe's 429s
        // halved the members that were not probing (27 → 34.7 → 17.3 a second, again and again).
        if !self.has_learned_ceiling() || self.allowed < self.ceiling || self.lease.is_some() {
            return false;
        }
        let windows = if self.probe.steps == 0 { FIRST_PROBE_WINDOWS << self.probe.failed.min(MAX_BACKOFF) } else { 1 };
        let calm = now.saturating_since(self.last_increase) >= self.stable * windows;
        // Refused for want of CU within the window, or requests in the group's line right now.
        let pressed = self.line.waiting() > 0
            || self.pressed.is_some_and(|t| now.saturating_since(t) <= self.stable.max(Duration::from_secs(1)));
        if !(calm && pressed) {
            return false;
        }
        if self.probe.steps > 0 {
            self.probe.failed = 0; // the last step stayed calm a window
        }
        self.probe.calm = self.ceiling;
        let step = (self.config.increase * f64::from(1u32 << self.probe.steps.min(16))).min(MAX_STEP - 1.0);
        self.probe.steps += 1;
        self.ceiling *= 1.0 + step;
        self.allowed = self.ceiling;
        self.burst = self.ceiling.max(10.0);
        self.bucket.set_burst(now, self.burst);
        self.bucket.set_rate(now, self.own_rate());
        self.last_increase = now;
        true
    }

    /// A ceiling learned at `now` (a 429 measured, a fleet's sum, a
    /// member's word): the rate at it for now (the caller lowers it), a
    /// second of it as burst, kept per second, and the key's window still
    /// holding what taught it (its 429s lower nothing for a while).
    pub(super) fn take_ceiling(&mut self, now: Instant, ceiling: f64) {
        self.ceiling = ceiling.max(1.0);
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
    pub(super) fn settle_learned_ceiling(&mut self) {
        if self.has_learned_ceiling() {
            let settled = (self.allowed * SETTLE).max(self.ceiling * SETTLE_STEP);
            self.ceiling = self.ceiling.min(settled).max(1.0);
        }
    }

    /// A limit arrived: a probe above the last calm ceiling ends there,
    /// the rate back at that ceiling (true: the limit answered the probe,
    /// and lowers nothing further). Halving below a rate that was calm a
    /// whole window, for the probe past it, cost a learned 24 CU/s half its
    /// rate for two minutes (the simulation below).
    pub(super) fn end_probe(&mut self, now: Instant) -> bool {
        let probing = self.probe.steps > 0;
        if probing {
            self.ceiling = self.probe.calm;
            self.allowed = self.ceiling;
            self.burst = self.ceiling.max(10.0);
            self.bucket.set_burst(now, self.burst);
            self.bucket.set_rate(now, self.own_rate());
            self.probe.failed += 1;
            // The provider's window still holds what the probe sent: its 429s lower nothing.
            self.residue_until = self.residue_until.max(now + WINDOW_RESIDUE);
        }
        self.probe.steps = 0;
        probing
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::{QuotaConfig, QuotaDenied, QuotaGroup};
    use crate::time::{at, Instant};

    /// An unknown plan learned at 10 CU/s (100 CU over ten seconds at the first 429), grown back to it.
    fn learned_at_ten() -> (QuotaGroup, u64) {
        let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
        for i in 0..100 {
            g.charge(at(i * 100), 1.0).unwrap();
        }
        g.on_limited(at(10_000), Some(Duration::ZERO), false, 0.5);
        assert_eq!(g.stats().allowed_rate, 5.0);
        let mut t = 10_000;
        while g.stats().allowed_rate < 10.0 {
            t += 10_000;
            g.on_success(at(t), 0.5);
        }
        (g, t)
    }

    /// Demand above the rate: a charge refused for want of CU.
    fn press(g: &mut QuotaGroup, now: Instant) {
        while g.charge(now, 1.0).is_ok() {}
        assert!(matches!(g.check(now, 1.0), Err(QuotaDenied::Exhausted(_))));
    }

    #[test]
    fn a_pressed_learned_ceiling_probes_after_three_calm_windows_and_each_calm_step_doubles() {
        let (mut g, t) = learned_at_ten();
        press(&mut g, at(t + 29_000));
        g.on_success(at(t + 29_000), 0.5);
        assert_eq!(g.stats().allowed_rate, 10.0, "three calm windows first");
        press(&mut g, at(t + 30_000));
        g.on_success(at(t + 30_000), 0.5);
        assert!((g.stats().allowed_rate - 10.5).abs() < 1e-9, "+5 %: {}", g.stats().allowed_rate);
        press(&mut g, at(t + 40_000));
        g.on_success(at(t + 40_000), 0.5);
        assert!((g.stats().allowed_rate - 11.55).abs() < 1e-9, "+10 % one calm window later");
        press(&mut g, at(t + 50_000));
        g.on_success(at(t + 50_000), 0.5);
        assert!((g.stats().allowed_rate - 13.86).abs() < 1e-9, "+20 %");
    }

    #[test]
    fn a_probe_a_limit_ends_at_once_waits_twice_as_long_next_time() {
        let (mut g, t) = learned_at_ten();
        press(&mut g, at(t + 30_000));
        g.on_success(at(t + 30_000), 0.5);
        g.on_limited(at(t + 31_000), Some(Duration::ZERO), false, 0.5);
        let mut now = t + 31_000;
        while g.stats().allowed_rate < 10.0 {
            now += 10_000;
            g.on_success(at(now), 0.5);
        }
        press(&mut g, at(now + 30_000));
        g.on_success(at(now + 30_000), 0.5);
        assert_eq!(g.stats().allowed_rate, 10.0, "three windows are not enough after a failed probe");
        press(&mut g, at(now + 60_000));
        g.on_success(at(now + 60_000), 0.5);
        assert!((g.stats().allowed_rate - 10.5).abs() < 1e-9, "six are");
    }

    #[test]
    fn a_plan_is_learned_from_what_the_provider_accepted_in_the_last_second() {
        let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
        for i in 0..72 {
            g.charge(at(i * 125), 1.0).unwrap(); // 8 CU/s for nine seconds
            g.on_accepted(at(i * 125 + 30), 1.0);
        }
        for i in 0..40 {
            g.charge(at(9_010 + i * 24), 1.0).unwrap(); // then 40 in the tenth
            if i < 30 {
                g.on_accepted(at(9_040 + i * 24), 1.0); // of which the provider took 30
            }
        }
        g.on_limited(at(10_000), Some(Duration::ZERO), false, 0.5);
        let allowed = g.stats().allowed_rate;
        assert!(
            (allowed - 27.0).abs() < 1e-9,
            "90 % of the 30 accepted: not of the 40 sent, nor of the 11.2 mean: {allowed}"
        );
    }

    #[test]
    fn a_quiet_clients_chance_second_is_not_its_plan() {
        let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
        for i in 0..10 {
            g.charge(at(i * 1_000), 1.0).unwrap(); // one a second
        }
        g.charge(at(9_500), 1.0).unwrap();
        g.charge(at(9_900), 1.0).unwrap(); // three in the last second, by chance
        g.on_limited(at(10_000), Some(Duration::ZERO), false, 0.5);
        assert!((g.stats().allowed_rate - 0.6).abs() < 1e-9, "half the 1.2 CU/s mean: {}", g.stats().allowed_rate);
    }

    #[test]
    fn the_429s_of_what_was_sent_before_a_plan_was_learned_are_one_episode() {
        let mut fresh = QuotaGroup::new(QuotaConfig::default(), at(0));
        for i in 0..100 {
            fresh.charge(at(i * 100), 1.0).unwrap();
        }
        fresh.on_limited(at(10_000), Some(Duration::ZERO), false, 0.5);
        fresh.on_limited(at(11_400), Some(Duration::ZERO), false, 0.5);
        assert_eq!(fresh.stats().allowed_rate, 5.0, "the provider's window still held the unpaced second");
        fresh.on_limited(at(11_600), Some(Duration::ZERO), false, 0.5);
        assert_eq!(fresh.stats().allowed_rate, 2.5, "past it, a 429 is news");
    }

    #[test]
    fn requests_in_the_groups_line_press_on_the_ceiling_too() {
        let (mut g, t) = learned_at_ten();
        g.join_line(1, 1.0);
        g.on_success(at(t + 30_000), 0.5);
        assert!((g.stats().allowed_rate - 10.5).abs() < 1e-9, "a request waits its turn: a probe");
    }

    #[test]
    fn an_idle_ceiling_does_not_drift_up() {
        let (mut g, t) = learned_at_ten();
        g.on_success(at(t + 60_000), 0.5);
        assert_eq!(g.stats().allowed_rate, 10.0, "nothing waited: no evidence the key allows more");
    }

    #[test]
    fn a_limit_while_probing_returns_to_the_last_calm_step_and_its_residue_lowers_nothing() {
        let (mut g, t) = learned_at_ten();
        for (k, dt) in [30_000, 40_000, 50_000].into_iter().enumerate() {
            press(&mut g, at(t + dt));
            g.on_success(at(t + dt), 0.5);
            assert!(g.stats().allowed_rate > 10.0 + k as f64 * 0.5);
        }
        g.on_limited(at(t + 51_000), Some(Duration::ZERO), false, 0.5);
        assert!((g.stats().allowed_rate - 11.55).abs() < 1e-9, "back to the step before 13.86, calm a window");
        g.on_limited(at(t + 52_400), Some(Duration::ZERO), false, 0.5);
        assert!((g.stats().allowed_rate - 11.55).abs() < 1e-9, "the probe's residue lowers nothing");
        g.on_limited(at(t + 53_000), Some(Duration::ZERO), false, 0.5);
        assert!((g.stats().allowed_rate - 5.775).abs() < 1e-9, "limited at the calm ceiling: halved");
        let mut now = t + 53_000;
        for _ in 0..40 {
            now += 10_000;
            g.on_success(at(now), 0.5);
        }
        let settled = 11.55 * 0.95;
        assert!((g.stats().allowed_rate - settled).abs() < 1e-9, "grows back to 95 % of the ceiling it was limited at");
    }

    #[test]
    fn a_configured_plan_never_probes_above_itself() {
        let mut g = QuotaGroup::new(QuotaConfig { cu_per_second: 10.0, ..QuotaConfig::default() }, at(0));
        for s in 1..10 {
            press(&mut g, at(s * 10_000));
            g.on_success(at(s * 10_000), 0.5);
        }
        assert_eq!(g.stats().allowed_rate, 10.0);
    }
}

#[cfg(test)]
mod sim_tests {
    use std::collections::VecDeque;

    use super::super::{QuotaConfig, QuotaGroup};
    use crate::runtime::SeededRandom;
    use crate::time::at;

    /// One relayer with no configured plan on a 30 CU/s key (kept per
    /// second), 8 reads a second for 20 s, then 40: another client's burst
    /// at 5 s puts 25 CU on the key. Returns (CU paid in minutes 6-8, 429s).
    fn learned_low_then_pressed(probing: bool, seed: u64) -> (usize, usize) {
        let demand = |now: u64| if now < 20_000 { 8.0 } else { 40.0 };
        on_a_thirty_key(demand, Some(5_000), probing, seed, 360_000..480_000)
    }

    /// One relayer with no configured plan on a 30 CU/s key (kept per
    /// second) for eight minutes, reads arriving at `demand(ms)` a second,
    /// another client's burst of 25 CU at `foreign`. Returns (CU paid
    /// within `paid_in`, 429s).
    fn on_a_thirty_key(
        demand: impl Fn(u64) -> f64,
        foreign: Option<u64>,
        probing: bool,
        seed: u64,
        paid_in: std::ops::Range<u64>,
    ) -> (usize, usize) {
        let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
        let mut rng = SeededRandom::new(seed);
        let mut window: VecDeque<u64> = VecDeque::new();
        let (mut waiting, mut paid, mut refused) = (0usize, 0usize, 0usize);
        for now in 0..480_000u64 {
            while window.front().is_some_and(|&t| t + 1000 <= now) {
                window.pop_front();
            }
            if foreign == Some(now) {
                window.extend(std::iter::repeat_n(now, 25));
            }
            if rng.next_unit() < demand(now) / 1000.0 {
                waiting += 1;
            }
            while waiting > 0 && g.charge(at(now), 1.0).is_ok() {
                if window.len() >= 30 {
                    refused += 1;
                    g.on_limited(at(now), None, false, rng.next_unit());
                    break;
                }
                window.push_back(now);
                g.on_accepted(at(now), 1.0);
                g.on_success(at(now), rng.next_unit());
                waiting -= 1;
                paid += usize::from(paid_in.contains(&now));
            }
            if !probing {
                g.pressed = None;
            }
        }
        (paid, refused)
    }

    #[test]
    fn a_ceiling_learned_low_from_a_foreign_burst_climbs_back_to_the_key_when_pressed() {
        for seed in 1..=4 {
            let (paid, refused) = learned_low_then_pressed(true, seed);
            let rate = paid as f64 / 120.0;
            assert!(rate >= 25.0, "seed {seed}: {rate:.1} CU/s of a 30 CU/s key in minutes 6-8");
            assert!(refused <= 10, "seed {seed}: {refused} 429s in eight minutes");
            let (kept, _) = learned_low_then_pressed(false, seed);
            assert!((kept as f64 / 120.0) < 16.0, "seed {seed}: without probing the ceiling stays low");
        }
    }

    #[test]
    fn a_plan_measured_at_its_first_429_is_served_at_once_not_halved_and_regrown() {
        for seed in 1..=4 {
            // 40 reads a second from the start: the first 429 comes within seconds.
            let (paid, refused) = on_a_thirty_key(|_| 40.0, None, true, seed, 0..120_000);
            let rate = paid as f64 / 120.0;
            assert!(rate >= 25.0, "seed {seed}: {rate:.1} CU/s of a 30 CU/s key in the first two minutes");
            assert!(refused <= 10, "seed {seed}: {refused} 429s in eight minutes");
        }
    }
}
