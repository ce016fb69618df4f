//! The early probe of a total outage: while every endpoint a request may
//! use is open, one probe for the whole pool goes to the endpoint whose
//! early probe is due first (`pool/outage.rs` keeps the schedule).

use super::{Router, Selection};
use crate::policy::breaker::Admission;
use crate::pool::route_request::RouteRequest;
use crate::time::Instant;

impl Router {
    /// Total outage: the Open endpoint whose early probe is due goes first,
    /// of those `serving` the request (the ones found all open: not one it
    /// may not take, such as a tried one in a failover, or a lagging one).
    pub(super) fn early_probe(
        &mut self,
        now: Instant,
        req: &RouteRequest<'_>,
        draw: f64,
        serving: &[usize],
    ) -> Option<Selection> {
        let mut candidates: Vec<usize> = serving
            .iter()
            .copied()
            .filter(|&i| {
                let ep = &self.endpoints[i];
                ep.rest_until <= now
                    && self.groups[ep.group]
                        .quota
                        .borrow_mut()
                        .check(now, self.attempt_cost(i, req, self.would_check_chain(i, now)))
                        .is_ok()
            })
            .collect();
        candidates.sort_by_key(|&i| self.endpoints[i].breaker.borrow().early_probe_at());
        if candidates.is_empty() {
            return None;
        }
        if self.outage.in_flight {
            // The probe in flight decides; its completion wakes the waiters.
            return Some(Selection::Wait { until: Some(now + self.outage.spacing()), quota: false, paced: false });
        }
        // Only a request with time to prove the node carries the probe: one
        // that woke with milliseconds left would time out, prove nothing and
        // spend the probe (the next waiter, or the next arrival, takes it).
        candidates.retain(|&i| self.time_to_prove(i, req, now));
        if candidates.is_empty() {
            return Some(Selection::Wait { until: req.deadline, quota: false, paced: false });
        }
        let first = candidates[0];
        let due = self.endpoints[first].breaker.borrow().early_probe_at().max(self.outage.next_at);
        if due > now {
            // A request that would reach the probe's time with too little
            // left to carry it fails now rather than wait in vain.
            let in_time = req.deadline.is_none_or(|d| d.saturating_since(due) >= self.proof_time(first, req.class));
            let until = if in_time { due } else { due.max(req.deadline.unwrap_or(due)) };
            return Some(Selection::Wait { until: Some(until), quota: false, paced: false });
        }
        for i in candidates {
            let admission = self.endpoints[i].breaker.borrow_mut().try_early_probe(now, draw);
            if let Admission::Allowed { probe } = admission {
                let reserved = self.reserve(i, now, req, probe);
                if let Some(mut r) = reserved {
                    self.outage.granted(now, draw);
                    r.outage_probe = true;
                    return Some(Selection::Reserved(r));
                }
            }
        }
        None
    }
}
