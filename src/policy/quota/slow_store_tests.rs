//! A store that answers, but slowly, never starves the fleet: four
//! members of a per-second plan with their store 450 ms away spend at
//! their shares instead of waiting a round trip per charge (`policy::lease`,
//! "slow"), and together still keep every second within the plan.

use std::collections::VecDeque;

use super::store_sim_tests::StoreSim;
use super::{QuotaConfig, QuotaGroup};
use crate::runtime::SeededRandom;
use crate::time::at;

/// What four members paid, by millisecond (one entry per CU), and each
/// charge's arrival and wait (ms): `demand` CU/s in all, 20 CU a charge,
/// for `ms`, each way to the store taking `one_way` ms (from, to: drawn
/// for each ask and each answer; fixed when equal).
fn fleet_on_store(plan: f64, demand: f64, ms: u64, one_way: (u64, u64), seed: u64) -> (Vec<u64>, Vec<(u64, u64)>) {
    fleet_starting_on_store(plan, demand, ms, one_way, seed, 0, 0)
}

/// The same, each member starting with `at_start` charges waiting.
fn fleet_starting_on_store(
    plan: f64,
    demand: f64,
    ms: u64,
    one_way: (u64, u64),
    seed: u64,
    at_start: u64,
    connect_ms: u64,
) -> (Vec<u64>, Vec<(u64, u64)>) {
    let config = QuotaConfig { cu_per_second: plan, ..QuotaConfig::default() };
    let mut members: Vec<QuotaGroup> = (0..4).map(|_| QuotaGroup::new(config, at(0))).collect();
    let mut waiting: Vec<VecDeque<u64>> = vec![VecDeque::new(); 4];
    // Each member's line places: joined and left in order (the waiting is FIFO).
    let (mut joined, mut left) = ([0u64; 4], [0u64; 4]);
    let mut store = StoreSim::new(one_way);
    // Arrivals and the store's delays draw from their own streams: a change in when members ask
    // leaves the arrivals as they were, so runs compare like for like.
    let mut rng = SeededRandom::new(seed);
    let mut store_rng = SeededRandom::new(seed ^ 0x5eed_5eed);
    let (mut paid, mut waits) = (Vec::new(), Vec::new());
    members.iter_mut().for_each(|m| m.join_fleet(at(0)));
    for now in 0..ms {
        // The store is reached from `connect_ms` on (a worker's first connection coming up: the
        // wrapper holds the asks made meanwhile and sends them then, `Lease::store_back`).
        if now == connect_ms && now > 0 {
            members.iter_mut().for_each(|m| m.lease_store_back(at(now)));
        }
        if now >= connect_ms {
            store.step(now, &mut members, &mut store_rng);
        }
        for (i, m) in members.iter_mut().enumerate() {
            let arrivals = if now == 0 { at_start } else { 0 };
            for _ in 0..arrivals {
                waiting[i].push_back(now);
                m.join_line(joined[i], 20.0);
                joined[i] += 1;
            }
            if rng.next_unit() < demand / 20.0 / 1000.0 / 4.0 {
                waiting[i].push_back(now);
                m.join_line(joined[i], 20.0);
                joined[i] += 1;
            }
            while let Some(&since) = waiting[i].front() {
                if m.charge(at(now), 20.0).is_err() {
                    break;
                }
                paid.extend(std::iter::repeat_n(now, 20));
                waits.push((since, now - since));
                waiting[i].pop_front();
                m.leave_line(left[i]);
                left[i] += 1;
            }
            if let Some(ask) = m.take_lease_ask() {
                store.send(now, i, ask, &mut store_rng);
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

/// The p-th percentile of the waits of charges that arrived from `from` ms on.
pub(super) fn percentile(waits: &[(u64, u64)], from: u64, p: usize) -> u64 {
    let mut w: Vec<u64> = waits.iter().filter(|(t, _)| *t >= from).map(|(_, w)| *w).collect();
    w.sort_unstable();
    w[w.len() * p / 100]
}

#[test]
fn a_slow_store_leaves_each_member_its_share_and_the_fleet_its_plan() {
    // 75 % of a 600 CU/s plan, 40 s; judged over the last 30 s.
    let (fast, _) = fleet_on_store(600.0, 450.0, 40_000, (1, 1), 5);
    let (slow, _) = fleet_on_store(600.0, 450.0, 40_000, (225, 225), 5);
    let late = |paid: &[u64]| paid.iter().filter(|&&t| t >= 10_000).count() as f64 / 30.0;
    let (fast_rate, slow_rate) = (late(&fast), late(&slow));
    // Before: every charge waited for a round trip (a member may hold only its share of the
    // fleet's burst), and the fleet got a burst per round trip: a new user's four processes, Redis
    // 300-600 ms away, were paid 26 % of their plan.
    assert!(slow_rate >= 0.9 * 450.0, "slow store: {slow_rate:.0} CU/s of 450 asked (fast store: {fast_rate:.0})");
    // Each at its share, in its own per-second window: the shares hand out 80 % of the plan, as
    // the fleet's bucket sustains (`share_beside`), so no second carries more than the plan.
    assert!(busiest_second(&slow) <= 600, "slow store: {} CU in one second", busiest_second(&slow));
    assert!(fast_rate >= 0.9 * 450.0, "fast store: {fast_rate:.0} CU/s");
}

#[test]
fn slow_store_shares_keep_every_second_within_the_plan_and_pull_each_member_to_its_need() {
    // Eight fleets (seeds) of four, their store 450 ms away: at 75 % of a 600 CU/s plan, the busiest
    // second; at 60 %, the waits.
    let busiest: Vec<usize> =
        (1..=8).map(|seed| busiest_second(&fleet_on_store(600.0, 450.0, 40_000, (225, 225), seed).0)).collect();
    let p90: Vec<u64> =
        (1..=8).map(|seed| percentile(&fleet_on_store(600.0, 360.0, 40_000, (225, 225), seed).1, 10_000, 90)).collect();
    // Shares as own over fleet rate (the unused rate split in proportion to what each got) put
    // 660-820 CU in the busiest second; handing out the whole plan in equal parts, 620-680.
    assert!(busiest.iter().all(|&b| b <= 600), "busiest seconds: {busiest:?}");
    // Each member's own per-second window queues what a shared one would not: 0.6-1.3 s at p90
    // (one seed 4.8 s: a member whose arrivals bunched drains its line at its part of the spare).
    assert!(p90.iter().filter(|&&w| w <= 1_500).count() >= 7, "p90 waits after 10 s at 60 %: {p90:?}");
}

#[test]
fn a_store_answering_up_to_a_second_late_is_slow_not_down_and_the_fleet_keeps_its_pace() {
    // Redis 300-600 ms away each way (a new user's proxy): half the asks are answered after the
    // lease's period. 60 s per seed, 75 % of a 600 CU/s plan; judged after the first 10 s.
    for seed in 1..=4 {
        let (paid, _) = fleet_on_store(600.0, 450.0, 60_000, (300, 600), seed);
        let after: Vec<u64> = paid.iter().copied().filter(|&t| t >= 10_000).collect();
        let rate = after.len() as f64 / 50.0;
        // With those answers thrown away (each one a failure that restarted the grace), the store
        // never counted as slow: members flipped between the lease and spending alone, reports
        // were counted twice, and the fleet paid 369-440 CU/s with 800-1,260 CU in its busiest
        // second (seeds 1-4).
        assert!(rate >= 395.0, "seed {seed}: {rate:.0} CU/s of 450 asked");
        let busiest = busiest_second(&paid);
        assert!(busiest <= 630, "seed {seed}: busiest second {busiest} CU");
    }
}

#[test]
fn beside_a_store_a_second_away_a_fleet_at_75_percent_drains_its_line_in_about_a_second() {
    // The same fleet's waits. Shares from what each member got gave a member with a long line the
    // spare of one with none, and the store counted as slow only from three late answers two
    // seconds after its first: seconds 1-4 paid 60-160 CU/s of 450, and the line that made took
    // 20 s to drain at the spare rate: p90 waits after the first 10 s of 2.8-5.5 s (seeds 1-4),
    // 3.2-5.2 s in the first 10 s. Shares by need, and two late answers from the first: under
    // 1.1 s and 1.5 s.
    for seed in 1..=4 {
        let (_, waits) = fleet_on_store(600.0, 450.0, 60_000, (300, 600), seed);
        let start = percentile(&waits[..waits.partition_point(|(t, _)| *t < 10_000)], 0, 90);
        let after = percentile(&waits, 10_000, 90);
        assert!(start <= 2_000, "seed {seed}: p90 wait in the first 10 s {start} ms");
        assert!(after <= 1_300, "seed {seed}: p90 wait after 10 s {after} ms");
    }
}

#[test]
fn at_any_distance_from_its_store_a_fleet_at_75_percent_waits_about_a_second_at_p90() {
    // A store 20-60, 50-100 and 100-250 ms away each way (another zone, another region): answers
    // within a quarter period, so leasing went on while each member, holding one 20 CU charge or
    // so, was paid one per round trip: p90 waits after 10 s of 1.7-4.8 s, 7.6-9.8 s (reads past a
    // 10 s deadline), 2.8-5.9 s (seeds 1-4). An answer is now late past half of what a member may
    // hold lasts at its demand (`lease::store_speed`).
    for one_way in [(20, 60), (50, 100), (100, 250)] {
        for seed in 1..=4 {
            let (_, waits) = fleet_on_store(600.0, 450.0, 60_000, one_way, seed);
            let p90 = percentile(&waits, 10_000, 90);
            let worst = waits.iter().map(|&(_, w)| w).max().unwrap_or(0);
            // 1,400: seed 4 at 20-60 ms waits 1,358 ms with the store's one-second window, 1,203
            // as token-bucket terms; over 12 seeds the mean p90 is 977 against 953 at that
            // distance, 928 against 926 at 100-250 ms (a fast store's is where the window pays).
            assert!(p90 <= 1_400, "store {one_way:?} ms away, seed {seed}: p90 wait after 10 s {p90} ms");
            assert!(worst < 5_000, "store {one_way:?} ms away, seed {seed}: a wait of {worst} ms");
        }
    }
}

#[test]
fn beside_a_fast_store_a_fleet_at_85_percent_of_a_per_second_plan_is_paid_its_demand() {
    // As token-bucket terms (burst + rate = the plan) the fleet's bucket sustained 80 %: at 85 %
    // it was paid 476-480 CU/s of 510 and its line grew (p90 waits after 10 s 3.1-6.0 s, seeds
    // 1-4). With the store's one-second window (`fleet_bucket/window.rs`): 487-527, 0.7-1.4 s,
    // and still no second over the plan.
    for seed in 1..=4 {
        let (paid, waits) = fleet_on_store(600.0, 510.0, 60_000, (0, 1), seed);
        let p90 = percentile(&waits, 10_000, 90);
        assert!(p90 <= 1_500, "seed {seed}: p90 wait after 10 s {p90} ms");
        let busiest = busiest_second(&paid);
        assert!(busiest <= 600, "seed {seed}: {busiest} CU in a second");
    }
}

#[test]
fn a_fleet_starting_with_a_backlog_while_its_store_connects_keeps_every_second_within_the_plan() {
    // Four members each start with five 20 CU charges waiting (then 75 % of the plan between
    // them) and reach the store only 0.3–1.5 s in (a worker's first connection coming up): until
    // then each spends its cold share alone. Before what they spent alone was paid for (the
    // grant that puts a lease up pays it first, the rest is told to the store:
    // `lease/spent_alone.rs`), their first grants came from a bucket starting full on top of it:
    // 600–700 CU in the busiest second, every seed over the plan at a 1 s connection.
    for connect in [300, 1_000, 1_500] {
        for one_way in [(1, 1), (20, 60)] {
            for seed in 1..=8 {
                let (paid, _) = fleet_starting_on_store(600.0, 450.0, 6_000, one_way, seed, 5, connect);
                let busiest = busiest_second(&paid);
                assert!(busiest <= 600, "connected at {connect} ms, {one_way:?} each way, seed {seed}: {busiest} CU");
            }
        }
    }
}
