//! The lease's transitions on explicit instants (`policy/lease.rs`).
use super::*;

use crate::time::at;

fn grant(granted: f64) -> LeaseGrant {
    LeaseGrant {
        granted,
        short_for: Duration::from_millis(250),
        fleet_rate: 40.0,
        share: f64::INFINITY,
        others_demand: None,
        others_line: None,
        windowed: false,
    }
}

#[test]
fn a_lease_is_asked_ahead_of_need_and_spent_without_waiting() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    assert!(!lease.up(at(0)), "before any answer the group's own bucket governs");
    assert_eq!(lease.check(at(0), 10.0, true), Ok(()));
    let ask = lease.ask(at(0), 100.0, 500.0, 1000.0, 0.0).expect("the first ask");
    let hold = Duration::from_secs(2);
    assert_eq!(
        ask,
        LeaseAsk {
            want: 100.0,
            rate: 500.0,
            burst: 1000.0,
            held: 0.0,
            hold,
            least: 10.0,
            released: 0.0,
            demand: 0.0,
            alone: 0.0,
            window: 0.0,
            alone_ages: [0.0; 10],
            waited: None,
            line: 0.0,
        }
    );
    assert_eq!(lease.ask(at(1), 100.0, 500.0, 1000.0, 0.0), None, "one ask out at a time");
    lease.granted(at(20), ask.want, grant(100.0));
    assert!(lease.up(at(20)));
    assert_eq!(lease.fleet_rate(), 40.0);
    for _ in 0..5 {
        assert_eq!(lease.check(at(30), 10.0, true), Ok(()));
        lease.spend(at(30), 10.0, true);
    }
    assert_eq!(lease.ask(at(30), 100.0, 500.0, 1000.0, 0.0), None, "half a chunk is still held");
    lease.spend(at(31), 10.0, true);
    let next = lease.ask(at(31), 100.0, 500.0, 1000.0, 0.0).expect("below half: the next chunk is asked now");
    assert_eq!(lease.held(at(31)), 40.0, "while 40 CU are still there to spend");
    lease.granted(at(40), next.want, grant(100.0));
    assert_eq!(lease.held(at(40)), 140.0);
    assert_eq!(lease.held(at(2040)), 0.0, "held CU expire two periods after the grant");
}

#[test]
fn an_empty_lease_waits_for_its_ask_or_the_stores_refill() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let ask = lease.ask(at(0), 10.0, 50.0, 50.0, 0.0).unwrap();
    assert_eq!(ask.want, 10.0);
    lease.granted(at(10), ask.want, grant(10.0));
    lease.spend(at(10), 10.0, true);
    assert_eq!(lease.check(at(10), 5.0, false), Ok(()), "an unknown plan never waits on the store");
    let again = lease.ask(at(10), 10.0, 50.0, 50.0, 0.0).unwrap();
    assert_eq!(lease.check(at(110), 5.0, true), Err(Duration::from_millis(900)), "until the ask times out");
    lease.granted(at(120), again.want, grant(2.0));
    assert_eq!(lease.check(at(120), 5.0, true), Err(Duration::from_millis(250)), "the store's refill");
    assert_eq!(lease.ask(at(200), 10.0, 50.0, 50.0, 0.0), None, "no ask into a known shortage");
    assert_eq!(lease.check(at(370), 2.0, true), Ok(()), "what was granted is spent");
    assert!(lease.ask(at(370), 10.0, 50.0, 50.0, 0.0).is_some());
}

/// A lease granted 10 CU at 5 ms, 8 spent at once, and asking again then.
fn asking_again_at_5ms() -> Lease {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let ask = lease.ask(at(0), 10.0, 50.0, 50.0, 0.0).unwrap();
    lease.granted(at(5), ask.want, grant(10.0));
    lease.spend(at(5), 8.0, true);
    lease.ask(at(5), 10.0, 50.0, 50.0, 0.0).unwrap();
    lease
}

