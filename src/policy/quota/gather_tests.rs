//! A fleet counting itself before it learns its plan (`gather.rs`), on the simulated clock.

use std::time::Duration;

use super::super::{QuotaConfig, QuotaDenied, QuotaGroup};
use crate::policy::lease::LeaseGrant;
use crate::time::at;

/// A member of an unknown plan on a store that answered its first ask in `round_trip_ms`.
fn leasing(round_trip_ms: u64) -> QuotaGroup {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    g.join_fleet(at(0));
    let ask = g.lease_ask_now(at(0)).expect("joining asks");
    // The store says the fleet sends: a 429 tells of the plan even before this member sent much.
    g.lease_granted(at(round_trip_ms), ask.want, LeaseGrant { fleet_rate: 5.0, ..counted(ask.want) });
    assert_eq!(g.fleet_state(at(round_trip_ms)), Some(true));
    g
}

/// An unknown plan's grant: all it asked, only counted.
fn counted(want: f64) -> LeaseGrant {
    LeaseGrant::all(want)
}

/// `per_second` reads a second for a second before `end` ms, each accepted
/// (and each ask the store answered at once).
fn got_through(g: &mut QuotaGroup, per_second: u64, end: u64) {
    for i in 0..per_second {
        let t = end - 999 + i * 1_000 / per_second;
        if g.charge(at(t), 1.0).is_err() {
            let ask = g.take_lease_ask().expect("a lease short of CU asks");
            g.lease_granted(at(t), ask.want, counted(ask.want));
            g.charge(at(t), 1.0).unwrap();
        }
        g.on_accepted(at(t), 1.0);
        if let Some(ask) = g.take_lease_ask() {
            g.lease_granted(at(t), ask.want, counted(ask.want));
        }
    }
}

/// A member that got 20 a second through at the key's first 429 (5 s) and
/// heard another's `others`: the fleet's count taken, its measure told.
fn counted_with(others: f64) -> QuotaGroup {
    let mut g = leasing(4);
    got_through(&mut g, 20, 5_000);
    let until = g.on_limited(at(5_000), None, false, 0.5);
    g.hear_measure(at(5_002), others);
    let _ = g.check(until, 1.0);
    let _ = g.take_measure();
    g
}

#[test]
fn a_member_on_a_store_learns_the_fleets_sum_not_its_own_part() {
    let mut g = leasing(4);
    got_through(&mut g, 12, 5_000);
    let until = g.on_limited(at(5_000), None, false, 0.5);
    assert!(g.gathering(), "its own part is not the plan yet");
    assert_eq!(g.take_measure(), Some(12.0), "its measure goes to the fleet");
    assert_eq!(g.take_decrease(), None, "no plan is told");
    assert!(until >= at(5_000) + super::GATHER_BASE + Duration::from_millis(12), "it cools while the fleet counts");
    assert!(g.hear_measure(at(5_003), 10.0));
    assert!(g.hear_measure(at(5_006), 8.0));
    assert_eq!(g.take_measure(), None, "told once");
    assert!(matches!(g.check(at(5_100), 1.0), Err(QuotaDenied::Cooling(_))));
    assert_eq!(g.stats().allowed_rate, f64::INFINITY, "nothing learned before the time is up");
    let _ = g.check(until, 1.0); // the sum is taken at the next check (which asks the store: a plan now)
    assert!(!g.gathering());
    let allowed = g.stats().allowed_rate;
    assert!((allowed - 27.0).abs() < 1e-9, "90 % of the fleet's 30, not of its own 12: {allowed}");
}

