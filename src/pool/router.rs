//! Endpoint selection and reservation (DESIGN §3, "Routing").
//!
//! Per attempt:
//! 1. keep endpoints that serve this chain (chain id not mismatched), this
//!    method (allow/deny) and, for `latest` reads, fresh data (not lagging
//!    more than `max_lag_blocks` behind the best head);
//! 2. drop those that are unavailable now: breaker Open (or HalfOpen with
//!    every probe permit taken), resting after a Retry-After, quota group
//!    cooling or out of compute units, concurrency full (scaled by slow
//!    start) — remembering when the earliest of them frees up;
//! 3. apply the strategy to what is left (after a failure, endpoints not
//!    yet tried in this request come first);
//! 4. reserve atomically — breaker permit, quota charge, in-flight slot —
//!    with no `.await` anywhere in here.
//!
//! When every serving endpoint is Open (a total outage), ejecting them all
//! protects nothing: the router hands out **early probes**, one at a time
//! per endpoint at jittered exponential spacing, and otherwise tells the
//! caller to wait until the earliest probe, so requests ride out a short
//! outage instead of failing for the whole open time.

use std::time::Duration;

use super::endpoint::{ChainStatus, EndpointState};
use super::options::{EndpointSpec, PoolOptions, Strategy};
use crate::policy::breaker::{Admission, BreakerState, Transition};
use crate::policy::quota::{QuotaConfig, QuotaDenied, QuotaGroup};
use crate::policy::slow_start::RateMeter;
use crate::policy::token_bucket::TokenBucket;
use crate::policy::{ErrorClass, Verdict};
use crate::rpc::methods::MethodClass;
use crate::time::Instant;

/// A head claim more than this far beyond the best known head is ignored.
const MAX_HEAD_JUMP: u64 = 10_000;
/// How long a lag observation keeps an endpoint away from `latest` reads.
const LAG_MEMORY: Duration = Duration::from_secs(30);
/// When only concurrency blocks, look again after this long (or when a slot frees).
const CONCURRENCY_RECHECK: Duration = Duration::from_millis(50);

/// One quota group.
pub struct GroupState {
    /// Its name (`""` for an endpoint's implicit own group).
    pub name: String,
    /// The policy state.
    pub quota: QuotaGroup,
}

/// What one attempt wants.
#[derive(Clone, Copy, Debug)]
pub struct RouteRequest<'a> {
    /// JSON-RPC method.
    pub method: &'a str,
    /// Its latency class.
    pub class: MethodClass,
    /// Its default cost (endpoints may override).
    pub cost: f64,
    /// Whether it reads at `latest` (freshness applies).
    pub wants_latest: bool,
    /// Endpoints already tried in this request.
    pub tried: &'a [bool],
    /// Only endpoints not yet tried (capability failover).
    pub only_untried: bool,
    /// The endpoint that just failed, if any.
    pub after: Option<usize>,
}

/// A reserved attempt. Must be given back through [`Router::complete`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reservation {
    /// The endpoint.
    pub endpoint: usize,
    /// A breaker probe permit (HalfOpen or early probe) is held.
    pub probe: bool,
    /// Compute units charged.
    pub cost: f64,
    /// The endpoint's chain id must be checked before the request.
    pub check_chain: bool,
    /// This is the pool's one early probe of a total outage.
    pub outage_probe: bool,
}

/// The router's answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Selection {
    /// Go.
    Reserved(Reservation),
    /// Nothing available now; ask again at `until` (or when a slot frees).
    Wait {
        /// When something frees up.
        until: Instant,
        /// Every candidate is in a quota cooldown or ejection.
        quota: bool,
    },
    /// No endpoint can ever serve this request.
    NoEndpoint,
}

/// Something observers should hear about.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RouterEvent {
    /// A breaker changed state.
    Breaker {
        /// The endpoint.
        endpoint: usize,
        /// The change.
        transition: Transition,
    },
    /// A quota group was limited.
    RateLimited {
        /// The endpoint that got the signal.
        endpoint: usize,
        /// Its group.
        group: usize,
        /// When the group may be used again.
        until: Instant,
        /// A daily/monthly limit.
        long_horizon: bool,
    },
    /// An endpoint serves another chain and is disabled.
    ChainMismatch {
        /// The endpoint.
        endpoint: usize,
        /// The chain the pool serves.
        expected: u64,
        /// What the endpoint said.
        got: u64,
    },
}

