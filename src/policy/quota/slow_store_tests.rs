//! A store that answers, but slowly, never starves the fleet: four
//! members of a per-second plan with their store 450 ms away spend at
//! their shares instead of waiting a round trip per charge (`policy::lease`,
//! "slow"), and together still keep every second within the plan.

use std::collections::VecDeque;

use super::{QuotaConfig, QuotaGroup};
use crate::policy::fleet_bucket::FleetBucket;
use crate::runtime::SeededRandom;
use crate::time::at;

/// What four members paid, by millisecond (one entry per CU), and each
/// charge's arrival and wait (ms): `demand` CU/s in all, 20 CU a charge,
/// for `ms`, each ask answered `store_ms` later.
fn fleet_on_store(plan: f64, demand: f64, ms: u64, store_ms: u64) -> (Vec<u64>, Vec<(u64, u64)>) {
    fleet_on_store_seeded(plan, demand, ms, store_ms, 5)
}

fn fleet_on_store_seeded(plan: f64, demand: f64, ms: u64, store_ms: u64, seed: u64) -> (Vec<u64>, Vec<(u64, u64)>) {
    fleet_on_store_jittered(plan, demand, ms, (store_ms / 2, store_ms / 2), seed)
}

/// As `fleet_on_store`, each way to the store taking `one_way` ms (from, to: drawn uniformly
/// for each ask and each answer).
fn fleet_on_store_jittered(
    plan: f64,
    demand: f64,
    ms: u64,
    one_way: (u64, u64),
    seed: u64,
) -> (Vec<u64>, Vec<(u64, u64)>) {
    let config = QuotaConfig { cu_per_second: plan, ..QuotaConfig::default() };
    let mut members: Vec<QuotaGroup> = (0..4).map(|_| QuotaGroup::new(config, at(0))).collect();
    let mut waiting: Vec<VecDeque<u64>> = vec![VecDeque::new(); 4];
    let mut store = FleetBucket::default();
    let mut rng = SeededRandom::new(seed);
    let mut answers: Vec<(u64, usize, f64, crate::policy::lease::LeaseGrant)> = Vec::new();
    let mut asks: Vec<(u64, usize, crate::policy::lease::LeaseAsk)> = Vec::new();
    let way = |rng: &mut SeededRandom| {
        let (from, to) = one_way;
        from + ((to - from) as f64 * if to > from { rng.next_unit() } else { 0.0 }) as u64
    };
    let (mut paid, mut waits) = (Vec::new(), Vec::new());
    members.iter_mut().for_each(|m| m.join_fleet(at(0)));
    for now in 0..ms {
        // The store takes asks in the order they reach it.
        asks.sort_by_key(|&(due, _, _)| due);
        while asks.first().is_some_and(|&(due, _, _)| due <= now) {
            let (_, m, ask) = asks.remove(0);
            let back = way(&mut rng);
            answers.push((now + back, m, ask.want, store.ask(at(now), m as u64, ask)));
        }
        answers.retain(|&(due, m, want, grant)| {
            if due > now {
                return true;
            }
            members[m].lease_granted(at(now), want, grant);
            false
        });
        for (i, m) in members.iter_mut().enumerate() {
            if rng.next_unit() < demand / 20.0 / 1000.0 / 4.0 {
                waiting[i].push_back(now);
            }
            while let Some(&since) = waiting[i].front() {
                if m.charge(at(now), 20.0).is_err() {
                    break;
                }
                paid.extend(std::iter::repeat_n(now, 20));
                waits.push((since, now - since));
                waiting[i].pop_front();
            }
            if let Some(ask) = m.take_lease_ask() {
                asks.push((now + way(&mut rng), i, ask));
            }
        }
    }
    (paid, waits)
}

fn busiest_second(paid: &[u64]) -> usize {
    let mut most = 0;
    let mut from = 0;
    for (to, &t) in paid.iter().enumerate() {
        while paid[from] + 1000 <= t {
            from += 1;
        }
        most = most.max(to - from + 1);
    }
    most
}

