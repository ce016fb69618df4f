//! What the pipeline tells observers. Events, not log lines: the JS face
//! turns them into typed `retry`, `failover`, `breaker`, `rateLimited`,
//! `chainMismatch` and `overload` events.

use std::time::Duration;

use crate::policy::breaker::BreakerState;
use crate::time::Instant;

/// A notable step of the pipeline.
#[derive(Clone, Debug, PartialEq)]
pub enum PipelineEvent {
    /// A retry is scheduled.
    Retry {
        /// The retry's attempt number (1 = first retry).
        attempt: u32,
        /// The backoff before it.
        delay: Duration,
        /// Endpoint that failed.
        from: usize,
        /// The failure's class (`transient`, `rateLimited`…).
        class: &'static str,
        /// The classification rule that matched.
        rule: String,
    },
    /// The next attempt goes to a different endpoint than the one that failed.
    Failover {
        /// Endpoint that failed.
        from: usize,
        /// Endpoint taking over.
        to: usize,
    },
    /// A circuit breaker changed state.
    Breaker {
        /// The endpoint.
        endpoint: usize,
        /// State before.
        from: BreakerState,
        /// State after.
        to: BreakerState,
    },
    /// An endpoint's quota group was rate limited and rests until `until`.
    RateLimited {
        /// The endpoint that got the signal.
        endpoint: usize,
        /// Its quota group (`None` for the endpoint's own implicit group).
        group: Option<String>,
        /// When the group may be used again.
        until: Instant,
        /// How long that is from now.
        cooldown: Duration,
        /// A daily/monthly quota rather than a per-second one.
        long_horizon: bool,
    },
    /// An endpoint serves another chain and was disabled.
    ChainMismatch {
        /// The endpoint.
        endpoint: usize,
        /// The chain the pool serves.
        expected: u64,
        /// The chain it reported.
        got: u64,
    },
    /// A slow read got a second attempt on another endpoint (first success wins).
    Hedge {
        /// Endpoint of the slow attempt.
        from: usize,
        /// Endpoint of the hedge.
        to: usize,
        /// How long the first attempt had run.
        after: Duration,
    },
    /// A request was refused because the wait queue is full.
    Overload {
        /// Requests waiting when it was refused.
        waiting: u32,
    },
    /// News for the other realms of the origin (`coord::news`): not a
    /// listener's event; the host passes it on (a `BroadcastChannel`).
    News(crate::coord::news::News),
    /// An ask for the fleet store's quota bucket of a group (by realm key,
    /// `policy::lease`): not a listener's event; the host carries it and
    /// answers through the realm.
    LeaseAsk {
        /// The group's realm key.
        group: u64,
        /// What is asked.
        ask: crate::policy::lease::LeaseAsk,
    },
}
