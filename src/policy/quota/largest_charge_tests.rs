//! One large charge does not size a fleet member's lease for good: four
//! members of a 30 requests/s key, each making its first charge 2 CU (a
//! fresh endpoint's chain check riding in one batch with its first read)
//! and 1 CU reads after, evenly paced. Sized by the largest charge ever,
//! every grant was 2 CU held a quarter period, half of it expiring unspent
//! between reads: waits of 130–550 ms at p90 at any load (a new user's
//! fleet at half its key: 200–380 ms at the median). Sized by the largest
//! of the recent charges that are not rare (`lease::charge_sizes`), a round trip or so.

use std::collections::VecDeque;

use super::slow_store_tests::percentile;
use super::store_sim_tests::StoreSim;
use super::{QuotaConfig, QuotaGroup};
use crate::runtime::SeededRandom;
use crate::time::at;

/// Each read's arrival and wait (ms): four members each sending `each_per_s` reads of 1 CU
/// (the first 2 CU), evenly paced, on a 30 CU/s plan kept per second, the store `one_way` away.
fn paced_fleet(each_per_s: f64, ms: u64, one_way: (u64, u64)) -> Vec<(u64, u64)> {
    let config = QuotaConfig { cu_per_second: 30.0, ..QuotaConfig::default() };
    let mut members: Vec<QuotaGroup> = (0..4).map(|_| QuotaGroup::new(config, at(0))).collect();
    let mut waiting: Vec<VecDeque<u64>> = vec![VecDeque::new(); 4];
    // Each member's line places: joined and left in order (the waiting is FIFO).
    let (mut joined, mut left) = ([0u64; 4], [0u64; 4]);
    let mut charged = [false; 4];
    let mut store = StoreSim::new(one_way);
    let mut rng = SeededRandom::new(7);
    let mut waits = Vec::new();
    members.iter_mut().for_each(|m| m.join_fleet(at(0)));
    let gap = 1000.0 / each_per_s;
    let mut next: Vec<f64> = (0..4).map(|i| gap * i as f64 / 4.0 + 3.0 * i as f64).collect();
    for now in 0..ms {
        store.step(now, &mut members, &mut rng);
        for (i, m) in members.iter_mut().enumerate() {
            while next[i] <= now as f64 {
                next[i] += gap;
                waiting[i].push_back(now);
                m.join_line(joined[i], 1.0);
                joined[i] += 1;
            }
            while let Some(&since) = waiting[i].front() {
                let cost = if charged[i] { 1.0 } else { 2.0 };
                if m.charge(at(now), cost).is_err() {
                    break;
                }
                charged[i] = true;
                waits.push((since, now - since));
                waiting[i].pop_front();
                m.leave_line(left[i]);
                left[i] += 1;
            }
            if let Some(ask) = m.take_lease_ask() {
                store.send(now, i, ask, &mut rng);
            }
        }
    }
    waits
}

#[test]
fn one_large_first_charge_leaves_a_paced_fleet_waiting_a_round_trip() {
    for (each, one_way) in [(5.625, (1, 3)), (3.75, (1, 3)), (5.625, (5, 20))] {
        let waits = paced_fleet(each, 25_000, one_way);
        let p99 = percentile(&waits, 15_000, 99);
        let bound = 2 * one_way.1 + 5;
        assert!(p99 <= bound, "{each}/s each, the store {one_way:?} ms away: p99 {p99} ms after 15 s (bound {bound})");
    }
}
