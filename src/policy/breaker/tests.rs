//! Every transition of the breaker, on explicit instants.

use std::time::Duration;

use super::*;

pub(super) use crate::time::at;

pub(super) fn config() -> BreakerConfig {
    BreakerConfig {
        consecutive_failures: 3,
        failure_rate: 0.5,
        window: Duration::from_secs(10),
        min_samples: 6,
        open_base: Duration::from_secs(30),
        open_max: Duration::from_secs(120),
        jitter: 0.0,
        probe_permits: 1,
        close_after: 2,
        observe: Duration::ZERO,
        early_probe_base: Duration::from_millis(500),
        reset_after: Duration::from_secs(600),
    }
}

pub(super) fn trip(b: &mut Breaker, now: Instant) {
    for _ in 0..3 {
        b.on_failure(now, false, 0.5);
    }
}

#[test]
fn trips_on_consecutive_failures_and_a_success_resets_the_count() {
    let mut b = Breaker::new(config(), at(0));
    b.on_failure(at(0), false, 0.5);
    b.on_failure(at(0), false, 0.5);
    b.on_success(at(0), false);
    b.on_failure(at(0), false, 0.5);
    b.on_failure(at(0), false, 0.5);
    assert_eq!(b.state(at(0)), BreakerState::Closed);
    let t = b.on_failure(at(1), false, 0.5).unwrap();
    assert_eq!((t.from, t.to), (BreakerState::Closed, BreakerState::Open { until: at(30_001) }));
    assert_eq!(b.try_acquire(at(2)), Admission::Rejected { until: at(30_001) });
}

#[test]
fn trips_on_failure_rate_over_the_window_with_enough_samples() {
    let mut b = Breaker::new(config(), at(0));
    // Alternate success/failure: never 3 in a row, but 50 % failures.
    for i in 0..5 {
        b.on_success(at(i * 10), false);
        assert!(b.on_failure(at(i * 10 + 5), false, 0.5).is_none() || i >= 2);
    }
    assert!(matches!(b.state(at(100)), BreakerState::Open { .. }));
    // Old samples leave the window: the same pattern spread over time does not trip.
    let mut b = Breaker::new(config(), at(0));
    for i in 0..10 {
        b.on_success(at(i * 6_000), false);
        b.on_failure(at(i * 6_000 + 1), false, 0.5);
    }
    assert_eq!(b.state(at(60_000)), BreakerState::Closed, "only ~4 samples ever in a 10 s window");
}

#[test]
fn half_open_grants_exactly_the_probe_permits_and_closes_after_successes() {
    let mut b = Breaker::new(BreakerConfig { probe_permits: 2, ..config() }, at(0));
    trip(&mut b, at(0));
    assert_eq!(b.state(at(30_000)), BreakerState::HalfOpen);
    assert_eq!(b.try_acquire(at(30_000)), Admission::Allowed { probe: true });
    assert_eq!(b.try_acquire(at(30_000)), Admission::Allowed { probe: true });
    assert!(matches!(b.try_acquire(at(30_000)), Admission::Rejected { .. }), "third concurrent probe refused");
    assert_eq!(b.probes_in_flight(), 2);
    assert!(b.on_success(at(30_010), true).is_none());
    assert_eq!(b.try_acquire(at(30_010)), Admission::Allowed { probe: true }, "a released permit is reusable");
    let t = b.on_success(at(30_020), true).unwrap();
    assert_eq!((t.from, t.to), (BreakerState::HalfOpen, BreakerState::Closed));
    b.on_neutral(true);
    assert_eq!(b.probes_in_flight(), 0);
}

#[test]
fn admits_says_what_try_acquire_would_and_reserves_nothing() {
    let mut b = Breaker::new(config(), at(0));
    assert!(b.admits(at(0)), "closed");
    trip(&mut b, at(0));
    assert!(!b.admits(at(1)), "open");
    assert!(b.admits(at(30_000)) && b.admits(at(30_000)), "half-open, its one permit free");
    assert_eq!(b.probes_in_flight(), 0, "asking reserved nothing");
    assert_eq!(b.try_acquire(at(30_000)), Admission::Allowed { probe: true });
    assert!(!b.admits(at(30_000)), "its probe out");
}

#[test]
fn a_failed_probe_reopens_with_a_doubled_capped_open_time() {
    let mut b = Breaker::new(config(), at(0));
    trip(&mut b, at(0));
    let mut now = 30_000;
    for expected in [60_000, 120_000, 120_000] {
        assert_eq!(b.try_acquire(at(now)), Admission::Allowed { probe: true });
        let t = b.on_failure(at(now), true, 0.5).unwrap();
        assert_eq!(t.to, BreakerState::Open { until: at(now + expected) });
        now += expected;
    }
}

