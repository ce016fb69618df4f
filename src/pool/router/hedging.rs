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

    /// Whether a request whose attempt on `endpoint` just failed is
    /// stranded there: its breaker opened under it, and another endpoint is
    /// not open, so a retry can go elsewhere (`pipeline/extra.rs` lets such
    /// retries overdraw the budgets; with every endpoint open a retry could
    /// only wait for a probe, and is an ordinary one).
    pub fn stranded_on(&mut self, endpoint: usize, now: Instant) -> bool {
        self.breaker_open(endpoint, now)
            && (0..self.endpoints.len()).any(|i| i != endpoint && !self.breaker_open(i, now))
    }

    /// How long an attempt on `endpoint` runs alone before it is hedged:
    /// its own trusted tail; without history of its own, its [reference
    /// tail](Router::reference_tail) (a hung node has none, so its peers'
    /// stands in) or, with no history anywhere, `initial_delay`, but never
    /// less than what the realm's other relayers measured of the same
    /// endpoint: a fresh relayer must not hedge an endpoint the realm knows
    /// is this slow onto others as slow (a busy process full of fresh
    /// relayers would double its load). Never below `min_delay`, and never
    /// before a hedge [could win](Router::hedge_could_win_after). Without a
    /// trusted tail of its own, plus the wire's batch wait (`batch.waitMs`):
    /// a read held that long in this relayer's own queue before it is sent
    /// is no slow node (a trusted tail counts that wait already: latencies
    /// run from the attempt's start).
    pub fn hedge_delay(&self, endpoint: usize, class: MethodClass, config: &HedgeConfig) -> Duration {
        let own = self.endpoints.get(endpoint).and_then(|e| e.trusted_tail(class));
        let delay = match own {
            Some(tail) => duration_from_millis_f64(tail),
            None => {
                let fallback =
                    self.reference_tail(endpoint, class).map_or(config.initial_delay, duration_from_millis_f64);
                let realm = self.chains.get(endpoint).and_then(|record| record.tail(class as usize));
                realm.map_or(fallback, |tail| fallback.max(duration_from_millis_f64(tail))) + self.batch_wait
            }
        };
        let could_win = self.hedge_could_win_after(endpoint, class).map_or(Duration::ZERO, duration_from_millis_f64);
        delay.max(could_win).max(config.min_delay)
    }

    /// How long (ms) an attempt on `endpoint` must have run before a hedge
    /// could beat it: its typical latency plus the fastest peer's (a peer
    /// whose latency is unknown is taken to be alike: most hedges onto it
    /// lose, and a lost race teaches nothing of its speed). A
    /// hedge sent earlier answers, typically, after the primary would have
    /// anyway, unless the primary is far out in its tail. So endpoints
    /// alike in speed with tight jitter, or all slowed down together (a
    /// congested chain: each one's typical latency follows within a few
    /// answers), get no hedge that could only add load, while a primary
    /// that hangs outright still is hedged at this point. `None` when the
    /// endpoint's own latency is unknown (no trusted history, own or the
    /// realm's: a fresh relayer, or a node that hung from the start).
    pub fn hedge_could_win_after(&self, endpoint: usize, class: MethodClass) -> Option<f64> {
        let mine = self.typical_latency(endpoint, class)?;
        let fastest_peer = (0..self.endpoints.len())
            .filter(|&i| i != endpoint)
            .filter_map(|i| self.typical_latency(i, class))
            .reduce(f64::min)
            .unwrap_or(mine);
        Some(mine + fastest_peer)
    }

    /// How long a retry needs left before its deadline to be worth sending:
    /// the typical latency (ms) of the quickest endpoint it could go to
    /// (`endpoint`'s own when given). A retry sent with less left is most
    /// likely cut off by the deadline: it spends quota and the node's
    /// work for an answer nobody waits for (a new user's fleet sent one 45
    /// ms before its deadline). `None`: no latency known, nothing to judge by.
    pub fn retry_needs(&self, endpoint: Option<usize>, class: MethodClass) -> Option<Duration> {
        let typical = match endpoint {
            Some(e) => self.typical_latency(e, class),
            None => (0..self.endpoints.len()).filter_map(|i| self.typical_latency(i, class)).reduce(f64::min),
        }?;
        Some(Duration::from_secs_f64(typical.max(0.0) / 1000.0))
    }

    /// `endpoint`'s recent typical latency for `class` (ms): this relayer's
    /// own once its tail is trusted, else the realm's, else `None`.
    fn typical_latency(&self, endpoint: usize, class: MethodClass) -> Option<f64> {
        let ep = self.endpoints.get(endpoint)?;
        let own = ep.trusted_tail(class).and(ep.latency[class as usize].value());
        own.or_else(|| self.chains.get(endpoint).and_then(|record| record.typical(class as usize)))
    }

    /// Whether `endpoint` has had attempts of `class` out (any realm
    /// member's) and answered none of them, at `now`, for at least half of
    /// what the primary a hedge would race has `waited` and past the
    /// endpoint's own slow end: it is as slow right now as the attempt the
    /// hedge would rescue. When every endpoint is slower than its tail
    /// alike, the slowdown is not the primary's (a busy chain, the user's
    /// network, a fleet-wide overload) and a hedge only adds load. A
    /// healthy peer of a hung node keeps answering, so it is never silent.
    pub fn too_silent_to_hedge_onto(
        &self,
        endpoint: usize,
        class: MethodClass,
        waited: Duration,
        now: Instant,
    ) -> bool {
        let Some(record) = self.chains.get(endpoint) else { return false };
        let silent = record.silent_for(class as usize, now);
        let own = self.endpoints.get(endpoint).and_then(|e| e.trusted_tail(class));
        let tail = own.into_iter().chain(record.tail(class as usize)).fold(0.0, f64::max);
        !silent.is_zero() && silent >= waited / 2 && silent.as_secs_f64() * 1000.0 >= tail
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
    /// what hedging is for, not a fault. Nor is an attempt abandoned within
    /// the wire's batch wait: it may never have left this relayer's queue
    /// (with `batch.waitMs` 300 and hedges after 100 ms, a healthy 20 ms
    /// node's breaker opened during warm-up on such losses).
    pub fn hedge_loss_is_failure(&self, endpoint: usize, class: MethodClass, elapsed: Duration) -> bool {
        match self.endpoints.get(endpoint).and_then(|e| e.trusted_tail(class)) {
            None => elapsed > self.batch_wait,
            Some(tail_ms) => elapsed.as_secs_f64() * 1000.0 > 2.0 * tail_ms,
        }
    }
}
