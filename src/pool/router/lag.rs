//! Lag as a preference, not a ban: an endpoint more than `maxLagBlocks`
//! behind the best head is kept from `latest` reads only while some
//! endpoint in sync is in service for the read. When none is (each one
//! failed this read already, its breaker is open or half-open with its
//! probe out, it rests after a `Retry-After`, its quota group cools down
//! after a 429, it refused our credentials or serves another chain), the
//! lagging ones serve it: an answer some blocks old beats an outage.
//! Banned outright, the only live node of a pool whose in-sync node died
//! was never asked, and `latest` reads failed for the 45 s the chain took
//! to move past the dead node's last head (a new user's trial: a 503, a
//! 429 and a refused connection each failed every read for 6–14 s). An
//! in-sync endpoint that is only busy (its slots taken, its quota group's
//! CU spent) is in service: the read waits for it, as before.

use super::*;

impl Router {
    /// Whether lagging endpoints are kept from `req`: it wants `latest`,
    /// some endpoint lags, and some endpoint in sync is in service for it.
    pub(super) fn lag_excludes(&self, req: &RouteRequest<'_>, now: Instant) -> bool {
        if !req.wants_latest {
            return false;
        }
        let max_lag = self.max_lag;
        let lagging = |ep: &EndpointState| ep.lagging(max_lag, now, LAG_MEMORY);
        if !self.endpoints.iter().any(lagging) {
            return false;
        }
        // Out of service: out of reach for this read, resting, cooling, or its breaker lets
        // nothing through (a half-open node whose probe is out is unproven: reads held for its
        // probe waited up to an attempt timeout for a node that had just died).
        let out_of_service = |i: usize, ep: &EndpointState| {
            self.out_of_reach(i, req, now)
                || ep.rest_until > now
                || self.groups[ep.group].quota.borrow().cooldown_until() > now
                || !ep.breaker.borrow_mut().admits(now)
        };
        self.endpoints.iter().enumerate().any(|(i, ep)| !lagging(ep) && !out_of_service(i, ep))
    }
}
