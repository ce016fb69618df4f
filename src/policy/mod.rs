//! Pure, clock-free policies. Each takes `now` (and, where it needs chance,
//! a uniform random number) as arguments and returns a decision, so every
//! timing rule can be tested exactly on a simulated clock.

pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod classify;
pub mod quota;
pub mod retry;
pub mod slow_start;
pub mod token_bucket;

pub use backoff::Backoff;
pub use budget::{RetryBudget, RetryBudgetConfig};
pub use classify::{Classifier, ErrorClass, Observation, Verdict};
pub use retry::{retry, RetryConfig};
