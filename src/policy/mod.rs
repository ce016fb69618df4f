//! Pure, clock-free policies. Each takes `now` (and, where it needs chance,
//! a uniform random number) as arguments and returns a decision, so every
//! timing rule can be tested exactly on a simulated clock.

pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod classify;
pub mod fleet_bucket;
pub mod head_poll;
pub mod lease;
pub mod plan_window;
pub mod quota;
pub mod silence;
pub mod slow_start;
pub mod tail;
pub mod token_bucket;
pub mod wire_batch;

pub use backoff::Backoff;
pub use budget::{RetryBudget, RetryBudgetConfig};
pub use classify::{Classifier, ErrorClass, Observation, Verdict};

/// `x` limited to `[lo, hi]`, NaN to `lo`. Not `f64::clamp`: its panic
/// message formats floats, which drags kilobytes of float-printing code
/// into the wasm build (and it panics on NaN bounds, which we never want).
#[allow(clippy::manual_clamp)]
pub(crate) fn bound(x: f64, lo: f64, hi: f64) -> f64 {
    if x.is_nan() {
        lo
    } else {
        x.max(lo).min(hi)
    }
}
