//! The fleet side of a quota group (`quota/fleet.rs`) on the simulated clock.

use std::time::Duration;

use super::*;
use crate::policy::quota::QuotaConfig;

use crate::time::at;

fn grant(granted: f64, fleet_rate: f64) -> LeaseGrant {
    LeaseGrant {
        granted,
        short_for: Duration::from_millis(300),
        fleet_rate,
        share: f64::INFINITY,
        others_demand: None,
        others_line: None,
        windowed: false,
    }
}

/// A grant from a store that has other members (it says what they need).
fn among_others(granted: f64, fleet_rate: f64) -> LeaseGrant {
    LeaseGrant { others_demand: Some(600.0), ..grant(granted, fleet_rate) }
}

#[test]
fn a_fleet_group_spends_its_lease_and_asks_the_next_chunk_ahead() {
    let plan = QuotaConfig { cu_per_second: 100.0, burst: 100.0, ..QuotaConfig::default() };
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    assert_eq!(g.fleet_state(at(0)), Some(false));
    assert!(g.charge(at(0), 10.0).is_err(), "joining empties the own bucket: no burst before the first lease");
    assert!(g.charge(at(100), 3.0).is_err(), "before the store first answers: a quarter of the plan, 2.5 CU in 100 ms");
    g.charge(at(100), 2.0).expect("no lease yet: the own bucket governs");
    let ask = g.take_lease_ask().expect("the first charge asks");
    assert_eq!((ask.rate, ask.burst), (100.0, 100.0));
    assert_eq!(g.take_lease_ask(), None);
    g.lease_granted(at(105), ask.want, grant(ask.want, 250.0));
    assert_eq!(g.fleet_state(at(105)), Some(true));
    g.charge(at(1005), 10.0).unwrap();
    assert_eq!(g.take_lease_ask(), None, "half a chunk left: no ask yet");
    g.charge(at(1006), 10.0).unwrap();
    // 38 held of the 40 granted: the 2 CU spent alone before the answer are paid from it.
    let next = g.take_lease_ask().expect("below half a chunk");
    assert_eq!(next.alone, 0.0, "paid, so not told");
    assert_eq!(g.charge(at(1007), 10.0), Ok(()), "the last whole charge of the lease");
    assert!(matches!(g.check(at(1008), 10.0), Err(QuotaDenied::Exhausted(_))), "8 left, the ask out");
    g.lease_granted(at(1020), next.want, grant(10.0, 250.0));
    assert_eq!(g.check(at(1020), 10.0), Ok(()), "the grant arrived");
    g.lease_failed(at(1021)); // no ask out: nothing changes
    assert_eq!(g.fleet_state(at(1021)), Some(true));
    g.join_fleet(at(1021));
    assert_eq!(g.check(at(1021), 10.0), Ok(()), "joining again changes nothing: the bucket is not emptied twice");
}

#[test]
fn a_lease_that_is_up_is_the_only_limit_and_a_failed_one_hands_back_to_the_own_bucket() {
    let plan = QuotaConfig { cu_per_second: 100.0, burst: 100.0, ..QuotaConfig::default() };
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    let ask = g.lease_ask_now(at(0)).expect("a joining group asks at once");
    g.lease_granted(at(5), ask.want, grant(ask.want, 0.0));
    assert_eq!(ask.want, 4.0, "four of the largest charge (1 CU) so far");
    for ms in 5..9 {
        g.charge(at(ms), 1.0).expect("the lease pays: the own bucket, emptied on joining, is not asked");
    }
    g.take_lease_ask();
    g.lease_failed(at(10));
    assert!(g.charge(at(10), 10.0).is_err(), "the store failed: the own bucket, emptied at the fall, governs again");
    assert!(g.charge(at(109), 10.0).is_err());
    assert_eq!(g.charge(at(110), 10.0), Ok(()), "refilled at the plan's rate (the fleet said no rate: all its share)");
}

