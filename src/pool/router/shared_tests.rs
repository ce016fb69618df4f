//! Routers of one realm sharing quota groups and chain checks, on explicit
//! instants.

use std::time::Duration;

use super::tests::{at, options, pick, req, spec, verdict};
use super::*;
use crate::policy::{ErrorClass, Verdict};
use crate::pool::options::HedgeConfig;

fn two_in(realm: Option<&Realm>, o: &PoolOptions) -> (Router, Router) {
    let make = || Router::in_realm((0..2).map(spec).collect(), o, Duration::from_secs(60), at(0), realm);
    (make(), make())
}

fn keyed(cu_per_second: f64) -> PoolOptions {
    let q = QuotaConfig { cu_per_second, burst: 20.0, ..QuotaConfig::default() };
    let mut o = options(Strategy::Priority);
    o.quota_groups = vec![("key".into(), q)];
    o
}

fn grouped(specs: impl Iterator<Item = EndpointSpec>) -> Vec<EndpointSpec> {
    specs.map(|mut s| (s.quota_group = Some("key".into()), s).1).collect()
}

fn select(r: &mut Router, now: Instant) -> Selection {
    r.select(now, &req(&[false, false]), (0.5, 0.5))
}

/// The reservation `r` makes for `request` at `now` (a test that expects one).
fn reserve(r: &mut Router, now: Instant, request: &RouteRequest<'_>) -> Reservation {
    match r.select(now, request, (0.5, 0.5)) {
        Selection::Reserved(res) => res,
        other => panic!("expected a reservation, got {other:?}"),
    }
}

#[test]
fn one_bucket_for_every_member_of_a_group() {
    let realm = Realm::new();
    let o = keyed(100.0);
    let make = || Router::in_realm(grouped((0..2).map(spec)), &o, Duration::from_secs(60), at(0), Some(&realm));
    let (mut a, mut b) = (make(), make());
    // Burst 20 CU at 10 CU a call: two calls in all, whoever makes them.
    assert!(matches!(select(&mut a, at(0)), Selection::Reserved(_)));
    assert!(matches!(select(&mut b, at(0)), Selection::Reserved(_)));
    assert!(matches!(select(&mut a, at(0)), Selection::Wait { .. }), "the second member spent the rest");
    assert!(matches!(select(&mut b, at(0)), Selection::Wait { .. }));
    assert_eq!(realm.live(), (1, 2));
    // Alone, each would have had its own burst.
    let (mut c, mut d) = (
        Router::new(grouped((0..2).map(spec)), &o, Duration::from_secs(60), at(0)),
        Router::new(grouped((0..2).map(spec)), &o, Duration::from_secs(60), at(0)),
    );
    for r in [&mut c, &mut d] {
        assert!(matches!(select(r, at(0)), Selection::Reserved(_)));
        assert!(matches!(select(r, at(0)), Selection::Reserved(_)));
    }
}

#[test]
fn a_rate_limit_one_member_hears_cools_the_group_for_all() {
    let realm = Realm::new();
    let o = keyed(f64::INFINITY);
    let make = || Router::in_realm(grouped((0..2).map(spec)), &o, Duration::from_secs(60), at(0), Some(&realm));
    let (mut a, mut b) = (make(), make());
    let Selection::Reserved(res) = select(&mut a, at(0)) else { panic!("a reservation") };
    let limited = Verdict { retry_after: Some(Duration::from_secs(2)), ..verdict(ErrorClass::RateLimited, false) };
    a.complete(at(10), &res, &limited, MethodClass::Cheap, Duration::from_millis(10), 0.5);
    match select(&mut b, at(20)) {
        Selection::Wait { until: Some(until), quota: true, .. } => assert!(until >= at(2010), "{until:?}"),
        other => panic!("the other member must wait out the cooldown, got {other:?}"),
    }
}

