//! A plan kept in every second stays so across a fleet: four members on
//! one store, each leasing ahead of need, never put more than the plan in
//! any one-second span (what a provider counting per second sees).

use std::time::Duration;

use super::fleet::FLEET_WINDOW_BURST;
use super::{QuotaConfig, QuotaGroup};
use crate::policy::fleet_bucket::FleetBucket;
use crate::runtime::SeededRandom;
use crate::time::at;

#[test]
fn a_per_second_plan_asks_the_fleet_for_burst_plus_rate_within_it() {
    let mut g = QuotaGroup::new(QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() }, at(0));
    g.join_fleet(at(0));
    let ask = g.lease_ask_now(at(0)).unwrap();
    assert_eq!((ask.rate, ask.burst), (100.0 * (1.0 - FLEET_WINDOW_BURST), 100.0 * FLEET_WINDOW_BURST));
    let mut burst = QuotaGroup::new(QuotaConfig { cu_per_second: 100.0, burst: 30.0, ..QuotaConfig::default() }, at(0));
    burst.join_fleet(at(0));
    let ask = burst.lease_ask_now(at(0)).unwrap();
    assert_eq!((ask.rate, ask.burst), (100.0, 30.0), "a configured burst is token-bucket terms: asked as it is");
}

/// Four members of a 100 CU/s plan on one store (a 2 ms round trip), each
/// trying 1-CU charges at random, `demand` CU/s in all, in bursts: the
/// charges each member made, by millisecond.
fn fleet_charges(config: QuotaConfig, demand: f64, ms: u64) -> Vec<u64> {
    let mut store = FleetBucket::default();
    let mut rng = SeededRandom::new(11);
    let mut members: Vec<QuotaGroup> = (0..4).map(|_| QuotaGroup::new(config, at(0))).collect();
    let mut answers: Vec<(u64, usize, f64, crate::policy::lease::LeaseGrant)> = Vec::new();
    let mut charged = Vec::new();
    for m in members.iter_mut() {
        m.join_fleet(at(0));
    }
    for now in 0..ms {
        answers.retain(|&(due, m, want, grant)| {
            if due > now {
                return true;
            }
            members[m].lease_granted(at(now), want, grant);
            false
        });
        // Demand comes in waves: a calm half-second, then twice the mean.
        let busy = (now / 500) % 2 == 1;
        let per_ms = demand / 1000.0 * if busy { 1.6 } else { 0.4 } / 4.0;
        for (i, m) in members.iter_mut().enumerate() {
            if rng.next_unit() < per_ms && m.charge(at(now), 1.0).is_ok() {
                charged.push(now);
            }
            if let Some(ask) = m.take_lease_ask() {
                let grant = store.ask(at(now + 1), i as u64, ask);
                answers.push((now + 2, i, ask.want, grant));
            }
        }
    }
    charged
}

fn busiest_second(charged: &[u64]) -> usize {
    (0..charged.last().copied().unwrap_or(0))
        .map(|start| charged.iter().filter(|&&t| t >= start && t < start + 1000).count())
        .max()
        .unwrap_or(0)
}

#[test]
fn four_members_of_a_per_second_plan_never_put_more_than_it_in_any_second() {
    let plan = QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() };
    let charged = fleet_charges(plan, 95.0, 20_000);
    let busiest = busiest_second(&charged);
    assert!(busiest <= 100, "busiest second {busiest} CU on a 100 CU/s plan");
    assert!(
        charged.len() as f64 >= 20.0 * 100.0 * (1.0 - FLEET_WINDOW_BURST) * 0.8,
        "and the plan is used: {}",
        charged.len()
    );
    // Token-bucket terms at the plan's full rate (what a per-second plan was asked before) put
    // more than the plan in some second.
    let token_bucket = QuotaConfig { cu_per_second: 100.0, burst: 100.0, ..QuotaConfig::default() };
    assert!(busiest_second(&fleet_charges(token_bucket, 95.0, 20_000)) > 100);
}

#[test]
fn back_from_spending_alone_the_group_takes_back_the_rate_it_had_while_leased() {
    use crate::policy::lease::LeaseGrant;
    let grant =
        |want: f64| LeaseGrant { granted: want, short_for: Duration::ZERO, fleet_rate: 0.0, share: f64::INFINITY };
    let mut g = QuotaGroup::new(QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() }, at(0));
    g.join_fleet(at(0));
    let ask = g.lease_ask_now(at(0)).unwrap();
    g.lease_granted(at(1), ask.want, grant(ask.want));
    assert_eq!(g.fleet_state(at(1)), Some(true));
    // The store goes away: the ask out is given up, the group spends alone, and meets 429s.
    let mut lost = None;
    for ms in 2..50 {
        let _ = g.charge(at(ms), 1.0);
        lost = lost.or(g.take_lease_ask());
    }
    assert!(lost.is_some(), "an ask went out, never to be answered");
    assert_eq!(g.fleet_state(at(3_000)), Some(false), "unanswered a period: alone");
    g.on_limited(at(3_000), None, false, 0.5);
    g.on_limited(at(6_000), None, false, 0.5);
    let lowered = g.stats().allowed_rate;
    assert!(lowered < 100.0, "the second episode alone lowered the rate: {lowered}");
    // The store is back: the first grant restores the leased rate.
    g.lease_store_back();
    let ask = g.lease_ask_now(at(20_000)).expect("asks again");
    assert!(ask.rate < 100.0 * (1.0 - FLEET_WINDOW_BURST), "asked at the lowered rate");
    g.lease_granted(at(20_001), ask.want, grant(ask.want));
    assert_eq!(g.stats().allowed_rate, 100.0, "the rate it had while leased");
    // A decrease while leased is the fleet's own and stays.
    g.on_limited(at(21_000), None, false, 0.5);
    let coordinated = g.stats().allowed_rate;
    assert!(coordinated < 100.0);
    let mut next = None;
    for ms in 30_000..30_200 {
        let _ = g.charge(at(ms), 1.0);
        next = next.or(g.take_lease_ask());
    }
    let next = next.unwrap_or_else(|| {
        panic!("spending asks again: {:?} {:?}", g.fleet_state(at(30_200)), g.check(at(30_200), 1.0))
    });
    g.lease_granted(at(30_201), next.want, grant(next.want));
    assert_eq!(g.fleet_state(at(30_201)), Some(true));
    assert_eq!(g.stats().allowed_rate, coordinated, "no restore while the lease stayed up");
}