/// An unknown plan on a store (its grants as `answer` makes them, the
/// store counting 900 CU/s), 20 charges of 10 CU in its last second of
/// which the provider took `accepted` (told), then a 429; the others'
/// measures heard while it gathers (`gather.rs`), and the sum taken.
fn limited_on_a_store(answer: fn(f64, f64) -> LeaseGrant, accepted: u64, others: &[f64]) -> QuotaGroup {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    g.join_fleet(at(0));
    g.charge(at(0), 10.0).unwrap();
    let ask = g.take_lease_ask().unwrap();
    assert_eq!(ask.rate, 0.0, "unknown: the store only counts");
    g.lease_granted(at(1), ask.want, answer(ask.want, 900.0));
    for ms in 2..22 {
        g.charge(at(ms), 10.0).expect("an unknown plan never waits on its lease");
        if ms < 2 + accepted {
            g.on_accepted(at(ms + 5), 10.0);
        }
    }
    let until = g.on_limited(at(1000), None, false, 0.5);
    for &rate in others {
        g.hear_measure(at(1005), rate);
    }
    let _ = g.check(until, 10.0); // the sum is taken at the first check past the gathering
    g
}

#[test]
fn an_unknown_plan_on_a_store_learns_the_sum_of_what_its_members_got_through_and_tells_no_plan() {
    let mut g = limited_on_a_store(among_others, 15, &[300.0, 150.0]);
    assert_eq!(g.stats().allowed_rate, 540.0, "90 % of its 150 and the others' 450: not the store's 900 sent");
    assert_eq!(g.take_decrease(), None, "each member took the same sum: no plan to tell");
}

#[test]
fn a_plan_learned_alone_on_a_store_is_its_own_accepted_rate_not_the_stores_count_of_its_grants() {
    let g = limited_on_a_store(grant, 15, &[]); // nobody else told
    assert_eq!(g.stats().allowed_rate, 135.0, "90 % of the 150 CU accepted in the last second");
}

#[test]
fn a_plan_learned_on_a_fleet_is_asked_of_the_store_as_a_second_kept() {
    let mut g = limited_on_a_store(among_others, 20, &[700.0]); // 200 + 700 got through
    let (rate, burst, window) = g.fleet_terms();
    assert_eq!(window, 810.0, "the learned rate's second, kept at the store");
    assert_eq!(rate + burst, 810.0, "until the store says it keeps it: token-bucket terms within it, not 810 + 810");
    let ask = g.take_lease_ask().unwrap();
    g.lease_granted(at(1801), ask.want, LeaseGrant { windowed: true, ..among_others(ask.want, 900.0) });
    assert_eq!(g.fleet_terms(), (810.0, 162.0, 810.0), "then the whole rate, the window keeping the second");
    let configured = QuotaGroup::new(QuotaConfig { burst: 50.0, ..QuotaConfig::default() }, at(0));
    assert_eq!(configured.fleet_terms().2, 0.0, "a configured burst is token-bucket terms, learned or not");
}

#[test]
fn a_heard_plan_is_the_tellers_ceiling_and_the_keys_window_still_holds_what_taught_it() {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    for ms in 0..30 {
        g.charge(at(ms * 30), 9.0).unwrap();
    }
    assert!(g.hear_plan(at(1000), 270.0));
    g.on_limited_sent(at(1100), at(1050), None, false, 0.5);
    assert_eq!(g.stats().allowed_rate, 270.0, "a 429 within the window's residue lowers nothing");
    for s in 1..=10u64 {
        g.on_success(at(1100 + s * 31_000), 0.5); // calm windows, nothing waiting
    }
    let grown = g.stats().allowed_rate;
    assert!((grown - 300.0).abs() < 1e-9, "grows back to the 300 the teller learned, no further: {grown}");
}

#[test]
fn before_a_plan_is_learned_a_member_tells_the_store_what_it_sends_now_not_a_mean_over_its_idle_start() {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    g.join_fleet(at(0));
    g.charge(at(0), 1.0).unwrap(); // the chain check of `new`
    let ask = g.take_lease_ask().unwrap();
    g.lease_granted(at(1), ask.want, grant(ask.want, 0.0));
    for ms in (2_500..4_500).step_by(100) {
        g.charge(at(ms), 1.0).unwrap(); // ten reads a second from 2.5 s
        if let Some(ask) = g.take_lease_ask() {
            g.lease_granted(at(ms), ask.want, grant(ask.want, 0.0));
        }
    }
    g.charge(at(4_500), 1.0).unwrap(); // the hold granted at 2.5 s has ended: an ask goes
    let ask = g.take_lease_ask().expect("asked as its hold ended");
    assert!((ask.demand - 10.0).abs() < 1e-9, "its run's 10 a second, not 21 over 4.5 s: {}", ask.demand);
}

