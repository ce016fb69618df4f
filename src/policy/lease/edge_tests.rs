//! The lease's edges: exact boundaries of the shortage and the printed
//! grant, a period other than a second, and answers that set no bound.

use std::time::Duration;

use super::*;

use crate::time::at;

fn grant(granted: f64, share: f64) -> LeaseGrant {
    LeaseGrant {
        granted,
        short_for: Duration::from_millis(250),
        fleet_rate: 0.0,
        share,
        others_demand: None,
        others_line: None,
        windowed: false,
    }
}

#[test]
fn a_grant_printed_a_hair_above_the_want_is_the_want() {
    let printed = 10.0 * (1.0 + 1e-9);
    assert_eq!(LeaseGrant::read(10.0, printed, 0.0, 0.0, 0.0, [-1.0, 0.0, -1.0]).map(|g| g.granted), Some(10.0));
}

#[test]
fn once_the_stores_refill_is_due_an_empty_lease_retries_at_once() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let ask = lease.ask(at(0), 10.0, 50.0, 50.0, 0.0).unwrap();
    lease.granted(at(10), ask.want, grant(2.0, f64::INFINITY));
    assert_eq!(lease.check(at(100), 5.0, true), Err(Duration::from_millis(160)), "short until 260");
    assert_eq!(lease.check(at(260), 5.0, true), Err(Duration::from_millis(1)), "due: the next ask, no wait");
}

#[test]
fn an_unknown_plan_spends_nothing_of_what_is_held() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let ask = lease.ask(at(0), 10.0, 50.0, 50.0, 0.0).unwrap();
    lease.granted(at(10), ask.want, grant(10.0, f64::INFINITY));
    lease.spend(at(20), 4.0, false);
    assert_eq!(lease.held(at(20)), 10.0);
    lease.spend(at(20), 4.0, true);
    assert_eq!(lease.held(at(20)), 6.0);
}

#[test]
fn a_chunk_is_one_period_of_the_recent_rate_and_held_two_periods() {
    let mut lease = Lease::new(Duration::from_millis(500));
    let ask = lease.ask(at(0), 100.0, 500.0, 1000.0, 0.0).unwrap();
    assert_eq!((ask.want, ask.hold), (50.0, Duration::from_secs(1)), "half a second of 100 CU/s");
}

#[test]
fn a_rate_of_zero_is_an_unknown_plan_whose_chunk_the_burst_does_not_cap() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let ask = lease.ask(at(0), 5000.0, 0.0, 1.0, 0.0).unwrap();
    assert_eq!((ask.want, ask.rate), (5000.0, 0.0));
}

#[test]
fn a_share_of_zero_in_a_grant_sets_no_bound() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let first = lease.ask(at(0), 90.0, 90.0, 10.0, 0.0).unwrap();
    assert_eq!(first.want, 10.0, "the burst");
    lease.granted(at(5), first.want, LeaseGrant { short_for: Duration::ZERO, ..grant(10.0, 0.0) });
    lease.spend(at(6), 10.0, true);
    assert_eq!(lease.ask(at(6), 90.0, 90.0, 10.0, 0.0).map(|a| a.want), Some(10.0), "still the burst, not one charge");
}

#[test]
fn a_store_slow_twice_in_a_row_is_spent_around_and_told_what_was_spent_until_it_is_quick_three_times() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let mut t = 0;
    // One in time (a store proven fast once), a late answer, then one in time: the streak
    // starts over.
    for late in [false, true, false] {
        let ask = lease.ask(at(t), 40.0, 100.0, 20.0, 0.0).unwrap();
        lease.granted(at(t + if late { 300 } else { 100 }), ask.want, grant(20.0, 20.0));
        lease.spend(at(t + 300), 20.0, true);
        t += 400;
    }
    // From the first answer on, the second late answer in a row makes the store too slow to spend
    // from (counted only two seconds after the first answer, a fleet starting beside a slow store
    // starved for four seconds).
    for k in 0..2 {
        assert!(lease.up(at(t)) && !lease.slow(), "{k} late answer(s) in a row: still leasing");
        let ask = lease.ask(at(t), 40.0, 100.0, 20.0, 0.0).unwrap();
        lease.granted(at(t + 300), ask.want, grant(20.0, 20.0));
        lease.spend(at(t + 300), 20.0, true);
        t += 400;
    }
    assert!(lease.slow() && !lease.up(at(t)), "too slow to spend from: the own bucket governs");
    assert_eq!(lease.held(at(t)), 0.0, "nothing held from a slow store");
    assert_eq!(lease.check(at(t), 30.0, true), Ok(()), "never waited on");
    lease.spend(at(t), 30.0, true);
    lease.spend(at(t + 10), 7.0, true);
    let report = lease.ask(at(t + 100), 40.0, 100.0, 20.0, 0.0).unwrap();
    // 20 spent right after the second late answer, then 30 and 7.
    assert_eq!((report.want, report.held, report.hold), (57.0, 0.0, Duration::ZERO), "a report of what was spent");
    lease.granted(at(t + 120), report.want, grant(57.0, 20.0)); // 20 ms: fast again
    assert!(!lease.up(at(t + 120)) && lease.slow(), "one quick answer is not yet the way back");
    // Two more quick answers (each a report of what was spent meanwhile): back on the lease.
    let mut t = t + 120;
    for _ in 0..2 {
        lease.spend(at(t), 5.0, true);
        let report = lease.ask(at(t), 40.0, 100.0, 20.0, 0.0).unwrap();
        assert_eq!((report.want, report.hold), (5.0, Duration::ZERO), "still reporting");
        lease.granted(at(t + 20), report.want, grant(5.0, 20.0));
        t += 20;
    }
    assert!(lease.up(at(t)) && !lease.slow(), "back on the lease");
    assert_eq!(lease.held(at(t)), 0.0, "a report's grant was spent already");
    let next = lease.ask(at(t), 40.0, 100.0, 20.0, 0.0).unwrap();
    assert!(next.want > 0.0 && next.hold > Duration::ZERO, "asks for CU again: {next:?}");
}

