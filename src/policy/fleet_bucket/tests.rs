//! The fleet bucket's contract, one ask at a time.

use super::*;

use crate::time::at;

/// An ask on a 100 CU/s plan with a burst of 50 (for the other tests of the bucket too).
pub(super) fn ask(want: f64, held: f64) -> LeaseAsk {
    LeaseAsk {
        want,
        rate: 100.0,
        burst: 50.0,
        held,
        hold: Duration::from_secs(2),
        least: 1.0,
        released: 0.0,
        demand: 0.0,
        alone: 0.0,
        window: 0.0,
        alone_ages: [0.0; 10],
        waited: None,
        line: f64::NAN,
    }
}

#[test]
fn the_fleet_bucket_refills_at_the_asked_rate_and_counts_the_fleet() {
    let mut bucket = FleetBucket::default();
    assert_eq!(bucket.ask(at(0), 1, ask(30.0, 0.0)).granted, 30.0, "a new bucket starts full");
    let short = bucket.ask(at(0), 1, ask(30.0, 0.0));
    assert_eq!((short.granted, short.short_for), (20.0, Duration::from_millis(100)), "the rest in 100 ms");
    assert_eq!(bucket.ask(at(100), 1, ask(30.0, 0.0)).granted, 10.0, "100 ms at 100/s");
    assert_eq!(bucket.ask(at(10_000), 1, ask(80.0, 0.0)).granted, 50.0, "never past the burst");
    let unknown = bucket.ask(at(10_000), 1, LeaseAsk { want: 500.0, rate: 0.0, burst: 1.0, ..ask(0.0, 0.0) });
    assert_eq!((unknown.granted, unknown.share), (500.0, f64::INFINITY), "an unknown plan is only counted");
    // 60 CU at 0 s (e^-1 of it left) and 550 now, over the 6.3 s a 10 s-old rate weighs.
    assert!((unknown.fleet_rate - 90.5).abs() < 1.0, "what the fleet took, decayed: {}", unknown.fleet_rate);
}

#[test]
fn what_members_hold_is_part_of_the_burst_so_a_fleet_never_has_more_than_one_burst() {
    let mut bucket = FleetBucket::default();
    // Member 1 alone: its share is the whole burst; it takes 40 ahead of need.
    let one = bucket.ask(at(0), 1, ask(40.0, 0.0));
    assert_eq!((one.granted, one.share), (40.0, 50.0));
    // A second later the bucket would be full again; 40 are still held, so only 10 are there.
    let two = bucket.ask(at(1000), 2, ask(40.0, 0.0));
    assert_eq!(two.share, 25.0, "two members hold: half the burst each");
    assert_eq!(two.granted, 10.0, "tokens + held stay within the burst");
    assert!(bucket.held(at(1000)) <= 50.0);
    // Member 1 spent its 40 and says so; what refilled is kept for member 2, short and queued first.
    let queued = bucket.ask(at(1100), 1, ask(40.0, 0.0));
    assert_eq!(queued.granted, 0.0, "10 refilled, 15 queued for member 2 before it");
    let turn = bucket.ask(at(1150), 2, ask(40.0, 10.0));
    assert_eq!(turn.granted, 15.0, "member 2's turn: its share (25) less the 10 it holds");
    let lapsed = bucket.ask(at(2000), 1, ask(40.0, 0.0));
    assert_eq!(lapsed.granted, 25.0, "its share; its own claim had lapsed, nobody else queued");
    // Holds end: member 2's 25 ended at 3150, so member 1 alone again gets the whole burst.
    let alone = bucket.ask(at(4000), 1, ask(50.0, 0.0));
    assert_eq!((alone.share, alone.granted), (50.0, 50.0));
}

#[test]
fn a_share_below_one_charge_still_lets_a_member_hold_one() {
    let mut bucket = FleetBucket::default();
    for member in 0..10 {
        bucket.ask(at(0), member, LeaseAsk { least: 0.0, ..ask(1.0, 0.0) });
    }
    let big = bucket.ask(at(1000), 99, LeaseAsk { least: 26.0, ..ask(26.0, 0.0) });
    assert!(big.share < 26.0);
    assert_eq!(big.granted, 26.0, "a member with a 26-CU call may hold 26");
    assert!(bucket.held(at(1000)) <= 50.0, "and the burst still bounds the fleet");
}

