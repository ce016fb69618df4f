//! What the pipeline tells observers. Events, not log lines: the JS face
//! turns them into typed `retry` / `failover` / `rateLimited` events.

use std::time::Duration;

use crate::time::Instant;

/// A notable step of the pipeline.
#[derive(Clone, Debug, PartialEq)]
pub enum PipelineEvent {
    /// A retry is scheduled.
    Retry {
        /// The retry's attempt number (1 = first retry).
        attempt: u32,
        /// The wait before it.
        delay: Duration,
        /// Endpoint that failed.
        from: usize,
        /// Endpoint that will be tried.
        to: usize,
        /// The failure's class (`transient`, `rateLimited`…).
        class: &'static str,
        /// The classification rule that matched.
        rule: String,
    },
    /// The next attempt goes to a different endpoint.
    Failover {
        /// Endpoint that failed.
        from: usize,
        /// Endpoint taking over.
        to: usize,
    },
    /// An endpoint said it is rate limited and rests until `until`.
    RateLimited {
        /// The endpoint.
        endpoint: usize,
        /// When it may be used again.
        until: Instant,
        /// How long that is from now.
        cooldown: Duration,
        /// A daily/monthly quota rather than a per-second one.
        long_horizon: bool,
    },
}
