//! Word of a node back between realms (`coord::news::BreakerBack`): a
//! realm whose probe gets through tells the others, and a realm still open
//! on that node probes it at once instead of at its own next early probe.

use std::time::Duration;

use super::tests::{at, finish, options, pick, req, spec};
use super::*;
use crate::coord::news::News;
use crate::policy::ErrorClass;

/// A router of one endpoint in its own realm (as one process of a fleet
/// is), its breaker opened at `opened` by three failures.
fn down_in(realm: &Realm, opened: u64) -> Router {
    let mut r =
        Router::in_realm(vec![spec(0)], &options(Strategy::Priority), Duration::from_secs(60), at(0), Some(realm));
    for _ in 0..3 {
        let res = pick(&mut r, at(opened), (0.5, 0.5));
        finish(&mut r, at(opened), res, ErrorClass::Transient, true);
    }
    let _ = r.take_news();
    r
}

#[test]
fn a_realm_that_finds_a_node_back_tells_and_the_others_probe_it_at_once() {
    let (here, there) = (Realm::new(), Realm::new());
    let mut a = down_in(&here, 0);
    let mut b = down_in(&there, 0);
    let tried = [false];
    // a's early probe at 500 ms gets through.
    let probe = pick(&mut a, at(500), (0.5, 0.5));
    assert!(probe.outage_probe);
    finish(&mut a, at(510), probe, ErrorClass::Success, false);
    let news = a.take_news();
    let back = news.iter().copied().find(|n| matches!(n, News::BreakerBack { .. }));
    assert!(matches!(back, Some(News::BreakerBack { at: t, .. }) if t == at(510)), "{news:?}");
    // b had its own early probe at 500 ms too (failed): its next is 500 ms away.
    let failed = pick(&mut b, at(500), (0.5, 0.5));
    finish(&mut b, at(505), failed, ErrorClass::Transient, true);
    let before = b.select(at(600), &req(&tried), (0.5, 0.5));
    assert_eq!(before, Selection::Wait { until: Some(at(1000)), quota: false, paced: false });
    assert!(there.hear(back.unwrap(), at(600), 0.5));
    match b.select(at(600), &req(&tried), (0.5, 0.5)) {
        Selection::Reserved(res) => assert!(res.probe, "a half-open probe at once"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn in_a_total_outage_another_realms_failed_probe_puts_this_realms_next_one_a_base_later() {
    // Both realms lost their only node at 0; their first early probes are due at 500 ms. a's
    // goes and fails; b hears it ended: its own goes a jittered base (500 ms at a draw of 0.5)
    // after a's verdict, not at 500 ms, so the fleet probes the dead node about once a base.
    let (here, there) = (Realm::new(), Realm::new());
    let (mut a, mut b) = (down_in(&here, 0), down_in(&there, 0));
    let tried = [false];
    let probe = pick(&mut a, at(500), (0.5, 0.5));
    assert!(probe.outage_probe);
    finish(&mut a, at(505), probe, ErrorClass::Transient, true);
    let ended = a.take_news().into_iter().find(|n| matches!(n, News::ProbeEnded { .. })).expect("told");
    assert!(there.hear(ended, at(506), 0.5));
    assert_eq!(
        b.select(at(506), &req(&tried), (0.5, 0.5)),
        Selection::Wait { until: Some(at(1006)), quota: false, paced: false }
    );
    let own = pick(&mut b, at(1006), (0.5, 0.5));
    assert!(own.outage_probe, "b's own probe, a base after a's");
    // Word of the node back still brings b's probe forward at once (the test above).
}

#[test]
fn word_of_a_node_back_does_not_undo_a_newer_opening() {
    let there = Realm::new();
    let mut b = down_in(&there, 2_000);
    let key = b.breaker_keys[0].unwrap();
    assert!(there.hear(News::BreakerBack { breaker: key, at: at(1_000) }, at(2_100), 0.5));
    let tried = [false];
    assert!(
        matches!(b.select(at(2_100), &req(&tried), (0.5, 0.5)), Selection::Wait { .. }),
        "b saw the node fail after the other realm saw it back"
    );
    assert!(matches!(b.endpoints[0].breaker.borrow_mut().state(at(2_100)), BreakerState::Open { .. }));
}

#[test]
fn a_process_starting_cold_hedges_a_node_on_the_fleets_measure_of_it() {
    // Realm a measured the node's reads at 3 s (a slow archive node): it
    // tells; realm b, fresh, would hedge them after the blind 1 s initial
    // delay (doubling the load of every read); hearing, it waits 3 s.
    let (here, there) = (Realm::new(), Realm::new());
    let o = options(Strategy::Priority);
    let make = |realm| Router::in_realm(vec![spec(0), spec(1)], &o, Duration::from_secs(60), at(0), Some(realm));
    let (mut a, b) = (make(&here), make(&there));
    let hedge = crate::pool::options::HedgeConfig::default();
    assert_eq!(b.hedge_delay(0, MethodClass::Call, &hedge), Duration::from_secs(1), "blind");
    let tried = [false, false];
    let call = RouteRequest { class: MethodClass::Call, ..req(&tried) };
    let mut told = Vec::new();
    for t in 0..crate::policy::tail::TRUSTED_TAIL_SAMPLES as u64 {
        let res = match a.select(at(t * 4000), &call, (0.5, 0.5)) {
            Selection::Reserved(res) => res,
            other => panic!("{other:?}"),
        };
        let ok = super::tests::verdict(ErrorClass::Success, false);
        a.complete(at(t * 4000 + 3000), &res, &ok, MethodClass::Call, Duration::from_secs(3), 0.5);
        told.extend(a.take_news().into_iter().filter(|n| matches!(n, News::Tail { .. })));
    }
    assert_eq!(told.len(), 1, "told once it is trusted: {told:?}");
    assert!(matches!(told[0], News::Tail { class: 1, ms, .. } if (ms - 3000.0).abs() < 1.0));
    assert!(there.hear(told[0], at(0), 0.5));
    assert_eq!(b.hedge_delay(0, MethodClass::Call, &hedge), Duration::from_secs(3));
}

#[test]
fn a_head_round_polled_in_one_realm_is_heard_in_another_and_puts_its_own_off() {
    // Two processes of a fleet on the same two endpoints: a polls; b takes
    // a's heads in as its own round's and does not poll for an interval.
    let (here, there) = (Realm::new(), Realm::new());
    let o = options(Strategy::Priority);
    let make = |realm| Router::in_realm(vec![spec(0), spec(1)], &o, Duration::from_secs(60), at(0), Some(realm));
    let (mut a, mut b) = (make(&here), make(&there));
    let polls = a.start_head_round(at(12_000)).expect("a's round").polls;
    for r in &polls {
        a.release(r);
    }
    a.end_head_round(&[(0, 21_000_100), (1, 21_000_090)], at(12_050));
    let news = a.take_news();
    let kinds: Vec<&str> = news.iter().map(News::kind).collect();
    assert_eq!(kinds, ["head", "head", "headRound"], "each head, then the round's end");
    assert!(b.head_poll_due(at(12_100)), "b's own first round was due at 12 s");
    for n in &news {
        assert!(there.hear(*n, at(12_060), 0.5), "{n:?}");
    }
    assert!(!b.head_poll_due(at(12_100)), "b heard a's round: none of its own");
    let tried = [false, false];
    let _ = b.select(at(12_100), &req(&tried), (0.5, 0.5));
    assert_eq!((b.endpoints[0].head, b.endpoints[1].head), (Some(21_000_100), Some(21_000_090)));
    assert_eq!(b.endpoints[1].lag.map(|(lag, _)| lag), Some(10), "b knows endpoint 1 lags without polling it");
    // a polls again one interval after its round (24.05 s); b's next is due
    // only 1.375 intervals after a's round ended (28.55 s).
    assert!(a.head_poll_due(at(24_050)));
    assert!(!b.head_poll_due(at(28_549)) && b.head_poll_due(at(28_550)));
    // A realm with no member on those endpoints takes nothing in.
    let nobody = Realm::new();
    assert!(!news.iter().any(|n| nobody.hear(*n, at(12_060), 0.5)));
}

/// A router of two endpoints in its own realm, the first's breaker opened
/// at 0 by three failures (the second serves).
fn first_down_in(realm: &Realm) -> Router {
    let o = options(Strategy::Priority);
    let mut r = Router::in_realm(vec![spec(0), spec(1)], &o, Duration::from_secs(60), at(0), Some(realm));
    let tried = [false, false];
    for _ in 0..3 {
        let Selection::Reserved(res) = r.select(at(0), &req(&tried), (0.5, 0.5)) else { panic!("endpoint 0") };
        assert_eq!(res.endpoint, 0);
        finish(&mut r, at(0), res, ErrorClass::Transient, true);
    }
    let _ = r.take_news();
    r
}

fn reserved(r: &mut Router, now: Instant) -> Reservation {
    match r.select(now, &req(&[false, false]), (0.5, 0.5)) {
        Selection::Reserved(res) => res,
        other => panic!("{other:?}"),
    }
}

#[test]
fn one_half_open_probe_of_a_node_in_flight_for_the_fleet_the_others_wait_for_its_end() {
    // Two processes whose breakers on node 0 opened at 0 (b took a's word:
    // the same open time). At 30 s both turn half-open; a probes first.
    let (here, there) = (Realm::new(), Realm::new());
    let (mut a, mut b) = (first_down_in(&here), first_down_in(&there));
    let half_open = at(40_000);
    let probe = reserved(&mut a, half_open);
    assert!(probe.probe && probe.endpoint == 0);
    let news = a.take_news();
    let Some(&probing @ News::Probing { until, .. }) = news.iter().find(|n| matches!(n, News::Probing { .. })) else {
        panic!("the probe is told as it goes: {news:?}")
    };
    assert_eq!(until, half_open + Duration::from_secs(10), "due by the attempt timeout");
    assert!(there.hear(probing, half_open, 0.5));
    for t in [half_open, half_open + Duration::from_secs(5)] {
        let read = reserved(&mut b, t);
        assert!(!read.probe && read.endpoint == 1, "b's reads go to node 1, no probe of node 0: {read:?}");
        b.release(&read);
    }
    // a's probe hangs to its timeout and fails: a tells it ended; b probes.
    finish(&mut a, until, probe, ErrorClass::Transient, true);
    let ended: Vec<News> = a.take_news().into_iter().filter(|n| matches!(n, News::ProbeEnded { .. })).collect();
    assert_eq!(ended.len(), 1);
    assert!(there.hear(ended[0], half_open + Duration::from_secs(6), 0.5));
    let own = reserved(&mut b, half_open + Duration::from_secs(6));
    assert!(own.probe && own.endpoint == 0, "its own probe now: {own:?}");
    // Without the end heard, the hold lapses at the probe's deadline.
    let elsewhere = Realm::new();
    let mut c = first_down_in(&elsewhere);
    assert!(elsewhere.hear(probing, half_open, 0.5));
    assert_eq!(reserved(&mut c, at(49_999)).endpoint, 1);
    assert!(reserved(&mut c, until).probe, "the teller is gone");
    // In a total outage nothing is held: finding a node back answers requests.
    let alone = Realm::new();
    let mut d = down_in(&alone, 0);
    assert!(alone.hear(probing, half_open, 0.5));
    match d.select(half_open, &req(&[false]), (0.5, 0.5)) {
        Selection::Reserved(res) => assert!(res.probe),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_tellers_opening_holds_the_half_open_probe_for_its_verdict_while_the_pool_serves() {
    let (here, there) = (Realm::new(), Realm::new());
    let (mut a, mut b) = (first_down_in(&here), first_down_in(&there));
    let key = b.breaker_keys[0].unwrap();
    // b's own time is up at 30 s; a (the teller) opened until 35 s.
    assert!(there.hear(News::BreakerOpen { breaker: key, until: at(35_000) }, at(1_000), 0.5));
    for t in [30_000, 35_999] {
        let read = reserved(&mut b, at(t));
        assert!(!read.probe && read.endpoint == 1, "a probes the node at 35 s: b waits for its verdict");
        b.release(&read);
    }
    // a's probe at 35 s fails: its end, then its new opening, in that order.
    let probe = reserved(&mut a, at(35_000));
    assert!(probe.probe && probe.endpoint == 0);
    finish(&mut a, at(35_050), probe, ErrorClass::Transient, true);
    let told: Vec<News> =
        a.take_news().into_iter().filter(|n| matches!(n, News::ProbeEnded { .. } | News::BreakerOpen { .. })).collect();
    assert!(matches!(told[..], [News::ProbeEnded { .. }, News::BreakerOpen { .. }]), "{told:?}");
    let News::BreakerOpen { until: again, .. } = told[1] else { unreachable!() };
    for news in &told {
        there.hear(*news, at(35_060), 0.5);
    }
    let read = reserved(&mut b, at(35_060));
    assert!(!read.probe && read.endpoint == 1, "held again, until a's next probe");
    b.release(&read);
    // a's next probe gets through: b goes half-open and probes at once.
    let probe = reserved(&mut a, again);
    finish(&mut a, again + Duration::from_millis(10), probe, ErrorClass::Success, false);
    for news in a.take_news() {
        there.hear(news, again + Duration::from_millis(20), 0.5);
    }
    let own = reserved(&mut b, again + Duration::from_millis(20));
    assert!(own.probe && own.endpoint == 0, "the node is back: b proves it with its own probes");
    // A teller that never probes (no traffic) holds nobody past its time and a grace of 1 s.
    let quiet = Realm::new();
    let mut c = first_down_in(&quiet);
    assert!(quiet.hear(News::BreakerOpen { breaker: key, until: at(31_000) }, at(1_000), 0.5));
    assert_eq!(reserved(&mut c, at(31_999)).endpoint, 1);
    assert!(reserved(&mut c, at(32_000)).probe);
}