#[test]
fn open_time_is_jittered_within_bounds() {
    let cfg = BreakerConfig { jitter: 0.2, ..config() };
    for r in [0.0, 0.5, 0.999] {
        let mut b = Breaker::new(cfg, at(0));
        trip(&mut b, at(0));
        let BreakerState::Open { until } = b.state(at(0)) else { panic!("not open") };
        let open = until.since_epoch();
        assert!(open >= Duration::from_secs(24) && open <= Duration::from_secs(36), "{open:?} for r={r}");
    }
}

#[test]
fn neutral_outcomes_do_not_count() {
    let mut b = Breaker::new(config(), at(0));
    for _ in 0..100 {
        b.on_neutral(false);
    }
    b.on_failure(at(0), false, 0.5);
    b.on_failure(at(0), false, 0.5);
    assert_eq!(b.state(at(0)), BreakerState::Closed);
}

#[test]
fn early_probes_during_a_total_outage_are_one_at_a_time_and_spaced_exponentially() {
    let mut b = Breaker::new(config(), at(0));
    trip(&mut b, at(0));
    assert!(matches!(b.try_early_probe(at(100), 0.5), Admission::Rejected { until } if until == at(500)));
    assert_eq!(b.try_early_probe(at(500), 0.5), Admission::Allowed { probe: true });
    assert!(matches!(b.try_early_probe(at(600), 0.5), Admission::Rejected { .. }), "one probe at a time");
    b.on_failure(at(700), true, 0.5);
    assert!(matches!(b.state(at(700)), BreakerState::Open { .. }), "a failed early probe keeps it open");
    assert_eq!(b.early_probe_at(), at(1000), "spacing 500 ms from the last probe");
    assert_eq!(b.try_early_probe(at(1000), 0.5), Admission::Allowed { probe: true });
    assert_eq!(b.early_probe_at(), at(2000), "spacing doubled");
    let t = b.on_success(at(1050), true).unwrap();
    assert_eq!(t.to, BreakerState::HalfOpen, "an early probe success moves to HalfOpen, not Closed");
    assert_eq!(b.try_acquire(at(1050)), Admission::Allowed { probe: true });
    assert_eq!(b.on_success(at(1060), true).unwrap().to, BreakerState::Closed);
}

/// Two ejections (30 s, then 60 s), closed again at 90 001 ms.
fn ejected_twice_and_closed() -> Breaker {
    let mut b = Breaker::new(config(), at(0));
    trip(&mut b, at(0));
    b.try_acquire(at(30_000));
    b.on_failure(at(30_000), true, 0.5); // second ejection: 60 s
    for t in [90_000, 90_001] {
        b.try_acquire(at(t));
        b.on_success(at(t), true);
    }
    assert_eq!(b.state(at(90_001)), BreakerState::Closed);
    b
}

#[test]
fn ejection_count_resets_after_a_long_healthy_period() {
    let mut b = ejected_twice_and_closed();
    b.on_success(at(90_001 + 600_000), false);
    trip(&mut b, at(700_000));
    assert_eq!(b.state(at(700_000)), BreakerState::Open { until: at(730_000) }, "back to the base open time");
    // A success soon after closing forgets nothing.
    let mut b = ejected_twice_and_closed();
    b.on_success(at(90_002), false);
    trip(&mut b, at(90_003));
    assert_eq!(b.state(at(90_003)), BreakerState::Open { until: at(90_003 + 120_000) }, "third ejection: 4× capped");
}

#[test]
fn flips_are_counted() {
    let mut b = Breaker::new(config(), at(0));
    trip(&mut b, at(0));
    b.try_acquire(at(30_000));
    b.on_success(at(30_000), true);
    b.try_acquire(at(30_000));
    b.on_success(at(30_000), true);
    assert_eq!(b.flips(), 3, "closed→open, open→halfOpen (observed lazily), halfOpen→closed");
}

#[test]
fn config_errors_name_the_field() {
    let bad = [
        (BreakerConfig { consecutive_failures: 0, ..config() }, "breaker.consecutiveFailures"),
        (BreakerConfig { failure_rate: 1.5, ..config() }, "breaker.failureRate"),
        (BreakerConfig { open_max: Duration::from_secs(1), ..config() }, "breaker.openMaxMs"),
        (BreakerConfig { probe_permits: 0, ..config() }, "breaker.probePermits"),
        (BreakerConfig { jitter: 1.0, ..config() }, "breaker.jitter"),
    ];
    for (cfg, field) in bad {
        assert_eq!(cfg.validate().unwrap_err().field(), field);
    }
}

