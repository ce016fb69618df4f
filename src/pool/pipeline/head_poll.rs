//! The sending side of head polling (the schedule is `policy/head_poll.rs`,
//! the choice of endpoints [`Router::start_head_round`]): a round asks
//! every chosen endpoint for `eth_blockNumber` at once, in the background
//! of the reads that made it due (the caller spawns it; no read waits for
//! it), and records the heads together when the last one has answered.
//!
//! Each poll is an attempt like any other: an endpoint whose chain id is
//! not verified yet has it checked first, and the outcome teaches the
//! breaker, latency and quota as a request's would (a node that fails its
//! polls is as unhealthy as one that fails reads).
//!
//! # Replay safety
//! `eth_blockNumber` is a read. A failed poll is not retried: the next
//! round asks again.
//!
//! [`Router::start_head_round`]: crate::pool::router::Router::start_head_round

use std::future::Future;
use std::time::Duration;

use super::chain_check::AttemptOutcome;
use super::context::{boxed_attempts, BoxedAttempt, RequestContext};
use super::permit::Permit;
use super::{Call, Pipeline};
use crate::policy::classify::{Observation, Reply};
use crate::policy::ErrorClass;
use crate::pool::events::PipelineEvent;
use crate::runtime::join::join_all;
use crate::runtime::{AttemptTarget, Payload, Runtime};
use crate::time::Instant;

impl Pipeline {
    /// Whether a read that wants `latest` arriving at `now` would start a
    /// head-poll round: the caller then runs [`Pipeline::poll_heads`] in
    /// the background.
    pub fn head_poll_due(&self, now: Instant) -> bool {
        !self.shutdown.is_triggered() && self.router.borrow().head_poll_due(now)
    }

    /// One head-poll round, if one is due: `attempt` sends `eth_blockNumber`
    /// (or, for its chain check, `eth_chainId`) to the endpoint it is given.
    /// Returns the heads heard, as (endpoint, block); empty when no round
    /// was due or nobody answered.
    pub async fn poll_heads<'f, R, P, F, Fut>(
        &self,
        runtime: &R,
        attempt: F,
        emit: &dyn Fn(PipelineEvent),
    ) -> Vec<(usize, u64)>
    where
        R: Runtime,
        P: Payload,
        F: Fn(AttemptTarget) -> Fut,
        Fut: Future<Output = Observation<P>> + 'f,
    {
        if self.shutdown.is_triggered() {
            return Vec::new();
        }
        let Some(polls) = self.router.borrow_mut().start_head_round(runtime.now()) else { return Vec::new() };
        // Type-erased as `execute`'s walk is, so the attempt and its chain check are the same copy.
        let boxed = boxed_attempts(attempt);
        let attempt: &dyn Fn(AttemptTarget) -> BoxedAttempt<'f, P> = &boxed;
        let polls = polls.into_iter().map(|r| self.poll_one(runtime, &attempt, Permit::new(self, r), emit)).collect();
        let heads: Vec<(usize, u64)> = join_all(polls).await.into_iter().flatten().collect();
        let news = {
            let mut router = self.router.borrow_mut();
            router.end_head_round(&heads, runtime.now());
            router.take_news()
        };
        // Told now, not with the next attempt's outcome: the other realms
        // must hear the round before their own falls due.
        for news in news {
            emit(PipelineEvent::News(news));
        }
        heads
    }

    /// One poll on a reserved endpoint; its head if it answered with one.
    async fn poll_one<R, P, F, Fut>(
        &self,
        runtime: &R,
        attempt: &F,
        permit: Permit<'_>,
        emit: &dyn Fn(PipelineEvent),
    ) -> Option<(usize, u64)>
    where
        R: Runtime,
        P: Payload,
        F: Fn(AttemptTarget) -> Fut,
        Fut: Future<Output = Observation<P>>,
    {
        let began = runtime.now();
        let call = Call::new("eth_blockNumber");
        let cx = RequestContext::new(runtime, attempt, call, (began, began + self.config.deadline), emit);
        let endpoint = permit.endpoint();
        let timeout = self.attempt_timeout(endpoint, &cx.info, self.config.deadline);
        let done = self.attempt_checking_chain(&cx, permit.target(), timeout).await;
        let ended = runtime.now();
        let (verdict, head, elapsed) = match done {
            AttemptOutcome::Answered(observation) => {
                let verdict = self.classifier.classify("eth_blockNumber", &observation, runtime.unix_time());
                let head = match (&observation, verdict.class) {
                    (Observation::Http { reply: Reply::Result(p), .. }, ErrorClass::Success) => p.quantity(),
                    _ => None,
                };
                (verdict, head, ended.saturating_since(began))
            }
            AttemptOutcome::ChainCheckFailed(_, verdict) => (verdict, None, Duration::ZERO),
            AttemptOutcome::OtherChain => return None, // the endpoint is disabled; the permit goes back unused
        };
        permit.complete(&cx, ended, &verdict, elapsed);
        head.map(|h| (endpoint, h))
    }
}
