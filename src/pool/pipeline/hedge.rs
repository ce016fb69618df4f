//! Hedged reads: a hung or very slow node costs a hedge delay, not the
//! attempt timeout. A read the method table marks hedgeable races a second
//! attempt on another endpoint once the first has run longer than its
//! endpoint's usual slow end; the first success wins.
//!
//! ```text
//!   FirstAttempt: the primary runs alone
//!     answers within the hedge delay ─────────────────► its outcome (no hedge)
//!     the delay's timer fires late (by more than a quarter of the delay,
//!     at least 20 ms): the process itself was busy, the primary's slowness
//!     may be ours, and a hedge would only add work ──► no hedge now; ask
//!     again one delay later (unless the primary's breaker opened: then
//!     the node, not the process, is the problem, and the hedge goes)
//!     the delay passes:
//!       another endpoint free now (untried, not silent as long; an
//!       unchecked one has its chain id checked first, and a mismatch
//!       voids the hedge) and a retry-budget token?
//!         no ─── the primary runs on; ask again one delay later
//!         yes ── emit Hedge, start the second attempt ─► Racing
//!   Racing: the first to finish
//!     succeeds, or fails in a way no retry could fix (a revert)
//!       ─► its outcome; the other is abandoned: dropped (the HTTP
//!          exchange aborts), its reservation released, its record kept.
//!          An abandoned primary that had no latency history of its own,
//!          or ran past twice its usual tail, counts as a health failure
//!          (a hung node trips its breaker after a few hedges instead of
//!          after a few full timeouts); otherwise it is neutral.
//!     fails in a way a retry could fix
//!       ─► recorded and released with its verdict; the other attempt's
//!          outcome is the pair's outcome
//!     the hedge is void (its chain check failed or mismatched)
//!       ─► released unrecorded; the primary's outcome is the outcome
//! ```
//! Never under the `sticky` strategy (a hedge would rebind the session to
//! another node) and never once the pipeline is closed.
//! The hedge is paid from the retry budget like a retry (and, in a realm,
//! from the realm's hedge budget too), so hedging cannot amplify an
//! overload. A primary stranded on an endpoint whose breaker has opened
//! since it started is hedged even without a token (that endpoint takes no
//! new attempts, so such hedges are bounded by what was in flight when it
//! opened, and each one saves a full timeout); the realm's budget is
//! charged anyway, into debt (at most one burst), so the realm's hedges
//! keep their share over time. Never for sends or unknown methods.

use std::future::Future;
use std::pin::{pin, Pin};
use std::task::Poll;
use std::time::Duration;

use super::attempts::neutral;
use super::chain_check::AttemptOutcome;
use super::context::RequestContext;
use super::permit::Permit;
use super::selection::route;
use super::{Attempts, Pipeline};
use crate::policy::classify::Observation;
use crate::policy::{ErrorClass, Verdict};
use crate::pool::events::PipelineEvent;
use crate::pool::options::Strategy;
use crate::pool::route_request::RouteRequest;
use crate::pool::router::Selection;
use crate::runtime::{AttemptTarget, Payload, Runtime};
use crate::time::Instant;

/// Timers late by less than this are ordinary event-loop jitter.
const LATE_FLOOR: Duration = Duration::from_millis(20);

/// Whether a hedge timer that fired `late` after its `delay` says the
/// process was busy (event-loop lag): the primary's slowness may be ours,
/// and a hedge would add work to an overloaded host, not save time.
fn host_was_busy(late: Duration, delay: Duration) -> bool {
    late > (delay / 4).max(LATE_FLOOR)
}

/// The primary attempt, before it runs.
pub(super) struct FirstAttempt<'p> {
    /// Its reservation.
    pub reservation: Permit<'p>,
    /// Its timeout.
    pub timeout: Duration,
}

/// The attempt whose outcome the pipeline goes on with (every other
/// attempt of the pair is already released and recorded).
pub(super) struct Decided<'p, P> {
    pub reservation: Permit<'p>,
    pub began: Instant,
    pub observation: Observation<P>,
    pub verdict: Verdict,
}

enum First<A, B> {
    Left(A),
    Right(B),
}

/// The output of whichever future finishes first; the other is left
/// unpolled from then on, still usable.
async fn first<A: Future, B: Future>(mut a: Pin<&mut A>, mut b: Pin<&mut B>) -> First<A::Output, B::Output> {
    std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = a.as_mut().poll(cx) {
            return Poll::Ready(First::Left(v));
        }
        if let Poll::Ready(v) = b.as_mut().poll(cx) {
            return Poll::Ready(First::Right(v));
        }
        Poll::Pending
    })
    .await
}

/// Whether an outcome ends the race: success, or an answer no other
/// endpoint would change.
fn decisive(verdict: &Verdict) -> bool {
    !verdict.class.retryable()
}