#[test]
fn a_heard_plan_lowers_never_raises() {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    assert!(g.hear_plan(at(10), 300.0));
    assert_eq!(g.stats().allowed_rate, 300.0);
    assert!(!g.hear_plan(at(20), 400.0), "higher: not taken");
    assert!(!g.hear_plan(at(20), f64::NAN));
    assert!(g.hear_plan(at(30), 1.0));
    let floor = 300.0 / 0.9 * 0.8 * 0.05;
    assert!(
        (g.stats().allowed_rate - floor).abs() < 1e-9,
        "floored at min_fraction of the ceiling heard (300 at 90 % of it), settled as the teller's (by a fifth)"
    );
    assert_eq!(g.take_decrease(), None, "heard, not told again");
}

#[test]
fn a_heard_plan_must_be_a_positive_rate_below_the_own() {
    let mut g = QuotaGroup::new(QuotaConfig { cu_per_second: 100.0, burst: 100.0, ..QuotaConfig::default() }, at(0));
    assert!(!g.hear_plan(at(10), 100.0), "the same rate: nothing to lower");
    assert!(!g.hear_plan(at(10), 0.0));
    assert!(!g.hear_plan(at(10), -5.0));
    assert_eq!(g.stats().allowed_rate, 100.0);
}

#[test]
fn a_heard_plan_grows_back_as_if_limited_here() {
    let mut g = QuotaGroup::new(QuotaConfig { cu_per_second: 100.0, burst: 100.0, ..QuotaConfig::default() }, at(0));
    assert!(g.hear_plan(at(0), 50.0), "the teller was limited at 100, halved");
    g.on_success(at(10_000), 0.5);
    assert_eq!(g.stats().allowed_rate, 55.0, "below 90 % of 100: one calm window is enough");
}

#[test]
fn a_store_back_asks_at_once_instead_of_after_the_backoff() {
    let plan = QuotaConfig { cu_per_second: 100.0, burst: 100.0, ..QuotaConfig::default() };
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    assert!(g.lease_ask_now(at(0)).is_some());
    g.lease_failed(at(10));
    assert_eq!(g.lease_ask_now(at(500)), None, "backing off one period");
    g.lease_store_back(at(500));
    assert!(g.lease_ask_now(at(500)).is_some());
}

/// A member of a 100 CU/s plan (kept per second) that joined its fleet at 0 and asked at once.
fn joined_and_asked() -> (QuotaGroup, LeaseAsk) {
    let plan = QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() };
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    let _ = g.charge(at(0), 1.0);
    let ask = g.take_lease_ask().expect("asked");
    (g, ask)
}

#[test]
fn before_its_store_first_answers_a_members_429s_cool_it_but_lower_no_configured_plan() {
    let plan = QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() };
    let two_episodes = |g: &mut QuotaGroup, from: u64| {
        g.on_limited(at(from), Some(Duration::from_secs(1)), false, 0.5);
        g.on_limited(at(from + 1_200), Some(Duration::from_secs(1)), false, 0.5);
    };
    // Alone (no fleet), the second episode within a minute halves it.
    let mut alone = QuotaGroup::new(plan, at(0));
    two_episodes(&mut alone, 500);
    assert_eq!(alone.stats().allowed_rate, 50.0);
    // In a fleet whose store has not answered yet: cooled, not lowered, nothing told.
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    two_episodes(&mut g, 500);
    assert!(g.cooldown_until() > at(1_700), "the Retry-After is kept");
    assert_eq!((g.stats().allowed_rate, g.take_decrease()), (100.0, None));
    // The first answer at 2 s: 1.5 s later, 429s are news again (a warning, then the halving).
    let ask = g.lease_ask_now(at(2_000)).expect("an ask");
    g.lease_granted(at(2_001), ask.want, grant(ask.want, 50.0));
    two_episodes(&mut g, 4_000);
    assert_eq!(g.stats().allowed_rate, 50.0, "coordinated, the plan comes down as alone");
    // A store that never answers: after COLD_RESIDUE the member is alone, and its 429s count.
    let mut cut_off = QuotaGroup::new(plan, at(0));
    cut_off.join_fleet(at(0));
    two_episodes(&mut cut_off, COLD_RESIDUE.as_millis() as u64);
    assert_eq!(cut_off.stats().allowed_rate, 50.0);
}