#[test]
fn one_members_chain_check_answers_for_the_others() {
    let realm = Realm::new();
    let o = PoolOptions { check_chain: true, ..options(Strategy::Priority) };
    let (mut a, mut b) = two_in(Some(&realm), &o);
    let Selection::Reserved(first) = select(&mut a, at(0)) else { panic!() };
    assert!(first.check_chain, "nobody has checked endpoint 0 yet");
    assert_eq!(a.chain_checked(0, 1, at(30)), None);
    let Selection::Reserved(other) = select(&mut b, at(40)) else { panic!() };
    assert_eq!(other.endpoint, 0);
    assert!(!other.check_chain, "the first member's answer is taken");
    // Due again after chainRecheckMs: checked again, by whoever comes first,
    // and that recheck answers for the others whose own is due too.
    let Selection::Reserved(later) = select(&mut b, at(30 + 300_000)) else { panic!() };
    assert!(later.check_chain);
    b.chain_checked(0, 1, at(300_100));
    let Selection::Reserved(after) = select(&mut a, at(300_200)) else { panic!() };
    assert!(!after.check_chain, "a's check was due; b's fresh recheck answers it");
    // Alone, each checks for itself.
    let (mut c, mut d) = two_in(None, &o);
    let Selection::Reserved(_) = select(&mut c, at(0)) else { panic!() };
    c.chain_checked(0, 1, at(30));
    let Selection::Reserved(own) = select(&mut d, at(40)) else { panic!() };
    assert!(own.check_chain);
}

#[test]
fn another_members_mismatch_disables_the_endpoint_here_too() {
    let realm = Realm::new();
    let o = PoolOptions { check_chain: true, chain_id: Some(1), ..options(Strategy::Priority) };
    let (mut a, mut b) = two_in(Some(&realm), &o);
    let _ = select(&mut a, at(0));
    assert!(a.chain_checked(0, 5, at(30)).is_some(), "endpoint 0 serves chain 5");
    let Selection::Reserved(res) = select(&mut b, at(40)) else { panic!() };
    assert_eq!(res.endpoint, 1, "b skips endpoint 0 without asking it");
}

#[test]
fn members_tuned_differently_or_opting_out_keep_their_own_state() {
    let realm = Realm::new();
    let mine = Router::in_realm(grouped((0..2).map(spec)), &keyed(100.0), Duration::from_secs(60), at(0), Some(&realm));
    let other = Router::in_realm(grouped((0..2).map(spec)), &keyed(50.0), Duration::from_secs(60), at(0), Some(&realm));
    assert!(!Rc::ptr_eq(&mine.groups[0].quota, &other.groups[0].quota), "another plan: another group");
    let alone = Router::new(grouped((0..2).map(spec)), &keyed(100.0), Duration::from_secs(60), at(0));
    assert!(!Rc::ptr_eq(&mine.groups[0].quota, &alone.groups[0].quota));
    let provider = EndpointSpec::from_url(crate::redact::EndpointUrl::labelled("wrapped"), 0);
    let wrapped = Router::in_realm(
        vec![provider.clone()],
        &options(Strategy::Priority),
        Duration::from_secs(60),
        at(0),
        Some(&realm),
    );
    let wrapped2 =
        Router::in_realm(vec![provider], &options(Strategy::Priority), Duration::from_secs(60), at(0), Some(&realm));
    assert!(!Rc::ptr_eq(&wrapped.groups[0].quota, &wrapped2.groups[0].quota), "no URL, nothing says they are one");
    drop((mine, other, alone, wrapped, wrapped2));
    assert_eq!(realm.live(), (0, 0), "closed relayers leave nothing behind");
}

#[test]
fn a_member_that_leaves_keeps_nothing_alive_and_shares_nothing_more() {
    let realm = Realm::new();
    let o = PoolOptions { check_chain: true, ..keyed(100.0) };
    let make = || Router::in_realm(grouped((0..2).map(spec)), &o, Duration::from_secs(60), at(0), Some(&realm));
    let (mut a, mut b) = (make(), make());
    a.leave_realm();
    assert!(!Rc::ptr_eq(&a.groups[0].quota, &b.groups[0].quota));
    let _ = select(&mut a, at(0));
    a.chain_checked(0, 1, at(10));
    let Selection::Reserved(res) = select(&mut b, at(20)) else { panic!() };
    assert!(res.check_chain, "a left: its check is its own");
    drop(b);
    assert_eq!(realm.live(), (0, 0));
}