#[test]
fn a_shortage_queues_so_the_refill_goes_to_who_was_short_first() {
    let mut bucket = FleetBucket::default();
    let ask = |want| LeaseAsk { burst: 30.0, ..ask(want, 0.0) };
    assert_eq!(bucket.ask(at(0), 1, ask(30.0)).granted, 30.0, "member 1 takes the burst");
    // Member 2, then 3, are short: they queue, each waiting for the refill of those ahead too.
    let two = bucket.ask(at(0), 2, ask(5.0));
    assert_eq!((two.granted, two.short_for), (0.0, Duration::from_millis(50)));
    let three = bucket.ask(at(0), 3, ask(5.0));
    assert_eq!((three.granted, three.short_for), (0.0, Duration::from_millis(100)), "behind member 2's 5");
    // Member 1 spent its 30 and asks the moment it can (no round trip): the refill is kept for 2 and 3.
    let eager = bucket.ask(at(30), 1, ask(5.0));
    assert_eq!(eager.granted, 0.0, "3 CU refilled, 10 queued before it");
    assert_eq!(eager.short_for, Duration::from_millis(120), "behind 10 queued, 5 missing, 3 there");
    assert_eq!(bucket.ask(at(50), 2, ask(5.0)).granted, 5.0, "member 2's turn: first in the queue");
    assert_eq!(bucket.ask(at(100), 3, ask(5.0)).granted, 5.0, "then member 3's");
    assert_eq!(bucket.ask(at(150), 1, ask(5.0)).granted, 5.0, "then member 1's");
    // A claim whose member never comes back lapses 250 ms after its wait.
    let mut fresh = FleetBucket::default();
    let brief = |want| LeaseAsk { hold: Duration::from_millis(100), ..ask(want) };
    fresh.ask(at(0), 1, brief(30.0));
    assert_eq!(fresh.ask(at(0), 4, brief(5.0)).short_for, Duration::from_millis(50), "member 4 queues");
    assert_eq!(fresh.ask(at(200), 5, brief(30.0)).granted, 15.0, "20 refilled, 5 kept for member 4");
    let mut again = FleetBucket::default();
    again.ask(at(0), 1, brief(30.0));
    again.ask(at(0), 4, brief(5.0));
    assert_eq!(again.ask(at(1000), 5, brief(30.0)).granted, 30.0, "member 4 never came back: its claim lapsed");
}

#[test]
fn tokens_and_everything_held_never_exceed_the_burst_whatever_members_ask() {
    let mut bucket = FleetBucket::default();
    let mut x: u64 = 7;
    let mut draw = |n: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let mut holding = [0.0f64; 5];
    let mut now = 0;
    for _ in 0..2000 {
        now += draw(80);
        let member = draw(5) as usize;
        // A member reports what it still holds (it may have spent some), asks for up to 30.
        let held = holding[member] * draw(3) as f64 / 2.0;
        let want = 1.0 + draw(30) as f64;
        let least = 1.0 + draw(10) as f64;
        let g = bucket.ask(at(now), member as u64, LeaseAsk { least, ..ask(want, held.min(holding[member])) });
        holding[member] = held.min(holding[member]) + g.granted;
        let total = bucket.tokens.unwrap_or(0.0) + bucket.held(at(now));
        assert!(total <= 50.0 + 1e-9, "tokens + held = {total} at {now} ms");
    }
}

#[test]
fn buckets_in_memory_are_kept_per_key_and_dropped_after_a_minute_unused() {
    let mut buckets = FleetBuckets::default();
    assert_eq!(buckets.ask(at(0), "a", "tab-1", ask(40.0, 0.0)).granted, 40.0);
    let second = buckets.ask(at(500), "a", "tab-2", ask(40.0, 0.0));
    assert_eq!(second.granted, 10.0, "the same bucket: tab-1 holds 40 of the burst");
    assert_eq!(buckets.ask(at(500), "b", "tab-2", ask(40.0, 0.0)).granted, 40.0, "another key, another bucket");
    assert_eq!(buckets.len(), 2);
    buckets.ask(at(60_400), "b", "tab-2", ask(1.0, 0.0));
    assert_eq!(buckets.len(), 2, "a unused for 59.9 s: kept");
    buckets.ask(at(60_600), "b", "tab-2", ask(1.0, 0.0));
    assert_eq!(buckets.len(), 1, "a unused for a minute: dropped");
    assert_ne!(member_id("tab-1"), member_id("tab-2"));
}

