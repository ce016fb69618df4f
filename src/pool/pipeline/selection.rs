//! The pipeline's side of the router's waiting line: asking for an
//! endpoint (and passing on what the router learned from the realm while
//! it chose, and the asks its quota groups made of a fleet store), and waking the requests that wait for a slot or an answer.

use std::time::Duration;

use super::Call;
use super::{Pipeline, PipelineEvent};
use crate::pool::notify::Notify;
use crate::pool::router::backlog::InLine;
use crate::pool::router::{RouteRequest, Router, RouterEvent, Selection};
use crate::rpc::methods::MethodInfo;
use crate::time::Instant;

impl Pipeline {
    /// Asks the router for an endpoint; a chain mismatch it learned from
    /// another member of the realm meanwhile is told to this relayer's listeners.
    pub(super) fn select(
        &self,
        emit: &dyn Fn(PipelineEvent),
        now: Instant,
        request: &RouteRequest<'_>,
        draws: (f64, f64),
    ) -> Selection {
        let mut router = self.router.borrow_mut();
        let selection = router.select(now, request, draws);
        Self::pass_on(&mut router, emit);
        selection
    }

    /// Passes on what the router learned from the realm while it chose or
    /// checked a plan (a chain mismatch, told to this relayer's listeners),
    /// the asks its quota groups made of a fleet store (the host sends
    /// them: an ask left untaken is never answered, and a request waiting
    /// for it waits out its period), and its news for the other realms.
    pub(super) fn pass_on(router: &mut Router, emit: &dyn Fn(PipelineEvent)) {
        for event in router.take_adopted() {
            if let RouterEvent::ChainMismatch { endpoint, expected, got } = event {
                emit(PipelineEvent::ChainMismatch { endpoint, expected, got });
            }
        }
        for (group, ask) in router.take_lease_asks() {
            emit(PipelineEvent::LeaseAsk { group, ask });
        }
        // Told as the attempt goes (a probe in flight), not when it ends.
        for news in router.take_news() {
            emit(PipelineEvent::News(news));
        }
    }

    /// Whether a request arriving at `now` would queue for its keys' plans
    /// past `deadline` behind the requests waiting already, from every
    /// relayer sharing those plans (`Router::plan_backlog`): then it is
    /// shed at once (`Err`: the line's estimated wait, told to the caller
    /// as `nextChanceMs`); otherwise its place in their line, if it
    /// waits for a plan. Twice the line's
    /// time must fit: it is counted at this request's cost and at the rate
    /// the plans pay now, and both move while it waits (at the line's time
    /// alone, a simulated 130 % overload still failed reads at 1.7–2 s of
    /// their 2 s deadline, also with the line served in turn).
    pub(super) fn behind_its_plans(
        &self,
        now: Instant,
        request: &RouteRequest<'_>,
        deadline: Instant,
    ) -> Result<Option<InLine>, Duration> {
        let Some(line) = self.router.borrow_mut().plan_backlog(now, request) else { return Ok(None) };
        // What waits ahead, in the plan's terms, then its own cost: counted as that many calls
        // like itself, a 20 CU call behind 35 reads of 1 CU was told at once it could not make a
        // 30 s deadline (a new user's run) where it waited 1–2 s.
        // (Behind the fleet's whole line at its rate, when the store said it: `PlanLine::wait_for`.)
        let (wait, any_ahead) = line.wait_for(line.cost);
        if let Some(wait) = wait.filter(|&wait| any_ahead && now + wait * 2 > deadline) {
            return Err(wait);
        }
        Ok(Some(InLine::join(&line, request.since.unwrap_or(now))))
    }

    /// Gives a slot back: wakes this pipeline's longest waiter and, in a
    /// realm, the realm's (shared breakers and groups may let it go). After
    /// an endpoint's chain check (`all`), every waiter: requests that waited
    /// for its answer instead of checking themselves all go now.
    pub(super) fn wake_waiters(&self, all: bool) {
        let wake = |n: &Notify| if all { n.notify_all() } else { n.notify_one() };
        wake(&self.slots);
        if let Some(realm) = &self.realm_wake {
            wake(realm);
        }
    }
}

/// What the router is asked for one attempt of `call`, begun at `since`: a
/// retry, a failover or a hedge keeps its request's place in the recovery
/// pacer's line (it must not take a turn ahead of older held requests).
pub(super) fn route<'r>(
    call: &Call<'r>,
    info: &MethodInfo,
    tried: &'r [bool],
    (only_untried, after): (bool, Option<usize>),
    (since, deadline): (Instant, Instant),
) -> RouteRequest<'r> {
    RouteRequest {
        method: call.method,
        class: info.class,
        cost: call.cost.unwrap_or(info.cost),
        wants_latest: call.wants_latest,
        tried,
        only_untried,
        after,
        hedge_of: None,
        since: Some(since),
        deadline: Some(deadline),
        place: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc::methods::method_info;

    #[test]
    fn every_attempt_of_a_request_asks_with_its_start_and_deadline() {
        // Without `since`, a failover or a hedge would be outside the recovery
        // pacer's line and could take a turn ahead of older held requests.
        let call = Call::new("eth_getBalance");
        let info = method_info(call.method);
        let tried = [true, false];
        let (start, deadline) = (
            Instant::from_epoch(std::time::Duration::from_secs(3)),
            Instant::from_epoch(std::time::Duration::from_secs(4)),
        );
        let failover = route(&call, &info, &tried, (true, Some(0)), (start, deadline));
        assert_eq!((failover.since, failover.deadline), (Some(start), Some(deadline)));
        assert_eq!((failover.only_untried, failover.after), (true, Some(0)));
    }
}