#[test]
fn a_relayer_alone_keeps_its_own_quota_state_when_it_leaves() {
    let mut alone = Router::new(grouped((0..2).map(spec)), &keyed(100.0), Duration::from_secs(60), at(0));
    let _ = select(&mut alone, at(0));
    alone.leave_realm();
    assert_eq!(alone.groups[0].quota.borrow().stats().cu_charged, 10.0, "its stats survive close()");
}

#[test]
fn a_fresh_member_never_hedges_an_endpoint_sooner_than_the_realm_knows_it_answers() {
    let realm = Realm::new();
    let o = options(Strategy::Priority);
    let (mut a, b) = two_in(Some(&realm), &o);
    let hedge = HedgeConfig::default();
    let cheap = MethodClass::Cheap;
    assert_eq!(b.hedge_delay(0, cheap, &hedge), hedge.initial_delay, "nobody knows it yet");
    let serve = |r: &mut Router, from: u64, ms: u64, n: u64| {
        for i in 0..n {
            let res = pick(r, at(from + i * 3000), (0.5, 0.5));
            assert_eq!(res.endpoint, 0);
            r.complete(
                at(from + i * 3000 + ms),
                &res,
                &verdict(ErrorClass::Success, false),
                cheap,
                Duration::from_millis(ms),
                0.5,
            );
        }
    };
    // Slow alike: five members with two answers each, none trusted alone,
    // teach the realm a 1.5 s tail and typical latency; a fresh member
    // waits until a hedge could win (its 1.5 s plus as much again for a
    // peer nobody measured), not its 1 s initial delay.
    let mut members: Vec<Router> = (0..5).map(|_| two_in(Some(&realm), &o).0).collect();
    for (k, m) in members.iter_mut().enumerate() {
        assert_eq!(b.hedge_delay(0, cheap, &hedge), hedge.initial_delay, "not trusted yet: {k} members × 2");
        serve(m, k as u64 * 100_000, 1500, 2);
    }
    let learned = b.hedge_delay(0, cheap, &hedge);
    assert!(learned >= Duration::from_millis(3000) && learned < Duration::from_millis(3100), "{learned:?}");
    serve(&mut a, 1_000_000, 1500, 10);
    assert!(a.hedge_delay(0, cheap, &hedge) >= Duration::from_millis(1500), "its own history now");
    // A fast endpoint does not make a fresh member hedge sooner than it would alone.
    let realm = Realm::new();
    let (mut a, b) = two_in(Some(&realm), &o);
    serve(&mut a, 0, 200, 10);
    assert!(a.hedge_delay(0, cheap, &hedge) < Duration::from_millis(450), "200 ms twice, as a peer is alike");
    assert_eq!(b.hedge_delay(0, cheap, &hedge), hedge.initial_delay);
    let ceiling = Duration::from_secs(10);
    assert_eq!(b.attempt_timeout(0, cheap, ceiling), ceiling, "timeouts still wait for history of its own");
    // Alone, a fresh router knows nothing of the first one's slow endpoint.
    let (mut slow, _) = two_in(None, &o);
    serve(&mut slow, 0, 1500, 10);
    let (alone, _) = two_in(None, &o);
    assert_eq!(alone.hedge_delay(0, cheap, &hedge), hedge.initial_delay);
}

#[test]
fn a_member_that_left_hands_nothing_on_even_while_it_lives() {
    let realm = Realm::new();
    let o = keyed(f64::INFINITY);
    let make = || Router::in_realm(grouped((0..2).map(spec)), &o, Duration::from_secs(60), at(0), Some(&realm));
    let mut a = make();
    // The only member: its key cools for 30 s and endpoint 0's breaker opens.
    let Selection::Reserved(res) = select(&mut a, at(0)) else { panic!("a reservation") };
    let limited = Verdict { retry_after: Some(Duration::from_secs(30)), ..verdict(ErrorClass::RateLimited, false) };
    a.complete(at(10), &res, &limited, MethodClass::Cheap, Duration::from_millis(10), 0.5);
    for t in 0..5 {
        a.endpoints[0].breaker.borrow_mut().on_failure(at(20 + t), false, 0.5);
    }
    assert!(a.breaker_open(0, at(30)));
    // Closed, but not yet collected (a host frees it whenever it likes).
    a.leave_realm();
    assert_eq!(realm.live(), (0, 0), "nothing of the realm's is held by a member that left");
    let mut b = make();
    assert!(!b.breaker_open(0, at(40)), "a fresh member does not inherit the old breaker");
    assert!(matches!(select(&mut b, at(40)), Selection::Reserved(_)), "nor the old cooldown");
    assert!(a.breaker_open(0, at(40)), "the member that left keeps its own copy");
}