/// 1-CU charges tried every ms of the second from `from` ms: how many were paid.
fn paid_in_a_second(g: &mut QuotaGroup, from: u64) -> usize {
    (from..from + 1000).filter(|&ms| g.charge(at(ms), 1.0).is_ok()).count()
}

#[test]
fn before_its_store_first_answers_a_member_spends_a_quarter_of_its_plan() {
    let plan = QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() };
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    assert_eq!(g.spending_rate(at(0)), 25.0, "told as it is spent");
    let first = paid_in_a_second(&mut g, 0);
    assert!((24..=26).contains(&first), "a quarter of 100 CU/s before any answer: {first}");
}

#[test]
fn a_first_answer_in_time_puts_the_lease_up_and_a_late_one_keeps_the_quarter_until_the_verdict() {
    let (mut quick, ask) = joined_and_asked();
    quick.lease_granted(at(50), ask.want, grant(ask.want, 25.0));
    assert_eq!(quick.fleet_state(at(50)), Some(true), "answered in time: leased");
    // Answered 600 ms later: the store may be too slow to lease from (one share of the burst per
    // round trip); no verdict yet, so the member keeps spending its quarter alone.
    let (mut late, ask) = joined_and_asked();
    late.lease_granted(at(600), ask.want, grant(ask.want, 25.0));
    assert_eq!(late.fleet_state(at(600)), Some(false), "a late first answer: not leased yet");
    let paid = paid_in_a_second(&mut late, 600);
    assert!((20..=30).contains(&paid), "still a quarter of the plan: {paid}");
}

#[test]
fn a_store_down_at_start_ends_the_quarter_at_its_first_failure() {
    let (mut g, _) = joined_and_asked();
    g.lease_failed(at(5)); // refused: nothing listens
    assert_eq!(g.spending_rate(at(5)), 100.0);
    let paid = paid_in_a_second(&mut g, 1000);
    assert!(paid >= 95, "the member's local policy, the whole plan: {paid}");
}

#[test]
fn a_store_down_at_start_gives_back_the_burst_joining_withheld() {
    let plan = QuotaConfig { cu_per_second: 100.0, burst: 20.0, ..QuotaConfig::default() };
    let at_once = |g: &mut QuotaGroup, ms: u64| (0..40).filter(|_| g.charge(at(ms), 1.0).is_ok()).count();
    let mut alone = QuotaGroup::new(plan, at(0));
    assert_eq!(at_once(&mut alone, 150), 20, "no store: the burst at once");
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    let _ = g.take_lease_ask();
    g.lease_failed(at(150)); // refused: the local policies govern, as without a store
    let paid = at_once(&mut g, 150);
    assert_eq!(paid, 20, "the burst given back, not refilled at the plan's rate: {paid}");
    // A store that answered first keeps the burst withheld when it later fails.
    let mut answered = QuotaGroup::new(plan, at(0));
    answered.join_fleet(at(0));
    let ask = answered.lease_ask_now(at(0)).expect("an ask");
    answered.lease_granted(at(20), ask.want, grant(ask.want, 25.0));
    answered.lease_failed(at(150));
    assert!(at_once(&mut answered, 150) < 20, "no second burst after a lease");
}

#[test]
fn a_store_that_never_answers_ends_the_quarter_after_the_cold_residue() {
    let plan = QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() };
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    let _ = g.take_lease_ask(); // out, never answered
    let early = paid_in_a_second(&mut g, 2000);
    let late = paid_in_a_second(&mut g, COLD_RESIDUE.as_millis() as u64 + 1000);
    assert!(early <= 30 && late >= 95, "a quarter, then the plan: {early}, {late}");
}

#[test]
fn a_member_beside_a_slow_store_is_told_as_spending_its_share_not_as_alone() {
    let (mut g, ask) = joined_and_asked();
    assert_eq!(g.fleet_mode(at(0)), Some(FleetMode::Local), "no answer yet");
    g.lease_granted(at(600), ask.want, grant(ask.want, 25.0)); // late
    let _ = g.charge(at(700), 1.0);
    let again = g.take_lease_ask().expect("asks again");
    g.lease_granted(at(1300), again.want, grant(again.want, 25.0)); // late again: slow
    assert_eq!(g.fleet_mode(at(1300)), Some(FleetMode::Shares));
    let (mut quick, ask) = joined_and_asked();
    quick.lease_granted(at(20), ask.want, grant(ask.want, 25.0));
    assert_eq!(quick.fleet_mode(at(20)), Some(FleetMode::Leased));
    let plan = QuotaConfig { cu_per_second: 100.0, ..QuotaConfig::default() };
    assert_eq!(QuotaGroup::new(plan, at(0)).fleet_mode(at(0)), None, "no store");
}

