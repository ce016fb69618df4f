//! The recovery pacer's line after a total outage, on explicit instants.

use std::time::Duration;

use super::tests::{at, finish, req, router};
use super::*;
use crate::policy::ErrorClass;

#[test]
fn after_a_total_outage_held_requests_take_the_pacers_turns_oldest_first() {
    let mut r = router(2, Strategy::Priority);
    r.pacer.borrow_mut().recovery = Some(crate::pool::outage::Recovery::start(10.0, at(0))); // 13/s
    r.pacer.borrow_mut().arrivals.set_rate(10.0); // the demand it paces at
    let tried = [false, false];
    let since = |ms| RouteRequest { since: Some(at(ms)), ..req(&tried) };
    let old = r.pace_turn(at(100));
    let _young = r.pace_turn(at(900));
    // A token is there at 1 s; a request that began after the oldest held one waits its turn.
    let waits = r.select(at(1000), &since(900), (0.5, 0.5));
    let next_turn = at(1000) + Duration::from_secs_f64(1.0 / 13.0);
    assert_eq!(waits, Selection::Wait { until: Some(next_turn), quota: false, paced: true }, "one pacing interval");
    assert!(matches!(r.select(at(1000), &since(100), (0.5, 0.5)), Selection::Reserved(_)), "the oldest goes");
    drop(old); // served: out of the line
    assert!(matches!(r.select(at(1100), &since(900), (0.5, 0.5)), Selection::Reserved(_)), "then the next");
    let head_poll = req(&tried); // no place in the line: paced, never ordered
    assert!(matches!(r.select(at(1101), &head_poll, (0.5, 0.5)), Selection::Wait { paced: true, .. }));
    assert_eq!(r.pacer.borrow().oldest_held(), Some(at(900)));
}

/// Its one endpoint down for 3 s from `t` (its callers send 10 requests a
/// second: they wait on the ones stuck, as a bot with 10 in flight and
/// one-second deadlines does), then back: returns when the pool's early
/// probe found it back and the pacing began.
fn down_then_back(r: &mut Router, t: u64) -> u64 {
    down_then_back_arriving_every(r, t, 100)
}

/// The same, its callers sending one request every `every_ms` while it is down.
fn down_then_back_arriving_every(r: &mut Router, mut t: u64, every_ms: u64) -> u64 {
    let tried = [false];
    let end = t + 3000;
    while t < end {
        if t % every_ms == 0 {
            r.note_arrival(at(t));
        }
        if let Selection::Reserved(res) = r.select(at(t), &req(&tried), (0.5, 0.5)) {
            finish(r, at(t), res, ErrorClass::Transient, true);
        }
        t += 5;
    }
    loop {
        if t % every_ms == 0 {
            r.note_arrival(at(t));
        }
        if let Selection::Reserved(res) = r.select(at(t), &req(&tried), (0.5, 0.5)) {
            let probe = res.outage_probe;
            finish(r, at(t), res, ErrorClass::Success, false);
            if probe {
                return t;
            }
        }
        t += 5;
    }
}

/// A relayer alone, fault cycles of 3 s healthy (arrivals at 100/s), 3 s
/// down (`down_then_back`): the pacing after each outage, in attempts/s.
fn pacing_after_outages(cycles: usize) -> Vec<f64> {
    let mut r = router(1, Strategy::Priority);
    let tried = [false];
    let mut rates = Vec::new();
    let mut t = 0u64;
    for _ in 0..cycles {
        for _ in 0..300 {
            r.note_arrival(at(t));
            if let Selection::Reserved(res) = r.select(at(t), &req(&tried), (0.5, 0.5)) {
                finish(&mut r, at(t), res, ErrorClass::Success, false);
            }
            t += 10;
        }
        t = down_then_back(&mut r, t);
        let interval = r.pacer.borrow().recovery.as_ref().expect("paced after the outage").interval();
        rates.push(1.0 / interval.as_secs_f64());
    }
    rates
}

#[test]
fn recovery_paces_against_the_demand_before_the_outage_however_many_outages_there_were() {
    // Before: the demand meter counted the outage's slow arrivals and read
    // the time it paused as a quiet spell, so each cycle paced lower (the
    // soak's throughput fell from ~1,000 to ~100 requests a second).
    let rates = pacing_after_outages(5);
    for (cycle, rate) in rates.iter().enumerate() {
        assert!((rate - 130.0).abs() < 6.5, "cycle {cycle}: paced at {rate:.1}/s, 1.3 × 100/s expected ({rates:?})");
    }
}

