//! How long a request would queue for its keys' plans: the waiting line's
//! compute units over the rate the plans refill at. A request that could
//! not reach the front before its deadline is better told so at once than
//! after waiting it out: at 130 % of a fleet's capacity, every request
//! waited, the line grew to the deadline, and the ones that failed failed
//! after 9.9 s of a 10 s deadline (a new user's run), while the answered
//! ones waited nearly as long. Shedding at arrival keeps the line within
//! the deadline: the excess fails fast and the rest are served in time.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::Router;
use crate::coord::realm::SharedGroup;
use crate::policy::breaker::BreakerState;
use crate::policy::quota::{line_place, line_wait, QuotaDenied};
use crate::pool::route_request::RouteRequest;
use crate::time::Instant;

/// The plans a request would queue for (`Router::plan_backlog`): the
/// groups, the request's cheapest cost at those endpoints, and the rate
/// their plans pay this realm at.
pub struct PlanLine {
    /// The quota groups whose plans hold the request.
    pub groups: Vec<SharedGroup>,
    /// The request's cost at the cheapest endpoint that could serve it (CU).
    pub cost: f64,
    /// What the plans pay this realm (CU/s; a fleet member's part of the fleet's).
    pub rate: f64,
    /// The fleet's line beside this realm's, when every group's store said
    /// it: what the other members' charges cost (CU) and the fleet's rate
    /// (CU/s) (`QuotaGroup::fleet_line`).
    pub fleet: Option<(f64, f64)>,
}

impl PlanLine {
    /// Requests waiting in this line now, from every relayer sharing the groups.
    pub fn waiting(&self) -> u32 {
        self.groups.iter().map(|g| g.borrow().line()).max().unwrap_or(0)
    }

    /// What the requests waiting in this line cost together (CU; of the
    /// groups, the longest line).
    pub fn waiting_cu(&self) -> f64 {
        self.groups.iter().map(|g| g.borrow().line_cu()).fold(0.0, f64::max)
    }

    /// How long a new request costing `cost` would wait, with whether this
    /// realm's line holds any: behind the whole fleet's line at the fleet's
    /// rate when the store said it (every member then reckons alike), else
    /// behind this realm's line at its part of the rate. A realm whose own
    /// line is empty sheds nothing, whatever the others' (as before): the
    /// others' lines are as the store last heard them, and counted so, a
    /// fleet on Redis shed one read in two runs of four as a total outage began.
    pub fn wait_for(&self, cost: f64) -> (Option<Duration>, bool) {
        (line_wait(self.waiting_cu(), cost, self.rate, self.fleet), self.waiting() > 0)
    }
}

/// A request's place in its plans' lines, given back when it is dropped
/// (served, failed, or its caller went away): every relayer sharing a
/// group sees the same line, so a fleet member with three relayers in a
/// process no longer counted a third of it (a new user's overload failed
/// with `DeadlineError` after 2–29 s instead of being told at once). The
/// lines serve in turn (`policy::quota::line`): the place is the
/// request's start, so a retry keeps its request's place.
pub struct InLine {
    groups: Vec<SharedGroup>,
    place: u64,
}

thread_local! {
    /// The order of joining, for places unique among every line of the realm.
    static JOINED: Cell<u64> = const { Cell::new(0) };
}

impl InLine {
    /// Joins `line`'s groups, in turn by `since` (the request's start).
    pub fn join(line: &PlanLine, since: Instant) -> Self {
        let order = JOINED.with(|j| {
            let order = j.get();
            j.set(order.wrapping_add(1));
            order
        });
        let place = line_place(since, order);
        for g in &line.groups {
            g.borrow_mut().join_line(place, line.cost);
        }
        InLine { groups: line.groups.clone(), place }
    }

    /// Its place (`RouteRequest::place`).
    pub fn place(&self) -> u64 {
        self.place
    }

    /// Whether it is the head of one of its lines: the CU there are its
    /// own to take when they come, so it waits for them on a timer.
    pub fn is_head(&self) -> bool {
        self.groups.iter().any(|g| g.borrow().line_head_is(self.place))
    }

    /// Completes when it is the head of one of its lines (at once if it is).
    pub fn turn(&self) -> Turn<'_> {
        Turn(self)
    }
}

/// The future of [`InLine::turn`].
pub struct Turn<'a>(&'a InLine);

impl Future for Turn<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.is_head() {
            return Poll::Ready(());
        }
        for g in &self.0.groups {
            g.borrow_mut().wait_turn(self.0.place, cx.waker());
        }
        Poll::Pending
    }
}

impl Drop for InLine {
    fn drop(&mut self) {
        for g in &self.groups {
            g.borrow_mut().leave_line(self.place);
        }
    }
}

impl Router {
    /// The line `req` would join for the plans of the endpoints that can
    /// serve it (each at the cheapest of those endpoints' costs for it: a
    /// provider counting requests is given `costs` of 1), when every
    /// endpoint that could serve it now is out of its plan's CU; `None`
    /// when one is not (a slot, a breaker, a cooldown is what holds it:
    /// their ends are not a rate), or a plan is unknown.
    pub fn plan_backlog(&mut self, now: Instant, req: &RouteRequest<'_>) -> Option<PlanLine> {
        let mut groups: Vec<usize> = Vec::new();
        let mut cheapest = f64::INFINITY;
        for i in 0..self.endpoints.len() {
            let recheck = self.chain_recheck;
            let ep = &self.endpoints[i];
            if ep.chain_disabled(now, recheck) || ep.refused(now) || !ep.spec.serves(req.method) {
                continue;
            }
            if matches!(ep.breaker.borrow_mut().state(now), BreakerState::Open { .. }) {
                continue;
            }
            let cost = self.attempt_cost(i, req, self.would_check_chain(i, now));
            cheapest = cheapest.min(self.attempt_cost(i, req, false));
            let group = self.endpoints[i].group;
            let verdict = self.groups[group].quota.borrow_mut().check_in_turn(now, cost, req.place);
            if !matches!(verdict, Err(QuotaDenied::Exhausted(_))) {
                return None;
            }
            if !groups.contains(&group) {
                groups.push(group);
            }
        }
        let rate: f64 = groups.iter().map(|&g| self.groups[g].quota.borrow_mut().serving_rate(now)).sum();
        // The fleet's line, when every group's store said it (summed over the groups, as the rates).
        let fleet = groups.iter().try_fold((0.0, 0.0), |(cu, r), &g| {
            let (others, sure) = self.groups[g].quota.borrow_mut().fleet_line(now)?;
            Some((cu + others, r + sure))
        });
        let groups = groups.iter().map(|&g| self.groups[g].quota.clone()).collect::<Vec<_>>();
        (!groups.is_empty() && rate.is_finite() && rate > 0.0 && cheapest.is_finite()).then_some(PlanLine {
            groups,
            cost: cheapest,
            rate,
            fleet,
        })
    }
}