#[test]
fn a_store_seen_down_drops_the_lease_at_once_even_with_nothing_charged() {
    let (mut g, ask) = joined_and_asked();
    g.lease_granted(at(20), ask.want, grant(ask.want, 25.0));
    assert_eq!(g.fleet_mode(at(100)), Some(FleetMode::Leased));
    g.lease_store_down(at(100));
    assert_eq!(g.fleet_mode(at(100)), Some(FleetMode::Local), "told at once, not at the next charge");
    let paid = paid_in_a_second(&mut g, 200);
    assert!(paid >= 20, "its own bucket governs: {paid}");
    // Down before its first answer: the cold share ends and the withheld burst comes back.
    let plan = QuotaConfig { cu_per_second: 100.0, burst: 20.0, ..QuotaConfig::default() };
    let mut cold = QuotaGroup::new(plan, at(0));
    cold.join_fleet(at(0));
    cold.lease_store_down(at(150));
    let at_once = (0..40).filter(|_| cold.charge(at(150), 1.0).is_ok()).count();
    assert_eq!(at_once, 20);
    let mut none = QuotaGroup::new(plan, at(0));
    none.lease_store_down(at(150)); // no fleet: nothing to do
    assert_eq!(none.fleet_mode(at(150)), None);
}

#[test]
fn an_ask_says_how_long_its_oldest_read_will_have_waited_at_the_store_and_nothing_while_none_waits() {
    let plan = QuotaConfig { cu_per_second: 100.0, burst: 100.0, ..QuotaConfig::default() };
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    g.charge(at(100), 2.0).unwrap();
    let ask = g.take_lease_ask().expect("the first charge asks");
    assert_eq!(ask.waited, None, "no read waits: no place in the fleet's line");
    g.lease_granted(at(140), ask.want, grant(ask.want, 250.0)); // a round trip of 40 ms
    g.join_line(crate::policy::quota::line_place(at(500), 0), 10.0);
    // Reads spend the lease until it asks again.
    let (asked_at, next) = (1000..1100)
        .find_map(|t| {
            let _ = g.charge(at(t), 1.0);
            g.take_lease_ask().map(|ask| (t, ask))
        })
        .expect("a spent lease asks");
    // Waiting since 500 ms: asked_at − 500, and half the round trip to the store on.
    assert_eq!(next.waited, Some(Duration::from_millis(asked_at - 500 + 20)));
    assert_eq!(next.line, 10.0, "and what its line costs");
}

#[test]
fn a_member_reckons_its_wait_by_the_fleets_line_once_the_store_says_the_others() {
    let plan = QuotaConfig { cu_per_second: 30.0, ..QuotaConfig::default() }; // kept per second
    let mut g = QuotaGroup::new(plan, at(0));
    g.join_fleet(at(0));
    g.join_line(crate::policy::quota::line_place(at(0), 0), 3.0);
    let ask = g.lease_ask_now(at(0)).expect("joining asks");
    assert_eq!(ask.line, 3.0, "its line goes with the ask");
    g.lease_granted(at(5), ask.want, grant(ask.want, 20.0));
    assert_eq!(g.fleet_line(at(5)), None, "a store that says nothing of the others: its own line only");
    assert_eq!(g.fleet_state(at(5)), Some(true));
    // Reads spend the lease until it asks again.
    let (t, next) = (10..1000)
        .find_map(|t| {
            let _ = g.charge(at(t), 1.0);
            g.take_lease_ask().map(|ask| (t, ask))
        })
        .expect("a spent lease asks");
    let said = LeaseGrant { others_line: Some(12.0), windowed: true, ..grant(next.want, 20.0) };
    g.lease_granted(at(t + 5), next.want, said);
    assert_eq!(
        g.fleet_line(at(t + 5)),
        Some((12.0, 24.0)),
        "the others' 12 CU, at what the fleet is sure of: 30 less a burst of 6"
    );
    g.lease_store_down(at(t + 6));
    assert_eq!(g.fleet_line(at(t + 6)), None, "spending alone: its own part again");
}