#[test]
fn closing_needs_the_successes_over_the_observation_window() {
    let mut b = Breaker::new(BreakerConfig { observe: Duration::from_secs(1), ..config() }, at(0));
    trip(&mut b, at(0));
    for t in [30_000, 30_010, 30_020] {
        assert_eq!(b.try_acquire(at(t)), Admission::Allowed { probe: true });
        assert!(b.on_success(at(t + 5), true).is_none(), "quick successes keep it half-open");
    }
    assert_eq!(b.try_acquire(at(31_000)), Admission::Allowed { probe: true });
    assert_eq!(b.on_success(at(31_001), true).unwrap().to, BreakerState::Closed);
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Any sequence of admissions, early probes, outcomes and clock
        /// steps: probes in flight never exceed the permits (the same
        /// invariant the `breaker` fuzz target checks, here in `cargo test`).
        #[test]
        fn probes_in_flight_never_exceed_permits(
            permits in 1u32..4,
            ops in proptest::collection::vec((0u8..6, any::<bool>(), 0u16..2000), 0..300),
        ) {
            let mut b = Breaker::new(BreakerConfig { probe_permits: permits, consecutive_failures: 2, ..config() }, at(0));
            let (mut now, mut probes, mut plain) = (0u64, 0u32, 0u32);
            for (op, flag, n) in ops {
                match op {
                    0 => match b.try_acquire(at(now)) {
                        Admission::Allowed { probe: true } => probes += 1,
                        Admission::Allowed { probe: false } => plain += 1,
                        Admission::Rejected { .. } => {}
                    },
                    1 => if let Admission::Allowed { probe } = b.try_early_probe(at(now), f64::from(n) / 2000.0) {
                        if probe { probes += 1 } else { plain += 1 }
                    },
                    2..=4 => {
                        let probe = flag && probes > 0;
                        if !probe && plain == 0 { continue; }
                        if probe { probes -= 1 } else { plain -= 1 }
                        match op {
                            2 => { b.on_success(at(now), probe); }
                            3 => { b.on_failure(at(now), probe, 0.5); }
                            _ => b.on_neutral(probe),
                        }
                    }
                    _ => now += u64::from(n) * 20,
                }
                prop_assert!(b.probes_in_flight() <= b.probe_permits());
                prop_assert!(b.probes_in_flight() <= probes);
            }
        }
    }
}

#[test]
fn states_are_spelled_for_js_and_the_tuning_is_kept() {
    let spelled: Vec<_> = [BreakerState::Closed, BreakerState::Open { until: at(5) }, BreakerState::HalfOpen]
        .into_iter()
        .map(BreakerState::as_str)
        .collect();
    assert_eq!(spelled, ["closed", "open", "halfOpen"]);
    let b = Breaker::new(BreakerConfig { close_after: 7, ..config() }, at(0));
    assert_eq!(*b.config(), BreakerConfig { close_after: 7, ..config() });
}

#[test]
fn a_failure_rate_of_zero_is_refused() {
    assert_eq!(BreakerConfig { failure_rate: 0.0, ..config() }.validate().unwrap_err().field(), "breaker.failureRate");
    assert!(BreakerConfig { failure_rate: 1.0, ..config() }.validate().is_ok());
}

#[test]
fn an_early_probe_still_out_blocks_the_next_even_when_it_is_due() {
    let mut b = Breaker::new(config(), at(0));
    trip(&mut b, at(0));
    assert_eq!(b.try_early_probe(at(500), 0.5), Admission::Allowed { probe: true });
    assert_eq!(b.early_probe_at(), at(1000));
    assert!(matches!(b.try_early_probe(at(1500), 0.5), Admission::Rejected { .. }), "the first is still out");
}

#[test]
fn only_probes_move_an_open_or_half_open_breaker() {
    // A straggler sent before the trip succeeds while Open: still Open.
    let mut b = Breaker::new(config(), at(0));
    trip(&mut b, at(0));
    assert_eq!(b.on_success(at(10), false), None);
    assert!(matches!(b.state(at(10)), BreakerState::Open { .. }));
    // In HalfOpen, a non-probe success does not count towards closing.
    assert_eq!(b.state(at(30_000)), BreakerState::HalfOpen);
    assert_eq!(b.try_acquire(at(30_000)), Admission::Allowed { probe: true });
    assert_eq!(b.on_success(at(30_001), true), None, "one of two");
    assert_eq!(b.on_success(at(30_002), false), None, "not a probe");
    assert_eq!(b.state(at(30_002)), BreakerState::HalfOpen);
}