#[test]
fn the_gathering_waits_three_round_trips_of_the_store_at_most_three_seconds() {
    let mut near = leasing(2);
    near.on_limited(at(5_000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(near.cooldown_until(), at(5_256), "250 ms and three round trips of 2 ms");
    let mut far = leasing(1_200);
    far.on_limited(at(5_000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(far.cooldown_until(), at(8_000), "at most 3 s");
}

#[test]
fn a_member_hearing_a_measure_joins_the_count_and_a_cooldown_alone_starts_none() {
    let mut g = leasing(4);
    got_through(&mut g, 9, 5_000);
    g.cool_until(at(5_500));
    assert!(!g.gathering(), "a cooldown may be a 429 to a fleet's first requests: it tells no plan");
    assert!(g.hear_measure(at(5_000), 21.0), "a measure starts it, and counts");
    assert!(g.gathering());
    assert_eq!(g.take_measure(), Some(9.0), "its own goes to the fleet");
    assert!(g.cooldown_until() >= at(5_251), "it sends nothing while the fleet counts");
    let _ = g.check(at(5_600), 1.0);
    assert!((g.stats().allowed_rate - 27.0).abs() < 1e-9, "{}", g.stats().allowed_rate);
}

#[test]
fn without_a_store_that_answers_a_member_learns_its_own_part() {
    let mut alone = QuotaGroup::new(QuotaConfig::default(), at(0));
    got_through(&mut alone, 12, 5_000);
    alone.on_limited(at(5_000), None, false, 0.5);
    assert!(!alone.gathering());
    assert!((alone.stats().allowed_rate - 10.8).abs() < 1e-9);
    assert_eq!(alone.take_measure(), None);
    assert!(!alone.hear_measure(at(5_001), 20.0), "nothing to count with");
    let mut known = QuotaGroup::new(QuotaConfig { cu_per_second: 50.0, ..QuotaConfig::default() }, at(0));
    known.join_fleet(at(0));
    let ask = known.lease_ask_now(at(0)).unwrap();
    known.lease_granted(at(1), ask.want, LeaseGrant { granted: 10.0, ..counted(ask.want) });
    assert_eq!(known.fleet_state(at(1)), Some(true), "control: leasing");
    assert!(!known.hear_measure(at(5_000), 20.0), "a configured plan has nothing to learn");
    assert!(!known.gathering());
}

#[test]
fn a_plan_heard_while_gathering_stands() {
    let mut g = leasing(4);
    got_through(&mut g, 12, 5_000);
    g.on_limited(at(5_000), None, false, 0.5);
    assert!(g.hear_plan(at(5_010), 18.0));
    assert!(!g.gathering());
    assert_eq!(g.stats().allowed_rate, 18.0);
    let _ = g.check(at(6_000), 1.0);
    assert_eq!(g.stats().allowed_rate, 18.0, "no sum taken over it");
}

#[test]
fn a_learned_plan_limited_again_comes_down_as_one_relayers_and_the_fleet_hears_it() {
    let mut g = counted_with(30.0);
    let until = g.cooldown_until();
    assert!((g.stats().allowed_rate - 45.0).abs() < 1e-9, "90 % of the 50 the fleet got through");
    assert!(!g.hear_measure(until + Duration::from_millis(1_000), 3.0), "a measure late for that count starts none");
    assert!(!g.hear_measure(until + Duration::from_secs(5), 3.0), "nor one later: the plan is learned");
    let later = until + Duration::from_secs(20);
    got_through(&mut g, 12, later.since_epoch().as_millis() as u64);
    g.on_limited(later, None, false, 0.5);
    assert!(!g.gathering(), "counted once");
    let allowed = g.stats().allowed_rate;
    assert!(allowed < 45.0 && g.take_decrease() == Some(allowed), "AIMD's decrease, told to the fleet: {allowed}");
}

#[test]
fn a_member_whose_lease_was_down_learns_its_part_alone_then_joins_the_fleets_count() {
    let mut g = leasing(4);
    got_through(&mut g, 12, 5_000);
    g.lease_store_down(at(5_000));
    let until = g.on_limited(at(5_000), None, false, 0.5);
    assert!(!g.gathering());
    assert!((g.stats().allowed_rate - 10.8).abs() < 1e-9, "its own part, for now");
    assert_eq!(g.take_decrease(), None, "not the fleet's plan: not told");
    assert!(g.hear_measure(at(5_000), 18.0), "the others count: it joins");
    assert_eq!(g.take_measure(), Some(12.0));
    let _ = g.check(until.max(g.cooldown_until()), 1.0);
    assert!((g.stats().allowed_rate - 27.0).abs() < 1e-9, "the fleet's 30 at 90 %: {}", g.stats().allowed_rate);
    assert!(!g.hear_measure(g.cooldown_until() + Duration::from_secs(3), 5.0), "and then it is one of them");
}

#[test]
fn its_own_429s_while_gathering_are_one_episode() {
    let mut g = leasing(4);
    got_through(&mut g, 12, 5_000);
    let until = g.on_limited(at(5_000), None, false, 0.5);
    g.on_limited_sent(at(5_150), at(4_990), None, false, 0.5);
    assert!(g.gathering());
    assert_eq!(g.take_decrease(), None);
    let _ = g.check(until.max(g.cooldown_until()), 1.0);
    assert!((g.stats().allowed_rate - 10.8).abs() < 1e-9, "its own 12 alone in the sum, at 90 %");
}

#[test]
fn a_plan_learned_on_a_store_survives_the_store_falling_and_coming_back() {
    let mut g = leasing(4);
    got_through(&mut g, 12, 5_000);
    let until = g.on_limited(at(5_000), None, false, 0.5);
    let _ = g.check(until, 1.0);
    let learned = g.stats().allowed_rate;
    assert!((learned - 10.8).abs() < 1e-9);
    g.lease_store_down(until);
    g.lease_store_back(until + Duration::from_millis(10));
    let ask = g.lease_ask_now(until + Duration::from_millis(10)).expect("back: it asks");
    g.lease_granted(until + Duration::from_millis(12), ask.want, counted(ask.want));
    assert_eq!(g.stats().allowed_rate, learned, "not the unknown plan's infinity it leased at before");
}

#[test]
fn a_member_that_starts_later_and_counts_alone_is_told_the_fleets_plan() {
    let mut old = counted_with(10.0);
    assert!((old.stats().allowed_rate - 27.0).abs() < 1e-9);
    // A worker restarted later: its first 429, and its count alone.
    let mut new = leasing(4);
    got_through(&mut new, 12, 60_000);
    new.on_limited(at(60_000), None, false, 0.5);
    let told = new.take_measure().expect("it counts");
    assert!(!old.hear_measure(at(60_002), told), "the plan is learned: nothing to count");
    assert_eq!(old.take_decrease(), Some(27.0), "the fleet's plan, told back");
    assert!(new.hear_plan(at(60_004), 27.0), "taken over its own count");
    assert!(!new.gathering());
    assert!(!old.hear_measure(at(60_500), 3.0) && old.take_decrease().is_none(), "once a second at most");
    let _ = new.check(at(61_000), 1.0);
    assert_eq!(new.stats().allowed_rate, 27.0, "the fleet's 27, not its own 10.8");
}

#[test]
fn a_member_that_joins_with_a_plan_to_learn_asks_the_fleet_and_takes_the_plan_before_it_reads() {
    let mut old = leasing(4);
    assert!(old.take_plan_ask(), "a member joining with a plan to learn asks once");
    assert!(!old.take_plan_ask());
    assert!(!old.hear_plan_asked(at(100)), "nobody has learned it yet: no answer");
    old = counted_with(10.0);
    // A worker started later: its store's first answer, before its first read.
    let mut new = leasing(4);
    assert!(new.take_plan_ask());
    assert!(old.hear_plan_asked(at(30_000)));
    assert_eq!(old.take_decrease(), Some(27.0), "the fleet's plan, told");
    assert!(!old.hear_plan_asked(at(30_500)), "at most once a second");
    assert!(new.hear_plan(at(30_002), 27.0));
    assert_eq!(new.stats().allowed_rate, 27.0, "it reads at the fleet's plan from its first read");
    let mut known = QuotaGroup::new(QuotaConfig { cu_per_second: 50.0, ..QuotaConfig::default() }, at(0));
    known.join_fleet(at(0));
    let ask = known.lease_ask_now(at(0)).unwrap();
    known.lease_granted(at(1), ask.want, LeaseGrant { granted: 10.0, ..counted(ask.want) });
    assert!(!known.take_plan_ask(), "a configured plan asks nobody");
}

#[test]
fn a_measure_that_is_no_rate_or_comes_before_the_store_ever_answered_counts_nothing() {
    let mut g = leasing(4);
    for bad in [f64::NAN, -1.0, f64::INFINITY] {
        assert!(!g.hear_measure(at(5_000), bad), "{bad}");
    }
    assert!(!g.gathering() && g.take_measure().is_none(), "no count started");
    let mut joined = QuotaGroup::new(QuotaConfig::default(), at(0));
    joined.join_fleet(at(0));
    let _ = joined.lease_ask_now(at(0)); // asked, never answered
    assert!(!joined.hear_measure(at(500), 10.0), "not yet a member the store knows");
    assert!(!joined.gathering());
}
