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
use crate::pool::router::backlog::InLine;
use crate::pool::router::PollTurn;
use crate::runtime::join::join_all;
use crate::runtime::notify::either;
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
        let round = {
            let mut router = self.router.borrow_mut();
            let round = router.start_head_round(runtime.now());
            Self::pass_on(&mut router, emit);
            round
        };
        let Some(round) = round else { return Vec::new() };
        // Type-erased as `execute`'s walk is, so the attempt and its chain check are the same copy.
        let boxed = boxed_attempts(attempt);
        let attempt: &dyn Fn(AttemptTarget) -> BoxedAttempt<'f, P> = &boxed;
        let starts = round.polls.into_iter().map(Ok).chain(round.waiting.into_iter().map(Err));
        let polls = starts
            .map(|start| {
                let attempt = &attempt;
                async move {
                    let permit = match start {
                        Ok(reservation) => Permit::new(self, reservation),
                        Err(endpoint) => self.poll_turn(runtime, endpoint, emit).await?,
                    };
                    self.poll_one(runtime, attempt, permit, emit).await
                }
            })
            .collect();
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

    /// A waiting poll's permit, once its turn in its quota group's line has
    /// come and the group pays (`Router::head_poll_turn`). It waits as a
    /// read would: joined to the line by the time it began, woken by its
    /// turn, the group's refill or a grant from the fleet's store; it
    /// gives up (`None`: not polled this round) where a read would be shed
    /// (twice the line's wait past the deadline), at the deadline, when
    /// the endpoint cannot be polled any more, or at `close()`.
    async fn poll_turn<R: Runtime>(
        &self,
        runtime: &R,
        endpoint: usize,
        emit: &dyn Fn(PipelineEvent),
    ) -> Option<Permit<'_>> {
        let start = runtime.now();
        let deadline = start + self.config.deadline;
        let turn = u64::try_from(start.since_epoch().as_millis()).unwrap_or(u64::MAX);
        let mut in_line: Option<InLine> = None;
        loop {
            let now = runtime.now();
            if self.shutdown.is_triggered() || now >= deadline {
                return None;
            }
            let place = in_line.as_ref().map(InLine::place);
            let turn_now = {
                let mut router = self.router.borrow_mut();
                let turn_now = router.head_poll_turn(endpoint, now, place);
                Self::pass_on(&mut router, emit); // the ask its check made goes to the store now
                turn_now
            };
            let wait = match turn_now {
                PollTurn::Reserved(reservation) => return Some(Permit::new(self, reservation)),
                PollTurn::Gone => return None,
                PollTurn::Wait(wait) => wait,
            };
            if in_line.is_none() {
                let line = self.router.borrow_mut().head_poll_line(endpoint, now);
                if let Some(line) = line {
                    let (wait, any_ahead) = line.wait_for(line.cost);
                    if wait.is_some_and(|wait| any_ahead && now + wait * 2 > deadline) {
                        return None;
                    }
                    in_line = Some(InLine::join(&line, start));
                }
            }
            // Behind others: its turn wakes it (the refills are theirs first).
            let behind = in_line.as_ref().filter(|l| !l.is_head());
            let wake = if behind.is_some() { deadline } else { (now + wait).min(deadline) };
            let its_turn = async {
                match behind {
                    Some(line) => line.turn().await,
                    None => std::future::pending().await,
                }
            };
            either(
                either(runtime.sleep(wake.saturating_since(now)), either(self.realm_woken(turn), its_turn)),
                self.shutdown.wait(),
            )
            .await;
        }
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