#[test]
fn a_store_that_fails_or_stalls_hands_back_to_the_own_bucket_and_is_asked_again_later() {
    let mut lease = asking_again_at_5ms();
    assert!(lease.up(at(1004)));
    assert!(!lease.up(at(1005)), "unanswered for one period: down");
    assert_eq!(lease.check(at(1005), 40.0, true), Ok(()), "down: the own bucket governs, nothing waits");
    assert_eq!(lease.ask(at(2_500), 10.0, 50.0, 50.0, 0.0), None, "no other ask while its answer may still come");
    // Never answered: given up after four periods, and asked again (its backoff, one period, is over).
    assert!(!lease.up(at(4_004)));
    lease.ask(at(4_005), 10.0, 50.0, 50.0, 0.0).expect("given up: asked again");
    lease.failed(at(4_010));
    assert_eq!(lease.ask(at(5_000), 10.0, 50.0, 50.0, 0.0), None, "two failures: two periods");
    let back = lease.ask(at(6_010), 10.0, 50.0, 50.0, 0.0).expect("asked again");
    lease.granted(at(6_015), back.want, grant(10.0));
    assert!(lease.up(at(6_015)), "the store is back: rejoined");
    for n in 0..6 {
        lease.ask(at(10_000 * (n + 1)), 10.0, 50.0, 50.0, 0.0);
        lease.failed(at(10_000 * (n + 1)));
    }
    assert!(lease.ask(at(60_000 + 7_999), 10.0, 50.0, 50.0, 0.0).is_none());
    assert!(lease.ask(at(60_000 + 8_000), 10.0, 50.0, 50.0, 0.0).is_some(), "backoff caps at eight periods");
    lease.failed(at(68_000));
    lease.store_back(at(68_000));
    assert!(lease.ask(at(68_001), 10.0, 50.0, 50.0, 0.0).is_some(), "the store is back: asked at once");
}

#[test]
fn a_stores_answer_is_read_only_when_it_makes_sense() {
    let read = LeaseGrant::read(10.0, 4.0, 250.0, 30.0, 12.5, [-1.0, 0.0, -1.0]);
    let short_for = Duration::from_millis(250);
    let lines = |said: f64| LeaseGrant::read(10.0, 4.0, 0.0, 0.0, 0.0, [-1.0, 0.0, said]).unwrap().others_line;
    assert_eq!((lines(7.5), lines(0.0), lines(-1.0), lines(f64::NAN)), (Some(7.5), Some(0.0), None, None));
    assert_eq!(
        read,
        Some(LeaseGrant {
            granted: 4.0,
            short_for,
            fleet_rate: 30.0,
            share: 12.5,
            others_demand: None,
            others_line: None,
            windowed: false
        })
    );
    assert_eq!(
        LeaseGrant::read(10.0, 4.0, 0.0, 0.0, 0.0, [-1.0, 0.0, -1.0]).unwrap().share,
        f64::INFINITY,
        "0: no bound"
    );
    assert!(LeaseGrant::read(10.0, 4.0, 0.0, 0.0, 0.0, [-1.0, 1.0, -1.0]).unwrap().windowed, "1: the window was kept");
    for not in [0.0, 2.0, f64::NAN, -1.0] {
        assert!(!LeaseGrant::read(10.0, 4.0, 0.0, 0.0, 0.0, [-1.0, not, -1.0]).unwrap().windowed, "{not}: not said");
    }
    assert_eq!(LeaseGrant::read(10.0, 11.0, 0.0, 0.0, 0.0, [-1.0, 0.0, -1.0]), None, "more than asked");
    let want = 8.0 / 3.0;
    assert_eq!(
        LeaseGrant::read(want, 2.6666666666667, 0.0, 0.0, 0.0, [-1.0, 0.0, -1.0]).map(|g| g.granted),
        Some(want),
        "printed rounding"
    );
    assert_eq!(LeaseGrant::read(10.0, -1.0, 0.0, 0.0, 0.0, [-1.0, 0.0, -1.0]), None);
    assert_eq!(LeaseGrant::read(10.0, 1.0, f64::NAN, 0.0, 0.0, [-1.0, 0.0, -1.0]), None);
    assert_eq!(LeaseGrant::read(10.0, 1.0, 0.0, f64::INFINITY, 0.0, [-1.0, 0.0, -1.0]), None);
    assert_eq!(LeaseGrant::read(10.0, 1.0, 0.0, 0.0, -1.0, [-1.0, 0.0, -1.0]), None, "a negative share");
    assert_eq!(LeaseGrant::read(10.0, 1.0, 0.0, 0.0, f64::NAN, [-1.0, 0.0, -1.0]), None);
    assert_eq!(
        LeaseGrant::read(10.0, 1.0, 1e12, 0.0, 0.0, [-1.0, 0.0, -1.0]).unwrap().short_for,
        Duration::from_secs(3600),
        "bounded"
    );
}

