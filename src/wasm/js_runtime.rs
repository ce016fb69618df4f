//! The runtime for browsers, workers and Node ≥ 18: `performance.now()`
//! for the monotonic clock, `Date.now()` for wall time, `setTimeout`
//! (one host timer for all sleeps, `timers.rs`) for sleeping, and jitter from a fast generator
//! seeded from the platform CSPRNG (`getrandom`) once per thread. Every
//! instance — every browser tab, worker and Node process — draws its own
//! seed, so clients never retry in lockstep, and the hot path does not pay
//! a `crypto.getRandomValues` call per decision.
//! Nothing here touches `window`, so workers and Node work too.

use std::future::Future;
use std::time::Duration;

use std::cell::RefCell;

use super::timers::performance_now;
use crate::runtime::{crypto_unit, Runtime, SeededRandom};
use crate::time::Instant;

thread_local! {
    /// Seeded once from the CSPRNG: 53 random bits of seed per instance.
    static JITTER: RefCell<SeededRandom> =
        RefCell::new(SeededRandom::new((crypto_unit() * (1u64 << 53) as f64) as u64 ^ (crypto_unit() * (1u64 << 53) as f64) as u64 >> 11));
}

/// The JS host runtime.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsRuntime;

impl Runtime for JsRuntime {
    fn now(&self) -> Instant {
        Instant::from_millis_f64(performance_now())
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> {
        super::timers::sleep_millis(crate::time::millis_f64(duration))
    }

    fn random_unit(&self) -> f64 {
        JITTER.with(|rng| rng.borrow_mut().next_unit())
    }

    fn unix_time(&self) -> Duration {
        crate::time::duration_from_millis_f64(js_sys::Date::now())
    }
}
