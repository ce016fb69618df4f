//! A fleet's learned plan probed as one (`fleet_raise.rs`), on the simulated clock.

use super::super::{QuotaConfig, QuotaGroup};
use crate::policy::lease::LeaseGrant;
use crate::time::{at, Instant};

/// Answers the ask the group has out or due now, in full: its lease stays up.
fn answer(g: &mut QuotaGroup, now: Instant) {
    if let Some(ask) = g.lease_ask_now(now) {
        g.lease_granted(now, ask.want, LeaseGrant::all(ask.want));
    }
}

/// A member of a fleet that learned 30 CU/s by its count (its own 20 and
/// the others' 10 at the first 429, 5 s in), grown back to that ceiling,
/// its lease up; and when.
fn member_at_ceiling() -> (QuotaGroup, u64) {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    g.join_fleet(at(0));
    answer(&mut g, at(0));
    for i in 0..20 {
        let t = 4_001 + i * 50;
        let _ = g.charge(at(t), 1.0);
        g.on_accepted(at(t), 1.0);
        answer(&mut g, at(t));
    }
    let until = g.on_limited(at(5_000), None, false, 0.5);
    assert!(g.hear_measure(at(5_002), 10.0));
    let _ = g.check(until, 1.0);
    answer(&mut g, until);
    assert_eq!(g.take_measure(), Some(20.0));
    let mut t = 6_000;
    let mut told = 0;
    while g.stats().allowed_rate < 30.0 {
        t += 15_000;
        let before = g.stats().allowed_rate;
        g.on_success(at(t), 0.5);
        answer(&mut g, at(t));
        let grown = Some(g.stats().allowed_rate).filter(|&a| a > before);
        assert_eq!(g.take_raise(), grown, "each growth step is the fleet's: told");
        told += usize::from(grown.is_some());
    }
    assert_eq!(told, 2, "27 → 28.5 → 30");
    (g, t)
}

/// At `t`: reads waited for CU (pressed), a success, the lease answered.
fn pressed_success(g: &mut QuotaGroup, t: u64) {
    answer(g, at(t));
    g.pressed_at(at(t));
    g.on_success(at(t), 0.5);
}

#[test]
fn a_fleets_member_steps_the_learned_plan_for_the_fleet_and_tells_the_step() {
    let (mut g, t) = member_at_ceiling();
    pressed_success(&mut g, t + 29_000);
    assert_eq!(g.stats().allowed_rate, 30.0, "three calm windows first");
    pressed_success(&mut g, t + 30_000);
    let raised = g.stats().allowed_rate;
    assert!((raised - 31.5).abs() < 1e-9, "+5 %: {raised}");
    assert_eq!(g.take_raise(), Some(raised), "the step is the fleet's: told");
    assert_eq!(g.take_raise(), None, "once");
    assert_eq!(g.fleet_terms().2, raised, "the fleet's bucket is asked for the raised second");
}

#[test]
fn a_member_whose_lease_is_down_never_steps_alone() {
    let (mut g, t) = member_at_ceiling();
    g.lease_store_down(at(t + 1));
    for k in 1..=10 {
        g.pressed_at(at(t + k * 15_000));
        g.on_success(at(t + k * 15_000), 0.5);
    }
    assert_eq!(g.stats().allowed_rate, 30.0, "spending alone, a step would be its own (58 → 3,353 CU/s in a trial)");
    assert_eq!(g.take_raise(), None);
}

#[test]
fn a_member_that_learned_its_part_alone_never_probes_past_it_for_the_fleet() {
    // Its lease down at its first 429: its own 20 CU/s is its plan (learned alone), not the fleet's.
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    g.join_fleet(at(0));
    answer(&mut g, at(0));
    g.lease_store_down(at(1));
    for i in 0..20 {
        let t = 4_001 + i * 50;
        let _ = g.charge(at(t), 1.0);
        g.on_accepted(at(t), 1.0);
    }
    let until = g.on_limited(at(5_000), None, false, 0.5);
    assert!(g.learned_alone, "learned while its lease was down");
    // The store back and its lease up, no count of the fleet heard: calm, pressed windows for minutes.
    g.lease_store_back(until);
    let ceiling = g.ceiling;
    for k in 1..=40 {
        let t = until.since_epoch().as_millis() as u64 + k * 15_000;
        pressed_success(&mut g, t);
        assert!(g.stats().allowed_rate <= ceiling + 1e-9, "no probe past its own part: {}", g.stats().allowed_rate);
    }
    assert!(g.learned_alone);
}