#[test]
fn a_chunk_covers_a_few_charges_and_never_asks_past_the_burst_of_a_known_plan() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    assert_eq!(lease.check(at(0), 26.0, true), Ok(()));
    assert_eq!(lease.ask(at(0), 0.0, 100.0, 1000.0, 0.0).unwrap().want, 104.0, "a quiet realm: four of its largest");
    let mut other = Lease::new(DEFAULT_PERIOD);
    assert_eq!(other.ask(at(0), 5000.0, 100.0, 300.0, 0.0).unwrap().want, 300.0, "capped at the burst");
    let mut unknown = Lease::new(DEFAULT_PERIOD);
    let ask = unknown.ask(at(0), 5000.0, f64::INFINITY, 1.0, 0.0).unwrap();
    assert_eq!((ask.want, ask.rate), (5000.0, 0.0), "an unknown plan asks for its rate and sends rate 0");
}

#[test]
fn an_ask_says_what_is_held_and_chunks_shrink_to_the_share_the_store_allows() {
    // Less than wanted because of the share, not a shortage: no wait.
    let capped = |granted, share| LeaseGrant { short_for: Duration::ZERO, share, ..grant(granted) };
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let first = lease.ask(at(0), 90.0, 90.0, 10.0, 0.0).unwrap();
    assert_eq!((first.want, first.held, first.least), (10.0, 0.0, 1.0), "a chunk of the burst, nothing held yet");
    lease.granted(at(50), first.want, capped(2.5, 2.5));
    assert_eq!(lease.held(at(50)), 2.5);
    lease.spend(at(60), 1.0, true);
    assert_eq!(lease.ask(at(60), 90.0, 90.0, 10.0, 0.0), None, "1.5 of a 2.5 chunk is still held");
    lease.spend(at(70), 1.0, true);
    let next = lease.ask(at(70), 90.0, 90.0, 10.0, 0.0).expect("below half the share");
    assert_eq!((next.want, next.held), (2.5, 0.5), "the share, and the 0.5 still held is told");
    lease.granted(at(90), next.want, capped(0.5, 0.2));
    lease.spend(at(95), 1.0, true);
    let small = lease.ask(at(95), 90.0, 90.0, 10.0, 0.0).unwrap();
    assert_eq!(small.want, 1.0, "never below one largest charge, whatever the share");
    lease.granted(at(100), small.want, capped(1.0, 0.0));
    // Its charge (1) is above the share the store said (0.2): a quarter period's hold.
    assert_eq!(lease.held(at(344)), 1.0, "spendable a quarter period from the ask (at 95), not from the answer");
    assert_eq!(lease.held(at(345)), 0.0);
}

