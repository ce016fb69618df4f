//! The request pipeline: one logical request → attempts until success, a
//! non-retryable answer, or a limit.
//!
//! Per logical request:
//! ```text
//!   deposit in the retry budget; start = now; deadline = start + deadline
//!   endpoint = router.first()
//!   loop:
//!     timeout = min(attempt timeout, deadline − now)    (0 → Deadline)
//!     observation = attempt(endpoint, timeout); verdict = classify(…)
//!     Success / AlreadyKnown                 → done, endpoint becomes preferred
//!     Fatal, send outcomes, OutcomeUnknown   → stop NotRetryable (exactly one attempt)
//!     Capability                             → next *untried* endpoint, no wait; none → NotRetryable
//!     Transient / RateLimited                → next endpoint round robin (cooling ones skipped)
//!        RateLimited: the endpoint rests for Retry-After (capped) or the backoff;
//!        any failure with a Retry-After (a 503, say) rests the endpoint for it
//!        wait = max(full-jitter backoff(n), next endpoint's remaining cooldown)
//!     before any retry: attempts left?  (no → AttemptsExhausted)
//!                       now + wait < deadline? (no → Deadline, or RateLimited if
//!                                               every endpoint rests past it)
//!                       budget token?   (no → Budget)
//! ```
//!
//! # Replay safety
//! A retry resends the same JSON-RPC call. Reads are idempotent. Signed
//! raw transactions are idempotent by hash: re-broadcasting identical bytes
//! cannot double-spend, and "already known" is reported as success. A
//! node-signed `eth_sendTransaction` whose outcome is unknown (timeout,
//! reset) is never resent: the classifier marks it `OutcomeUnknown`.
//!
//! No `RefCell` borrow is held across an `.await`.

use std::cell::RefCell;
use std::future::Future;
use std::time::Duration;

use super::events::PipelineEvent;
use super::route::Router;
use crate::config::RelayerConfig;
use crate::error::{AttemptRecord, Failure, FailureDetail, StopReason};
use crate::policy::classify::{Observation, Reply};
use crate::policy::{Classifier, ErrorClass, RetryBudget, Verdict};
use crate::runtime::{AttemptTarget, Runtime};
use crate::time::Instant;

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

/// The pipeline and the state all requests of one relayer share.
pub struct Pipeline {
    config: RelayerConfig,
    classifier: Classifier,
    router: RefCell<Router>,
    budget: RefCell<RetryBudget>,
}

/// Where a failed attempt leads.
enum Next {
    Stop(StopReason),
    Retry { endpoint: usize, wait: Duration },
}