#[test]
fn an_unknown_plans_store_is_never_too_slow() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    for k in 0..3 {
        // Each ask after the last grant's hold ran out (2 s), each answered 350 ms later.
        let ask = lease.ask(at(k * 2500), 40.0, f64::INFINITY, 20.0, 0.0).unwrap();
        lease.granted(at(k * 2500 + 350), ask.want, grant(ask.want, f64::INFINITY));
    }
    assert!(lease.up(at(5400)) && !lease.slow(), "its asks only count: slow answers cost it nothing");
}

#[test]
fn the_members_are_the_burst_over_the_share_the_store_last_said() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    assert_eq!(lease.members(), None, "the store said nothing yet");
    let ask = lease.ask(at(0), 90.0, 90.0, 100.0, 0.0).unwrap();
    lease.granted(at(5), ask.want, grant(10.0, 25.0));
    assert_eq!(lease.members(), Some(4.0), "a burst of 100 in shares of 25");
    let ask = lease.ask(at(2_000), 90.0, 90.0, 100.0, 0.0).unwrap();
    lease.granted(at(2_005), ask.want, grant(10.0, 30.0));
    assert_eq!(lease.members(), Some(3.0), "rounded: 3.33 members is three");
    let ask = lease.ask(at(4_000), 90.0, 90.0, 100.0, 0.0).unwrap();
    lease.granted(at(4_005), ask.want, LeaseGrant { share: f64::INFINITY, ..grant(10.0, 0.0) });
    assert_eq!(lease.members(), None, "no bound said (an unknown plan)");
}

#[test]
fn back_on_a_restarted_store_a_realm_keeps_to_its_share_from_before_for_a_while() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let first = lease.ask(at(0), 100.0, 100.0, 20.0, 0.0).unwrap();
    lease.granted(at(5), first.want, grant(5.0, 5.0)); // four members hold: a share of 5
    assert!(lease.up(at(5)));
    lease.store_down(at(1_000));
    lease.store_back(at(6_000));
    // The restarted store knows this member alone: it says the whole burst is its share.
    let back = lease.ask(at(6_000), 100.0, 100.0, 20.0, 0.0).unwrap();
    lease.granted(at(6_002), back.want, LeaseGrant { short_for: Duration::ZERO, ..grant(5.0, 20.0) });
    assert_eq!(lease.share(), 5.0, "the share it had before, for now");
    lease.spend(at(6_003), 5.0, true);
    let soon = lease.ask(at(6_003), 100.0, 100.0, 20.0, 0.0).expect("asks again");
    assert!(soon.want <= 5.0, "not the whole burst: {soon:?}");
    lease.granted(at(6_005), soon.want, LeaseGrant { short_for: Duration::ZERO, ..grant(soon.want, 20.0) });
    let later = at(6_002 + REJOIN_SHARE.as_millis() as u64);
    lease.spend(later, soon.want, true);
    let ask = lease.ask(later, 100.0, 100.0, 20.0, 0.0).expect("asks again");
    lease.granted(later, ask.want, LeaseGrant { short_for: Duration::ZERO, ..grant(1.0, 20.0) });
    assert_eq!(lease.share(), 20.0, "then what the store says");
    // A realm's first lease ever has no share from before: what the store says.
    let mut fresh = Lease::new(DEFAULT_PERIOD);
    let ask = fresh.ask(at(0), 100.0, 100.0, 20.0, 0.0).unwrap();
    fresh.granted(at(5), ask.want, grant(20.0, 20.0));
    assert_eq!(fresh.share(), 20.0);
}
