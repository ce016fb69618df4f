//! Slow start as routing sees it, on explicit instants: a recovered
//! endpoint's share of weighted traffic ramps from the floor to full, and
//! its rate is capped at a ramped share of what it served while healthy
//! (the cap that matters when it is the only endpoint left).

use std::time::Duration;

use super::tests::{at, finish, options, pick, req, spec};
use super::*;
use crate::policy::slow_start::SlowStartConfig;
use crate::policy::ErrorClass;

fn ramp_10s() -> SlowStartConfig {
    SlowStartConfig { warmup: Duration::from_secs(10), floor: 0.1, min_rps: 1.0 }
}

/// Endpoint-0 picks out of 1,000 evenly spread draws at `t`.
fn share_of_first(r: &mut Router, t: u64) -> usize {
    let mut first = 0;
    for k in 0..1000 {
        let res = pick(r, at(t), ((k as f64 + 0.5) / 1000.0, 0.5));
        first += usize::from(res.endpoint == 0);
        finish(r, at(t), res, ErrorClass::Success, false);
    }
    first
}

#[test]
fn a_recovered_endpoints_weighted_share_ramps_from_the_floor_to_full() {
    let mut o = options(Strategy::Weighted);
    o.slow_start = ramp_10s();
    let mut r = Router::new((0..2).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    assert_eq!(share_of_first(&mut r, 0), 500, "equal weights, nobody warming");
    r.endpoints[0].begin_warmup(at(1000)); // its breaker closed again
    assert_eq!(share_of_first(&mut r, 1000), 91, "weight 1 × 0.1 against 1: 0.1 / 1.1 of the draws");
    assert_eq!(share_of_first(&mut r, 6000), 333, "half-way: 0.5 / 1.5");
    assert_eq!(share_of_first(&mut r, 11_000), 500, "warm again");
}

/// Reservations granted on endpoint 0 when tried every millisecond of
/// `[from, to)`, each completed at once (so only rate caps can refuse).
fn granted(r: &mut Router, from: u64, to: u64) -> usize {
    let tried = vec![false; r.endpoints.len()];
    let mut n = 0;
    for t in from..to {
        if let Selection::Reserved(res) = r.select(at(t), &req(&tried), (0.5, 0.5)) {
            n += 1;
            finish(r, at(t), res, ErrorClass::Success, false);
        }
    }
    n
}

#[test]
fn a_lone_recovered_endpoint_is_capped_at_a_ramped_share_of_its_healthy_rate() {
    let mut o = options(Strategy::Priority);
    o.slow_start = ramp_10s();
    let mut r = Router::new(vec![spec(0)], &o, Duration::from_secs(60), at(0));
    for ms in (0..3000).step_by(10) {
        let res = pick(&mut r, at(ms), (0.5, 0.5));
        finish(&mut r, at(ms), res, ErrorClass::Success, false);
    }
    assert!((r.endpoints[0].meter.rate() - 100.0).abs() < 1.0, "healthy: {} /s", r.endpoints[0].meter.rate());
    r.endpoints[0].begin_warmup(at(3000));
    let first_second = granted(&mut r, 3000, 4000);
    assert!((10..=12).contains(&first_second), "10 % of 100/s (+ the first probe): {first_second}");
    let halfway = granted(&mut r, 8000, 9000);
    assert!((50..=62).contains(&halfway), "50–60 % of 100/s: {halfway}");
    // Past the ramp and 2 s without a refusal, the cap is gone.
    assert_eq!(granted(&mut r, 13_000, 14_000), 1000);
}

#[test]
fn a_breaker_that_proves_the_node_back_starts_its_slow_start_and_ends_the_outage_schedule() {
    let mut o = options(Strategy::Priority);
    o.slow_start = ramp_10s();
    o.breaker.consecutive_failures = 1;
    o.breaker.open_base = Duration::from_secs(1);
    o.breaker.close_after = 1;
    o.breaker.observe = Duration::ZERO;
    let mut r = Router::new((0..2).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    let res = pick(&mut r, at(0), (0.5, 0.5));
    assert_eq!(res.endpoint, 0);
    finish(&mut r, at(0), res, ErrorClass::Transient, true); // opens until 1 s
    assert_eq!(r.endpoints[0].slow_start.factor(at(0)), 1.0, "opening starts no warm-up");
    r.outage.granted(at(0), 0.5); // as if early probes had been spaced out meanwhile
    r.outage.granted(at(0), 0.5);
    assert!(r.outage.spacing() > r.outage.base());
    let probe = pick(&mut r, at(1000), (0.5, 0.5));
    assert!(probe.probe && probe.endpoint == 0, "{probe:?}");
    let events = finish(&mut r, at(1000), probe, ErrorClass::Success, false);
    assert!(events
        .iter()
        .any(|e| matches!(e, RouterEvent::Breaker { transition, .. } if transition.to == BreakerState::Closed)));
    assert!(
        (r.endpoints[0].slow_start.factor(at(1000)) - 0.1).abs() < 1e-9,
        "the proof of life starts the ramp at its floor"
    );
    assert_eq!(
        r.outage.spacing(),
        r.outage.base(),
        "the node is back: the next outage's probes start from the base spacing"
    );
    assert_eq!(r.endpoints[1].slow_start.factor(at(1000)), 1.0, "the other endpoint never left");
}

#[test]
fn an_early_probe_that_finds_the_node_back_starts_its_slow_start_at_once() {
    let mut o = options(Strategy::Priority);
    o.slow_start = ramp_10s();
    o.breaker.consecutive_failures = 1;
    let mut r = Router::new((0..1).map(spec).collect(), &o, Duration::from_secs(60), at(0));
    let res = pick(&mut r, at(0), (0.5, 0.5));
    finish(&mut r, at(0), res, ErrorClass::Transient, true); // the only endpoint opens: a total outage
    let probe = pick(&mut r, at(1000), (0.5, 0.5)); // the pool's early probe
    assert!(probe.probe, "{probe:?}");
    let events = finish(&mut r, at(1000), probe, ErrorClass::Success, false);
    assert!(events
        .iter()
        .any(|e| matches!(e, RouterEvent::Breaker { transition, .. } if transition.to == BreakerState::HalfOpen)));
    assert!(
        (r.endpoints[0].slow_start.factor(at(1000)) - 0.1).abs() < 1e-9,
        "half-open on its proof of life: the ramp starts"
    );
}
