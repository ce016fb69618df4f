//! The router's choice of an endpoint for one attempt (`Router::select`):
//! the recovery pacer and fleet probes first, then the candidates that may
//! take the request, ranked by the strategy, the first reservable one
//! reserved.

use super::*;

impl Router {
    /// Whether endpoint `i` can never take `req`, whatever the clock
    /// brings: disabled for another chain, refused our credentials, not
    /// serving the method, or already tried when the request wants an
    /// untried one. (`lag.rs` asks it too: such an endpoint is not in
    /// service for the read.)
    pub(super) fn out_of_reach(&self, i: usize, req: &RouteRequest<'_>, now: Instant) -> bool {
        let ep = &self.endpoints[i];
        ep.chain_disabled(now, self.chain_recheck)
            || ep.refused(now)
            || !ep.spec.serves(req.method)
            || (req.only_untried && req.tried.get(i).copied().unwrap_or(false))
    }

    /// Selects and reserves an endpoint for one attempt. `draws` are two
    /// uniform numbers in `[0, 1)` for the randomised strategies and probes.
    pub fn select(&mut self, now: Instant, req: &RouteRequest<'_>, draws: (f64, f64)) -> Selection {
        self.selections += 1;
        self.adopt_head_rounds();
        if let Err(wait) = self.recovery_check(now, req.since) {
            return Selection::Wait { until: Some(now + wait), quota: false, paced: true };
        }
        let mut eligible: Vec<usize> = Vec::new();
        // Some endpoint waits for a freed slot only (no clock can unblock it).
        let mut slot_bound = false;
        let mut earliest: Option<Instant> = None;
        let mut serving = 0usize;
        // The endpoints counted in `serving`: a total outage's early probe goes to one of them.
        let mut serving_set: Vec<usize> = Vec::new();
        let mut all_open = true;
        let mut all_quota = true;
        // The Open endpoints serving the request, and whether every other one waits for its
        // key's plan (a capacity outage: `early_probe.rs`; a 429's cooldown is not one).
        let mut open_serving: Vec<usize> = Vec::new();
        let mut others_quota_bound = true;
        // Whether every endpoint the pool can use is open, whatever this
        // request may take (its method, its freshness, a failover's or a
        // hedge's narrower view): a total outage is the pool's, not one
        // request's (`None`: no endpoint usable at all).
        let mut pool_open: Option<bool> = None;
        let lag_excludes = self.lag_excludes(req, now);
        let costs = self.attempt_costs(req, now);
        let group_cheapest = self.group_cheapest(req, &costs);
        for (i, &cost) in costs.iter().enumerate() {
            let awaiting_check = self.awaiting_chain_check(i, now);
            let recheck = self.chain_recheck;
            let ep = &mut self.endpoints[i];
            if !ep.chain_disabled(now, recheck) && !ep.refused(now) {
                let open = matches!(ep.breaker.borrow_mut().state(now), BreakerState::Open { .. });
                pool_open = Some(pool_open.unwrap_or(true) && open);
            }
            if self.out_of_reach(i, req, now) {
                continue;
            }
            if req.hedge_of.is_some_and(|waited| self.too_silent_to_hedge_onto(i, req.class, waited, now)) {
                continue;
            }
            let ep = &mut self.endpoints[i];
            if lag_excludes && ep.lagging(self.max_lag, now, LAG_MEMORY) {
                continue;
            }
            serving += 1;
            serving_set.push(i);
            let fleet_hold = self.fleet_probe_hold(i, now);
            let ep = &mut self.endpoints[i];
            let mut until: Option<Instant> = None;
            let mut slot_blocked = false;
            let mut quota_blocked = false;
            let mut plan_bound = false;
            let state = ep.breaker.borrow_mut().state(now);
            match state {
                BreakerState::Open { until: u } => {
                    until = Some(u);
                    open_serving.push(i);
                }
                BreakerState::HalfOpen => {
                    all_open = false;
                    if ep.warm.is_none() {
                        // Open turned HalfOpen by the clock: pace its probes too.
                        ep.begin_warmup(now);
                    }
                    if !ep.breaker.borrow().probe_permit_free() {
                        slot_blocked = true; // a probe ending releases its slot
                    } else if fleet_hold.is_some() {
                        until = fleet_hold; // another realm's probe decides first
                    }
                }
                BreakerState::Closed => all_open = false,
            }
            if ep.rest_until > now {
                until = Some(until.map_or(ep.rest_until, |u| u.max(ep.rest_until)));
            }
            if awaiting_check {
                slot_blocked = true; // the check's answer wakes the waiters
            }
            // A dearer way to the same plan (this endpoint's chain check is due, another's of
            // the group is not) is checked quietly: the request waits for the cheaper one.
            let cheapest = group_cheapest[ep.group];
            let mut quota = self.groups[ep.group].quota.borrow_mut();
            let verdict = if cost > cheapest {
                quota.check_quietly_in_turn(now, cost, req.place)
            } else {
                quota.check_in_turn(now, cost, req.place)
            };
            drop(quota);
            match verdict {
                Ok(()) => {}
                Err(QuotaDenied::Cooling(t)) => {
                    quota_blocked = true;
                    until = Some(until.map_or(t, |u| u.max(t)));
                }
                Err(QuotaDenied::Exhausted(w)) => {
                    // Out of the plan's CU: a stop before the deadline says "rate limited" (a
                    // new user's fleet read "deadline" and could not tell it was the quota).
                    quota_blocked = true;
                    plan_bound = true;
                    until = Some(until.map_or(now + w, |u| u.max(now + w)));
                }
            }
            if !matches!(state, BreakerState::Open { .. }) && !plan_bound {
                others_quota_bound = false;
            }
            if ep.in_flight >= ep.concurrency_limit(now) {
                if ep.slow_start.factor(now) < 1.0 {
                    // Warming up: the limit itself grows with time.
                    until = Some(until.unwrap_or(now + CONCURRENCY_RECHECK));
                } else {
                    slot_blocked = true;
                }
            }
            if let Err(wait) = ep.warm_check(now) {
                until = Some(until.map_or(now + wait, |u| u.max(now + wait)));
            }
            if !quota_blocked {
                all_quota = false;
            }
            match (until, slot_blocked) {
                (None, false) => eligible.push(i),
                (_, true) => slot_bound = true, // a release wakes the waiters first
                (Some(u), false) => earliest = Some(earliest.map_or(u, |e| e.min(u))),
            }
        }
        if serving == 0 {
            return Selection::NoEndpoint;
        }
        if let Some(open) = pool_open {
            self.note_outage(open, now);
        }
        if eligible.is_empty() {
            if all_open {
                if let Some(sel) = self.early_probe(now, req, draws.0, &serving_set) {
                    return sel;
                }
            } else if others_quota_bound && !open_serving.is_empty() {
                if let Some(sel) = self.capacity_probe(now, req, draws.0, &open_serving) {
                    return sel;
                }
            }
            // A slot can free any moment: `until` is then only when to look
            // again (a request fails at once when `until` is past its deadline,
            // and a healthy endpoint at its limit beside one open for two seconds
            // failed thousands of reads a second that way in the soak).
            let until = if slot_bound {
                earliest.map(|e| e.min(now + SLOT_RECHECK))
            } else {
                Some(earliest.unwrap_or(now + CONCURRENCY_RECHECK))
            };
            return Selection::Wait { until, quota: all_quota && !slot_bound, paced: false };
        }
        let untried: Vec<usize> =
            eligible.iter().copied().filter(|&i| !req.tried.get(i).copied().unwrap_or(false)).collect();
        let pool = if req.after.is_some() && !untried.is_empty() { untried } else { eligible };
        let mut order = self.rank(&pool, req, now, draws);
        // Failover: the endpoint that just failed goes last, whatever the strategy.
        if let Some(failed) = req.after {
            if let Some(pos) = order.iter().position(|&i| i == failed) {
                let f = order.remove(pos);
                order.push(f);
            }
        }
        for endpoint in order {
            if let Some(r) = self.reserve(endpoint, now, req, false) {
                return Selection::Reserved(r);
            }
        }
        Selection::Wait { until: Some(earliest.unwrap_or(now + CONCURRENCY_RECHECK)), quota: false, paced: false }
    }

