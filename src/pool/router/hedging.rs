//! What hedging asks of the router: how long an endpoint's attempt may run
//! before a second one races it, and what an abandoned attempt teaches.

use std::time::Duration;

use super::Router;
use crate::policy::breaker::BreakerState;
use crate::pool::options::HedgeConfig;
use crate::rpc::methods::MethodClass;
use crate::time::{duration_from_millis_f64, Instant};

impl Router {
    /// Whether `endpoint`'s breaker is open at `now` (it takes no new attempts).
    pub fn breaker_open(&mut self, endpoint: usize, now: Instant) -> bool {
        self.endpoints
            .get_mut(endpoint)
            .is_some_and(|e| matches!(e.breaker.borrow_mut().state(now), BreakerState::Open { .. }))
    }

    /// How long an attempt on `endpoint` runs alone before it is hedged:
    /// its own trusted tail; without history of its own, its [reference
    /// tail](Router::reference_tail) (a hung node has none, so its peers'
    /// stands in) or, with no history anywhere, `initial_delay`, but never
    /// less than what the realm's other relayers measured of the same
    /// endpoint: a fresh relayer must not hedge an endpoint the realm knows
    /// is this slow onto others as slow (a busy process full of fresh
    /// relayers would double its load). Never below `min_delay`.
    pub fn hedge_delay(&self, endpoint: usize, class: MethodClass, config: &HedgeConfig) -> Duration {
        let own = self.endpoints.get(endpoint).and_then(|e| e.trusted_tail(class));
        let delay = match own {
            Some(tail) => duration_from_millis_f64(tail),
            None => {
                let fallback =
                    self.reference_tail(endpoint, class).map_or(config.initial_delay, duration_from_millis_f64);
                let realm = self.chains.get(endpoint).and_then(|record| record.tail(class as usize));
                realm.map_or(fallback, |tail| fallback.max(duration_from_millis_f64(tail)))
            }
        };
        delay.max(config.min_delay)
    }

    /// An attempt abandoned after `elapsed` (it lost a hedge race): its
    /// latency was at least that. Routing learns it only where it says
    /// more than the current estimate (a hedge cut short early says little).
    pub fn observe_abandoned(&mut self, endpoint: usize, class: MethodClass, elapsed: Duration) {
        if let Some(ep) = self.endpoints.get_mut(endpoint) {
            let ms = elapsed.as_secs_f64() * 1000.0;
            if ep.latency[class as usize].value().is_none_or(|current| ms > current) {
                ep.observe_latency(class, elapsed);
            }
        }
    }

    /// Whether losing a hedge race after `elapsed` says `endpoint` is
    /// unhealthy: it has no trusted tail of its own (nothing says it is
    /// ever this slow), or it took over twice its usual slow end. A node
    /// that is merely at its usual tail loses races now and then; that is
    /// what hedging is for, not a fault.
    pub fn hedge_loss_is_failure(&self, endpoint: usize, class: MethodClass, elapsed: Duration) -> bool {
        match self.endpoints.get(endpoint).and_then(|e| e.trusted_tail(class)) {
            None => true,
            Some(tail_ms) => elapsed.as_secs_f64() * 1000.0 > 2.0 * tail_ms,
        }
    }
}