#[test]
fn a_charge_the_held_units_cannot_pay_always_asks() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    assert_eq!(lease.check(at(0), 2.0, true), Ok(()), "not up yet: the own bucket");
    let first = lease.ask(at(0), 0.0, 90.0, 10.0, 0.0).unwrap();
    // The store allows a share of one charge: chunks of 2, asked below 1 held.
    lease.granted(at(5), first.want, LeaseGrant { short_for: Duration::ZERO, share: 2.0, ..grant(1.5) });
    assert!(lease.check(at(6), 2.0, true).is_err(), "1.5 held cannot pay 2");
    let next = lease.ask(at(6), 0.0, 90.0, 10.0, 0.0).expect("asked although 1.5 is over half a chunk of 2");
    assert_eq!((next.want, next.held, next.released), (2.0, 1.5, 0.0), "the store may add to the 1.5");
    // A grant answers the need: 1.7 held (over half a chunk) asks again only once a charge is refused.
    lease.granted(at(8), next.want, LeaseGrant { short_for: Duration::ZERO, share: 2.0, ..grant(0.2) });
    assert_eq!(lease.ask(at(9), 0.0, 90.0, 10.0, 0.0), None, "no refusal since the grant");
    assert!(lease.check(at(9), 2.0, true).is_err());
    assert_eq!(lease.ask(at(9), 0.0, 90.0, 10.0, 0.0).map(|a| (a.held, a.released)), Some((1.7, 0.0)));
}

#[test]
fn a_part_of_a_charge_above_the_share_is_given_back_with_the_next_ask() {
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let first = lease.ask(at(0), 0.0, 100.0, 20.0, 0.0).unwrap();
    assert_eq!(first.released, 0.0, "nothing held: nothing given back");
    let of_share = |granted: f64, share: f64| LeaseGrant {
        granted,
        short_for: Duration::from_millis(50),
        share,
        ..grant(granted)
    };
    lease.granted(at(1), first.want, of_share(12.0, 50.0));
    assert_eq!(lease.check(at(2), 26.0, true), Err(Duration::from_millis(1)), "12 held cannot pay 26");
    let next = lease.ask(at(2), 0.0, 100.0, 100.0, 0.0).expect("the refused charge asks");
    assert_eq!(
        (next.held, next.released),
        (12.0, 0.0),
        "26 fits in a share of 50 of 100: the store adds the 14 missing"
    );
    // Four members on a 20 CU burst: a share of 5, and charges of 26.
    lease.granted(at(3), next.want, of_share(0.0, 5.0));
    assert!(lease.check(at(60), 26.0, true).is_err());
    let back = lease.ask(at(60), 0.0, 100.0, 20.0, 0.0).expect("asks again after its wait");
    assert_eq!(
        (back.held, back.released, lease.held(at(60))),
        (0.0, 12.0, 0.0),
        "parts could fill the burst: the 12 go back"
    );
    lease.granted(at(61), back.want, of_share(26.0, 5.0));
    assert_eq!(lease.check(at(62), 26.0, true), Ok(()), "a whole charge");
    lease.spend(at(62), 1.0, true);
    assert!(lease.check(at(63), 26.0, true).is_err(), "25 cannot pay 26");
    assert_eq!(lease.ask(at(63), 0.0, 100.0, 20.0, 0.0).map(|a| (a.held, a.released)), Some((0.0, 25.0)));
    // Small charges within the share: a part is kept whatever the store answers.
    let mut small = Lease::new(DEFAULT_PERIOD);
    let ask = small.ask(at(0), 0.0, 25.0, 5.0, 0.0).unwrap();
    small.granted(at(1), ask.want, of_share(0.6, 1.67));
    assert!(small.check(at(60), 1.0, true).is_err());
    let again = small.ask(at(60), 0.0, 25.0, 5.0, 0.0).unwrap();
    assert_eq!((again.held, again.released), (0.6, 0.0));
    small.granted(at(61), again.want, of_share(0.0, 1.67));
    assert!(small.check(at(120), 1.0, true).is_err());
    assert_eq!(small.ask(at(120), 0.0, 25.0, 5.0, 0.0).map(|a| (a.held, a.released)), Some((0.6, 0.0)));
}

