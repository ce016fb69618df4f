//! The early probe of a total outage: while every endpoint a request may
//! use is open, one probe for the whole pool goes to the endpoint whose
//! early probe is due first (`pool/outage.rs` keeps the schedule). The
//! early probe of a capacity outage: while every endpoint that is not open
//! waits for quota, an open one (on another key) gets its own early probes
//! (`capacity_probe`). And who may carry a probe, early or half-open: a
//! request with time to prove the node (`policy::silence`).

use super::{Router, Selection};
use crate::policy::breaker::Admission;
use crate::policy::quota::QuotaDenied;
use crate::pool::route_request::RouteRequest;
use crate::rpc::methods::MethodClass;
use crate::time::Instant;
use std::time::Duration;

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
        let mut candidates = self.probe_candidates(now, req, serving);
        if candidates.is_empty() {
            // No key can pay a probe now (a lease emptied by the outage's first failed attempts,
            // a cooldown): the probe waits for the soonest key, not the breakers' open time (30 s
            // by default, past most deadlines: a fleet on Redis failed a fifth of its reads in the
            // first second of a total outage as "rate limited past the deadline", 0 429s).
            return self.soonest_paid_probe(now, req, serving);
        }
        if self.outage.in_flight {
            // The probe in flight decides; its completion wakes the waiters,
            // who look again by the base spacing anyway. Not the next probe's
            // spacing: a request arriving while the probe is out failed at once
            // when that (up to 12 s) passed its deadline, though the verdict
            // came milliseconds later (a fleet on Redis after an outage).
            return Some(Selection::Wait { until: Some(now + self.outage.base()), quota: false, paced: false });
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

    /// When the first of `serving` not resting can pay `req` (a wait on
    /// the plan or a cooldown: `quota` set), if any can at all.
    fn soonest_paid_probe(&mut self, now: Instant, req: &RouteRequest<'_>, serving: &[usize]) -> Option<Selection> {
        let soonest = serving
            .iter()
            .filter(|&&i| self.endpoints[i].rest_until <= now)
            .filter_map(|&i| {
                let cost = self.attempt_cost(i, req, self.would_check_chain(i, now));
                match self.groups[self.endpoints[i].group].quota.borrow_mut().check(now, cost) {
                    Err(QuotaDenied::Exhausted(wait)) => Some(now + wait),
                    Err(QuotaDenied::Cooling(until)) => Some(until),
                    Ok(()) => None,
                }
            })
            .min()?;
        Some(Selection::Wait { until: Some(soonest), quota: true, paced: false })
    }

    /// Capacity outage: every endpoint serving the request that is not
    /// Open waits for its key's plan (spent, not cooling after a 429: a
    /// cooldown ends on its own, and a retry waits it out rather than probe
    /// a node that failed, `failover_tests.rs`), so a node that failed a
    /// while ago is the only capacity left to find. An Open endpoint whose key can pay gets an
    /// early probe on its breaker's own schedule (0.5 s after it opened,
    /// then doubling; one at a time): a node that came back serves again
    /// within a second or two instead of after its whole open time. A new
    /// user's pool (a flapping node, a node that hung for 5 s and came back,
    /// the third at its key's limit) kept the recovered node out for its
    /// 30 s open time while reads queued 8–11 s on the third's quota.
    pub(super) fn capacity_probe(
        &mut self,
        now: Instant,
        req: &RouteRequest<'_>,
        draw: f64,
        open: &[usize],
    ) -> Option<Selection> {
        let mut candidates = self.probe_candidates(now, req, open);
        candidates.retain(|&i| self.time_to_prove(i, req, now));
        for i in candidates {
            let admission = self.endpoints[i].breaker.borrow_mut().try_early_probe(now, draw);
            if let Admission::Allowed { probe } = admission {
                return self.reserve(i, now, req, probe).map(Selection::Reserved);
            }
        }
        None
    }

    /// Of `endpoints`, those not resting whose key can pay `req` now, the
    /// one whose early probe is due first first.
    fn probe_candidates(&self, now: Instant, req: &RouteRequest<'_>, endpoints: &[usize]) -> Vec<usize> {
        let mut candidates: Vec<usize> = endpoints
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
        crate::small_sort::sort_by_key(&mut candidates, |&i| self.endpoints[i].breaker.borrow().early_probe_at());
        candidates
    }

    /// Sets the attempt timeout of endpoints without one of their own
    /// (the relayer's `attemptTimeoutMs`).
    pub fn set_attempt_ceiling(&mut self, ceiling: Duration) {
        self.attempt_ceiling = ceiling;
    }

    /// How long `endpoint` must stay silent for a timeout of a `class`
    /// request to count against it (`policy::silence`).
    pub fn proof_time(&self, endpoint: usize, class: MethodClass) -> Duration {
        let Some(ep) = self.endpoints.get(endpoint) else { return self.attempt_ceiling };
        let normal = self.attempt_timeout(endpoint, class, ep.spec.timeout.unwrap_or(self.attempt_ceiling));
        crate::policy::silence::proof_time(normal, self.reference_tail(endpoint, class))
    }

    /// Whether `req` has time left to prove `endpoint` with a probe: a
    /// probe that times out sooner proves nothing, and spends the probe.
    pub(super) fn time_to_prove(&self, endpoint: usize, req: &RouteRequest<'_>, now: Instant) -> bool {
        req.deadline.is_none_or(|d| d.saturating_since(now) >= self.proof_time(endpoint, req.class))
    }
}