#[test]
fn the_failure_rate_counts_exactly_the_window_and_its_samples() {
    // Rate only: consecutive failures never trip here.
    let cfg = BreakerConfig { consecutive_failures: 1000, min_samples: 6, ..config() };
    // Exactly min_samples, half failures: trips.
    let mut b = Breaker::new(cfg, at(0));
    for i in 0..3 {
        b.on_success(at(i), false);
        b.on_failure(at(i), false, 0.5);
    }
    assert!(matches!(b.state(at(3)), BreakerState::Open { .. }), "6 samples, 50 %");
    // One failure in six: under the rate.
    let mut b = Breaker::new(cfg, at(0));
    for i in 0..5 {
        b.on_success(at(i), false);
    }
    b.on_failure(at(5), false, 0.5);
    assert_eq!(b.state(at(5)), BreakerState::Closed, "1 of 6 is under 50 %");
    // A sample exactly one window old still counts.
    let mut b = Breaker::new(cfg, at(0));
    for _ in 0..3 {
        b.on_success(at(0), false);
    }
    b.on_failure(at(10_000), false, 0.5);
    b.on_failure(at(10_000), false, 0.5);
    b.on_failure(at(10_000), false, 0.5);
    assert!(matches!(b.state(at(10_000)), BreakerState::Open { .. }), "the 10 s old samples are in the 10 s window");
    // The window holds at most MAX_SAMPLES: with that many needed, they all count.
    let cfg = BreakerConfig { min_samples: MAX_SAMPLES as u32, ..cfg };
    let mut b = Breaker::new(cfg, at(0));
    for _ in 0..MAX_SAMPLES / 2 {
        b.on_success(at(0), false);
        b.on_failure(at(0), false, 0.5);
    }
    assert!(matches!(b.state(at(0)), BreakerState::Open { .. }), "{MAX_SAMPLES} samples kept");
}

#[test]
fn the_open_time_jitter_is_uniform_over_its_range() {
    let cfg = BreakerConfig { jitter: 0.2, ..config() };
    for (r, secs) in [(0.0, 24.0), (0.5, 30.0), (0.75, 33.0)] {
        let mut b = Breaker::new(cfg, at(0));
        for _ in 0..3 {
            b.on_failure(at(0), false, r);
        }
        let BreakerState::Open { until } = b.state(at(0)) else { panic!("not open") };
        assert!((until.since_epoch().as_secs_f64() - secs).abs() < 1e-6, "r={r}: {until:?}");
    }
}

#[test]
fn another_realms_opening_opens_a_closed_breaker_only() {
    let mut b = Breaker::new(config(), at(0));
    b.open_until(at(10), at(5));
    assert_eq!(b.state(at(10)), BreakerState::Closed, "a time already past is no opening");
    let mut long = Breaker::new(config(), at(0));
    long.open_until(at(10), at(500_000));
    assert_eq!(long.state(at(10)), BreakerState::Open { until: at(30_010) }, "for a first ejection's time at most");
    assert_eq!(long.flips(), 1, "an opening on the word is a state change like any (the stats' flips)");
    b.open_until(at(10), at(4_000));
    assert_eq!(b.state(at(10)), BreakerState::Open { until: at(4_000) }, "closed: the word opens it");
    assert_eq!(b.early_probe_at(), at(510), "with an early probe a base spacing away");
    assert_eq!(b.ejections, 0, "ejections count only what it saw itself");
    b.open_until(at(20), at(90_000));
    assert_eq!(b.state(at(20)), BreakerState::Open { until: at(4_000) }, "open: it keeps its own time");
    assert_eq!(b.try_acquire(at(4_000)), Admission::Allowed { probe: true });
    b.on_success(at(4_001), true);
    b.open_until(at(4_002), at(60_000));
    assert_eq!(b.state(at(4_002)), BreakerState::HalfOpen, "half-open: its own probes decide");
    assert_eq!(b.try_acquire(at(4_003)), Admission::Allowed { probe: true });
    b.on_success(at(4_004), true);
    assert_eq!(b.state(at(4_004)), BreakerState::Closed, "and they close it");
}

#[test]
fn a_hastened_breaker_probes_soon_never_later() {
    let mut b = Breaker::new(config(), at(0));
    trip(&mut b, at(0));
    b.hasten(at(1_000));
    assert_eq!(b.state(at(10)), BreakerState::Open { until: at(1_000) });
    b.hasten(at(50_000));
    assert_eq!(b.state(at(10)), BreakerState::Open { until: at(1_000) }, "never later");
    assert_eq!(b.try_acquire(at(1_000)), Admission::Allowed { probe: true });
    let mut closed = Breaker::new(config(), at(0));
    closed.hasten(at(5));
    assert_eq!(closed.state(at(10)), BreakerState::Closed, "only an open breaker");
}