#[test]
fn an_answer_a_period_late_is_the_store_alive_and_slow_not_down() {
    let mut lease = asking_again_at_5ms();
    assert!(!lease.up(at(1_005)), "unanswered for one period: the lease falls, nothing waits");
    lease.granted(at(1_100), 10.0, grant(10.0));
    // Answered within four periods: taken as the store alive, and slow at once (an answer the
    // lease fell waiting for: `store_speed`): spent around and reported to, not down.
    assert!(lease.slow() && !lease.up(at(1_100)), "slow, not failed");
    assert_eq!(lease.held(at(1_100)), 0.0, "nothing held from a slow store");
    // More such answers keep it so.
    let mut t = 2_100;
    for _ in 0..3 {
        lease.spend(at(t), lease.held(at(t)), true);
        let ask = lease.ask(at(t), 10.0, 50.0, 50.0, 0.0).unwrap();
        assert!(!lease.up(at(t + 1_000)), "each one falls a period after its ask");
        lease.granted(at(t + 1_150), ask.want, grant(10.0));
        t += 1_200;
    }
    assert!(lease.slow(), "answers in a row over a period late: slow");
    lease.spend(at(t), 30.0, true);
    let report = lease.ask(at(t), 10.0, 50.0, 50.0, 0.0).unwrap();
    assert_eq!((report.want, report.hold), (30.0, Duration::ZERO), "a report");
    assert!(!lease.up(at(t + 1_100)));
    lease.granted(at(t + 1_200), report.want, grant(30.0));
    let next = lease.ask(at(t + 1_200), 10.0, 50.0, 50.0, 0.0).unwrap();
    assert_eq!(next.want, 0.0, "a report answered late is not reported again");
    // Reports never answered: each is given up four periods after it went, and what it carried
    // is reported again with what was spent since.
    lease.spend(at(t + 1_300), 7.0, true);
    assert!(!lease.up(at(t + 2_200)), "unanswered a period: fallen (its backoff ends a period later)");
    assert_eq!(lease.ask(at(t + 5_199), 10.0, 50.0, 50.0, 0.0), None, "its answer is still awaited");
    assert_eq!(lease.ask(at(t + 5_200), 10.0, 50.0, 50.0, 0.0).map(|a| a.want), Some(7.0));
    lease.spend(at(t + 5_300), 3.0, true);
    assert!(!lease.up(at(t + 6_200)));
    let again = lease.ask(at(t + 9_200), 10.0, 50.0, 50.0, 0.0).expect("the second given up too");
    assert_eq!(again.want, 10.0, "the 7 never counted, and 3 since");
}

#[test]
fn a_dearer_way_checked_quietly_sizes_no_ask_the_charge_that_waits_does() {
    // 1 CU reads; a second URL of the key whose chain check is due costs 2 per read there.
    let mut lease = Lease::new(DEFAULT_PERIOD);
    let first = lease.ask(at(0), 4.0, 24.0, 6.0, 0.0).unwrap();
    lease.granted(at(1), first.want, LeaseGrant { share: 1.5, short_for: Duration::ZERO, ..grant(1.0) });
    lease.spend(at(2), 1.0, true);
    for _ in 0..10 {
        assert!(lease.check(at(3), 1.0, true).is_err(), "nothing held: the read waits");
        assert!(lease.check_quietly(at(3), 2.0, true).is_err());
    }
    let ask = lease.ask(at(3), 4.0, 24.0, 6.0, 0.0).unwrap();
    assert_eq!(ask.least, 1.0, "sized for the read that waits, not the dearer way: {ask:?}");
    // Checked as its own, the dearer way sized it (all-or-nothing grants of 2).
    lease.granted(at(4), ask.want, LeaseGrant { share: 1.5, short_for: Duration::ZERO, ..grant(0.0) });
    assert!(lease.check(at(400), 2.0, true).is_err());
    assert_eq!(lease.ask(at(400), 4.0, 24.0, 6.0, 0.0).unwrap().least, 2.0);
}