    /// What an attempt of `req` costs on each endpoint now (its chain
    /// check included when one is due), once the realm's fresh checks are
    /// adopted: worked out once per selection.
    fn attempt_costs(&mut self, req: &RouteRequest<'_>, now: Instant) -> Vec<f64> {
        (0..self.endpoints.len())
            .map(|i| {
                self.adopt_shared_chain(i, now);
                self.attempt_cost(i, req, self.would_check_chain(i, now))
            })
            .collect()
    }

    /// The cheapest of `costs` on each quota group's endpoints that serve
    /// `req`'s method (infinite for a group with none).
    fn group_cheapest(&self, req: &RouteRequest<'_>, costs: &[f64]) -> Vec<f64> {
        let mut cheapest = vec![f64::INFINITY; self.groups.len()];
        for (ep, &cost) in self.endpoints.iter().zip(costs) {
            if ep.spec.serves(req.method) {
                cheapest[ep.group] = cheapest[ep.group].min(cost);
            }
        }
        cheapest
    }

    /// Orders candidates by the strategy (the first reservable one wins).
    fn rank(&mut self, pool: &[usize], req: &RouteRequest<'_>, now: Instant, draws: (f64, f64)) -> Vec<usize> {
        let state = StrategyState { cursor: &mut self.cursor, sticky: self.sticky };
        strategy::rank(self.strategy, &mut self.endpoints, state, pool, req, now, draws)
    }
}
