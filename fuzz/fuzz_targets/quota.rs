//! A quota group under any sequence of charges, 429s (with any
//! Retry-After), successes and clock steps: tokens stay within
//! [0, burst], rates stay finite and positive, cooldowns never end in the
//! past of when they were set.
#![no_main]
use std::time::Duration;

use breakwater_rpc::policy::quota::{QuotaConfig, QuotaGroup};
use breakwater_rpc::policy::token_bucket::TokenBucket;
use breakwater_rpc::time::Instant;
use libfuzzer_sys::{arbitrary, fuzz_target};

#[derive(arbitrary::Arbitrary, Debug)]
enum Op {
    Charge(u16),
    Limited(Option<u32>, bool, u8),
    Success(u8),
    Advance(u16),
    Take(u16),
}

fuzz_target!(|input: (f64, f64, f64, Vec<Op>)| {
    let (cu, burst, share, ops) = input;
    let config = QuotaConfig { cu_per_second: cu, burst, share, ..QuotaConfig::default() };
    if config.validate("q").is_err() {
        return;
    }
    let mut now = Instant::from_epoch(Duration::ZERO);
    let mut group = QuotaGroup::new(config, now);
    let mut bucket = TokenBucket::new(10.0, 20.0, now, true);
    for op in ops.into_iter().take(400) {
        match op {
            Op::Charge(c) => {
                let _ = group.charge(now, f64::from(c));
            }
            Op::Limited(secs, long, r) => {
                let until =
                    group.on_limited(now, secs.map(|s| Duration::from_millis(s.into())), long, f64::from(r) / 256.0);
                assert!(until >= now);
            }
            Op::Success(r) => group.on_success(now, f64::from(r) / 256.0),
            Op::Advance(ms) => now = now + Duration::from_millis(u64::from(ms)),
            Op::Take(c) => {
                let _ = bucket.try_take(now, f64::from(c) / 10.0);
            }
        }
        let stats = group.stats();
        assert!(stats.allowed_rate.is_finite() || stats.allowed_rate == f64::INFINITY);
        assert!(stats.allowed_rate >= 0.0);
        let tokens = bucket.available(now);
        assert!((0.0..=20.0).contains(&tokens), "tokens {tokens} outside [0, burst]");
    }
});
