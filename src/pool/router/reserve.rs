//! Taking an endpoint for one attempt: a breaker permit (a probe in
//! HalfOpen, told to the other realms), the quota charge, a concurrency
//! slot, the warm-up and recovery-pacing tokens, all at once or none.

use super::{Reservation, Router};
use crate::policy::breaker::{Admission, BreakerState};
use crate::pool::options::Strategy;
use crate::pool::route_request::RouteRequest;
use crate::time::Instant;

impl Router {
    /// Reserves breaker permit, quota and a concurrency slot, or nothing.
    pub(super) fn reserve(
        &mut self,
        i: usize,
        now: Instant,
        req: &RouteRequest<'_>,
        early_probe: bool,
    ) -> Option<Reservation> {
        let check_chain = self.would_check_chain(i, now);
        let cost = self.attempt_cost(i, req, check_chain);
        // A half-open probe only to a request with time to prove the node.
        let half_open = self.endpoints[i].breaker.borrow_mut().state(now) == BreakerState::HalfOpen;
        if !early_probe && half_open && !self.time_to_prove(i, req, now) {
            return None;
        }
        let ep = &mut self.endpoints[i];
        let probe = if early_probe {
            true
        } else {
            match ep.breaker.borrow_mut().try_acquire(now) {
                Admission::Allowed { probe } => probe,
                Admission::Rejected { .. } => return None,
            }
        };
        let group = &mut self.groups[ep.group];
        if group.quota.borrow_mut().charge(now, cost).is_err() {
            ep.breaker.borrow_mut().on_neutral(probe);
            return None;
        }
        ep.in_flight += 1;
        self.chains[i].attempt_began(req.class as usize, now);
        self.attempts_out[i][req.class as usize] += 1;
        let ep = &mut self.endpoints[i];
        ep.warm_take(now);
        if let Some(rec) = self.pacer.borrow_mut().recovery.as_mut() {
            rec.take(now);
        }
        if self.strategy == Strategy::Sticky {
            self.sticky = Some(i);
        }
        if check_chain {
            self.chains[i].begin_check();
        }
        if probe {
            self.tell_probing(i, req, now);
        }
        Some(Reservation {
            endpoint: i,
            probe,
            cost,
            charged_at: now,
            check_chain,
            outage_probe: false,
            class: req.class,
        })
    }
}
