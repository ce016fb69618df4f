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
use context::RequestContext;
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

    /// Runs one logical request; `attempt` performs one try against the
    /// endpoint, timeout and purpose it is given.
    pub async fn execute<R, P, F, Fut>(
        &self,
        runtime: &R,
        call: Call<'_>,
        attempt: F,
        emit: &dyn Fn(PipelineEvent),
    ) -> Result<Success<P>, Failure<P>>
    where
        R: Runtime,
        P: Payload,
        F: Fn(AttemptTarget) -> Fut,
        Fut: Future<Output = Observation<P>>,
    {
        let start = runtime.now();
        let cx = RequestContext::new(runtime, &attempt, call, (start, start + self.config.deadline), emit);
        let (info, deadline) = (cx.info, cx.deadline);
        self.budget.borrow_mut().deposit(start);
        self.router.borrow_mut().note_arrival(start);
        let n = self.config.endpoints.len();
        let mut state =
            Attempts { records: Vec::new(), tried: vec![false; n], last: None, reported: None, unknown: None };
        // Signed for another chain than the relayer's: no node of its chain to send it to.
        if call.signed_chain.is_some_and(|chain| !self.router.borrow_mut().pin_chain(chain)) {
            return Err(state.stop(StopReason::NoEndpoint));
        }
        let mut previous_delay = Duration::ZERO;
        let mut after: Option<usize> = None;
        let mut only_untried = false;
        // A failover reserved before the retry decision (given back unused if
        // the loop ends first: permits release themselves on drop).
        let mut preselected: Option<Permit<'_>> = None;
        // Its place in the recovery pacer's line while that is what holds it.
        let mut turn: Option<PacedTurn> = None;
        // Its place in its plans' line while it waits for one (given back when served or gone);
        // it is shed when joining would put it past its deadline.
        let mut in_line: Option<crate::pool::router::backlog::InLine> = None;

        loop {
            if self.shutdown.is_triggered() {
                return Err(state.stop(StopReason::Closed));
            }
            let now = runtime.now();
            let request = route(&call, &info, &state.tried, (only_untried, after), (start, deadline));
            let reservation = if let Some(permit) = preselected.take() {
                permit
            } else {
                let draws = (runtime.random_unit(), runtime.random_unit());
                let selection = self.select(emit, now, &request, draws);
                if !matches!(selection, Selection::Wait { paced: true, .. }) {
                    turn = None; // served, or held by something else: out of the pacer's line
                }
                match selection {
                    Selection::Reserved(r) => {
                        drop(in_line.take()); // out of the plans' line
                        Permit::new(self, r)
                    }
                    Selection::NoEndpoint => {
                        let reason =
                            if state.records.is_empty() { StopReason::NoEndpoint } else { StopReason::NotRetryable };
                        return Err(state.stop(reason));
                    }
                    Selection::Wait { until, quota, paced } => {
                        if paced && turn.is_none() {
                            turn = Some(self.router.borrow().pace_turn(start));
                        }
                        if let Some(u) = until.filter(|&u| u >= deadline) {
                            if quota {
                                return Err(state.stop(StopReason::RateLimited));
                            }
                            let early = (now < deadline).then(|| u.saturating_since(now));
                            return Err(Failure { next_chance_in: early, ..state.stop(StopReason::Deadline) });
                        }
                        if now >= deadline {
                            return Err(state.stop(StopReason::Deadline));
                        }
                        if self.waiting.get() >= self.config.pool.max_queue {
                            emit(PipelineEvent::Overload { waiting: self.waiting.get() });
                            return Err(state.stop(StopReason::Overload));
                        }
                        // Until it has a place in its plans' line: a request first held by
                        // something else (a fresh node's chain check, a slot) joins the line
                        // when the plans are what holds it, at the back (shed if that is past
                        // its deadline).
                        if in_line.is_none() {
                            match self.behind_its_plans(now, &request, deadline) {
                                Err(()) => return Err(state.stop(StopReason::RateLimited)), // told now, not at its deadline
                                Ok(place) => in_line = place,
                            }
                        }
                        self.waiting.set(self.waiting.get() + 1);
                        // Waiting for a slot only: no timer but the deadline's (a release wakes us).
                        let wake = until.unwrap_or(deadline);
                        either(
                            either(
                                either(runtime.sleep(wake.saturating_since(now)), self.slots.notified()),
                                self.realm_woken(),
                            ),
                            self.shutdown.wait(),
                        )
                        .await;
                        self.waiting.set(self.waiting.get().saturating_sub(1));
                        if self.shutdown.is_triggered() {
                            return Err(state.stop(StopReason::Closed));
                        }
                        continue;
                    }
                }
            };
            let endpoint = reservation.endpoint();
            if let Some(from) = after.filter(|&f| f != endpoint) {
                emit(PipelineEvent::Failover { from, to: endpoint });
            }
            // No await since `now`: the clock is read once per step (a read is a
            // call into the host, the hot path's most frequent one).
            let began = now;
            let remaining = deadline.saturating_since(began);
            if remaining.is_zero() {
                return Err(state.stop(StopReason::Deadline)); // the permit goes back unused
            }
            let timeout = self.attempt_timeout(endpoint, &info, remaining);
            let lone = FirstAttempt { reservation, timeout };
            // `None`: the endpoint turned out to serve another chain (disabled,
            // released); select again. `close()` drops the attempt in flight
            // (aborting its fetch) instead of waiting for its timeout.
            let step = {
                let mut step = std::pin::pin!(self.attempt_or_hedge(&cx, &mut state, lone));
                unless_closed(&self.shutdown, step.as_mut()).await
            };
            let Some(step) = step else {
                return Err(state.stop(StopReason::Closed));
            };
            let Some(done) = step else {
                continue;
            };
            let Decided { reservation, began, observation, verdict } = done;
            let endpoint = reservation.endpoint();
            let ended = runtime.now();
            self.settle(&cx, ended, reservation, began, &verdict, &mut state);

            if matches!(verdict.class, ErrorClass::Success | ErrorClass::AlreadyKnown) {
                let value = match observation {
                    Observation::Http { reply: Reply::Result(p), .. } | Observation::Answered(p) => {
                        if call.method == "eth_blockNumber" {
                            if let Some(head) = p.quantity() {
                                self.router.borrow_mut().observe_head(endpoint, head, ended);
                            }
                        }
                        SuccessValue::Result(p)
                    }
                    _ => SuccessValue::AlreadyKnown,
                };
                return Ok(Success { value, endpoint, attempts: state.records });
            }
            // Nothing reached a node (refused, unresolved) or the key was
            // refused: the retry elsewhere costs no upstream any work, so it
            // draws nothing from the retry budget.
            let undelivered = verdict.undelivered || verdict.class == ErrorClass::Unauthorized;
            let unknown_answer = verdict.once_elsewhere.then(|| answer_of(&observation));
            state.failed(detail(observation));

            // Decide on a retry.
            let retryable = verdict.class.retryable();
            if !retryable {
                return Err(state.stop(StopReason::NotRetryable));
            }
            if let Some(answer) = unknown_answer {
                if !self.unknown_answers.borrow_mut().retry_elsewhere(&mut state.unknown, endpoint, answer) {
                    return Err(state.stop(StopReason::NotRetryable));
                }
            }
            if state.records.len() as u32 >= self.config.max_attempts() {
                return Err(state.stop(StopReason::AttemptsExhausted));
            }
            // A capability gap, a refused key or a quota limit says nothing
            // against the other endpoints: the limited group is already cooling
            // (and the router waits for it if nothing else is free), so no
            // backoff on top. An answer we do not recognise goes elsewhere at
            // once: the same endpoint would say the same.
            let delay = if matches!(verdict.class, ErrorClass::Capability | ErrorClass::Unauthorized)
                || verdict.once_elsewhere
            {
                only_untried = true;
                Duration::ZERO
            } else if verdict.class == ErrorClass::RateLimited {
                Duration::ZERO
            } else {
                let retry_index = (state.records.len() - 1) as u32;
                let d = self.config.backoff.delay(retry_index, previous_delay, runtime.random_unit());
                previous_delay = d;
                d
            };
            if only_untried && state.tried.iter().all(|t| *t) {
                // Every endpoint was tried: no retry to announce, no token to spend.
                return Err(state.stop(StopReason::NotRetryable));
            }
            let free = undelivered && state.tried.iter().any(|t| !t);
            // A retry off a node whose breaker is open now (it hung or died
            // under this request) always goes, into debt if need be: see
            // `pipeline/extra.rs`.
            let stranded = self.router.borrow_mut().stranded_on(endpoint, ended);
            if !free && !self.budget.borrow_mut().try_withdraw_retry(ended, stranded) {
                return Err(state.stop(StopReason::Budget));
            }
            // The backoff protects the endpoint that failed. An endpoint not
            // yet tried in this request, free right now, can take the retry at
            // once: failing over costs no waiting, only the attempt.
            if !delay.is_zero() && state.tried.iter().any(|t| !t) {
                let request = route(&call, &info, &state.tried, (true, Some(endpoint)), (start, deadline));
                let draws = (runtime.random_unit(), runtime.random_unit());
                let selection = self.select(emit, ended, &request, draws);
                if let Selection::Reserved(r) = selection {
                    preselected = Some(Permit::new(self, r));
                }
            }
            let delay = if preselected.is_some() { Duration::ZERO } else { delay };
            if ended + delay >= deadline {
                // Stopped now, before the deadline: the retry would come after it.
                let early = (ended < deadline).then_some(delay);
                return Err(Failure { next_chance_in: early, ..state.stop(StopReason::Deadline) });
            }
            emit(PipelineEvent::Retry {
                attempt: state.records.len() as u32,
                delay,
                from: endpoint,
                class: verdict.class.as_str(),
                rule: verdict.rule.to_string(),
            });
            if !delay.is_zero() {
                either(runtime.sleep(delay), self.shutdown.wait()).await;
                if self.shutdown.is_triggered() {
                    return Err(state.stop(StopReason::Closed));
                }
            }
            after = Some(endpoint);
        }
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
mod extra;
#[cfg(test)]
mod failover_tests;
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
mod latency_tests;
mod lifecycle;
#[cfg(test)]
mod outage_tests;
#[cfg(test)]
mod pacing_tests;
mod permit;
#[cfg(test)]
mod queue_tests;
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
