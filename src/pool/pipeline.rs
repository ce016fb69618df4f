//! The request pipeline: one logical request → attempts until success, a
//! non-retryable answer, or a limit.
//!
//! Per logical request:
//! ```text
//!   deposit in the retry budget; deadline = now + deadline
//!   loop:
//!     select (router): Reserved | Wait { until } | NoEndpoint
//!       Wait: until ≥ deadline → stop (RateLimited if every candidate's quota is
//!             cooling, else Deadline); wait queue full → stop (Overload);
//!             else sleep until `until` or until a slot frees, select again
//!     first use of an endpoint: check its eth_chainId (a mismatch disables it)
//!     attempt with timeout = min(endpoint/attempt timeout, deadline − now)
//!       (a breaker's probe only for a request with time to prove the node;
//!       a timeout after less silence than that is no evidence against it)
//!     complete the reservation with the verdict (breaker, quota, latency)
//!     Success / AlreadyKnown               → done
//!     Fatal, send outcomes, OutcomeUnknown → stop NotRetryable (exactly one attempt)
//!     Capability, Unauthorized             → only untried endpoints, no wait
//!     an unrecognised answer (once_elsewhere) → one retry, on an untried
//!                                            endpoint, none once two endpoints
//!                                            gave the same code and message
//!     RateLimited                          → the group cools; other endpoints
//!                                            at once (the router waits if none)
//!     Transient                            → an untried endpoint free now takes
//!                                            the retry at once; otherwise a
//!                                            full-jitter backoff first
//!     before any retry: attempts left? (AttemptsExhausted) backoff ends before
//!     the deadline? (Deadline) a budget token? (Budget; none is drawn
//!     for a failover after nothing reached a node: refused, DNS, key refused)
//! ```
//!
//! # Replay safety
//! A retry resends the same JSON-RPC call. Reads are idempotent. Signed
//! raw transactions are idempotent by hash: re-broadcasting identical bytes
//! cannot double-spend, and "already known" is reported as success. A
//! node-signed `eth_sendTransaction` whose outcome is unknown (timeout,
//! reset) is never resent: the classifier marks it `OutcomeUnknown`.
//!
//! No `RefCell` borrow is held across an `.await`; selection and
//! reservation happen inside one synchronous call.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use super::events::PipelineEvent;
use super::notify::{either, unless_closed, Notify, Shutdown};
use super::outage::PacedTurn;
use super::router::{Router, Selection};
use crate::config::RelayerConfig;
use crate::coord::Realm;
use crate::error::{AttemptRecord, Failure, StopReason};
use crate::policy::classify::{Observation, Reply};
use crate::policy::{Classifier, ErrorClass, RetryBudget, Verdict};
use crate::rpc::methods::MethodInfo;
use crate::runtime::{AttemptTarget, Payload, Runtime};
use crate::time::Instant;
pub use attempts::detail;
use attempts::Attempts;
use context::{boxed_attempts, BoxedAttempt, RequestContext};
use extra::ExtraAttempts;
use hedge::{Decided, FirstAttempt};
use permit::Permit;
use selection::route;
use unknown::{answer_of, UnknownAnswers};

/// A successful answer.
#[derive(Clone, Debug, PartialEq)]
pub enum SuccessValue<P> {
    /// The node's `result`, untouched.
    Result(P),
    /// A submission the node already had (the caller knows the hash).
    AlreadyKnown,
}

/// The end of a successful logical request.
#[derive(Clone, Debug)]
pub struct Success<P> {
    /// The answer.
    pub value: SuccessValue<P>,
    /// The endpoint that answered.
    pub endpoint: usize,
    /// Every attempt, the successful one last.
    pub attempts: Vec<AttemptRecord>,
}

/// One logical request as the pipeline sees it.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// The JSON-RPC method.
    pub method: &'a str,
    /// Whether it reads at `latest` (freshness applies).
    pub wants_latest: bool,
    /// Compute units, when not the method table's (a batch: the sum of its items).
    pub cost: Option<f64>,
    /// The chain the transaction it broadcasts was signed for
    /// (`rpc::raw_tx::signed_chain_id`): only that chain's nodes get it.
    pub signed_chain: Option<u64>,
}

impl<'a> Call<'a> {
    /// A call of `method` at `latest`.
    pub fn new(method: &'a str) -> Self {
        Call { method, wants_latest: true, cost: None, signed_chain: None }
    }
}