#[test]
fn a_member_at_its_ceiling_takes_a_heard_step_and_waits_a_calm_window_from_it() {
    let (mut g, t) = member_at_ceiling();
    assert!(!g.hear_raise(at(t + 1), 30.0), "no higher: no step");
    assert!(!g.hear_raise(at(t + 1), 31.6), "more than its own next step (5 %): not taken");
    assert!(!g.hear_raise(at(t + 1), f64::INFINITY));
    assert!(g.hear_raise(at(t + 1), 31.5));
    assert_eq!(g.stats().allowed_rate, 31.5);
    assert_eq!(g.take_raise(), None, "heard news is never retold");
    assert!(!g.hear_raise(at(t + 2), 31.5), "a second teller of the same step moves nothing");
    pressed_success(&mut g, t + 5_000);
    assert_eq!(g.stats().allowed_rate, 31.5, "the next step waits a calm window from the heard one");
    assert!(g.hear_raise(at(t + 10_001), 34.65), "the next step is the fleet's +10 % as its own would be");
    pressed_success(&mut g, t + 20_002);
    let third = g.stats().allowed_rate;
    assert!((third - 34.65 * 1.2).abs() < 1e-9, "then its own, +20 %: {third}");
    assert_eq!(g.take_raise(), Some(third));
}

#[test]
fn a_member_takes_a_heard_growth_step_within_its_ceiling_but_not_one_that_crossed_a_limit() {
    let (mut g, t) = member_at_ceiling();
    assert!(g.hear_plan(at(t + 1), 15.0), "another member was limited: the plan came down");
    assert!(!g.hear_raise(at(t + 2), 31.5), "a step sent before its teller heard of the limit is not taken");
    assert!(!g.hear_raise(at(t + 2), 16.5), "nor a growth step");
    assert!(g.hear_raise(at(t + 1_600), 16.5), "past the limit's residue, the fleet's growth step is its own");
    assert_eq!(g.stats().allowed_rate, 16.5);
    assert_eq!(g.take_raise(), None, "heard news is never retold");
    assert!(!g.hear_raise(at(t + 1_601), 16.0), "lower: a raise never lowers");
    assert!(!g.hear_raise(at(t + 1_601), 31.5), "past its ceiling while far below it: no probe step");
    g.on_success(at(t + 1_700), 0.5);
    assert_eq!(g.stats().allowed_rate, 16.5, "its own next growth waits a window from the heard one");
    let mut alone = QuotaGroup::new(QuotaConfig::default(), at(0));
    assert!(alone.hear_plan(at(0), 27.0));
    assert!(!alone.hear_raise(at(2_000), 28.0), "no store: each relayer grows on its own");
}

#[test]
fn a_limit_while_the_fleet_probes_returns_every_member_to_the_calm_plan_and_none_halves() {
    let (mut prober, t) = member_at_ceiling();
    let (mut hearer, _) = member_at_ceiling();
    pressed_success(&mut prober, t + 30_000);
    let step = prober.take_raise().unwrap();
    assert!(hearer.hear_raise(at(t + 30_003), step));
    prober.on_limited(at(t + 31_000), None, false, 0.5);
    assert_eq!(prober.stats().allowed_rate, 30.0, "back to the calm ceiling, not halved");
    assert_eq!(prober.take_decrease(), Some(30.0), "told as the fleet's plan");
    assert!(hearer.hear_plan(at(t + 31_003), 30.0));
    assert_eq!(hearer.stats().allowed_rate, 30.0, "the hearer ends the step it took");
    hearer.on_limited(at(t + 31_500), None, false, 0.5);
    assert_eq!(hearer.stats().allowed_rate, 30.0, "the key's window still holds the step: its 429 lowers nothing");
    for (g, name) in [(&mut prober, "prober"), (&mut hearer, "hearer")] {
        pressed_success(g, t + 31_000 + 59_000);
        assert_eq!(g.stats().allowed_rate, 30.0, "{name}: the next probe waits twice as long (six windows)");
        pressed_success(g, t + 31_000 + 61_000);
        assert!((g.stats().allowed_rate - 31.5).abs() < 1e-9, "{name}: then steps again");
    }
    assert_eq!(hearer.take_decrease(), None, "a plan heard is not retold");
}