#[test]
fn a_mismatch_found_by_adopting_another_members_check_is_news_for_this_member() {
    let realm = Realm::new();
    let o = PoolOptions { check_chain: true, ..options(Strategy::Priority) };
    let mut a = Router::in_realm((0..1).map(spec).collect(), &o, Duration::from_secs(60), at(0), Some(&realm));
    let wants_5 = PoolOptions { chain_id: Some(5), ..o.clone() };
    let mut b = Router::in_realm((0..1).map(spec).collect(), &wants_5, Duration::from_secs(60), at(0), Some(&realm));
    let Selection::Reserved(first) = a.select(at(0), &req(&[false]), (0.5, 0.5)) else { panic!() };
    assert_eq!(a.chain_checked(0, 1, at(10)), None, "chain 1 is what a expects");
    a.release(&first);
    assert!(matches!(b.select(at(20), &req(&[false]), (0.5, 0.5)), Selection::NoEndpoint));
    let adopted = b.take_adopted();
    assert!(
        matches!(adopted.as_slice(), [RouterEvent::ChainMismatch { endpoint: 0, expected: 5, got: 1 }]),
        "{adopted:?}"
    );
    assert!(b.take_adopted().is_empty(), "told once");
    assert!(a.take_adopted().is_empty());
}

#[test]
fn a_hedge_skips_an_endpoint_the_realm_waits_on_in_silence() {
    let realm = Realm::new();
    let o = options(Strategy::Priority);
    let (mut a, mut b) = two_in(Some(&realm), &o);
    let (primary_tried, fresh) = ([true, false], [false, false]);
    let elsewhere = RouteRequest { only_untried: true, ..req(&primary_tried) };
    // Member a's read waits on endpoint 1 from 0 ms, unanswered.
    let waiting = reserve(&mut a, at(0), &elsewhere);
    assert_eq!(waiting.endpoint, 1);
    // Member b's primary on endpoint 0 has run 1 s; its hedge would go to endpoint 1.
    let hedge = RouteRequest { hedge_of: Some(Duration::from_secs(1)), ..elsewhere };
    let reserved = |r: &mut Router, now| match r.select(now, &hedge, (0.5, 0.5)) {
        Selection::Reserved(res) => {
            r.release(&res);
            true
        }
        _ => false,
    };
    assert!(reserved(&mut b, at(400)), "silent 400 ms, under half of what the primary waited: hedged");
    assert!(!reserved(&mut b, at(600)), "silent 600 ms, past half of it: no faster, no hedge");
    assert!(!reserved(&mut b, at(1000)));
    assert!(
        matches!(b.select(at(1000), &req(&fresh), (0.5, 0.5)), Selection::Reserved(_)),
        "a first attempt still goes"
    );
    // An answer ends the silence.
    let second = reserve(&mut a, at(900), &elsewhere);
    a.complete(
        at(950),
        &waiting,
        &verdict(ErrorClass::Success, false),
        MethodClass::Cheap,
        Duration::from_millis(950),
        0.5,
    );
    assert!(reserved(&mut b, at(1000)), "endpoint 1 answered 50 ms ago: hedged");
    // Only the endpoint's own replies count: a timeout is more silence.
    a.complete(
        at(1900),
        &second,
        &verdict(ErrorClass::Transient, true),
        MethodClass::Cheap,
        Duration::from_secs(1),
        0.5,
    );
    let third = reserve(&mut a, at(2000), &elsewhere);
    assert!(!reserved(&mut b, at(3000)), "out since 2 s, unanswered");
    a.release(&third);
    assert!(reserved(&mut b, at(3000)), "nothing out: nothing to be silent about");
    // An endpoint usually this slow is not slow right now.
    for i in 0..10 {
        let t = 10_000 + i * 2_000;
        let r = reserve(&mut a, at(t), &elsewhere);
        a.complete(
            at(t + 1500),
            &r,
            &verdict(ErrorClass::Success, false),
            MethodClass::Cheap,
            Duration::from_millis(1500),
            0.5,
        );
    }
    let usual = reserve(&mut a, at(40_000), &elsewhere);
    assert!(reserved(&mut b, at(41_200)), "silent 1.2 s, within its 1.5 s tail: hedged");
    assert!(!reserved(&mut b, at(41_600)), "silent past its tail");
    a.release(&usual);
    // Alone, a router cannot see another's attempts.
    let (mut c, mut d) = two_in(None, &o);
    let _ = reserve(&mut c, at(0), &elsewhere);
    assert!(reserved(&mut d, at(1000)));
}

