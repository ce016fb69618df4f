//! One logical request's walk (`Pipeline::execute`): the state machine in
//! `pipeline.rs`'s doc, step by step.

use super::*;
use crate::pool::route_request::RouteRequest;
use crate::pool::router::backlog::InLine;

impl Pipeline {
    /// Runs one logical request; `attempt` performs one try against the
    /// endpoint, timeout and purpose it is given.
    pub async fn execute<'f, R, P, F, Fut>(
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
        Fut: Future<Output = Observation<P>> + 'f,
    {
        let boxed = boxed_attempts(attempt);
        self.walk(runtime, call, &boxed as &dyn Fn(AttemptTarget) -> BoxedAttempt<'f, P>, emit).await
    }

    /// `execute`'s walk, with the attempt function type-erased: one copy per
    /// runtime and payload ([`BoxedAttempt`]).
    async fn walk<'f, R, P>(
        &self,
        runtime: &R,
        call: Call<'_>,
        attempt: &dyn Fn(AttemptTarget) -> BoxedAttempt<'f, P>,
        emit: &dyn Fn(PipelineEvent),
    ) -> Result<Success<P>, Failure<P>>
    where
        R: Runtime,
        P: Payload,
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
        let mut in_line: Option<InLine> = None;

        loop {
            if self.shutdown.is_triggered() {
                return Err(state.stop(StopReason::Closed));
            }
            let now = runtime.now();
            if call.method == "eth_chainId" && state.records.is_empty() {
                // Known from a check (this relayer's or a realm member's, perhaps
                // the one it just waited for): no call (`Router::known_chain`).
                if let Some((chain, endpoint)) = self.router.borrow().known_chain(now) {
                    let value = SuccessValue::Result(P::from_text(format!("{chain:#x}")));
                    return Ok(Success { value, endpoint, attempts: Vec::new() });
                }
            }
            let place = in_line.as_ref().map(InLine::place);
            let request =
                RouteRequest { place, ..route(&call, &info, &state.tried, (only_untried, after), (start, deadline)) };
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
                            // How soon one could have gone: the caller's own retry, or a longer deadline.
                            let early = (now < deadline).then(|| u.saturating_since(now));
                            let reason = if quota { StopReason::RateLimited } else { StopReason::Deadline };
                            return Err(Failure { next_chance_in: early, ..state.stop(reason) });
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
                        // when the plans are what holds it, in turn by its start (shed if that
                        // is past its deadline). Held by something else now (not its plans: a
                        // dead node's open breaker beside them does not count), it leaves the
                        // line: a head that cannot take the CU would hold up the others.
                        if in_line.is_none() {
                            match self.behind_its_plans(now, &request, deadline) {
                                // Told now, not at its deadline, with the line's estimated wait.
                                Err(wait) => {
                                    let failure = state.stop(StopReason::RateLimited);
                                    return Err(Failure { next_chance_in: Some(wait), ..failure });
                                }
                                Ok(place) => in_line = place,
                            }
                        } else if !quota && self.router.borrow_mut().plan_backlog(now, &request).is_none() {
                            drop(in_line.take());
                        }
                        self.waiting.set(self.waiting.get() + 1);
                        // Waiting for a slot only: no timer but the deadline's (a release wakes us).
                        // Woken in turn by its start, however many rounds it waited (`Notify`).
                        // Behind others in its plans' line: no timer but the deadline's either,
                        // its turn wakes it (the refills are theirs first).
                        let behind = in_line.as_ref().filter(|l| !l.is_head());
                        let wake = if behind.is_some() { deadline } else { until.unwrap_or(deadline) };
                        let turn = u64::try_from(start.since_epoch().as_millis()).unwrap_or(u64::MAX);
                        let its_turn = async {
                            match behind {
                                Some(line) => line.turn().await,
                                None => std::future::pending().await,
                            }
                        };
                        either(
                            either(
                                either(runtime.sleep(wake.saturating_since(now)), self.slots.notified_in_turn(turn)),
                                either(self.realm_woken(turn), its_turn),
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
            // A retry with less time left than the node typically takes to answer goes
            // nowhere: it would spend quota and work for an answer past the deadline.
            let needs = || self.router.borrow().retry_needs(Some(endpoint), info.class);
            if remaining.is_zero() || (!state.records.is_empty() && needs().is_some_and(|n| remaining < n)) {
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
            // A retry after a 429 in a group paced by its plan waits for the group and pays
            // the plan again: it displaces a first attempt, it adds no load, so the retry
            // budget (which guards nodes from retry storms) is not drawn. Drawn, a fleet's
            // start on a slow store (every member alone at the whole plan until the store
            // answered: 43 429s) failed reads with RetryBudgetError that could wait.
            let paced = verdict.class == ErrorClass::RateLimited && self.router.borrow().paced_by_plan(endpoint);
            let free = (undelivered && state.tried.iter().any(|t| !t)) || paced;
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
            let next = preselected.as_ref().map(|p| p.endpoint());
            let needs = self.router.borrow().retry_needs(next, info.class).unwrap_or(Duration::ZERO);
            if ended + delay + needs >= deadline {
                // Stopped now, before the deadline: the retry would come after it, or
                // its answer would (typically).
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
}
