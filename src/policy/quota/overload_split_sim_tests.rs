//! Equal members of a fleet past their key's plan fail alike. Four workers
//! with the same demand (Poisson arrivals, 120 % of a 30 requests/s plan
//! kept per second), the store a millisecond or two away, 30 s deadlines:
//! a read is shed at once when its wait, reckoned twice, would pass its
//! deadline (`PipelineState::behind_its_plans`). Each reckoning its wait by
//! its own line at its own part of the rate, the members shed apart: one
//! served less lately reckoned longer, shed more, kept younger reads and
//! was served later still (a new user's four workers: in 14 of 96 seconds
//! one failed ≥ 80 % of its reads while another failed none). Reckoned by
//! the fleet's one line at the fleet's rate (`QuotaGroup::fleet_line`, the
//! other members' lines as the store last said them), they shed alike.

use std::collections::VecDeque;

use super::store_sim_tests::{joined_fleet, StoreSim};
use super::{line_place, line_wait};
use crate::runtime::SeededRandom;
use crate::time::at;

/// Per member, per second of arrival: (reads, failed), for `ms` at `each_per_s` reads a second.
fn overloaded_fleet(n: usize, each_per_s: f64, ms: u64, deadline: u64, seed: u64) -> Vec<Vec<(u32, u32)>> {
    let mut members = joined_fleet(n, 30.0);
    let mut waiting: Vec<VecDeque<(u64, u64)>> = vec![VecDeque::new(); n];
    let mut store = StoreSim::new((1, 3));
    let mut rng = SeededRandom::new(seed);
    let mut tally = vec![vec![(0u32, 0u32); (ms / 1000) as usize + 1]; n];
    let mut order = 0u64;
    for now in 0..ms {
        store.step(now, &mut members, &mut rng);
        for (i, m) in members.iter_mut().enumerate() {
            if rng.next_unit() < each_per_s / 1000.0 {
                let s = (now / 1000) as usize;
                tally[i][s].0 += 1;
                // As `PlanLine::wait_for` reckons it (one group, reads of 1 CU).
                let wait = line_wait(m.line_cu(), 1.0, m.serving_rate(at(now)), m.fleet_line(at(now)));
                let ahead = m.line() > 0;
                if ahead && wait.is_some_and(|w| w.as_secs_f64() * 2000.0 > deadline as f64) {
                    tally[i][s].1 += 1; // shed at once
                } else {
                    let place = line_place(at(now), order);
                    order += 1;
                    waiting[i].push_back((now, place));
                    m.join_line(place, 1.0);
                }
            }
            while let Some(&(since, place)) = waiting[i].front() {
                let expired = now - since > deadline;
                if !expired && m.charge(at(now), 1.0).is_err() {
                    break;
                }
                tally[i][(since / 1000) as usize].1 += u32::from(expired);
                waiting[i].pop_front();
                m.leave_line(place);
            }
            if let Some(ask) = m.take_lease_ask() {
                store.send(now, i, ask, &mut rng);
            }
        }
    }
    tally
}

#[test]
fn equal_members_past_the_plan_fail_alike() {
    for seed in 1..=3 {
        let tally = overloaded_fleet(4, 9.0, 150_000, 30_000, seed);
        let seconds = 20..tally[0].len() - 35; // arrivals whose fate is known by the end
                                               // Seconds in which one member failed ≥ 80 % of its reads while another failed none.
        let apart = seconds
            .clone()
            .filter(|&s| {
                let failed = |m: &Vec<(u32, u32)>| (m[s].0 > 0).then(|| f64::from(m[s].1) / f64::from(m[s].0));
                let rates: Vec<f64> = tally.iter().filter_map(failed).collect();
                rates.iter().any(|&r| r >= 0.8) && rates.contains(&0.0)
            })
            .count();
        let failed: Vec<f64> = (tally.iter())
            .map(|m| {
                let (reads, failed) = m[seconds.clone()].iter().fold((0, 0), |(r, f), x| (r + x.0, f + x.1));
                f64::from(failed) / f64::from(reads)
            })
            .collect();
        let (least, most) = failed.iter().fold((1.0f64, 0.0f64), |(l, h), &f| (l.min(f), h.max(f)));
        let all = failed.iter().sum::<f64>() / failed.len() as f64;
        // Each by its own line: 4-11 such seconds, 14.1-23.5 % failed, 16.6-21.4 % in all; now
        // none, 15.8-23.6 % (within 3.7 points of each other), 17.3-21.9 % in all.
        assert!(apart <= 1, "seed {seed}: {apart} seconds one member failed alone; failed {failed:?}");
        assert!(most - least <= 0.05, "seed {seed}: failed {failed:?}");
        assert!(all <= 0.23, "seed {seed}: {all:.3} failed of 120 % of the plan: no more is shed than needs be");
    }
}