#[test]
fn a_hold_counts_until_its_end_and_not_at_it() {
    let mut bucket = FleetBucket::default();
    bucket.ask(at(0), 1, ask(40.0, 0.0));
    assert_eq!((bucket.held(at(0)), bucket.held(at(1999)), bucket.held(at(2000))), (40.0, 40.0, 0.0));
    // At 2000 member 1's hold has ended: member 2 alone has the whole burst and share.
    let two = bucket.ask(at(2000), 2, ask(50.0, 0.0));
    assert_eq!((two.granted, two.share), (50.0, 50.0));
}

#[test]
fn a_claim_lapses_at_the_end_of_its_grace() {
    let mut bucket = FleetBucket::default();
    let brief = |want| LeaseAsk { burst: 30.0, hold: Duration::from_millis(100), ..ask(want, 0.0) };
    bucket.ask(at(0), 1, brief(30.0));
    assert_eq!(bucket.ask(at(0), 4, brief(5.0)).short_for, Duration::from_millis(50), "claim until 50 + 250 ms");
    assert_eq!(bucket.ask(at(300), 5, brief(30.0)).granted, 30.0, "at 300 ms nothing is kept for member 4");
}

#[test]
fn the_fleet_rate_is_what_was_granted_lately_from_the_first_second_on() {
    // 10 CU every 100 ms (100 CU/s), unknown plan (granted in full): the rate reads 100 after
    // one second, twelve (where `spent / 10` read 70) and thirty.
    let mut bucket = FleetBucket::default();
    let unknown = |want| LeaseAsk { rate: 0.0, ..ask(want, 0.0) };
    let mut read = Vec::new();
    for tick in 1..=300u64 {
        let grant = bucket.ask(at(tick * 100), 1, unknown(10.0));
        if [10, 120, 300].contains(&tick) {
            read.push(grant.fleet_rate);
        }
    }
    for rate in &read {
        assert!((rate - 100.0).abs() < 6.0, "{read:?}");
    }
    // Then nothing for ten seconds: the rate decays (e^-1 of it, over the same weight).
    let later = bucket.ask(at(40_000), 1, unknown(0.0)).fleet_rate;
    assert!((later - 100.0 * (-1.0f64).exp()).abs() < 3.0, "{later}");
}

#[test]
fn a_bucket_unused_for_exactly_a_minute_is_dropped() {
    let mut buckets = FleetBuckets::default();
    assert!(buckets.is_empty());
    buckets.ask(at(0), "a", "tab-1", ask(1.0, 0.0));
    assert!(!buckets.is_empty());
    buckets.ask(at(60_000), "b", "tab-1", ask(1.0, 0.0));
    assert_eq!(buckets.len(), 1);
}

