//! What a quota group sent lately: the evidence an unknown plan is learned
//! from, and the rate a lease is sized by.

use std::time::Duration;

use super::{QuotaGroup, MIN_EVIDENCE, RATE_WINDOW};
use crate::time::Instant;

/// A pause in charges longer than this ends a run (`run_rate`): a client
/// at one read a second pauses a second.
const IDLE_GAP: Duration = Duration::from_secs(2);

impl QuotaGroup {
    /// Compute units charged over the last second.
    pub fn cu_last_second(&mut self, now: Instant) -> f64 {
        self.prune(now);
        self.recent.iter().filter(|(t, _)| now.saturating_since(*t) <= Duration::from_secs(1)).map(|(_, c)| c).sum()
    }

    /// Compute units per second over the last `RATE_WINDOW` (a quiet
    /// client's rate is not measurable in one second).
    pub(super) fn observed_rate(&mut self, now: Instant) -> f64 {
        self.prune(now);
        self.rate_from(0, now)
    }

    /// CU per second of the charges kept from index `start` on, over the
    /// span since the first of them (at least a second, at most
    /// `RATE_WINDOW`).
    fn rate_from(&self, start: usize, now: Instant) -> f64 {
        let span = self.recent.get(start).map_or(RATE_WINDOW, |(t, _)| now.saturating_since(*t));
        let span = span.max(Duration::from_secs(1)).min(RATE_WINDOW);
        self.recent.iter().skip(start).map(|(_, c)| c).sum::<f64>() / span.as_secs_f64()
    }

    /// CU per second since the current run of charges began (after the
    /// last pause longer than [`IDLE_GAP`]), over at least a second: what
    /// this group sends now, before a plan is known. `observed_rate`'s
    /// span begins at the oldest charge kept, so a relayer made (its chain
    /// check charged) seconds before its first read counted a third of its
    /// rate: a new user's two workers on Redis, 18 reads a second each,
    /// learned 1.4 of a 30/s key from 3 a second, and told the other so.
    pub(super) fn run_rate(&mut self, now: Instant) -> f64 {
        self.prune(now);
        let mut start = self.recent.len();
        let mut after = now;
        for (i, &(t, _)) in self.recent.iter().enumerate().rev() {
            if after.saturating_since(t) > IDLE_GAP {
                break;
            }
            (start, after) = (i, t);
        }
        self.rate_from(start, now)
    }

    /// Whether enough was sent lately to tell a plan from it: at least
    /// [`MIN_EVIDENCE`] charges, or charges over at least two seconds.
    pub(super) fn rate_evidence(&mut self, now: Instant) -> bool {
        self.prune(now);
        self.recent.len() >= MIN_EVIDENCE
            || self.recent.front().is_some_and(|(t, _)| now.saturating_since(*t) >= Duration::from_secs(2))
    }

    /// Whether charges of `cost` or more are common among this group's
    /// recent ones (one in ten or more of the last ten seconds'), as a
    /// lease is sized (`lease/charge_sizes.rs`): a charge that is not
    /// waits its turn only at the price of every charge behind it (a 10 CU
    /// head poll among 1 CU reads sized a fleet's lease asks for 10, made
    /// each grant all-or-nothing, and the reads were turned away).
    pub fn common_charge(&self, cost: f64) -> bool {
        let dear = self.recent.iter().filter(|&&(_, c)| c >= cost).count();
        dear > 0 && dear * 10 >= self.recent.len()
    }

    pub(super) fn prune(&mut self, now: Instant) {
        while self.recent.front().is_some_and(|(t, _)| now.saturating_since(*t) > RATE_WINDOW) {
            self.recent.pop_front();
        }
    }

    /// The charges of the last second, in time order (what a bucket that
    /// keeps every second is seeded with when it takes over).
    pub(super) fn charged_last_second(&self, now: Instant) -> Vec<(Instant, f64)> {
        self.recent.iter().copied().filter(|&(t, _)| now.saturating_since(t) < Duration::from_secs(1)).collect()
    }

    /// A charge of `cost` was answered with a success at `now`: the
    /// provider took it (kept for one second, for `accepted_last_second`).
    /// Only a plan that may be learned keeps them: a configured one never
    /// reads them, and at 20,000 reads a second they would be 20,000 entries.
    pub fn on_accepted(&mut self, now: Instant, cost: f64) {
        if !self.learns_its_plan() {
            return;
        }
        self.accepted.push_back((now, cost.max(0.0)));
        while self.accepted.front().is_some_and(|&(t, _)| now.saturating_since(t) >= Duration::from_secs(1)) {
            self.accepted.pop_front();
        }
    }

    /// The CU the provider accepted over the last second, when that holds
    /// at least [`MIN_EVIDENCE`] charges (fewer tell no rate): at its first
    /// refusal, the best measure of its plan. What was *sent* in that
    /// second counts the refused too (a relayer starting at 40 reads a
    /// second on a 30/s key learned 39).
    pub(super) fn accepted_last_second(&self, now: Instant) -> Option<f64> {
        let (count, cu) = self.accepted_in_last_second(now);
        (count >= MIN_EVIDENCE).then_some(cu)
    }

    /// How many charges the provider accepted over the last second, and their CU.
    pub(super) fn accepted_in_last_second(&self, now: Instant) -> (usize, f64) {
        let second = self.accepted.iter().filter(|&&(t, _)| now.saturating_since(t) < Duration::from_secs(1));
        second.fold((0, 0.0), |(n, cu), &(_, c)| (n + 1, cu + c))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{QuotaConfig, QuotaGroup};
    use crate::time::at;

    #[test]
    fn only_a_plan_that_may_be_learned_keeps_what_was_accepted() {
        let mut configured = QuotaGroup::new(QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() }, at(0));
        let mut unknown = QuotaGroup::new(QuotaConfig::default(), at(0));
        for ms in 0..20 {
            configured.on_accepted(at(ms), 1.0);
            unknown.on_accepted(at(ms), 1.0);
        }
        assert!(configured.accepted.is_empty(), "a configured plan never reads them");
        assert_eq!(unknown.accepted_last_second(at(20)), Some(20.0));
        assert_eq!(unknown.accepted_last_second(at(1_005)), Some(14.0), "one second kept");
    }

    #[test]
    fn a_relayer_made_seconds_before_it_reads_learns_what_it_sends_not_a_mean_over_its_idle_start() {
        let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
        g.charge(at(0), 1.0).unwrap(); // the chain check of `new`
        for i in 0..9 {
            g.charge(at(2_500 + i * 100), 1.0).unwrap(); // then 10 reads a second, too few accepted to tell
        }
        assert!((g.run_rate(at(3_400)) - 9.0).abs() < 1e-9, "nine in the run's 0.9 s, counted over a second");
        assert!((g.observed_rate(at(3_400)) - 10.0 / 3.4).abs() < 1e-9, "the mean from the chain check on");
        g.on_limited(at(3_400), None, false, 0.5);
        assert!((g.stats().allowed_rate - 4.5).abs() < 1e-9, "half the 9 sent, not of 2.9: {}", g.stats().allowed_rate);
        assert_eq!(g.run_rate(at(6_000)), 0.0, "a pause of more than 2 s ends the run");
        let mut quiet = QuotaGroup::new(QuotaConfig::default(), at(0));
        for ms in [0, 2_000, 2_500] {
            quiet.charge(at(ms), 1.0).unwrap();
        }
        assert!((quiet.run_rate(at(2_500)) - 1.2).abs() < 1e-9, "a pause of exactly 2 s goes on with the run");
    }
}