#[test]
fn members_come_back_from_a_total_outage_at_one_pace() {
    let realm = Realm::new();
    let o = options(Strategy::Priority);
    let (mut a, mut b) = two_in(Some(&realm), &o);
    // 10 requests a second each, for 3 s: 20 a second together.
    for i in 0..30 {
        a.note_arrival(at(i * 100));
        b.note_arrival(at(i * 100 + 50));
    }
    // Member a sees the fleet down, then back: it starts the fleet's pacing.
    a.note_outage(true, at(3000));
    a.note_outage(false, at(3100));
    let mut granted = 0;
    for ms in (3100..4100).step_by(5) {
        for r in [&mut a, &mut b] {
            if let Selection::Reserved(res) = r.select(at(ms), &req(&[false, false]), (0.5, 0.5)) {
                r.release(&res);
                granted += 1;
            }
        }
    }
    assert!((22..=26).contains(&granted), "1.2 × 20/s for both in the first second: {granted}");
    // Alone, a member's pacing is its own.
    let (mut c, mut d) = two_in(None, &o);
    c.pacer.borrow_mut().recovery = Some(Recovery::start(0.0, at(0)));
    assert!(matches!(c.select(at(10), &req(&[false, false]), (0.5, 0.5)), Selection::Wait { .. }));
    assert!(matches!(d.select(at(10), &req(&[false, false]), (0.5, 0.5)), Selection::Reserved(_)));
}

#[test]
fn a_member_that_leaves_takes_its_attempts_out_with_it() {
    let realm = Realm::new();
    let o = options(Strategy::Priority);
    let (mut a, mut b) = two_in(Some(&realm), &o);
    let elsewhere = RouteRequest { only_untried: true, ..req(&[true, false]) };
    let out = reserve(&mut a, at(0), &elsewhere);
    a.leave_realm(); // closed with an attempt still out on endpoint 1
    a.release(&out); // it ends later, on a's own record
    let hedge = RouteRequest { hedge_of: Some(Duration::from_secs(1)), ..elsewhere };
    let Selection::Reserved(r) = b.select(at(60_000), &hedge, (0.5, 0.5)) else {
        panic!("the realm's record must not wait on the attempt that left")
    };
    b.release(&r);
}

#[test]
fn one_head_poll_round_for_the_realm_heard_by_every_member() {
    let realm = Realm::new();
    let o = options(Strategy::Priority);
    let (mut a, mut b) = two_in(Some(&realm), &o);
    assert!(a.head_poll_due(at(12_000)) && b.head_poll_due(at(12_000)));
    let polls = a.start_head_round(at(12_000)).expect("a round").polls;
    assert_eq!(polls.len(), 2, "both endpoints polled");
    assert!(!b.head_poll_due(at(12_000)), "a member's round is the realm's");
    assert!(b.start_head_round(at(12_000)).is_none());
    for r in &polls {
        a.complete(
            at(12_050),
            r,
            &verdict(ErrorClass::Success, false),
            MethodClass::Cheap,
            Duration::from_millis(50),
            0.5,
        );
    }
    a.end_head_round(&[(0, 100), (1, 90)], at(12_050));
    assert_eq!(b.endpoints[0].head, None, "taken in on b's next selection");
    let _ = select(&mut b, at(12_060));
    assert_eq!((b.endpoints[0].head, b.endpoints[1].head), (Some(100), Some(90)));
    assert!(!b.head_poll_due(at(24_049)) && b.head_poll_due(at(24_050)), "the next one interval after it ended");
    // Its poller closes mid-round: the realm's next read may start one at once.
    let polls = b.start_head_round(at(24_050)).expect("b's round").polls;
    b.leave_realm();
    assert!(a.head_poll_due(at(24_051)));
    b.end_head_round(&[], at(24_100));
    drop(polls);
    // Alone, each router keeps its own schedule.
    let (mut c, d) = two_in(None, &o);
    assert!(c.start_head_round(at(12_000)).is_some());
    assert!(d.head_poll_due(at(12_000)));
}