#[test]
fn member_ids_are_fnv_1a() {
    assert_eq!(member_id(""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(member_id("a"), 0xaf63_dc4c_8601_ec8c);
}

#[test]
fn a_charge_above_the_burst_can_still_be_held_once_the_bucket_is_full() {
    let mut bucket = FleetBucket::default();
    // A 10-CU burst and eth_getBalance at 19 CU: the member gets its 19 from a full bucket.
    let big = LeaseAsk { want: 19.0, rate: 20.0, burst: 10.0, least: 19.0, ..ask(19.0, 0.0) };
    let first = bucket.ask(at(0), 1, big);
    assert_eq!(first.granted, 0.0, "a new bucket holds its burst, 10: a part of the charge, which pays nothing");
    assert_eq!(first.short_for, Duration::from_millis(450), "told when the whole charge is there");
    let whole = bucket.ask(at(450), 1, big);
    assert_eq!(whole.granted, 19.0, "refilled up to one charge, never above it");
    assert_eq!(bucket.ask(at(1000), 2, LeaseAsk { held: 0.0, ..big }).granted, 0.0, "while member 1 holds it");
    assert_eq!(bucket.ask(at(2450), 2, LeaseAsk { held: 0.0, ..big }).granted, 19.0, "its hold over, member 2's turn");
}

/// Four members of a 100 CU/s plan with a 20 CU burst (a per-second
/// plan's fleet terms), each holding part of a 26 CU charge: with parts
/// handed out, the holds filled the burst and no ask was granted again.
#[test]
fn only_whole_charges_are_handed_out_so_parts_never_fill_the_burst() {
    let mut bucket = FleetBucket::default();
    let call = LeaseAsk { want: 26.0, rate: 80.0, burst: 20.0, least: 26.0, ..ask(26.0, 0.0) };
    let mut paid = 0;
    let mut held = [0.0; 4];
    for ms in (0..10_000).step_by(10) {
        for (m, h) in held.iter_mut().enumerate() {
            let grant = bucket.ask(at(ms), m as u64, LeaseAsk { held: *h, ..call });
            *h += grant.granted;
            assert!(*h == 0.0 || *h >= 26.0, "member {m} holds part of a charge: {h}");
            if *h >= 26.0 {
                *h -= 26.0; // spent at once
                paid += 1;
            }
        }
    }
    assert!(paid >= 28, "about 80 CU/s in whole charges for 10 s: {paid}");
}

#[test]
fn what_a_member_gives_back_returns_to_the_tokens_up_to_its_hold() {
    let mut bucket = FleetBucket::default();
    let call = LeaseAsk { want: 26.0, rate: 80.0, burst: 30.0, least: 26.0, ..ask(26.0, 0.0) };
    assert_eq!(bucket.ask(at(0), 1, LeaseAsk { want: 20.0, least: 1.0, ..call }).granted, 20.0);
    assert_eq!(bucket.ask(at(0), 2, call).granted, 0.0, "10 left: no part of 26");
    // Member 1 spent 1 and gives its 19 back: member 2's whole charge is there (10 + 19 ≥ 26).
    let back = bucket.ask(at(0), 1, LeaseAsk { want: 1.0, least: 1.0, released: 19.0, ..call });
    assert_eq!(back.granted, 1.0, "member 2's claim of 26 comes first; 1 of the 29 is beyond it");
    assert_eq!(bucket.ask(at(0), 2, call).granted, 26.0);
    // Nobody gives back more than its hold says, nor a hold the store forgot.
    let mut fresh = FleetBucket::default();
    fresh.ask(at(0), 1, LeaseAsk { want: 30.0, least: 1.0, ..call });
    let inflated = fresh.ask(at(0), 2, LeaseAsk { released: 1_000.0, ..call });
    assert_eq!(inflated.granted, 0.0, "member 2 held nothing: nothing to give back");
    let forgot = fresh.ask(at(5_000), 1, LeaseAsk { want: 1.0, least: 1.0, released: 30.0, ..call });
    assert!(forgot.granted <= 1.0);
    assert!(fresh.held(at(5_000)) <= 30.0);
}

#[test]
fn what_a_member_holds_counts_against_its_share() {
    let mut bucket = FleetBucket::default();
    bucket.ask(at(0), 1, ask(5.0, 0.0));
    assert_eq!(bucket.ask(at(0), 2, ask(10.0, 0.0)).granted, 10.0);
    // 35 tokens are there, but member 2's share is 25 and it holds 10.
    let more = bucket.ask(at(0), 2, ask(40.0, 10.0));
    assert_eq!((more.share, more.granted), (25.0, 15.0));
}

#[test]
fn a_report_of_what_a_member_spent_alone_is_counted_in_full_and_holds_nothing() {
    let mut bucket = FleetBucket::default();
    let report = bucket.ask(at(0), 1, LeaseAsk { hold: Duration::ZERO, least: 80.0, ..ask(80.0, 0.0) });
    assert_eq!((report.granted, report.fleet_rate), (80.0, 80.0), "counted in full");
    assert_eq!(bucket.held(at(0)), 0.0);
    // 30 CU below zero at 100 CU/s: a member still leasing waits for the bucket to refill.
    let leasing = bucket.ask(at(0), 2, ask(20.0, 0.0));
    assert_eq!((leasing.granted, leasing.short_for), (0.0, Duration::from_millis(500)));
}

#[test]
fn a_member_that_only_reports_still_counts_among_the_members_for_a_while() {
    let mut bucket = FleetBucket::default();
    let report = |bucket: &mut FleetBucket, ms: u64, member: u64| {
        bucket.ask(at(ms), member, LeaseAsk { hold: Duration::ZERO, ..ask(5.0, 0.0) })
    };
    report(&mut bucket, 0, 1);
    report(&mut bucket, 100, 2);
    // Two members report, a third leases: its share is the burst (50) over the three of them.
    assert_eq!(bucket.ask(at(200), 3, ask(5.0, 0.0)).share, 50.0 / 3.0);
    // A reporter sees the others too (the share is how a member counts the fleet: `Lease::members`).
    assert_eq!(report(&mut bucket, 300, 1).share, 50.0 / 3.0);
    assert_eq!(bucket.held(at(300)), 5.0, "reporters hold nothing; the leasing member its 5");
    // Reports stop: two seconds after its last, a member no longer counts.
    assert_eq!(bucket.ask(at(2_099), 3, ask(5.0, 5.0)).share, 50.0 / 3.0, "member 2 reported at 100 ms");
    assert_eq!(bucket.ask(at(2_200), 3, ask(5.0, 5.0)).share, 25.0, "member 1 still counts");
    assert_eq!(bucket.ask(at(2_301), 3, ask(5.0, 5.0)).share, 50.0, "and member 1 at 300 ms: alone now");
}

#[test]
fn an_answer_sums_the_other_members_needs_and_says_none_when_one_said_none() {
    let mut bucket = FleetBucket::default();
    let with = |demand: f64, hold: u64| LeaseAsk { demand, hold: Duration::from_millis(hold), ..ask(5.0, 0.0) };
    assert_eq!(bucket.ask(at(0), 1, with(100.0, 0)).others_demand, Some(0.0), "alone: nobody else needs");
    bucket.ask(at(10), 2, with(50.0, 2_000));
    // A reporter's need and a leasing member's both count; never the asker's own.
    assert_eq!(bucket.ask(at(20), 3, with(7.0, 2_000)).others_demand, Some(150.0));
    assert_eq!(bucket.ask(at(30), 3, with(9.0, 2_000)).others_demand, Some(150.0), "its own replaced, not added");
    // A member of an older version says none (NaN, as the wasm reads an absent number): unknown.
    bucket.ask(at(40), 4, with(f64::NAN, 500));
    assert_eq!(bucket.ask(at(50), 3, with(9.0, 2_000)).others_demand, None);
    // Its hold over, it no longer counts; nor does the reporter after REPORT_PRESENCE.
    assert_eq!(bucket.ask(at(600), 3, with(9.0, 2_000)).others_demand, Some(150.0));
    assert_eq!(bucket.ask(at(2_100), 3, with(9.0, 2_000)).others_demand, Some(0.0), "both gone");
}

#[test]
fn what_members_spent_alone_is_taken_from_the_tokens_even_below_zero() {
    // Four members spent 30 CU alone in their last second before the store first answered
    // (a fleet's start): the provider's window holds them, so a new bucket does not pay its
    // burst of 50 on top.
    let mut bucket = FleetBucket::default();
    let first = bucket.ask(at(0), 1, LeaseAsk { alone: 30.0, ..ask(30.0, 0.0) });
    assert_eq!(first.granted, 20.0, "the burst less what was spent alone");
    let second = bucket.ask(at(0), 2, LeaseAsk { alone: 25.0, ..ask(10.0, 0.0) });
    assert_eq!(second.granted, 0.0, "the window is full");
    assert_eq!(second.short_for, Duration::from_millis(350), "25 CU below zero and 10 wanted, at 100 CU/s");
    assert_eq!(bucket.ask(at(350), 2, ask(10.0, 0.0)).granted, 10.0, "then paid, in turn");
    // Counted in the fleet's rate, as a report is.
    let mut quiet = FleetBucket::default();
    let told = bucket.ask(at(350), 3, ask(0.0, 0.0)).fleet_rate;
    let untold = quiet.ask(at(350), 3, ask(0.0, 0.0)).fleet_rate;
    assert!(told > untold, "{told} against {untold}");
    // An ask of an unknown plan, a report, or a senseless number changes nothing.
    let mut other = FleetBucket::default();
    for weird in [f64::NAN, -5.0, f64::INFINITY] {
        assert_eq!(other.ask(at(0), 4, LeaseAsk { alone: weird, ..ask(1.0, 0.0) }).granted, 1.0, "{weird}");
    }
}

#[test]
fn a_plan_kept_per_second_keeps_what_was_spent_in_the_last_second_and_what_is_held_within_it() {
    // A refill fast enough that the window alone binds.
    let windowed = |want, held| LeaseAsk { rate: 1000.0, burst: 100.0, window: 100.0, ..ask(want, held) };
    let mut bucket = FleetBucket::default();
    assert_eq!(bucket.ask(at(0), 1, windowed(60.0, 0.0)).granted, 60.0);
    // It spent all 60 by 100 ms (it holds none): counted from then, for a second.
    let second = bucket.ask(at(100), 1, windowed(60.0, 0.0));
    assert_eq!(second.granted, 40.0, "60 spent + 40 held: the plan");
    assert_eq!(second.short_for, Duration::from_millis(1_020), "the rest when the 60 leave the window");
    assert_eq!(bucket.ask(at(1_100), 1, windowed(60.0, 0.0)).granted, 0.0, "the 60 still count at 1,100");
    assert_eq!(bucket.ask(at(1_120), 1, windowed(60.0, 0.0)).granted, 60.0, "gone at 1,120: 40 + 60");
    // What another member holds counts whole; a hold that ends unasked counts as spent when it ends.
    let mut bucket = FleetBucket::default();
    let short_hold = LeaseAsk { hold: Duration::from_millis(500), ..windowed(30.0, 0.0) };
    assert_eq!(bucket.ask(at(0), 2, short_hold).granted, 30.0);
    assert_eq!(bucket.ask(at(100), 1, windowed(100.0, 0.0)).granted, 50.0, "70 of the window, 50 a share");
    let mut bucket = FleetBucket::default();
    assert_eq!(bucket.ask(at(0), 2, short_hold).granted, 30.0);
    let after = bucket.ask(at(600), 1, windowed(100.0, 0.0));
    assert_eq!(after.granted, 70.0, "its 30 ended at 500 and count as spent then");
    // No window (token-bucket terms): the same asks are paid from the tokens alone.
    let mut bucket = FleetBucket::default();
    let plain = |want| LeaseAsk { window: 0.0, ..windowed(want, 0.0) };
    assert_eq!(bucket.ask(at(0), 1, plain(60.0)).granted, 60.0);
    assert_eq!(bucket.ask(at(100), 1, plain(60.0)).granted, 60.0);
}

#[test]
fn what_a_member_spent_alone_counts_in_the_window_where_it_fell() {
    // A plan of 30 CU/s kept per second; the member spent all of it alone in the last second,
    // evenly (a Redis restart), and tells it by age with its first ask back.
    let windowed = |want| LeaseAsk { rate: 30.0, burst: 6.0, window: 30.0, ..ask(want, 0.0) };
    let mut bucket = FleetBucket::default();
    let back = LeaseAsk { alone: 30.0, alone_ages: [3.0; 10], ..windowed(6.0) };
    assert_eq!(bucket.ask(at(10_000), 1, back).granted, 0.0, "the provider's second is full");
    let half = bucket.ask(at(10_500), 1, windowed(6.0));
    assert_eq!(half.granted, 6.0, "half a second on, what it spent before 9,500 has left: {half:?}");
    // Told with no ages (a member of an older version): counted from the ask, for a second.
    let mut older = FleetBucket::default();
    assert_eq!(older.ask(at(10_000), 1, LeaseAsk { alone: 30.0, ..windowed(6.0) }).granted, 0.0);
    assert_eq!(older.ask(at(10_500), 1, windowed(6.0)).granted, 0.0);
    assert_eq!(older.ask(at(11_030), 1, windowed(6.0)).granted, 6.0);
}

#[test]
fn the_others_lines_are_summed_while_each_said_its_own() {
    let mut bucket = FleetBucket::default();
    let with = |line: f64| LeaseAsk { line, ..ask(1.0, 0.0) };
    assert_eq!(bucket.ask(at(0), 1, with(5.0)).others_line, Some(0.0), "alone: nobody else waits");
    assert_eq!(bucket.ask(at(10), 2, with(3.0)).others_line, Some(5.0));
    assert_eq!(bucket.ask(at(20), 3, with(0.0)).others_line, Some(8.0));
    assert_eq!(bucket.ask(at(30), 3, with(1.0)).others_line, Some(8.0), "its own replaced, not added");
    assert_eq!(bucket.ask(at(40), 4, with(f64::NAN)).others_line, Some(9.0));
    assert_eq!(bucket.ask(at(50), 1, with(5.0)).others_line, None, "one said none (an older member): unknown");
    assert_eq!(bucket.ask(at(60), 5, with(-2.0)).others_line, None);
    assert_eq!(bucket.ask(at(5_000), 1, with(5.0)).others_line, Some(0.0), "their holds over: members no more");
}