#[test]
fn a_new_total_outage_ends_the_pacing_left_from_the_last_one() {
    // Pacing lasts until calm or a minute; an outage meanwhile has its own
    // backlog, so the pacing after it starts afresh.
    let mut r = router(1, Strategy::Priority);
    for _ in 0..3 {
        let res = super::tests::pick(&mut r, at(0), (0.5, 0.5));
        finish(&mut r, at(0), res, ErrorClass::Transient, true);
    }
    r.pacer.borrow_mut().recovery = Some(crate::pool::outage::Recovery::start(10.0, at(0)));
    r.pacer.borrow_mut().arrivals.set_rate(10.0);
    let tried = [false];
    assert!(matches!(r.select(at(10), &req(&tried), (0.5, 0.5)), Selection::Wait { paced: true, .. }));
    let _ = r.select(at(1000), &req(&tried), (0.5, 0.5)); // a turn: the scan sees every endpoint open
    assert!(r.pacer.borrow().recovery.is_none(), "the old pacing ended");
    assert!(r.pacer.borrow().outage);
}

#[test]
fn an_outage_in_the_first_second_paces_at_the_demand_seen_so_far() {
    // Found by the soak on a busy machine: every endpoint timed out in the
    // first 300 ms, before a full second of demand was measured, and the
    // pacing that followed let 0.2 attempts a second through (the floor for
    // a quiet client) to a bot sending hundreds: its reads failed for a minute.
    let mut r = router(1, Strategy::Priority);
    let tried = [false];
    let mut t = 0u64;
    loop {
        r.note_arrival(at(t)); // 100 a second
        if let Selection::Reserved(res) = r.select(at(t), &req(&tried), (0.5, 0.5)) {
            let (probe, class) = (res.outage_probe, if t < 300 { ErrorClass::Transient } else { ErrorClass::Success });
            finish(&mut r, at(t), res, class, class == ErrorClass::Transient);
            if probe && class == ErrorClass::Success {
                break;
            }
        }
        t += 10;
    }
    assert!(t < 1000, "the probe that found it back at {t} ms");
    let rate = 1.0 / r.pacer.borrow().recovery.as_ref().expect("paced").interval().as_secs_f64();
    assert!((rate - 130.0).abs() < 10.0, "paced at {rate:.1}/s after {t} ms of 100 requests a second");
}

#[test]
fn a_bot_that_sends_as_it_is_answered_is_paced_next_time_from_what_it_sent_while_paced() {
    // A caller with a fixed number in flight sends a new request per answer:
    // while paced it sends at the pace, 1.3× its rate before. The pacing
    // after its next outage starts from that, so a rate measured low once
    // (a busy machine at start) is not what it is held to for good.
    let mut r = router(1, Strategy::Priority);
    r.pacer.borrow_mut().arrivals.set_rate(100.0);
    r.pacer.borrow_mut().recovery = Some(crate::pool::outage::Recovery::start(100.0, at(0)));
    let tried = [false];
    for ms in 0..5_000u64 {
        let next = RouteRequest { since: Some(at(ms)), ..req(&tried) };
        if let Selection::Reserved(res) = r.select(at(ms), &next, (0.5, 0.5)) {
            finish(&mut r, at(ms), res, ErrorClass::Success, false);
            r.note_arrival(at(ms)); // its next request
        }
    }
    down_then_back(&mut r, 5_000);
    let rate = 1.0 / r.pacer.borrow().recovery.as_ref().expect("paced").interval().as_secs_f64();
    // It sent 130/s for 5 s (the meter, smoothed, was on its way there: ~120).
    assert!(rate > 145.0 && rate <= 169.0, "paced at {rate:.1}/s: 1.3 × what it sent while paced, not 1.3 × 100");
}

#[test]
fn arrivals_that_only_slowed_during_the_outage_leave_the_demand_before_it() {
    // A bot whose callers send two thirds as often while their requests are
    // stuck: no collapse, no growth. Keeping what the outage taught cut the
    // soak's pace by a fifth per cycle (5,700 -> 700 answered per phase).
    let mut r = router(1, Strategy::Priority);
    let tried = [false];
    let mut t = 0u64;
    let mut rates = Vec::new();
    for _ in 0..4 {
        for _ in 0..300 {
            r.note_arrival(at(t));
            if let Selection::Reserved(res) = r.select(at(t), &req(&tried), (0.5, 0.5)) {
                finish(&mut r, at(t), res, ErrorClass::Success, false);
            }
            t += 10;
        }
        t = down_then_back_arriving_every(&mut r, t, 15);
        rates.push(1.0 / r.pacer.borrow().recovery.as_ref().expect("paced").interval().as_secs_f64());
    }
    for rate in &rates {
        assert!((rate - 130.0).abs() < 8.0, "paced at {rate:.1}/s, 1.3 × 100/s expected ({rates:?})");
    }
}