#[test]
fn only_a_members_own_chain_check_is_news_for_other_realms() {
    let realm = Realm::new();
    let o = PoolOptions { check_chain: true, ..options(Strategy::Priority) };
    let (mut a, mut b) = two_in(Some(&realm), &o);
    assert_eq!(b.endpoints[0].chain, ChainStatus::Unknown);
    assert_eq!(a.chain_checked(0, 1, at(10)), None);
    assert_eq!(a.take_news().len(), 1, "a's check goes to the other realms");
    let _ = select(&mut b, at(20)); // b adopts a's check
    assert_eq!(b.endpoints[0].chain, ChainStatus::Verified, "adopted, not checked");
    assert!(b.take_news().is_empty(), "an adopted check is not told again (one message, not one per member)");
}

#[test]
fn a_members_429_and_breaker_opening_are_news_for_other_realms_and_a_lowered_plan_too() {
    use crate::coord::news::News;
    let realm = Realm::new();
    let o = options(Strategy::Priority);
    let (mut a, _b) = two_in(Some(&realm), &o);
    let limited = Verdict { retry_after: Some(Duration::from_secs(5)), ..verdict(ErrorClass::RateLimited, false) };
    // Enough sent before the 429 for an unknown plan to learn a rate from it.
    for ms in 0..12 {
        a.groups[a.endpoints[0].group].quota.borrow_mut().charge(at(ms), 1.0).unwrap();
    }
    let r = reserve(&mut a, at(0), &req(&[false, false]));
    a.complete(at(1000), &r, &limited, MethodClass::Cheap, Duration::from_millis(10), 0.5);
    let group = a.group_keys[a.endpoints[0].group].unwrap();
    let news = a.take_news();
    assert_eq!(news.len(), 2, "{news:?}");
    assert!(
        matches!(news[0], News::Plan { group: g, rate } if g == group && rate > 0.0),
        "the learned plan, lowered: {news:?}"
    );
    assert_eq!(news[1], News::Cooldown { group, until: at(6000) });
    // A breaker that opens is news.
    let tried = [true, false];
    for _ in 0..3 {
        let r = reserve(&mut a, at(7000), &RouteRequest { only_untried: true, ..req(&tried) });
        assert_eq!(r.endpoint, 1);
        a.complete(
            at(7000),
            &r,
            &verdict(ErrorClass::Transient, true),
            MethodClass::Cheap,
            Duration::from_millis(10),
            0.5,
        );
    }
    let news = a.take_news();
    let breaker = a.breaker_keys[1].unwrap();
    assert!(
        matches!(news.as_slice(), [News::BreakerOpen { breaker: b, until }] if *b == breaker && *until > at(7000)),
        "{news:?}"
    );
    // A first 429 whose cooldown is already over (Retry-After: 0) is nothing to tell.
    let (mut c, _d) = two_in(Some(&Realm::new()), &o);
    let r = reserve(&mut c, at(0), &req(&[false, false]));
    let past = Verdict { retry_after: Some(Duration::ZERO), ..limited };
    c.complete(at(0), &r, &past, MethodClass::Cheap, Duration::from_millis(10), 0.5);
    assert!(c.take_news().iter().all(|n| !matches!(n, News::Cooldown { .. })), "no cooldown told for a past time");
}