#[test]
fn a_limit_long_after_the_fleets_steps_sends_every_member_back_one_step_and_only_a_learned_plan_halves() {
    let (mut teller, t) = member_at_ceiling();
    let (mut hearer, _) = member_at_ceiling();
    pressed_success(&mut teller, t + 30_000);
    assert!(hearer.hear_raise(at(t + 30_003), teller.take_raise().unwrap()));
    pressed_success(&mut teller, t + 40_000);
    assert!(hearer.hear_raise(at(t + 40_003), teller.take_raise().unwrap()));
    assert!((hearer.stats().allowed_rate - 34.65).abs() < 1e-9, "30 → 31.5 → 34.65, both");
    teller.on_limited(at(t + 41_000), None, false, 0.5);
    assert!(hearer.hear_plan(at(t + 41_003), teller.take_decrease().unwrap()));
    for g in [&mut teller, &mut hearer] {
        assert!((g.stats().allowed_rate - 31.5).abs() < 1e-9, "the step limited at once: back to 31.5");
    }
    // Five minutes on, 31.5 (calm a window once, never limited) meets a 429 at the hearer.
    hearer.on_limited(at(t + 341_000), None, false, 0.5);
    assert_eq!(
        hearer.stats().allowed_rate,
        30.0,
        "back one more step to the plan the fleet counted, not halved to 15.75"
    );
    let told = hearer.take_decrease();
    assert_eq!(told, Some(30.0), "told as the fleet's plan");
    assert!(teller.hear_plan(at(t + 341_003), 30.0));
    assert_eq!(teller.stats().allowed_rate, 30.0, "the teller goes back the same step");
    assert_eq!(teller.fleet_terms().2, 30.0, "and asks the fleet's bucket for that second");
    // Limited at the plan the fleet counted: the usual decrease, heard as one.
    teller.on_limited(at(t + 345_000), None, false, 0.5);
    assert_eq!(teller.stats().allowed_rate, 15.0, "a learned plan limited halves");
    assert!(hearer.hear_plan(at(t + 345_003), teller.take_decrease().unwrap()));
    assert_eq!(hearer.stats().allowed_rate, 15.0);
    for (g, name) in [(&mut teller, "teller"), (&mut hearer, "hearer")] {
        let mut now = t + 345_000;
        while g.stats().allowed_rate < 28.5 - 1e-9 && now < t + 1_000_000 {
            now += 10_000;
            g.on_success(at(now), 0.5);
        }
        assert!((g.stats().allowed_rate - 28.5).abs() < 1e-9, "{name}: grows back to 95 % of 30, one ceiling for both");
    }
}

#[test]
fn the_members_count_the_fleets_step_backs_alike_whoever_met_the_limit() {
    let (mut a, t) = member_at_ceiling();
    let (mut b, _) = member_at_ceiling();
    for (k, dt) in [30_000, 40_000, 50_000].into_iter().enumerate() {
        pressed_success(&mut a, t + dt);
        assert!(b.hear_raise(at(t + dt + 3), a.take_raise().unwrap()), "step {k} taken by both");
    }
    a.on_limited(at(t + 51_000), None, false, 0.5);
    assert!(b.hear_plan(at(t + 51_003), a.take_decrease().unwrap()));
    assert!((b.stats().allowed_rate - 34.65).abs() < 1e-9, "the step just taken went back whole, in both");
    // 34.65 stood: b meets a limit, then a, then b again; each teller tells the other.
    b.on_limited(at(t + 60_000), None, false, 0.5);
    assert!(a.hear_plan(at(t + 60_003), b.take_decrease().unwrap()));
    a.on_limited(at(t + 70_000), None, false, 0.5);
    assert!(b.hear_plan(at(t + 70_003), a.take_decrease().unwrap()));
    for g in [&a, &b] {
        assert!((g.stats().allowed_rate - 31.5).abs() < 1e-9, "twice down by a twentieth, the second stopped at 31.5");
    }
    b.on_limited(at(t + 80_000), None, false, 0.5);
    assert!(
        (b.stats().allowed_rate - 15.75).abs() < 1e-9,
        "the fleet's third step back without a new step is an ordinary limit, whoever met the other two: {}",
        b.stats().allowed_rate
    );
}