#[test]
fn a_failover_that_finds_its_untried_endpoints_open_is_no_total_outage() {
    // Endpoint 0 serves; 1 and 2 are open. A failover off 0 may take only
    // 1 and 2: all open for it, not for the pool (pacing started so, with
    // two of three breakers open: a new user's stats).
    let mut r = router(3, Strategy::Priority);
    let tried = [false; 3];
    for target in [1, 2] {
        while r.endpoints[target].breaker.borrow_mut().state(at(0)) == crate::policy::breaker::BreakerState::Closed {
            let only = [target != 0, target != 1, target != 2];
            let q = RouteRequest { tried: &only, only_untried: true, ..req(&tried) };
            match r.select(at(0), &q, (0.5, 0.5)) {
                Selection::Reserved(res) => {
                    finish(&mut r, at(0), res, ErrorClass::Transient, true);
                }
                other => panic!("{other:?}"),
            }
        }
    }
    let after_0 = [true, false, false];
    let failover = RouteRequest { tried: &after_0, only_untried: true, after: Some(0), ..req(&tried) };
    let _ = r.select(at(10), &failover, (0.5, 0.5));
    assert!(!r.pacer.borrow().outage, "a failover's view is not the pool's");
    let _ = r.select(at(20), &req(&tried), (0.5, 0.5));
    assert!(!r.pacer.borrow().outage && r.pacer.borrow().recovery.is_none());
}

#[test]
fn a_request_whose_method_only_open_endpoints_serve_is_no_total_outage() {
    // Endpoints 0 and 1 are open; endpoint 2 is up but denies eth_blockNumber.
    // That request's view is all open; the pool's is not.
    let mut specs: Vec<EndpointSpec> = (0..3).map(super::tests::spec).collect();
    specs[2].deny = vec!["eth_blockNumber".into()];
    let mut r = Router::new(specs, &super::tests::options(Strategy::Priority), Duration::from_secs(60), at(0));
    for _ in 0..6 {
        let tried = [false; 3];
        match r.select(at(0), &req(&tried), (0.5, 0.5)) {
            Selection::Reserved(res) => {
                finish(&mut r, at(0), res, ErrorClass::Transient, true);
            }
            other => panic!("{other:?}"),
        }
    }
    let tried = [false; 3];
    assert!(matches!(r.select(at(10), &req(&tried), (0.5, 0.5)), Selection::Wait { .. }), "only open ones serve it");
    assert!(!r.pacer.borrow().outage, "endpoint 2 is up: the pool is not in a total outage");
    // Endpoint 2 too goes down: now it is one.
    r.endpoints[2].breaker.borrow_mut().open_until(at(20), at(30_000));
    let _ = r.select(at(20), &req(&tried), (0.5, 0.5));
    assert!(r.pacer.borrow().outage);
}

#[test]
fn a_pace_set_from_a_demand_measured_low_rises_to_the_arrivals_while_pacing_never_falls() {
    // Paced at 1.3 × 2 = 2.6/s from an estimate, while 10 requests a second keep arriving.
    let mut rec = crate::pool::outage::Recovery::start(2.0, at(0));
    for _ in 0..19 {
        rec.arrival();
    }
    rec.keep_up(at(2_000));
    assert!((rec.rate() - 2.6).abs() < 1e-9, "19 arrivals are too few to judge by: {}", rec.rate());
    rec.arrival();
    rec.keep_up(at(1_950));
    assert!((rec.rate() - 2.6).abs() < 1e-9, "and under 2 s too: {}", rec.rate());
    rec.keep_up(at(2_000));
    assert!((rec.rate() - 10.0).abs() < 1e-9, "20 in 2 s: at the arrivals, no more: {}", rec.rate());
    rec.keep_up(at(20_000));
    assert!((rec.rate() - 10.0).abs() < 1e-9, "the callers slowed down: the pace never falls: {}", rec.rate());
    // The router counts its arrivals into the pacing in force.
    let mut r = router(2, Strategy::Priority);
    r.pacer.borrow_mut().recovery = Some(crate::pool::outage::Recovery::start(2.0, at(0)));
    for n in 0..40 {
        r.note_arrival(at(n * 50));
    }
    let mut pacer = r.pacer.borrow_mut();
    let rec = pacer.recovery.as_mut().unwrap();
    rec.keep_up(at(2_000));
    assert!((rec.rate() - 20.0).abs() < 1e-9, "{}", rec.rate());
}
