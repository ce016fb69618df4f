//! The circuit breaker under any sequence of admissions, early probes,
//! outcomes and clock steps: probes in flight never exceed the configured
//! permits, and the state machine never panics.
#![no_main]
use std::time::Duration;

use breakwater_rpc::policy::breaker::{Admission, Breaker, BreakerConfig};
use breakwater_rpc::time::Instant;
use libfuzzer_sys::{arbitrary, fuzz_target};

#[derive(arbitrary::Arbitrary, Debug)]
enum Op {
    Acquire,
    EarlyProbe(u8),
    Success(bool),
    Failure(bool, u8),
    Neutral(bool),
    Advance(u16),
}

fuzz_target!(|input: (u8, u8, u8, Vec<Op>)| {
    let (consecutive, permits, close_after, ops) = input;
    let config = BreakerConfig {
        consecutive_failures: 1 + u32::from(consecutive % 8),
        probe_permits: 1 + u32::from(permits % 4),
        close_after: 1 + u32::from(close_after % 4),
        ..BreakerConfig::default()
    };
    let mut now = Instant::from_epoch(Duration::ZERO);
    let mut breaker = Breaker::new(config, now);
    let mut probes: u32 = 0; // probe admissions we hold
    let mut plain: u32 = 0; // non-probe admissions we hold
    for op in ops.into_iter().take(400) {
        match op {
            Op::Acquire => match breaker.try_acquire(now) {
                Admission::Allowed { probe: true } => probes += 1,
                Admission::Allowed { probe: false } => plain += 1,
                Admission::Rejected { until } => assert!(until >= now),
            },
            Op::EarlyProbe(r) => match breaker.try_early_probe(now, f64::from(r) / 256.0) {
                Admission::Allowed { probe: true } => probes += 1,
                Admission::Allowed { probe: false } => plain += 1,
                Admission::Rejected { .. } => {}
            },
            Op::Success(p) | Op::Neutral(p) | Op::Failure(p, _) if (p && probes == 0) || (!p && plain == 0) => {}
            Op::Success(p) => {
                if p {
                    probes -= 1
                } else {
                    plain -= 1
                }
                breaker.on_success(now, p);
            }
            Op::Failure(p, r) => {
                if p {
                    probes -= 1
                } else {
                    plain -= 1
                }
                breaker.on_failure(now, p, f64::from(r) / 256.0);
            }
            Op::Neutral(p) => {
                if p {
                    probes -= 1
                } else {
                    plain -= 1
                }
                breaker.on_neutral(p);
            }
            Op::Advance(ms) => now = now + Duration::from_millis(u64::from(ms) * 50),
        }
        assert!(breaker.probes_in_flight() <= breaker.probe_permits(), "probes in flight exceed permits");
        let _ = breaker.state(now);
    }
});
