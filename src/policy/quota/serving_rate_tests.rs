//! What a fleet member's queued charges drain at (`serving_rate`): its
//! part of the fleet's rate, not the whole plan. Six members on one store
//! (a 2 ms round trip), a 100 CU/s plan kept per second (74 CU/s of rate
//! beside a 26 CU burst), 26 CU charges queued while they cannot be paid.

use super::{QuotaConfig, QuotaGroup};
use crate::policy::fleet_bucket::FleetBucket;
use crate::time::at;

const MEMBERS: usize = 6;
const COST: f64 = 26.0;

/// The store's answer due at a millisecond: to member `i`, for `want`.
type Answer = (u64, usize, f64, crate::policy::lease::LeaseGrant);

/// Hands the answers due at `now` to their members.
fn deliver(answers: &mut Vec<Answer>, members: &mut [QuotaGroup], now: u64) {
    answers.retain(|&(due, i, want, grant)| {
        if due > now {
            return true;
        }
        members[i].lease_granted(at(now), want, grant);
        false
    });
}

/// Runs the fleet for `ms`, member `i` offering `offered[i]` CU/s (as
/// evenly spaced charges); returns each member's serving rate at the end
/// and the CU each was paid in the last 10 s.
fn run(offered: [f64; MEMBERS], ms: u64) -> (Vec<f64>, Vec<f64>) {
    let plan = QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() };
    let mut store = FleetBucket::default();
    let mut members: Vec<QuotaGroup> = (0..MEMBERS).map(|_| QuotaGroup::new(plan, at(0))).collect();
    members.iter_mut().for_each(|m| m.join_fleet(at(0)));
    let mut waiting = [0u32; MEMBERS];
    let mut paid_late = [0.0; MEMBERS];
    let mut answers: Vec<Answer> = Vec::new();
    for now in 0..ms {
        deliver(&mut answers, &mut members, now);
        for (i, m) in members.iter_mut().enumerate() {
            let every = (1000.0 * COST / offered[i]) as u64;
            if now % every == i as u64 {
                waiting[i] += 1;
            }
            while waiting[i] > 0 && m.charge(at(now), COST).is_ok() {
                waiting[i] -= 1;
                if now + 10_000 >= ms {
                    paid_late[i] += COST;
                }
            }
            if let Some(ask) = m.take_lease_ask() {
                answers.push((now + 2, i, ask.want, store.ask(at(now + 1), i as u64, ask)));
            }
        }
    }
    let rates = members.iter_mut().map(|m| m.serving_rate(at(ms))).collect();
    (rates, paid_late.iter().map(|cu| cu / 10.0).collect())
}

#[test]
fn a_saturated_fleets_member_drains_at_its_part_not_the_whole_plan() {
    let (rates, paid) = run([20.0; MEMBERS], 30_000);
    let fleet: f64 = paid.iter().sum();
    assert!(fleet >= 60.0, "the fleet is paid near its 74 CU/s: {fleet}");
    for (rate, paid) in rates.iter().zip(&paid) {
        // Counted at the plan's 74 CU/s, a line six times longer than this member's part
        // would have looked like it fit its deadline.
        assert!(*rate <= 2.0 * paid && *rate >= 0.5 * paid, "serving rate {rate} CU/s, paid {paid} CU/s ({rates:?})");
    }
}

#[test]
fn a_lone_busy_member_of_a_quiet_fleet_drains_at_what_the_fleet_leaves() {
    let mut offered = [1.0; MEMBERS];
    offered[0] = 90.0;
    let (rates, paid) = run(offered, 30_000);
    // 61 CU/s are left by the others; one charge per turn of the store's queue pays 52.
    assert!(paid[0] >= 45.0, "the busy member takes what the others leave: {paid:?}");
    assert!(rates[0] >= 0.8 * paid[0] && rates[0] <= 74.0, "serving rate {} CU/s, paid {}", rates[0], paid[0]);
}

#[test]
fn a_member_that_just_got_busy_in_a_saturated_fleet_is_not_counted_at_nothing() {
    let plan = QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() };
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    let _ = g.check(at(0), COST);
    let ask = g.take_lease_ask().unwrap();
    // The store: a fleet taking its whole rate, six members holding.
    let grant = crate::policy::lease::LeaseGrant {
        granted: 0.0,
        short_for: std::time::Duration::from_millis(300),
        fleet_rate: 74.0,
        share: 26.0 / 6.0,
        others_demand: None,
        others_line: None,
        windowed: false,
    };
    g.lease_granted(at(1), ask.want, grant);
    let rate = g.serving_rate(at(2));
    assert!((rate - 74.0 / 6.0).abs() < 0.5, "an equal part of the fleet's rate: {rate}");
}