/// All endpoints and quota groups of one relayer.
pub struct Router {
    /// Endpoint states, in configuration order.
    pub endpoints: Vec<EndpointState>,
    /// Quota groups: the named ones first, then one implicit group per
    /// endpoint without a named group.
    pub groups: Vec<GroupState>,
    strategy: Strategy,
    cursor: usize,
    sticky: Option<usize>,
    expected_chain: Option<u64>,
    max_lag: u64,
    max_retry_after: Duration,
    outage: OutageProbes,
    arrivals: RateMeter,
    recovery: Option<Recovery>,
}

/// Pacing of the whole pool after a total outage: every client held
/// requests while the fleet was down, and releasing them at once would
/// knock it over again. For a while the pool's attempts are capped at 1.3×
/// its own arrival rate before the outage (at least `RECOVERY_MIN_RPS`);
/// the cap goes once nothing was held back by it for two seconds. Because
/// every client caps itself relative to its own demand, a fleet of clients
/// together stays within 1.5× of the fleet's demand.
#[derive(Clone, Debug)]
struct Recovery {
    bucket: TokenBucket,
    started: Instant,
    denied_at: Option<Instant>,
}

/// Lowest pool rate after a total outage (a quiet wallet still gets a
/// request through every few seconds).
const RECOVERY_MIN_RPS: f64 = 0.2;
/// Pool rate after a total outage, relative to the arrival rate before it
/// (room to drain the held requests without exceeding 1.5× in total, with
/// the arrival estimate's noise).
const RECOVERY_FACTOR: f64 = 1.3;
/// Longest recovery pacing, whatever happens.
const RECOVERY_MAX: Duration = Duration::from_secs(60);

/// The pool-wide schedule of early probes during a total outage: one probe
/// in flight at a time for the whole pool (not per endpoint, or N endpoints
/// would multiply the load of a dead fleet by N), spaced by a jittered,
/// doubling interval, rotating over endpoints by their own probe times.
#[derive(Clone, Copy, Debug)]
struct OutageProbes {
    next_at: Instant,
    spacing: Duration,
    base: Duration,
    max: Duration,
    jitter: f64,
    in_flight: bool,
}

impl OutageProbes {
    fn granted(&mut self, now: Instant, draw: f64) {
        self.in_flight = true;
        let factor = 1.0 - self.jitter + 2.0 * self.jitter * crate::policy::bound(draw, 0.0, 1.0);
        let spacing = Duration::try_from_secs_f64(self.spacing.as_secs_f64() * factor).unwrap_or(self.spacing);
        self.next_at = now + spacing;
        self.spacing = self.spacing.saturating_mul(2).min(self.max);
    }

    fn reset(&mut self) {
        self.spacing = self.base;
    }
}

impl Router {
    /// Builds the live state for validated specs and options.
    pub fn new(specs: Vec<EndpointSpec>, options: &PoolOptions, max_retry_after: Duration, now: Instant) -> Self {
        let mut groups: Vec<GroupState> = options
            .quota_groups
            .iter()
            .map(|(name, q)| GroupState { name: name.clone(), quota: QuotaGroup::new(*q, now) })
            .collect();
        let endpoints = specs
            .into_iter()
            .map(|spec| {
                let named = spec.quota_group.as_ref().and_then(|g| groups.iter().position(|s| &s.name == g));
                let group = named.unwrap_or_else(|| {
                    let own = QuotaConfig { cooldown_max: max_retry_after, ..QuotaConfig::default() };
                    groups.push(GroupState { name: String::new(), quota: QuotaGroup::new(own, now) });
                    groups.len() - 1
                });
                EndpointState::new(spec, group, options, now)
            })
            .collect();
        Router {
            endpoints,
            groups,
            strategy: options.strategy,
            cursor: 0,
            sticky: None,
            expected_chain: options.chain_id,
            max_lag: options.max_lag_blocks,
            max_retry_after,
            outage: OutageProbes {
                next_at: now,
                spacing: options.breaker.early_probe_base,
                base: options.breaker.early_probe_base,
                // Capped low: a dead fleet costs one probe per few seconds per client,
                // and a fleet that comes back is noticed within seconds.
                max: options.breaker.open_base.min(options.breaker.early_probe_base * 16),
                // Wide jitter: clients that lost the whole fleet at the same
                // moment must not all come back at the same moment.
                jitter: options.breaker.jitter.max(0.5),
                in_flight: false,
            },
            arrivals: RateMeter::new(now),
            recovery: None,
        }
    }

