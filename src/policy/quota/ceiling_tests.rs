//! A learned ceiling's upward probe (`ceiling.rs`), on the simulated clock.

use std::time::Duration;

use super::super::{QuotaConfig, QuotaDenied, QuotaGroup};
use crate::time::{at, Instant};

/// An unknown plan learned at 10 CU/s (100 CU over ten seconds at the first 429), grown back to it.
fn learned_at_ten() -> (QuotaGroup, u64) {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    for i in 0..100 {
        g.charge(at(i * 100), 1.0).unwrap();
    }
    g.on_limited(at(10_000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 5.0);
    let mut t = 10_000;
    while g.stats().allowed_rate < 10.0 {
        t += 10_000;
        g.on_success(at(t), 0.5);
    }
    (g, t)
}

/// Demand above the rate: a charge refused for want of CU.
fn press(g: &mut QuotaGroup, now: Instant) {
    while g.charge(now, 1.0).is_ok() {}
    assert!(matches!(g.check(now, 1.0), Err(QuotaDenied::Exhausted(_))));
}

#[test]
fn a_pressed_learned_ceiling_probes_after_three_calm_windows_and_each_calm_step_doubles() {
    let (mut g, t) = learned_at_ten();
    press(&mut g, at(t + 29_000));
    g.on_success(at(t + 29_000), 0.5);
    assert_eq!(g.stats().allowed_rate, 10.0, "three calm windows first");
    press(&mut g, at(t + 30_000));
    g.on_success(at(t + 30_000), 0.5);
    assert!((g.stats().allowed_rate - 10.5).abs() < 1e-9, "+5 %: {}", g.stats().allowed_rate);
    press(&mut g, at(t + 40_000));
    g.on_success(at(t + 40_000), 0.5);
    assert!((g.stats().allowed_rate - 11.55).abs() < 1e-9, "+10 % one calm window later");
    press(&mut g, at(t + 50_000));
    g.on_success(at(t + 50_000), 0.5);
    assert!((g.stats().allowed_rate - 13.86).abs() < 1e-9, "+20 %");
}

#[test]
fn a_probe_a_limit_ends_at_once_waits_twice_as_long_next_time() {
    let (mut g, t) = learned_at_ten();
    press(&mut g, at(t + 30_000));
    g.on_success(at(t + 30_000), 0.5);
    g.on_limited(at(t + 31_000), Some(Duration::ZERO), false, 0.5);
    let mut now = t + 31_000;
    while g.stats().allowed_rate < 10.0 {
        now += 10_000;
        g.on_success(at(now), 0.5);
    }
    press(&mut g, at(now + 30_000));
    g.on_success(at(now + 30_000), 0.5);
    assert_eq!(g.stats().allowed_rate, 10.0, "three windows are not enough after a failed probe");
    press(&mut g, at(now + 60_000));
    g.on_success(at(now + 60_000), 0.5);
    assert!((g.stats().allowed_rate - 10.5).abs() < 1e-9, "six are");
}

#[test]
fn a_plan_is_learned_from_what_the_provider_accepted_in_the_last_second() {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    for i in 0..72 {
        g.charge(at(i * 125), 1.0).unwrap(); // 8 CU/s for nine seconds
        g.on_accepted(at(i * 125 + 30), 1.0);
    }
    for i in 0..40 {
        g.charge(at(9_010 + i * 24), 1.0).unwrap(); // then 40 in the tenth
        if i < 30 {
            g.on_accepted(at(9_040 + i * 24), 1.0); // of which the provider took 30
        }
    }
    g.on_limited(at(10_000), Some(Duration::ZERO), false, 0.5);
    let allowed = g.stats().allowed_rate;
    assert!(
        (allowed - 27.0).abs() < 1e-9,
        "90 % of the 30 accepted: not of the 40 sent, nor of the 11.2 mean: {allowed}"
    );
}

#[test]
fn a_quiet_clients_chance_second_is_not_its_plan() {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    for i in 0..10 {
        g.charge(at(i * 1_000), 1.0).unwrap(); // one a second
    }
    g.charge(at(9_500), 1.0).unwrap();
    g.charge(at(9_900), 1.0).unwrap(); // three in the last second, by chance
    g.on_limited(at(10_000), Some(Duration::ZERO), false, 0.5);
    assert!((g.stats().allowed_rate - 0.6).abs() < 1e-9, "half the 1.2 CU/s mean: {}", g.stats().allowed_rate);
}

#[test]
fn the_429s_of_what_was_sent_before_a_plan_was_learned_are_one_episode() {
    let mut fresh = QuotaGroup::new(QuotaConfig::default(), at(0));
    for i in 0..100 {
        fresh.charge(at(i * 100), 1.0).unwrap();
    }
    fresh.on_limited(at(10_000), Some(Duration::ZERO), false, 0.5);
    fresh.on_limited(at(11_400), Some(Duration::ZERO), false, 0.5);
    assert_eq!(fresh.stats().allowed_rate, 5.0, "the provider's window still held the unpaced second");
    fresh.on_limited(at(11_600), Some(Duration::ZERO), false, 0.5);
    assert_eq!(fresh.stats().allowed_rate, 2.5, "past it, a 429 is news");
}

#[test]
fn requests_in_the_groups_line_press_on_the_ceiling_too() {
    let (mut g, t) = learned_at_ten();
    g.join_line(1, 1.0);
    g.on_success(at(t + 30_000), 0.5);
    assert!((g.stats().allowed_rate - 10.5).abs() < 1e-9, "a request waits its turn: a probe");
}

#[test]
fn an_idle_ceiling_does_not_drift_up() {
    let (mut g, t) = learned_at_ten();
    g.on_success(at(t + 60_000), 0.5);
    assert_eq!(g.stats().allowed_rate, 10.0, "nothing waited: no evidence the key allows more");
}

#[test]
fn a_limit_sends_a_probe_step_back_whole_and_one_that_stood_down_by_a_twentieth_twice_however_long_ago() {
    let (mut g, t) = learned_at_ten();
    for (k, dt) in [30_000, 40_000, 50_000].into_iter().enumerate() {
        press(&mut g, at(t + dt));
        g.on_success(at(t + dt), 0.5);
        assert!(g.stats().allowed_rate > 10.0 + k as f64 * 0.5);
    }
    g.on_limited(at(t + 51_000), Some(Duration::ZERO), false, 0.5);
    assert!((g.stats().allowed_rate - 11.55).abs() < 1e-9, "the step just taken (to 13.86) goes back whole");
    g.on_limited(at(t + 52_400), Some(Duration::ZERO), false, 0.5);
    assert!((g.stats().allowed_rate - 11.55).abs() < 1e-9, "the probe's residue lowers nothing");
    g.on_limited(at(t + 53_000), Some(Duration::ZERO), false, 0.5);
    let settled = 11.55 * 0.95;
    assert!((g.stats().allowed_rate - settled).abs() < 1e-9, "11.55 stood a window: down to 95 % of it, no halving");
    g.on_limited(at(t + 54_400), Some(Duration::ZERO), false, 0.5);
    assert!((g.stats().allowed_rate - settled).abs() < 1e-9, "its residue lowers nothing either");
    // Ten calm minutes, below the first probe's wait (doubled per step back: 3 × 2² windows).
    for k in 1..=60 {
        g.on_success(at(t + 54_400 + k * 10_000), 0.5);
    }
    let later = t + 54_400 + 600_000;
    assert!((g.stats().allowed_rate - settled).abs() < 1e-9, "no probe: {}", g.stats().allowed_rate);
    g.on_limited(at(later + 1_000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 10.5, "however long it stood: 95 % again, but not below the step under it");
    g.on_limited(at(later + 3_000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 5.25, "a third limit without a new step is an ordinary one: halved");
    let mut now = later + 3_000;
    for _ in 0..40 {
        now += 10_000;
        g.on_success(at(now), 0.5);
    }
    assert_eq!(g.stats().allowed_rate, 10.5 * 0.95, "grows back to 95 % of the ceiling it was limited at");
}

#[test]
fn a_new_calm_step_lets_a_limit_send_a_step_that_stood_back_again() {
    let (mut g, t) = learned_at_ten();
    for dt in [30_000, 40_000, 50_000] {
        press(&mut g, at(t + dt));
        g.on_success(at(t + dt), 0.5);
    }
    for dt in [51_000, 53_000, 55_000] {
        g.on_limited(at(t + dt), Some(Duration::ZERO), false, 0.5);
    }
    assert_eq!(g.stats().allowed_rate, 10.5, "back whole, then twice by a twentieth (the second stops at 10.5)");
    // Three steps sent back: the next probe waits 3 × 2³ calm windows.
    press(&mut g, at(t + 55_000 + 240_000));
    g.on_success(at(t + 55_000 + 240_000), 0.5);
    assert!((g.stats().allowed_rate - 11.025).abs() < 1e-9, "a new probe: {}", g.stats().allowed_rate);
    g.on_limited(at(t + 296_000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 10.5, "the step just taken goes back whole");
    g.on_limited(at(t + 298_000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(
        g.stats().allowed_rate,
        10.0,
        "10.5 stood and a step came since: sent back, to the learned 10, not halved"
    );
}

#[test]
fn every_step_back_makes_the_next_probe_wait_longer_a_calm_step_does_not_undo_it() {
    let (mut g, t) = learned_at_ten();
    press(&mut g, at(t + 30_000));
    g.on_success(at(t + 30_000), 0.5);
    press(&mut g, at(t + 40_000));
    g.on_success(at(t + 40_000), 0.5);
    assert!((g.stats().allowed_rate - 11.55).abs() < 1e-9, "two calm steps");
    g.on_limited(at(t + 41_000), Some(Duration::ZERO), false, 0.5);
    g.on_limited(at(t + 43_000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 10.0, "two steps back");
    // Two probes failed: the next waits 3 × 2² = 12 calm windows, not 3 (a fleet that passed
    // one calm step above its key and stepped back later probed every third window).
    press(&mut g, at(t + 43_000 + 110_000));
    g.on_success(at(t + 43_000 + 110_000), 0.5);
    assert_eq!(g.stats().allowed_rate, 10.0, "eleven windows are not enough");
    press(&mut g, at(t + 43_000 + 120_000));
    g.on_success(at(t + 43_000 + 120_000), 0.5);
    assert!((g.stats().allowed_rate - 10.5).abs() < 1e-9, "twelve are");
}

#[test]
fn a_configured_plan_never_probes_above_itself() {
    let mut g = QuotaGroup::new(QuotaConfig { cu_per_second: 10.0, ..QuotaConfig::default() }, at(0));
    for s in 1..10 {
        press(&mut g, at(s * 10_000));
        g.on_success(at(s * 10_000), 0.5);
    }
    assert_eq!(g.stats().allowed_rate, 10.0);
}

mod sim_tests {
    use std::collections::VecDeque;

    use super::super::super::{QuotaConfig, QuotaGroup};
    use crate::runtime::SeededRandom;
    use crate::time::at;

    /// One relayer with no configured plan on a 30 CU/s key (kept per
    /// second), 8 reads a second for 20 s, then 40: another client's burst
    /// at 5 s puts 25 CU on the key. Returns (CU paid in minutes 6-8, 429s).
    fn learned_low_then_pressed(probing: bool, seed: u64) -> (usize, usize) {
        let demand = |now: u64| if now < 20_000 { 8.0 } else { 40.0 };
        on_a_thirty_key(demand, Some(5_000), probing, seed, 360_000..480_000)
    }

    /// One relayer with no configured plan on a 30 CU/s key (kept per
    /// second) for eight minutes, reads arriving at `demand(ms)` a second,
    /// another client's burst of 25 CU at `foreign`. Returns (CU paid
    /// within `paid_in`, 429s).
    fn on_a_thirty_key(
        demand: impl Fn(u64) -> f64,
        foreign: Option<u64>,
        probing: bool,
        seed: u64,
        paid_in: std::ops::Range<u64>,
    ) -> (usize, usize) {
        let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
        let mut rng = SeededRandom::new(seed);
        let mut window: VecDeque<u64> = VecDeque::new();
        let (mut waiting, mut paid, mut refused) = (0usize, 0usize, 0usize);
        for now in 0..480_000u64 {
            while window.front().is_some_and(|&t| t + 1000 <= now) {
                window.pop_front();
            }
            if foreign == Some(now) {
                window.extend(std::iter::repeat_n(now, 25));
            }
            if rng.next_unit() < demand(now) / 1000.0 {
                waiting += 1;
            }
            while waiting > 0 && g.charge(at(now), 1.0).is_ok() {
                if window.len() >= 30 {
                    refused += 1;
                    g.on_limited(at(now), None, false, rng.next_unit());
                    break;
                }
                window.push_back(now);
                g.on_accepted(at(now), 1.0);
                g.on_success(at(now), rng.next_unit());
                waiting -= 1;
                paid += usize::from(paid_in.contains(&now));
            }
            if !probing {
                g.pressed = None;
            }
        }
        (paid, refused)
    }

    #[test]
    fn a_ceiling_learned_low_from_a_foreign_burst_climbs_back_to_the_key_when_pressed() {
        for seed in 1..=4 {
            let (paid, refused) = learned_low_then_pressed(true, seed);
            let rate = paid as f64 / 120.0;
            assert!(rate >= 25.0, "seed {seed}: {rate:.1} CU/s of a 30 CU/s key in minutes 6-8");
            assert!(refused <= 10, "seed {seed}: {refused} 429s in eight minutes");
            let (kept, _) = learned_low_then_pressed(false, seed);
            assert!((kept as f64 / 120.0) < 16.0, "seed {seed}: without probing the ceiling stays low");
        }
    }

    #[test]
    fn a_plan_measured_at_its_first_429_is_served_at_once_not_halved_and_regrown() {
        for seed in 1..=4 {
            // 40 reads a second from the start: the first 429 comes within seconds.
            let (paid, refused) = on_a_thirty_key(|_| 40.0, None, true, seed, 0..120_000);
            let rate = paid as f64 / 120.0;
            assert!(rate >= 25.0, "seed {seed}: {rate:.1} CU/s of a 30 CU/s key in the first two minutes");
            assert!(refused <= 10, "seed {seed}: {refused} 429s in eight minutes");
        }
    }
}