/// The pipeline and the state all requests of one relayer share.
pub struct Pipeline {
    config: RelayerConfig,
    classifier: Classifier,
    router: RefCell<Router>,
    budget: RefCell<ExtraAttempts>,
    slots: Notify,
    /// The realm's wake-up (another member's attempt ended), when in one.
    realm_wake: Option<Rc<Notify>>,
    waiting: Cell<u32>,
    shutdown: Shutdown,
    unknown_answers: RefCell<UnknownAnswers>,
}

impl Pipeline {
    /// A pipeline for a validated configuration, its budget full at `now`.
    pub fn new(config: RelayerConfig, classifier: Classifier, now: Instant) -> Self {
        Self::in_realm(config, classifier, now, None)
    }

    /// A pipeline that shares what it learns with the other members of
    /// `realm` (unless its options say `share_in_realm: false`).
    pub fn in_realm(config: RelayerConfig, classifier: Classifier, now: Instant, realm: Option<&Realm>) -> Self {
        let realm = realm.filter(|_| config.pool.share_in_realm);
        let (specs, pool) = (config.endpoints.clone(), &config.pool);
        let mut router = Router::in_realm(specs, pool, config.max_retry_after, now, realm);
        router.set_attempt_ceiling(config.attempt_timeout);
        let realm_wake = router.realm_wake();
        let shared = realm.zip(config.pool.realm_budget).map(|(realm, tuning)| realm.retry_budget(tuning, now));
        let budget = RefCell::new(ExtraAttempts::new(RetryBudget::new(config.budget, now), shared));
        Pipeline {
            config,
            classifier,
            router: RefCell::new(router),
            budget,
            slots: Notify::default(),
            realm_wake,
            waiting: Cell::new(0),
            shutdown: Shutdown::default(),
            unknown_answers: RefCell::new(UnknownAnswers::default()),
        }
    }

    /// The validated configuration.
    pub fn config(&self) -> &RelayerConfig {
        &self.config
    }

    /// Classifies one observation with this pipeline's rules.
    pub fn classify<P>(&self, method: &str, observation: &Observation<P>, unix_now: Duration) -> Verdict {
        self.classifier.classify(method, observation, unix_now)
    }

    /// The retry budget's balance (for stats).
    pub fn budget_balance(&self, now: Instant) -> f64 {
        self.budget.borrow_mut().balance(now)
    }

    /// Waits registered with the shutdown switch (zero when idle).
    pub fn shutdown_waiters(&self) -> usize {
        self.shutdown.waiters()
    }

    /// Requests currently waiting for an endpoint.
    pub fn waiting(&self) -> u32 {
        self.waiting.get()
    }

    /// Read access to the router (for stats). Never held across an await.
    pub fn with_router<T>(&self, f: impl FnOnce(&mut Router) -> T) -> T {
        f(&mut self.router.borrow_mut())
    }

    /// An attempt's timeout on `endpoint`: the endpoint's own configured
    /// timeout or the global one, adapted to its latency, within `remaining`.
    fn attempt_timeout(&self, endpoint: usize, info: &MethodInfo, remaining: Duration) -> Duration {
        let ceiling = self.config.endpoints[endpoint].timeout.unwrap_or(self.config.attempt_timeout);
        self.router.borrow().attempt_timeout(endpoint, info.class, ceiling).min(remaining)
    }
}

mod attempts;
#[cfg(test)]
mod capacity_probe_tests;
mod chain_check;
#[cfg(test)]
mod chain_check_tests;
mod context;
#[cfg(test)]
mod edge_tests;
#[cfg(test)]
mod events_tests;
mod execute;
mod extra;
#[cfg(test)]
mod failover_tests;
#[cfg(test)]
mod fleet_head_poll_tests;
#[cfg(test)]
mod fleet_shed_tests;
mod head_poll;
#[cfg(test)]
mod head_poll_tests;
mod hedge;
#[cfg(test)]
mod hedge_corner_tests;
#[cfg(test)]
mod hedge_tests;
#[cfg(test)]
mod late_retry_tests;
#[cfg(test)]
mod latency_tests;
mod lifecycle;
#[cfg(test)]
mod outage_tests;
#[cfg(test)]
mod paced_retry_tests;
#[cfg(test)]
mod pacing_tests;
mod permit;
#[cfg(test)]
mod queue_tests;
#[cfg(test)]
mod quota_turn_tests;
#[cfg(test)]
mod realm_tests;
mod selection;
#[cfg(test)]
mod shed_tests;
#[cfg(test)]
mod signed_chain_tests;
#[cfg(test)]
mod tests;
mod unknown;