    /// Counts one logical request (the demand recovery pacing is relative to).
    pub fn note_arrival(&mut self, now: Instant) {
        if self.recovery.is_none() {
            self.arrivals.record(now);
        }
    }

    /// Recovery pacing: `Ok` if one more attempt fits, else the wait.
    fn recovery_check(&mut self, now: Instant) -> Result<(), Duration> {
        let Some(rec) = self.recovery.as_mut() else { return Ok(()) };
        let calm = rec.denied_at.is_none_or(|t| now.saturating_since(t) >= Duration::from_secs(2));
        if (calm && now.saturating_since(rec.started) >= Duration::from_secs(2))
            || now.saturating_since(rec.started) >= RECOVERY_MAX
        {
            self.recovery = None;
            return Ok(());
        }
        let verdict = rec.bucket.check(now, 1.0);
        if verdict.is_err() {
            rec.denied_at = Some(now);
        }
        verdict
    }

    /// The best head among endpoints on the right chain.
    pub fn best_head(&self) -> Option<u64> {
        self.endpoints.iter().filter(|e| !matches!(e.chain, ChainStatus::Mismatch(_))).filter_map(|e| e.head).max()
    }

    /// Selects and reserves an endpoint for one attempt. `draws` are two
    /// uniform numbers in `[0, 1)` for the randomised strategies and probes.
    pub fn select(&mut self, now: Instant, req: &RouteRequest<'_>, draws: (f64, f64)) -> Selection {
        if let Err(wait) = self.recovery_check(now) {
            return Selection::Wait { until: now + wait, quota: false };
        }
        let mut eligible: Vec<usize> = Vec::new();
        let mut earliest: Option<Instant> = None;
        let mut serving = 0usize;
        let mut all_open = true;
        let mut all_quota = true;
        for i in 0..self.endpoints.len() {
            let ep = &mut self.endpoints[i];
            if matches!(ep.chain, ChainStatus::Mismatch(_))
                || !ep.spec.serves(req.method)
                || (req.only_untried && req.tried.get(i).copied().unwrap_or(false))
            {
                continue;
            }
            if req.wants_latest && ep.lagging(self.max_lag, now, LAG_MEMORY) {
                continue;
            }
            serving += 1;
            let cost = ep.spec.cost(req.method, req.cost);
            let mut until: Option<Instant> = None;
            let mut quota_blocked = false;
            match ep.breaker.state(now) {
                BreakerState::Open { until: u } => until = Some(u),
                BreakerState::HalfOpen => {
                    all_open = false;
                    if ep.warm.is_none() {
                        // Open turned HalfOpen by the clock: pace its probes too.
                        ep.begin_warmup(now);
                    }
                    if ep.breaker.probes_in_flight() >= ep.breaker.probe_permits() {
                        until = Some(now + CONCURRENCY_RECHECK);
                    }
                }
                BreakerState::Closed => all_open = false,
            }
            if ep.rest_until > now {
                until = Some(until.map_or(ep.rest_until, |u| u.max(ep.rest_until)));
            }
            match self.groups[ep.group].quota.check(now, cost) {
                Ok(()) => {}
                Err(QuotaDenied::Cooling(t)) => {
                    quota_blocked = true;
                    until = Some(until.map_or(t, |u| u.max(t)));
                }
                Err(QuotaDenied::Exhausted(w)) => until = Some(until.map_or(now + w, |u| u.max(now + w))),
            }
            if ep.in_flight >= ep.concurrency_limit(now) {
                until = Some(until.unwrap_or(now + CONCURRENCY_RECHECK));
            }
            if let Err(wait) = ep.warm_check(now) {
                until = Some(until.map_or(now + wait, |u| u.max(now + wait)));
            }
            if !quota_blocked {
                all_quota = false;
            }
            match until {
                None => eligible.push(i),
                Some(u) => earliest = Some(earliest.map_or(u, |e| e.min(u))),
            }
        }
        if serving == 0 {
            return Selection::NoEndpoint;
        }
        if eligible.is_empty() {
            if all_open {
                if let Some(sel) = self.early_probe(now, req, draws.0) {
                    return sel;
                }
            }
            let until = earliest.unwrap_or(now + CONCURRENCY_RECHECK);
            return Selection::Wait { until, quota: all_quota };
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
        Selection::Wait { until: earliest.unwrap_or(now + CONCURRENCY_RECHECK), quota: false }
    }

    /// Total outage: the Open endpoint whose early probe is due goes first.
    fn early_probe(&mut self, now: Instant, req: &RouteRequest<'_>, draw: f64) -> Option<Selection> {
        let mut candidates: Vec<usize> = (0..self.endpoints.len())
            .filter(|&i| {
                let ep = &self.endpoints[i];
                !matches!(ep.chain, ChainStatus::Mismatch(_))
                    && ep.spec.serves(req.method)
                    && ep.rest_until <= now
                    && self.groups[ep.group].quota.check(now, ep.spec.cost(req.method, req.cost)).is_ok()
            })
            .collect();
        candidates.sort_by_key(|&i| self.endpoints[i].breaker.early_probe_at());
        let first = *candidates.first()?;
        if self.outage.in_flight {
            // The probe in flight decides; its completion wakes the waiters.
            return Some(Selection::Wait { until: now + self.outage.spacing, quota: false });
        }
        let due = self.endpoints[first].breaker.early_probe_at().max(self.outage.next_at);
        if due > now {
            return Some(Selection::Wait { until: due, quota: false });
        }
        for i in candidates {
            if let Admission::Allowed { probe } = self.endpoints[i].breaker.try_early_probe(now, draw) {
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

    /// Orders candidates by the strategy (the first reservable one wins).
    fn rank(&mut self, pool: &[usize], req: &RouteRequest<'_>, now: Instant, draws: (f64, f64)) -> Vec<usize> {
        let mut order = pool.to_vec();
        let n = self.endpoints.len().max(1);
        match self.strategy {
            Strategy::RoundRobin => {
                let start = req.after.map_or(self.cursor, |a| (a + 1) % n);
                order.sort_by_key(|&i| (i + n - start) % n);
                if let Some(&first) = order.first() {
                    self.cursor = (first + 1) % n;
                }
            }
            Strategy::Priority => order.sort_by_key(|&i| (self.endpoints[i].spec.priority, i)),
            Strategy::Sticky => {
                order.sort_by_key(|&i| (Some(i) != self.sticky, self.endpoints[i].spec.priority, i));
            }
            Strategy::Weighted => {
                let weights: Vec<f64> = order
                    .iter()
                    .map(|&i| self.endpoints[i].spec.weight * self.endpoints[i].slow_start.factor(now))
                    .collect();
                let pick = weighted_pick(&weights, draws.0);
                order.swap(0, pick);
            }
            Strategy::Latency => {
                if order.len() >= 2 {
                    let a = ((draws.0 * order.len() as f64) as usize).min(order.len() - 1);
                    let mut b = ((draws.1 * (order.len() - 1) as f64) as usize).min(order.len() - 2);
                    if b >= a {
                        b += 1;
                    }
                    let score = |ep: &mut EndpointState| {
                        let lat = ep.latency_ms(req.class).unwrap_or(0.0) + 1.0;
                        lat * f64::from(ep.in_flight + 1) / ep.slow_start.factor(now)
                    };
                    let (ia, ib) = (order[a], order[b]);
                    let (sa, sb) = (score(&mut self.endpoints[ia]), score(&mut self.endpoints[ib]));
                    let (win, lose) = if sb < sa { (b, a) } else { (a, b) };
                    let (w, l) = (order[win], order[lose]);
                    order.retain(|&i| i != w && i != l);
                    order.insert(0, l);
                    order.insert(0, w);
                }
            }
        }
        order
    }

    /// Reserves breaker permit, quota and a concurrency slot, or nothing.
    fn reserve(&mut self, i: usize, now: Instant, req: &RouteRequest<'_>, early_probe: bool) -> Option<Reservation> {
        let ep = &mut self.endpoints[i];
        let cost = ep.spec.cost(req.method, req.cost);
        let probe = if early_probe {
            true
        } else {
            match ep.breaker.try_acquire(now) {
                Admission::Allowed { probe } => probe,
                Admission::Rejected { .. } => return None,
            }
        };
        let group = &mut self.groups[ep.group];
        if group.quota.charge(now, cost).is_err() {
            ep.breaker.on_neutral(probe);
            return None;
        }
        ep.in_flight += 1;
        ep.warm_take(now);
        if let Some(rec) = self.recovery.as_mut() {
            let _ = rec.bucket.try_take(now, 1.0);
        }
        if self.strategy == Strategy::Sticky {
            self.sticky = Some(i);
        }
        Some(Reservation {
            endpoint: i,
            probe,
            cost,
            check_chain: ep.chain == ChainStatus::Unknown,
            outage_probe: false,
        })
    }

    /// Gives a reservation back with the attempt's verdict.
    pub fn complete(
        &mut self,
        now: Instant,
        r: &Reservation,
        verdict: &Verdict,
        class: MethodClass,
        elapsed: Duration,
        draw: f64,
    ) -> Vec<RouterEvent> {
        let mut events = Vec::new();
        if r.outage_probe {
            self.outage.in_flight = false;
            if matches!(verdict.class, ErrorClass::Success | ErrorClass::AlreadyKnown) {
                let rate = (RECOVERY_FACTOR * self.arrivals.rate()).max(RECOVERY_MIN_RPS);
                self.recovery =
                    Some(Recovery { bucket: TokenBucket::new(rate, 1.0, now, false), started: now, denied_at: None });
            }
        }
        let Some(ep) = self.endpoints.get_mut(r.endpoint) else { return events };
        ep.in_flight = ep.in_flight.saturating_sub(1);
        let transition = match verdict.class {
            ErrorClass::Success | ErrorClass::AlreadyKnown => {
                ep.successes += 1;
                if ep.breaker.state(now) == BreakerState::Closed {
                    ep.meter.record(now);
                }
                ep.observe_latency(class, elapsed);
                self.groups[ep.group].quota.on_success(now, draw);
                ep.breaker.on_success(now, r.probe)
            }
            ErrorClass::RateLimited => {
                ep.breaker.on_neutral(r.probe);
                let until =
                    self.groups[ep.group].quota.on_limited(now, verdict.retry_after, verdict.long_horizon, draw);
                events.push(RouterEvent::RateLimited {
                    endpoint: r.endpoint,
                    group: ep.group,
                    until,
                    long_horizon: verdict.long_horizon,
                });
                None
            }
            _ if verdict.health_failure => {
                ep.failures += 1;
                ep.observe_latency(class, elapsed);
                ep.breaker.on_failure(now, r.probe, draw)
            }
            _ => {
                ep.breaker.on_neutral(r.probe);
                None
            }
        };
        if verdict.class != ErrorClass::RateLimited {
            if let Some(after) = verdict.retry_after {
                ep.rest_until = ep.rest_until.max(now + after.min(self.max_retry_after));
            }
        }
        if let Some(t) = transition {
            // Slow start begins with the first proof of life (HalfOpen), so
            // the probes that close the breaker are paced too.
            if t.to == BreakerState::HalfOpen || (t.to == BreakerState::Closed && ep.warm.is_none()) {
                ep.begin_warmup(now);
            }
            if !matches!(t.to, BreakerState::Open { .. }) {
                self.outage.reset();
            }
            events.push(RouterEvent::Breaker { endpoint: r.endpoint, transition: t });
        }
        events
    }

    /// Records an endpoint's `eth_chainId`; a mismatch disables it.
    pub fn chain_checked(&mut self, endpoint: usize, chain_id: u64) -> Option<RouterEvent> {
        let expected = *self.expected_chain.get_or_insert(chain_id);
        let ep = self.endpoints.get_mut(endpoint)?;
        if chain_id == expected {
            ep.chain = ChainStatus::Verified;
            None
        } else {
            ep.chain = ChainStatus::Mismatch(chain_id);
            Some(RouterEvent::ChainMismatch { endpoint, expected, got: chain_id })
        }
    }

    /// Records a block number an endpoint reported as its head.
    pub fn observe_head(&mut self, endpoint: usize, block: u64, now: Instant) {
        let best = self.best_head();
        if let Some(ep) = self.endpoints.get_mut(endpoint) {
            ep.observe_head(block, best, MAX_HEAD_JUMP, now);
        }
    }
}

/// Index picked with probability proportional to its weight.
fn weighted_pick(weights: &[f64], draw: f64) -> usize {
    let total: f64 = weights.iter().filter(|w| w.is_finite() && **w > 0.0).sum();
    if total <= 0.0 {
        return 0;
    }
    let mut target = crate::policy::bound(draw, 0.0, 1.0) * total;
    for (i, w) in weights.iter().enumerate() {
        let w = if w.is_finite() && *w > 0.0 { *w } else { 0.0 };
        if target < w {
            return i;
        }
        target -= w;
    }
    weights.len() - 1
}

#[cfg(test)]
mod tests;