#[test]
fn a_member_in_its_first_seconds_on_the_lease_is_counted_at_least_at_an_equal_part() {
    let plan = QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() };
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    // Four members starting together: this one is paid one charge, then the store is short.
    let answer = |g: &mut QuotaGroup, ms: u64, paid: bool| {
        if let Some(ask) = g.take_lease_ask() {
            let granted = if paid { ask.want.min(COST) } else { 0.0 };
            let short_for = std::time::Duration::from_millis(300);
            let grant = crate::policy::lease::LeaseGrant {
                granted,
                short_for,
                fleet_rate: 74.0,
                share: 26.0 / 4.0,
                others_demand: None,
                others_line: None,
                windowed: false,
            };
            g.lease_granted(at(ms + 5), ask.want, grant);
        }
    };
    let _ = g.check(at(0), COST);
    answer(&mut g, 0, true);
    assert_eq!(g.charge(at(6), COST), Ok(()));
    let serving = |g: &mut QuotaGroup, until: u64| {
        for ms in (100..=until).step_by(100) {
            let _ = g.check(at(ms), COST);
            answer(g, ms, false);
        }
        g.serving_rate(at(until + 6))
    };
    let young = serving(&mut g, 3_000);
    assert!(
        (young - 74.0 / 4.0).abs() < 0.5,
        "its first seconds' pay (26 CU in 3 s) says little: an equal part, {young}"
    );
    // Five seconds on, its own record counts: what it took (26 CU in 6 s), the store short.
    let settled = serving(&mut g, 6_000);
    assert!(settled < 10.0, "what it took: {settled}");
}

#[test]
fn a_fleet_back_from_a_total_outage_counts_its_lines_at_its_part_not_at_what_the_outage_let_it_take() {
    // Four members on a 200 CU/s plan (160 CU/s of rate beside a 40 CU burst), each taking 17 CU/s
    // of 1 CU reads for 10 s; then a total outage holds every read for 5 s (nothing taken); then
    // each member's 85 held reads queue for the plan at once.
    let plan = QuotaConfig { cu_per_second: 200.0, ..QuotaConfig::default() };
    let mut store = FleetBucket::default();
    let mut members: Vec<QuotaGroup> = (0..4).map(|_| QuotaGroup::new(plan, at(0))).collect();
    members.iter_mut().for_each(|m| m.join_fleet(at(0)));
    let mut waiting = [0u32; 4];
    let (mut predicted, mut drained) = ([0.0; 4], [None; 4]);
    let mut answers: Vec<Answer> = Vec::new();
    for now in 0..25_000u64 {
        deliver(&mut answers, &mut members, now);
        for (i, m) in members.iter_mut().enumerate() {
            if now < 10_000 && now % 59 == i as u64 {
                waiting[i] += 1;
            }
            if now == 15_000 {
                waiting[i] += 85;
            }
            if now == 15_050 {
                predicted[i] = m.serving_rate(at(now));
            }
            while waiting[i] > 0 && m.charge(at(now), 1.0).is_ok() {
                waiting[i] -= 1;
            }
            if now >= 15_000 && waiting[i] == 0 && drained[i].is_none() {
                drained[i] = Some(now - 15_000);
            }
            if let Some(ask) = m.take_lease_ask() {
                answers.push((now + 2, i, ask.want, store.ask(at(now + 1), i as u64, ask)));
            }
        }
    }
    for i in 0..4 {
        let ms = drained[i].expect("drained") as f64;
        let actual = 85.0 / (ms / 1000.0);
        // Counted at what the outage let it take (a few CU/s), an 85-read line looked 15-30 s long
        // and was shed at once against a 10 s deadline; it drained in about two seconds.
        assert!(
            predicted[i] >= 0.5 * actual,
            "member {i}: counted at {:.1} CU/s, drained at {actual:.1} ({drained:?})",
            predicted[i]
        );
        assert!(
            predicted[i] <= 2.0 * actual,
            "member {i}: counted at {:.1} CU/s, drained at {actual:.1}",
            predicted[i]
        );
    }
}
