//! How long a request would queue for its keys' plans: the waiting line's
//! compute units over the rate the plans refill at. A request that could
//! not reach the front before its deadline is better told so at once than
//! after waiting it out: at 130 % of a fleet's capacity, every request
//! waited, the line grew to the deadline, and the ones that failed failed
//! after 9.9 s of a 10 s deadline (a new user's run), while the answered
//! ones waited nearly as long. Shedding at arrival keeps the line within
//! the deadline: the excess fails fast and the rest are served in time.

use std::time::Duration;

use super::Router;
use crate::policy::breaker::BreakerState;
use crate::pool::route_request::RouteRequest;
use crate::time::Instant;

impl Router {
    /// The time `waiting` requests like `req` ahead of it take to pass at
    /// the rates the plans that can serve it pay this realm at (a fleet
    /// member's part of the fleet's: `QuotaGroup::serving_rate`) (each at the
    /// cheapest of those endpoints' costs for it: a provider counting
    /// requests is given `costs` of 1), when every endpoint that could
    /// serve it now is out of its plan's CU; `None` when one is not (a
    /// slot, a breaker, a cooldown is what holds it: their ends are not a
    /// rate), or a plan is unknown.
    pub fn plan_backlog(&mut self, now: Instant, req: &RouteRequest<'_>, waiting: u32) -> Option<Duration> {
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
            let mut quota = self.groups[group].quota.borrow_mut();
            if !matches!(quota.check(now, cost), Err(crate::policy::quota::QuotaDenied::Exhausted(_))) {
                return None;
            }
            if !groups.contains(&group) {
                groups.push(group);
            }
        }
        let rate: f64 = groups.iter().map(|&g| self.groups[g].quota.borrow_mut().serving_rate(now)).sum();
        let line = f64::from(waiting) * cheapest;
        (rate.is_finite() && rate > 0.0 && line.is_finite())
            .then(|| Duration::from_secs_f64((line.max(0.0) / rate).min(86_400.0)))
    }
}