#[test]
fn a_slow_store_leaves_each_member_its_share_and_the_fleet_its_plan() {
    // 75 % of a 600 CU/s plan, 40 s; judged over the last 30 s.
    let (fast, fast_waits) = fleet_on_store(600.0, 450.0, 40_000, 2);
    let (slow, slow_waits) = fleet_on_store(600.0, 450.0, 40_000, 450);
    let late = |paid: &[u64]| paid.iter().filter(|&&t| t >= 10_000).count() as f64 / 30.0;
    // Arrivals after the first 10 s: a store slow from the start is leased from until the lease has
    // been up `SLOW_GRACE` and three answers came late (~3.4 s here), and that backlog drains first.
    let p90 = |waits: &[(u64, u64)]| percentile(waits, 10_000, 90);
    let (fast_rate, slow_rate) = (late(&fast), late(&slow));
    // Before: every charge waited for a round trip (a member may hold only its share of the
    // fleet's burst), and the fleet got a burst per round trip: a new user's four processes, Redis
    // 300-600 ms away, were paid 26 % of their plan.
    assert!(slow_rate >= 0.9 * 450.0, "slow store: {slow_rate:.0} CU/s of 450 asked (fast store: {fast_rate:.0})");
    // A fast store sustains 80 % of a per-second plan (its burst is the rest: `fleet_terms`), so at
    // 75 % requests queue there too (p90 480 ms here).
    let (slow_p90, fast_p90) = (p90(&slow_waits), p90(&fast_waits));
    assert!(
        slow_p90 <= 700 && slow_p90 * 2 <= fast_p90 * 3,
        "slow store: p90 wait {slow_p90} ms (fast: {fast_p90} ms)"
    );
    let whole = percentile(&slow_waits, 0, 99);
    assert!(whole <= 4_000, "slow store: p99 wait over the whole run {whole} ms");
    // Each at its share, in its own per-second window: the fleet near the plan in its busiest
    // second (own rates over ten seconds against the store's decayed fleet rate, which comes a round
    // trip late; shares grow at most 2 % of the plan a second: measured 660, 720 at 5 %).
    assert!(busiest_second(&slow) <= 690, "slow store: {} CU in one second", busiest_second(&slow));
    assert!(fast_rate >= 0.9 * 450.0, "fast store: {fast_rate:.0} CU/s");
}

/// The p-th percentile of the waits of charges that arrived from `from` ms on.
fn percentile(waits: &[(u64, u64)], from: u64, p: usize) -> u64 {
    let mut w: Vec<u64> = waits.iter().filter(|(t, _)| *t >= from).map(|(_, w)| *w).collect();
    w.sort_unstable();
    w[w.len() * p / 100]
}

#[test]
fn slow_store_shares_keep_every_second_within_the_plan_and_pull_each_member_to_its_need() {
    // Eight fleets (seeds) of four at 75 % of a 600 CU/s plan, their store 450 ms away.
    let runs: Vec<_> = (1..=8).map(|seed| fleet_on_store_seeded(600.0, 450.0, 40_000, 450, seed)).collect();
    let busiest: Vec<usize> = runs.iter().map(|(paid, _)| busiest_second(paid)).collect();
    let p90: Vec<u64> = runs.iter().map(|(_, waits)| percentile(waits, 10_000, 90)).collect();
    // Shares as own over fleet rate (the unused rate split in proportion to what each got) put
    // 660-820 CU in the busiest second, and waited 0.6-5.4 s at p90 (seeds 1-8).
    assert!(busiest.iter().all(|&b| b <= 690), "busiest seconds: {busiest:?}");
    // One seed still waits seconds: a member whose arrivals bunched drains its line at its equal
    // part of the spare rate only (2.5 s at p90 here).
    assert!(p90.iter().filter(|&&w| w <= 800).count() >= 7, "p90 waits after 10 s: {p90:?}");
}

#[test]
fn a_store_answering_up_to_a_second_late_is_slow_not_down_and_the_fleet_keeps_its_pace() {
    // Redis 300-600 ms away each way (a new user's proxy): half the asks are answered after the
    // lease's period. 60 s per seed, 75 % of a 600 CU/s plan; judged after the first 10 s.
    for seed in 1..=4 {
        let (paid, waits) = fleet_on_store_jittered(600.0, 450.0, 60_000, (300, 600), seed);
        let after: Vec<u64> = paid.iter().copied().filter(|&t| t >= 10_000).collect();
        let rate = after.len() as f64 / 50.0;
        let (p90, busiest, settled) = (percentile(&waits, 10_000, 90), busiest_second(&paid), busiest_second(&after));
        // With those answers thrown away (each one a failure that restarted the grace), the store
        // never counted as slow: members flipped between the lease and spending alone, reports
        // were counted twice, and the fleet paid 369-440 CU/s with p90 waits of 2.8-6.5 s and
        // 800-1,260 CU in its busiest second (seeds 1-4).
        assert!(rate >= 420.0, "seed {seed}: {rate:.0} CU/s of 450 asked");
        assert!(p90 <= 1_500, "seed {seed}: p90 wait {p90} ms after the first 10 s");
        assert!(
            settled <= 690 && busiest <= 760,
            "seed {seed}: busiest second {settled} CU after 10 s, {busiest} in all"
        );
    }
}
