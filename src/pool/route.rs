//! Endpoint choice for the first version of the pipeline: priority order
//! with stickiness to the endpoint that last succeeded, round-robin
//! failover from a failed endpoint, and per-endpoint cooldowns after rate
//! limiting. Breakers, quota groups and routing strategies replace this in
//! the provider pool; the pipeline only calls [`Router::first`] and
//! [`Router::after`].

use std::time::Duration;

use crate::time::Instant;

/// Mutable routing state shared by all requests of a relayer.
#[derive(Clone, Debug)]
pub struct Router {
    preferred: usize,
    cooldown_until: Vec<Instant>,
}

/// Where the next attempt should go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The endpoint index.
    pub endpoint: usize,
    /// Zero if usable now, else how long until its cooldown ends.
    pub wait: Duration,
}

impl Router {
    /// Routing over `count` endpoints (at least one).
    pub fn new(count: usize) -> Self {
        Router { preferred: 0, cooldown_until: vec![Instant::ZERO; count.max(1)] }
    }

    /// Number of endpoints.
    pub fn len(&self) -> usize {
        self.cooldown_until.len()
    }

    /// Always false: a router has at least one endpoint.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The endpoint for a first attempt: the preferred one, or the next
    /// one that is not cooling down.
    pub fn first(&self, now: Instant) -> Choice {
        self.scan(self.preferred, now, |_| true).unwrap_or(Choice { endpoint: self.preferred, wait: Duration::ZERO })
    }

    /// The endpoint after a failure on `failed`: round robin starting with
    /// the one after it. `allowed` filters candidates (capability failover
    /// only goes to endpoints not yet tried). `None` if no candidate passes.
    pub fn after(&self, failed: usize, now: Instant, allowed: impl Fn(usize) -> bool) -> Option<Choice> {
        self.scan((failed + 1) % self.len(), now, allowed)
    }

    /// Remembers a success so the next request starts there.
    pub fn record_success(&mut self, endpoint: usize) {
        if endpoint < self.len() {
            self.preferred = endpoint;
        }
    }

    /// Rests `endpoint` until `until` (never shortens an existing cooldown).
    pub fn cool_down(&mut self, endpoint: usize, until: Instant) {
        if let Some(slot) = self.cooldown_until.get_mut(endpoint) {
            *slot = (*slot).max(until);
        }
    }

    /// When `endpoint` may be used again.
    pub fn cooldown_until(&self, endpoint: usize) -> Instant {
        self.cooldown_until.get(endpoint).copied().unwrap_or(Instant::ZERO)
    }

    /// Scans cyclically from `start`: the first endpoint usable now wins;
    /// failing that, the allowed one whose cooldown ends soonest.
    fn scan(&self, start: usize, now: Instant, allowed: impl Fn(usize) -> bool) -> Option<Choice> {
        let n = self.len();
        let mut soonest: Option<Choice> = None;
        for offset in 0..n {
            let endpoint = (start + offset) % n;
            if !allowed(endpoint) {
                continue;
            }
            let wait = self.cooldown_until[endpoint].saturating_since(now);
            if wait.is_zero() {
                return Some(Choice { endpoint, wait });
            }
            if soonest.is_none_or(|s| wait < s.wait) {
                soonest = Some(Choice { endpoint, wait });
            }
        }
        soonest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_epoch(Duration::from_millis(ms))
    }

    #[test]
    fn failover_is_round_robin_from_the_failed_endpoint() {
        let r = Router::new(3);
        assert_eq!(r.first(at(0)).endpoint, 0);
        assert_eq!(r.after(0, at(0), |_| true).unwrap().endpoint, 1);
        assert_eq!(r.after(2, at(0), |_| true).unwrap().endpoint, 0);
        assert_eq!(r.after(1, at(0), |e| e != 2).unwrap().endpoint, 0);
        assert_eq!(r.after(1, at(0), |_| false), None);
    }

    #[test]
    fn success_makes_an_endpoint_preferred() {
        let mut r = Router::new(3);
        r.record_success(2);
        assert_eq!(r.first(at(0)).endpoint, 2);
        r.record_success(99);
        assert_eq!(r.first(at(0)).endpoint, 2);
    }

    #[test]
    fn cooling_endpoints_are_skipped_until_all_are_cooling() {
        let mut r = Router::new(2);
        r.cool_down(0, at(500));
        assert_eq!(r.first(at(0)), Choice { endpoint: 1, wait: Duration::ZERO });
        r.cool_down(1, at(800));
        assert_eq!(r.first(at(100)), Choice { endpoint: 0, wait: Duration::from_millis(400) });
        assert_eq!(r.first(at(500)), Choice { endpoint: 0, wait: Duration::ZERO });
        r.cool_down(1, at(200));
        assert_eq!(r.cooldown_until(1), at(800), "never shortened");
    }
}
