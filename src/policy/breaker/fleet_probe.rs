//! One half-open probe of a node in flight for the whole fleet: another
//! realm's probe (`coord::news`, `Probing`) holds this breaker's own until
//! its verdict or its deadline, while the pool has other nodes to serve.
//!
//! ```text
//!   another realm sends a probe (half-open or early), verdict due by t
//!     ─► held until t (unless Closed)
//!   its verdict heard (`BreakerBack`: the node is back; `ProbeEnded`:
//!   it failed or said nothing) ─► released
//!   t passes without a verdict (its realm is gone, the word was lost)
//!     ─► released
//!   this breaker closes ─► released (a closed breaker takes no probes)
//! ```
//! The breaker only keeps the hold; the router honours it
//! (`pool/router.rs`, `select`): a half-open breaker that is held takes no
//! probe of this realm's own *while another endpoint of the pool is
//! closed*. A hung node then holds one request of the fleet for an attempt
//! timeout at a time, not one per process; and the cost, a node back
//! found at most one attempt timeout later, falls on a node the pool does
//! without. In a total outage nothing is held: every realm probes on its
//! own jittered schedule, since finding the first node back is then what
//! answers requests (holding early probes for each other's verdicts, a
//! simulated fleet of 4 processes with 10 s deadlines answered 72 % of the
//! reads held through a 5 s outage instead of 100 %: a probe sent to the
//! dead node held the others until its timeout, past the node's return).
//! The hold never lasts past the teller's deadline, bounded on arrival.
//!
//! Early probes are spaced for the fleet instead: another realm's probe
//! ending puts this breaker's next early probe a jittered base after it
//! ([`Breaker::fleet_probe_ended`]). Fifty processes probing a dead fleet
//! each on its own schedule sent 80–160 probes a second (a simulated
//! outage with 100 requests a second held: amplification 1.27–1.29); spaced
//! for the fleet, 9–13, and the fleet still probes every fraction of a
//! second, so a node back is found as soon.

use super::{Breaker, Inner};
use crate::time::Instant;

impl Breaker {
    /// Another realm's probe of this node is in flight, its verdict due by
    /// `until`: this breaker sends no probe of its own before then, unless
    /// it is Closed (nothing to prove) or the verdict comes first.
    pub fn hold_for_fleet_probe(&mut self, now: Instant, until: Instant) {
        if until > now && !matches!(self.inner, Inner::Closed { .. }) {
            self.fleet_probe_until = self.fleet_probe_until.max(until);
        }
    }

    /// The fleet's probe ended (its verdict heard): own probes may go.
    /// Whether a hold was released.
    pub fn release_fleet_probe(&mut self, now: Instant) -> bool {
        let held = self.fleet_probe_until > now;
        self.fleet_probe_until = Instant::ZERO;
        held
    }

    /// Another realm's probe of this node ended, and this breaker is still
    /// Open here: its own next early probe goes no sooner than a jittered
    /// early-probe base from `now` (`unit_random` in `[0, 1)`). The fleet
    /// then probes a dead node about once per base between all its realms,
    /// not once per base per realm, and a node back is still found within
    /// about a base (the word that it is back, `BreakerBack`, brings the
    /// probes forward).
    pub fn fleet_probe_ended(&mut self, now: Instant, unit_random: f64) {
        if matches!(self.inner, Inner::Open { .. }) {
            let spacing = super::jittered(self.config.early_probe_base, self.config.jitter.max(0.5), unit_random);
            self.early_probe_at = self.early_probe_at.max(now + spacing);
        }
    }

    /// Until when another realm's probe holds this one's (`None`: not held).
    pub fn fleet_probe_until(&self, now: Instant) -> Option<Instant> {
        (self.fleet_probe_until > now).then_some(self.fleet_probe_until)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::tests::{at, config, trip};
    use super::super::{Admission, BreakerState};
    use super::*;

    #[test]
    fn another_realms_probe_in_flight_holds_until_its_verdict_or_deadline_and_closing_ends_it() {
        let mut b = Breaker::new(config(), at(0));
        b.hold_for_fleet_probe(at(0), at(5_000));
        assert_eq!(b.fleet_probe_until(at(0)), None, "a closed breaker is never held");
        trip(&mut b, at(0));
        b.hold_for_fleet_probe(at(400), at(3_400));
        b.hold_for_fleet_probe(at(400), at(2_400));
        assert_eq!(b.fleet_probe_until(at(400)), Some(at(3_400)), "the later of two holds");
        assert_eq!(b.try_early_probe(at(600), 0.5), Admission::Allowed { probe: true }, "never an early probe's");
        assert!(b.release_fleet_probe(at(700)), "the verdict came");
        assert!(!b.release_fleet_probe(at(800)), "nothing held any more");
        b.hold_for_fleet_probe(at(800), at(1_800));
        assert_eq!(b.fleet_probe_until(at(1_799)), Some(at(1_800)));
        assert_eq!(b.fleet_probe_until(at(1_800)), None, "lapsed at its deadline");
        b.on_failure(at(900), true, 0.5);
        let BreakerState::Open { until } = b.state(at(900)) else { panic!("open") };
        assert_eq!(b.try_acquire(until), Admission::Allowed { probe: true });
        b.hold_for_fleet_probe(until, until + Duration::from_secs(9));
        b.on_success(until + Duration::from_secs(1), true);
        assert_eq!(b.try_acquire(until + Duration::from_secs(1)), Admission::Allowed { probe: true });
        b.on_success(until + Duration::from_secs(2), true);
        assert_eq!(b.state(until + Duration::from_secs(2)), BreakerState::Closed);
        assert_eq!(b.fleet_probe_until(until + Duration::from_secs(2)), None, "closing ends the hold");
    }

    #[test]
    fn another_realms_probe_ending_pushes_this_realms_next_early_probe_by_a_jittered_base() {
        let mut b = Breaker::new(config(), at(0));
        b.fleet_probe_ended(at(100), 0.5);
        assert_eq!(b.early_probe_at(), at(0), "a closed breaker keeps no schedule to push");
        trip(&mut b, at(1_000));
        assert_eq!(b.early_probe_at(), at(1_500), "its own first early probe: a base after opening");
        b.fleet_probe_ended(at(1_200), 0.0);
        assert_eq!(b.early_probe_at(), at(1_500), "never brought forward (1,200 + 250 is sooner)");
        b.fleet_probe_ended(at(1_400), 0.5);
        assert_eq!(b.early_probe_at(), at(1_900), "a base from the other realm's verdict");
        b.fleet_probe_ended(at(1_400), 0.999);
        assert!(b.early_probe_at() > at(2_149) && b.early_probe_at() <= at(2_150), "at most 1.5 bases");
        assert_eq!(b.try_early_probe(at(1_950), 0.5), Admission::Rejected { until: b.early_probe_at() });
        assert_eq!(b.try_early_probe(b.early_probe_at(), 0.5), Admission::Allowed { probe: true });
    }
}