impl Pipeline {
    /// A pipeline for a validated configuration, its budget full at `now`.
    pub fn new(config: RelayerConfig, classifier: Classifier, now: Instant) -> Self {
        let router = RefCell::new(Router::new(config.endpoints.len()));
        let budget = RefCell::new(RetryBudget::new(config.budget, now));
        Pipeline { config, classifier, router, budget }
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

    /// Runs one logical request of `method`; `attempt` performs one try
    /// against the endpoint and timeout it is given.
    pub async fn execute<R, P, F, Fut>(
        &self,
        runtime: &R,
        method: &str,
        mut attempt: F,
        emit: &dyn Fn(PipelineEvent),
    ) -> Result<Success<P>, Failure<P>>
    where
        R: Runtime,
        F: FnMut(AttemptTarget) -> Fut,
        Fut: Future<Output = Observation<P>>,
    {
        let start = runtime.now();
        let deadline = start + self.config.deadline;
        self.budget.borrow_mut().deposit(start);
        let mut records: Vec<AttemptRecord> = Vec::new();
        let mut tried = vec![false; self.config.endpoints.len()];
        let mut previous_delay = Duration::ZERO;
        let mut last: Option<FailureDetail<P>> = None;
        let first = self.router.borrow().first(start);
        let mut endpoint = first.endpoint;
        let mut wait = first.wait;
        if start + wait >= deadline {
            // Every endpoint rests past this request's deadline: say so now.
            return Err(Failure { reason: StopReason::RateLimited, last, attempts: records });
        }

        loop {
            if !wait.is_zero() {
                runtime.sleep(wait).await;
            }
            let began = runtime.now();
            let remaining = deadline.saturating_since(began);
            if remaining.is_zero() {
                return Err(Failure { reason: StopReason::Deadline, last, attempts: records });
            }
            let timeout = self.config.attempt_timeout.min(remaining);
            let observation = attempt(AttemptTarget { endpoint, timeout }).await;
            let ended = runtime.now();
            let verdict = self.classifier.classify(method, &observation, runtime.unix_time());
            records.push(AttemptRecord {
                endpoint,
                verdict: verdict.clone(),
                started_after: began.saturating_since(start),
                elapsed: ended.saturating_since(began),
            });
            if let Some(slot) = tried.get_mut(endpoint) {
                *slot = true;
            }

            match verdict.class {
                ErrorClass::Success | ErrorClass::AlreadyKnown => {
                    self.router.borrow_mut().record_success(endpoint);
                    let value = match observation {
                        Observation::Http { reply: Reply::Result(p), .. } => SuccessValue::Result(p),
                        _ => SuccessValue::AlreadyKnown,
                    };
                    return Ok(Success { value, endpoint, attempts: records });
                }
                _ => last = Some(detail(observation)),
            }

            let retry_index = (records.len() - 1) as u32;
            let backoff = self.config.backoff.delay(retry_index, previous_delay, runtime.random_unit());
            if verdict.class == ErrorClass::RateLimited || verdict.retry_after.is_some() {
                self.rest_endpoint(endpoint, &verdict, backoff, ended, emit);
            }
            let next = self.plan_retry(&verdict, endpoint, &tried, backoff, ended, deadline, records.len() as u32);
            let (to, delay) = match next {
                Next::Stop(reason) => return Err(Failure { reason, last, attempts: records }),
                Next::Retry { endpoint, wait } => (endpoint, wait),
            };
            if !self.budget.borrow_mut().try_withdraw(ended) {
                return Err(Failure { reason: StopReason::Budget, last, attempts: records });
            }
            if verdict.class != ErrorClass::Capability {
                previous_delay = backoff;
            }
            emit(PipelineEvent::Retry {
                attempt: records.len() as u32,
                delay,
                from: endpoint,
                to,
                class: verdict.class.as_str(),
                rule: verdict.rule.to_string(),
            });
            if to != endpoint {
                emit(PipelineEvent::Failover { from: endpoint, to });
            }
            endpoint = to;
            wait = delay;
        }
    }

    /// Puts an endpoint to rest after it asked for it: for its Retry-After
    /// (capped; a 503 may send one too), for the cap if a quota is
    /// long-horizon, else (a 429 without a hint) for the backoff.
    fn rest_endpoint(
        &self,
        endpoint: usize,
        verdict: &Verdict,
        backoff: Duration,
        now: Instant,
        emit: &dyn Fn(PipelineEvent),
    ) {
        let cap = self.config.max_retry_after;
        let cooldown = if verdict.long_horizon { cap } else { verdict.retry_after.map_or(backoff, |d| d.min(cap)) };
        let until = now + cooldown;
        self.router.borrow_mut().cool_down(endpoint, until);
        if verdict.class == ErrorClass::RateLimited {
            emit(PipelineEvent::RateLimited { endpoint, until, cooldown, long_horizon: verdict.long_horizon });
        }
    }

    /// Decides whether and where to retry after a failed attempt.
    #[allow(clippy::too_many_arguments)]
    fn plan_retry(
        &self,
        verdict: &Verdict,
        failed: usize,
        tried: &[bool],
        backoff: Duration,
        now: Instant,
        deadline: Instant,
        attempts_made: u32,
    ) -> Next {
        let retryable =
            matches!(verdict.class, ErrorClass::Transient | ErrorClass::RateLimited | ErrorClass::Capability);
        if !retryable {
            return Next::Stop(StopReason::NotRetryable);
        }
        if attempts_made >= self.config.max_attempts() {
            return Next::Stop(StopReason::AttemptsExhausted);
        }
        let router = self.router.borrow();
        let choice = if verdict.class == ErrorClass::Capability {
            // Another endpoint might serve it; the same one will not.
            match router.after(failed, now, |e| !tried.get(e).copied().unwrap_or(true)) {
                Some(c) => Some(c),
                None => return Next::Stop(StopReason::NotRetryable),
            }
        } else {
            router.after(failed, now, |_| true)
        };
        let Some(choice) = choice else { return Next::Stop(StopReason::NotRetryable) };
        let mut wait = choice.wait;
        if verdict.class != ErrorClass::Capability {
            wait = wait.max(backoff);
            // A server-requested pause also applies when retrying the same endpoint.
            if choice.endpoint == failed {
                if let Some(after) = verdict.retry_after {
                    wait = wait.max(after.min(self.config.max_retry_after));
                }
            }
        }
        if now + wait >= deadline {
            let all_resting = choice.wait > Duration::ZERO;
            return Next::Stop(if all_resting { StopReason::RateLimited } else { StopReason::Deadline });
        }
        Next::Retry { endpoint: choice.endpoint, wait }
    }
}

/// The failure detail an observation leaves behind.
pub fn detail<P>(observation: Observation<P>) -> FailureDetail<P> {
    match observation {
        Observation::Transport(t) => FailureDetail::Transport(t),
        Observation::Http { status, reply, .. } => match reply {
            Reply::Error(e) => FailureDetail::Rpc(e),
            Reply::Result(_) => FailureDetail::Http { status, body: "result" },
            Reply::NotJson => FailureDetail::Http { status, body: "notJson" },
            Reply::WrongId => FailureDetail::Http { status, body: "wrongId" },
            Reply::Malformed => FailureDetail::Http { status, body: "malformed" },
            Reply::TooLarge => FailureDetail::Http { status, body: "tooLarge" },
        },
    }
}

#[cfg(test)]
mod tests;
