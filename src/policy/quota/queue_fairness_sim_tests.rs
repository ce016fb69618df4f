//! Equal members of a fleet near their key's plan wait alike. Four workers
//! with the same demand (Poisson arrivals) on a 30 requests/s key kept per
//! second, the store a millisecond or two away, at 98 % of the plan: each
//! worker's line grows and shrinks with its own arrivals. Served alike
//! (the store's queue by what each was granted lately), the one whose
//! arrivals ran ahead keeps the longer line: a new user's four workers
//! waited 3.4 s and 11 s at the median, side by side. The store's queue
//! serves first the member whose oldest read has waited longest (one line
//! for the fleet, among members granted alike: `FleetBucket`'s
//! `SERVED_ALIKE`), so every worker's reads wait alike.

use std::collections::VecDeque;

use super::line_place;
use super::slow_store_tests::percentile;
use super::store_sim_tests::{joined_fleet, StoreSim};
use crate::runtime::SeededRandom;
use crate::time::at;

/// Each member's reads' (arrival, wait) in ms: `n` members at `each_per_s`
/// Poisson reads of 1 CU on a 30 CU/s plan kept per second, for `ms`.
fn fleet_waits(n: usize, each_per_s: f64, ms: u64, seed: u64) -> Vec<Vec<(u64, u64)>> {
    let mut members = joined_fleet(n, 30.0);
    let mut waiting: Vec<VecDeque<(u64, u64)>> = vec![VecDeque::new(); n];
    let mut store = StoreSim::new((1, 3));
    let mut rng = SeededRandom::new(seed);
    let mut waits = vec![Vec::new(); n];
    let mut order = 0u64;
    for now in 0..ms {
        store.step(now, &mut members, &mut rng);
        for (i, m) in members.iter_mut().enumerate() {
            if rng.next_unit() < each_per_s / 1000.0 {
                let place = line_place(at(now), order); // as the router makes it
                order += 1;
                waiting[i].push_back((now, place));
                m.join_line(place, 1.0);
            }
            while let Some(&(since, place)) = waiting[i].front() {
                if m.charge(at(now), 1.0).is_err() {
                    break;
                }
                waits[i].push((since, now - since));
                waiting[i].pop_front();
                m.leave_line(place);
            }
            if let Some(ask) = m.take_lease_ask() {
                store.send(now, i, ask, &mut rng);
            }
        }
    }
    waits
}

/// The `p`th percentile of each member's waits of reads that arrived after 20 s.
fn each(waits: &[Vec<(u64, u64)>], p: usize) -> Vec<u64> {
    waits.iter().map(|w| percentile(w, 20_000, p)).collect()
}

/// Reads served per second from 20 s to 120 s, whichever member.
fn paid_rate(waits: &[Vec<(u64, u64)>]) -> f64 {
    let served = waits.iter().flatten().filter(|(t, w)| (20_000..120_000).contains(&(t + w))).count();
    served as f64 / 100.0
}

#[test]
fn equal_members_near_the_plan_wait_alike() {
    // Served alike (by what each was granted lately), p50 1.4–9.4 s side by side (seed 2) and
    // 1.1–6.6 s (seed 3), p90 2.9–11.1 s; by the oldest read among members granted alike, p50
    // within 23 %, p90 within 38 % (seed 3: 6.7–9.2 s).
    for seed in 1..=4 {
        let waits = fleet_waits(4, 7.35, 120_000, seed);
        let rate = paid_rate(&waits);
        for (p, within) in [(50, 1.3), (90, 1.45)] {
            let w = each(&waits, p);
            let (least, most) = (*w.iter().min().unwrap(), *w.iter().max().unwrap());
            assert!(most as f64 <= least as f64 * within + 100.0, "seed {seed}: p{p} {w:?} ms");
        }
        // 26.9-27.2 (27.4 served alike): the fleet keeps what its members hold within the second.
        assert!(rate >= 0.88 * 30.0, "seed {seed}: the plan used, {rate} reads a second served");
    }
}
