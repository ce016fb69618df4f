//! One half-open probe of a node in flight for the fleet
//! (`policy/breaker/fleet_probe.rs`): this router tells the other realms
//! when a probe of a shared breaker goes out and when it ends, and holds
//! its own half-open probes while another realm's is out and another
//! endpoint of the pool is closed (in a total outage nothing is held).

use super::{Reservation, Router};
use crate::coord::news::News;
use crate::policy::breaker::BreakerState;
use crate::pool::route_request::RouteRequest;
use crate::time::Instant;

impl Router {
    /// Tells the other realms a probe of a shared breaker's node goes out,
    /// its verdict due by its attempt timeout (or the request's deadline).
    pub(super) fn tell_probing(&mut self, endpoint: usize, req: &RouteRequest<'_>, now: Instant) {
        let Some(breaker) = self.breaker_keys.get(endpoint).copied().flatten() else { return };
        let ceiling = self.endpoints[endpoint].spec.timeout.unwrap_or(self.attempt_ceiling);
        let mut until = now + self.attempt_timeout(endpoint, req.class, ceiling);
        if let Some(deadline) = req.deadline {
            until = until.min(deadline);
        }
        self.news.push(News::Probing { breaker, until });
    }

    /// Tells the other realms that a probe told as `Probing` ended.
    pub(super) fn tell_probe_ended(&mut self, r: &Reservation) {
        if let Some(breaker) = r.probe.then(|| self.breaker_keys.get(r.endpoint).copied().flatten()).flatten() {
            self.news.push(News::ProbeEnded { breaker });
        }
    }

    /// Until when endpoint `i`'s half-open probe waits for another realm's
    /// (`None`: it may go): held, none of its own out, and another usable
    /// endpoint closed, so the pool serves meanwhile.
    pub(super) fn fleet_probe_hold(&self, i: usize, now: Instant) -> Option<Instant> {
        let until = {
            let b = self.endpoints.get(i)?.breaker.borrow();
            b.fleet_probe_until(now).filter(|_| b.probes_in_flight() == 0)?
        };
        let recheck = self.chain_recheck;
        let others_serve = self.endpoints.iter().enumerate().any(|(j, e)| {
            j != i
                && !e.chain_disabled(now, recheck)
                && !e.refused(now)
                && e.breaker.borrow_mut().state(now) == BreakerState::Closed
        });
        others_serve.then_some(until)
    }
}