impl Pipeline {
    /// One attempt on the reserved endpoint (chain check included); a
    /// hedgeable read whose hedge delay is shorter than its timeout is
    /// raced by a hedge as the module doc describes. `None`: the endpoint
    /// serves another chain (released; the caller selects again).
    pub(super) async fn attempt_or_hedge<'p, R, P, F, Fut>(
        &'p self,
        cx: &RequestContext<'_, R, F>,
        state: &mut Attempts<P>,
        lone: FirstAttempt<'p>,
    ) -> Option<Decided<'p, P>>
    where
        R: Runtime,
        P: Payload,
        F: Fn(AttemptTarget) -> Fut,
        Fut: Future<Output = Observation<P>>,
    {
        let (runtime, info, emit) = (cx.runtime, &cx.info, cx.emit);
        let endpoint = lone.reservation.endpoint();
        // Never under `sticky`: a session bound to one node's view of the chain
        // would be rebound to whichever endpoint a hedge reserved.
        let hedging = info.hedge && self.config.pool.strategy != Strategy::Sticky;
        let after = self.config.pool.hedge.filter(|_| hedging).and_then(|h| {
            let after = self.router.borrow().hedge_delay(endpoint, info.class, &h);
            (after < lone.timeout).then_some(after)
        });
        let began = runtime.now();
        let Some(after) = after else {
            let target = lone.reservation.target();
            let done = self.attempt_checking_chain(cx, target, lone.timeout).await;
            return self.finish(cx, lone.reservation, began, done);
        };
        // Hedged, as the module doc describes. When no hedge may go at its
        // delay (the host was busy, no endpoint or token was free), the
        // primary runs on and the question comes again one delay later: a
        // read stranded on a node whose breaker opened meanwhile is hedged
        // then, instead of waiting out its timeout.
        let primary = lone.reservation;
        let primary_target = primary.target();
        let mut first_attempt = Box::pin(self.attempt_checking_chain(cx, primary_target, lone.timeout));
        let mut due = began + after;
        let ((second, timeout), after) = loop {
            let alone = {
                let wait = pin!(runtime.sleep(due.saturating_since(runtime.now())));
                first(first_attempt.as_mut(), wait).await
            };
            if let First::Left(done) = alone {
                return self.finish(cx, primary, began, done);
            }
            let now = runtime.now();
            let stranded = self.router.borrow_mut().breaker_open(endpoint, now);
            let busy = host_was_busy(now.saturating_since(due), after);
            let asked = due;
            due = now + after;
            if busy && !stranded {
                continue;
            }
            if let Some(pair) = self.reserve_hedge(cx, state, endpoint, now.saturating_since(began), stranded) {
                // The event says when it was due (a late timer's lag is the host's).
                break (pair, asked.saturating_since(began));
            }
        };
        emit(PipelineEvent::Hedge { from: endpoint, to: second.endpoint(), after });
        let hedge_began = runtime.now();
        let second_target = second.target();
        let mut second_attempt = Box::pin(self.attempt_checking_chain(cx, second_target, timeout));
        // The first to finish, as (who, what): a void hedge (failed or
        // mismatched chain check) is released and the other decides alone.
        let (primary_won, done) = match first(first_attempt.as_mut(), second_attempt.as_mut()).await {
            First::Left(done) => (true, done),
            First::Right(AttemptOutcome::Answered(o)) => (false, AttemptOutcome::Answered(o)),
            First::Right(void) => {
                let _ = self.finish_unless_void(cx, second, hedge_began, void);
                let done = first_attempt.await;
                return self.finish(cx, primary, began, done);
            }
        };
        let (winner, winner_began, other, other_began) =
            if primary_won { (primary, began, second, hedge_began) } else { (second, hedge_began, primary, began) };
        let Some(finished) = self.finish(cx, winner, winner_began, done) else {
            // The primary's endpoint serves another chain (only a primary can be
            // void here): the hedge alone decides.
            let done = second_attempt.await;
            return self.finish_unless_void(cx, other, hedge_began, done);
        };
        if decisive(&finished.verdict) {
            // Drop the loser first: its exchange aborts and its timer is cleared.
            drop(first_attempt);
            drop(second_attempt);
            self.abandon(cx, other, other_began, !primary_won, state);
            return Some(finished);
        }
        // A failure a retry could fix: the other attempt decides, unless it
        // turns out void, when this failure stands.
        let ended = runtime.now();
        let done = if primary_won { second_attempt.await } else { first_attempt.await };
        match done {
            AttemptOutcome::Answered(_) => {
                let Decided { reservation, began, observation, verdict } = finished;
                self.settle(cx, ended, reservation, began, &verdict, state);
                state.failed(super::detail(observation));
                self.finish(cx, other, other_began, done)
            }
            void => {
                let _ = self.finish_unless_void(cx, other, other_began, void);
                Some(finished)
            }
        }
    }

    /// A [`AttemptOutcome`] outcome as a finished attempt; a mismatch releases the
    /// reservation and reports nothing.
    fn finish<'p, R: Runtime, F, P>(
        &self,
        cx: &RequestContext<'_, R, F>,
        reservation: Permit<'p>,
        began: Instant,
        done: AttemptOutcome<P>,
    ) -> Option<Decided<'p, P>> {
        match done {
            AttemptOutcome::Answered(observation) => {
                let mut verdict = self.classifier.classify(cx.call.method, &observation, cx.runtime.unix_time());
                let silent_for = cx.runtime.now().saturating_since(began);
                self.weigh_silence(&mut verdict, reservation.endpoint(), cx.info.class, &observation, silent_for);
                Some(Decided { reservation, began, observation, verdict })
            }
            AttemptOutcome::ChainCheckFailed(observation, mut verdict) => {
                let silent_for = cx.runtime.now().saturating_since(began);
                self.weigh_silence(&mut verdict, reservation.endpoint(), cx.info.class, &observation, silent_for);
                Some(Decided { reservation, began, observation, verdict })
            }
            // Released unused as it drops: the endpoint is disabled, nothing learned.
            AttemptOutcome::OtherChain => None,
        }
    }

    /// Like [`Pipeline::finish`], but a failed chain check is void too: its
    /// reservation is released with the check's verdict and nothing is
    /// reported (the attempt racing it already decided or was recorded).
    fn finish_unless_void<'p, R: Runtime, F, P>(
        &self,
        cx: &RequestContext<'_, R, F>,
        reservation: Permit<'p>,
        began: Instant,
        done: AttemptOutcome<P>,
    ) -> Option<Decided<'p, P>> {
        match done {
            AttemptOutcome::ChainCheckFailed(_, verdict) => {
                reservation.complete(cx, cx.runtime.now(), &verdict, Duration::ZERO);
                None
            }
            done => self.finish(cx, reservation, began, done),
        }
    }

    /// A second endpoint for a hedge of a primary that has run `waited`,
    /// reserved, with its attempt timeout; `None` (nothing reserved) when
    /// no endpoint is free right now and answering (none silent about as
    /// long, see [`Router::too_silent_to_hedge_onto`]) or the budget has no
    /// token (none is needed when the primary is `stranded` on a node whose
    /// breaker opened: the realm's budget is overdrawn instead).
    ///
    /// [`Router::too_silent_to_hedge_onto`]: crate::pool::router::Router::too_silent_to_hedge_onto
    fn reserve_hedge<R: Runtime, F, P>(
        &self,
        cx: &RequestContext<'_, R, F>,
        state: &Attempts<P>,
        primary: usize,
        waited: Duration,
        stranded: bool,
    ) -> Option<(Permit<'_>, Duration)> {
        let (runtime, info, deadline) = (cx.runtime, &cx.info, cx.deadline);
        if self.shutdown.is_triggered() {
            return None;
        }
        let now = runtime.now();
        let mut tried = state.tried.clone();
        tried[primary] = true;
        let request = RouteRequest {
            hedge_of: Some(waited),
            ..route(&cx.call, info, &tried, (true, Some(primary)), (cx.start, deadline))
        };
        let draws = (runtime.random_unit(), runtime.random_unit());
        let Selection::Reserved(r) = self.select(cx.emit, now, &request, draws) else { return None };
        let permit = Permit::new(self, r);
        let timeout = self.attempt_timeout(permit.endpoint(), info, deadline.saturating_since(now));
        if timeout.is_zero() {
            return None; // the permit goes back unused as it drops
        }
        if stranded {
            self.budget.borrow_mut().overdraw_realm(now);
        } else if !self.budget.borrow_mut().try_withdraw_hedge(now) {
            return None;
        }
        Some((permit, timeout))
    }

    /// Releases and records the attempt that lost the race.
    fn abandon<R: Runtime, F, P>(
        &self,
        cx: &RequestContext<'_, R, F>,
        loser: Permit<'_>,
        began: Instant,
        was_primary: bool,
        state: &mut Attempts<P>,
    ) {
        let (now, info) = (cx.runtime.now(), &cx.info);
        let elapsed = now.saturating_since(began);
        let failed = was_primary && self.router.borrow().hedge_loss_is_failure(loser.endpoint(), info.class, elapsed);
        let verdict = if failed {
            Verdict {
                class: ErrorClass::Transient,
                rule: "hedgeLost".into(),
                health_failure: true,
                retry_after: None,
                long_horizon: false,
                once_elsewhere: false,
                undelivered: false,
            }
        } else {
            self.router.borrow_mut().observe_abandoned(loser.endpoint(), info.class, elapsed);
            Verdict { rule: "hedgedOut".into(), ..neutral() }
        };
        self.settle(cx, now, loser, began, &verdict, state);
    }
}
