//! (Test support, no tests of its own.) A fleet's store a message delay away, for the per-millisecond fleet
//! simulations in this module's tests: asks reach the store's bucket
//! (`FleetBucket`) in the order they arrive, and answers reach their
//! members a drawn delay later.

use super::QuotaGroup;
use crate::policy::fleet_bucket::FleetBucket;
use crate::policy::lease::{LeaseAsk, LeaseGrant};
use crate::runtime::SeededRandom;
use crate::time::at;

/// `n` members of a fleet on a plan of `cu_per_second` kept per second, each joined at 0.
pub(super) fn joined_fleet(n: usize, cu_per_second: f64) -> Vec<QuotaGroup> {
    let config = super::QuotaConfig { cu_per_second, ..super::QuotaConfig::default() };
    let mut members: Vec<QuotaGroup> = (0..n).map(|_| QuotaGroup::new(config, at(0))).collect();
    members.iter_mut().for_each(|m| m.join_fleet(at(0)));
    members
}

/// The store and the messages on their way.
pub(super) struct StoreSim {
    bucket: FleetBucket,
    /// Each way takes `one_way.0..one_way.1` ms (drawn per message; fixed when equal).
    one_way: (u64, u64),
    asks: Vec<(u64, usize, LeaseAsk)>,
    answers: Vec<(u64, usize, f64, LeaseGrant)>,
}

impl StoreSim {
    pub(super) fn new(one_way: (u64, u64)) -> Self {
        StoreSim { bucket: FleetBucket::default(), one_way, asks: Vec::new(), answers: Vec::new() }
    }

    fn way(&self, rng: &mut SeededRandom) -> u64 {
        let (from, to) = self.one_way;
        from + if to > from { ((to - from) as f64 * rng.next_unit()) as u64 } else { 0 }
    }

    /// Member `member`'s ask, sent at `now`.
    pub(super) fn send(&mut self, now: u64, member: usize, ask: LeaseAsk, rng: &mut SeededRandom) {
        let due = now + self.way(rng);
        self.asks.push((due, member, ask));
    }

    /// What reaches the store and the members at `now`.
    pub(super) fn step(&mut self, now: u64, members: &mut [QuotaGroup], rng: &mut SeededRandom) {
        self.asks.sort_by_key(|&(due, _, _)| due);
        while self.asks.first().is_some_and(|&(due, _, _)| due <= now) {
            let (_, m, ask) = self.asks.remove(0);
            let back = self.way(rng);
            self.answers.push((now + back, m, ask.want, self.bucket.ask(at(now), m as u64, ask)));
        }
        self.answers.retain(|&(due, m, want, grant)| {
            if due > now {
                return true;
            }
            members[m].lease_granted(at(now), want, grant);
            false
        });
    }
}
