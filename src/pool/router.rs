//! Endpoint selection and reservation (DESIGN §3, "Routing").
//!
//! Per attempt:
//! 1. keep endpoints that serve this chain (chain id not mismatched), this
//!    method (allow/deny) and, for `latest` reads, fresh data (not lagging
//!    more than `max_lag_blocks` behind the best head, while an endpoint in
//!    sync is in service for the read: `lag.rs`);
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

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use super::endpoint::{ChainStatus, EndpointState};
use super::options::{EndpointSpec, PoolOptions, Strategy};
use super::outage::{OutageProbes, Pacer, Recovery};
pub use super::route_request::RouteRequest;
use super::strategy::{self, StrategyState};
use crate::coord::head_rounds::HeadRounds;
use crate::coord::realm::{EndpointRecord, Realm, SharedGroup};
use crate::policy::breaker::{BreakerState, Transition};
use crate::policy::head_poll::HeadPoll;
use crate::policy::quota::{QuotaConfig, QuotaDenied, QuotaGroup};
use crate::rpc::methods::{MethodClass, CLASSES};
use crate::runtime::notify::Notify;
use crate::time::Instant;

/// A head claim more than this far beyond the best known head is ignored.
const MAX_HEAD_JUMP: u64 = 10_000;
/// How long a lag observation keeps an endpoint away from `latest` reads.
const LAG_MEMORY: Duration = Duration::from_secs(30);
/// How long an endpoint that refused our credentials stays out of service
/// (then one request tries it again; a key fixed meanwhile brings it back).
pub const REFUSED_FOR: Duration = Duration::from_secs(600);
/// When only concurrency blocks, look again after this long (or when a slot frees).
const CONCURRENCY_RECHECK: Duration = Duration::from_millis(50);
/// When some endpoint waits for a slot, look again at most this long after
/// (or when a slot frees), whatever the others wait for.
const SLOT_RECHECK: Duration = Duration::from_millis(250);
/// The attempt timeout assumed until the pipeline says its own.
const DEFAULT_ATTEMPT_CEILING: Duration = Duration::from_secs(10);

/// A quota group of this relayer alone (until a realm shares it).
fn local_group(config: QuotaConfig, now: Instant) -> SharedGroup {
    Rc::new(std::cell::RefCell::new(QuotaGroup::new(config, now)))
}

/// One quota group.
pub struct GroupState {
    /// Its name (`""` for an endpoint's implicit own group).
    pub name: String,
    /// The policy state, shared with the realm's other members that use
    /// the same group (`coord::realm`).
    pub quota: SharedGroup,
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
    /// When they were charged (an answer moves them in a plan kept per second).
    pub charged_at: Instant,
    /// The endpoint's chain id must be checked before the request.
    pub check_chain: bool,
    /// This is the pool's one early probe of a total outage.
    pub outage_probe: bool,
    /// The method class of the attempt (the endpoint's silence is kept per class).
    pub class: MethodClass,
}

/// The router's answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Selection {
    /// Go.
    Reserved(Reservation),
    /// Nothing available now; ask again at `until`, or when a slot frees.
    Wait {
        /// When something frees up by the clock; `None`: only a freed slot
        /// (an attempt or probe ending) can, so a waiter sleeps on the slot
        /// signal alone instead of re-checking on a timer (with 100,000
        /// waiters, a periodic re-check of each is the whole CPU).
        until: Option<Instant>,
        /// Every candidate is in a quota cooldown or ejection, or out of
        /// its plan's CU.
        quota: bool,
        /// Recovery pacing holds it (`outage.rs`): the request keeps a
        /// place in the pacer's line while it waits.
        paced: bool,
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
    chain_recheck: Duration,
    max_lag: u64,
    max_retry_after: Duration,
    outage: OutageProbes,
    adaptive_timeout: Option<(f64, Duration)>,
    /// The attempt timeout of endpoints without one of their own.
    attempt_ceiling: Duration,
    /// How long an attempt may sit in the wire's batch queue before it is
    /// sent (`batch.waitMs`; zero without a set wait).
    batch_wait: Duration,
    /// Demand and recovery pacing: the realm's when in one (`router/shared.rs`).
    pacer: Rc<RefCell<Pacer>>,
    /// Head-poll rounds: the realm's when in one (`coord/head_rounds.rs`).
    head_rounds: Rc<RefCell<HeadRounds>>,
    /// The rounds' realm key while in a realm: rounds polled here are told
    /// to the other realms under it.
    head_rounds_key: Option<u64>,
    /// The rounds' generation whose heads this router has taken in.
    heads_seen: u64,
    /// This router is polling the current round.
    polling: bool,
    /// Each endpoint's realm key (empty outside a realm): heads are
    /// published under them.
    endpoint_keys: Vec<Option<u64>>,
    /// In a realm: each quota group's and each endpoint breaker's realm
    /// key, and the news for other realms not passed on yet (`coord::news`).
    group_keys: Vec<Option<u64>>,
    breaker_keys: Vec<Option<u64>>,
    news: Vec<crate::coord::news::News>,
    /// Per endpoint, its chain record: the realm's when in one, else its own.
    chains: Vec<Rc<EndpointRecord>>,
    /// Per endpoint and method class, this router's attempts out (what it
    /// counts in its record; taken back when it leaves the realm).
    attempts_out: Vec<[u32; CLASSES]>,
    /// The realm's wake-up, when in one (`router/shared.rs`).
    wake: Option<Rc<Notify>>,
    /// In a realm: a selection found every endpoint open since the pool
    /// last had one that was not (`router/shared.rs`).
    outage_seen: bool,
    /// Mismatches found by adopting another member's chain check during a
    /// selection, for the pipeline to tell this relayer's listeners.
    adopted: Vec<RouterEvent>,
    /// Calls of `select` so far: the unit of the pool's per-request work
    /// (the complexity test counts it; `stats()` could show it).
    pub selections: u64,
}

impl Router {
    /// Builds the live state for validated specs and options, shared with nobody.
    pub fn new(specs: Vec<EndpointSpec>, options: &PoolOptions, max_retry_after: Duration, now: Instant) -> Self {
        Self::in_realm(specs, options, max_retry_after, now, None)
    }

    /// Builds the live state; with a realm, quota groups and chain records
    /// are shared with the realm's other members (`router/shared.rs`).
    pub fn in_realm(
        specs: Vec<EndpointSpec>,
        options: &PoolOptions,
        max_retry_after: Duration,
        now: Instant,
        realm: Option<&Realm>,
    ) -> Self {
        let mut groups: Vec<GroupState> = options
            .quota_groups
            .iter()
            .map(|(name, q)| GroupState { name: name.clone(), quota: local_group(*q, now) })
            .collect();
        // A pool of one has no other head to compare its own with.
        let comparable = specs.iter().filter(|s| s.serves("eth_blockNumber")).count() >= 2;
        let head_poll = HeadPoll::new(if comparable { options.head_poll } else { Duration::ZERO }, now);
        let endpoints: Vec<EndpointState> = specs
            .into_iter()
            .map(|spec| {
                let named = spec.quota_group.as_ref().and_then(|g| groups.iter().position(|s| &s.name == g));
                let group = named.unwrap_or_else(|| {
                    let own = QuotaConfig { cooldown_max: max_retry_after, ..QuotaConfig::default() };
                    groups.push(GroupState { name: String::new(), quota: local_group(own, now) });
                    groups.len() - 1
                });
                EndpointState::new(spec, group, options, now)
            })
            .collect();
        let chains = endpoints.iter().map(|_| Rc::default()).collect();
        let attempts_out = vec![[0; CLASSES]; endpoints.len()];
        let mut router = Router {
            endpoints,
            groups,
            chains,
            attempts_out,
            wake: None,
            outage_seen: false,
            adopted: Vec::new(),
            strategy: options.strategy,
            cursor: 0,
            sticky: None,
            expected_chain: options.chain_id,
            chain_recheck: options.chain_recheck,
            max_lag: options.max_lag_blocks,
            max_retry_after,
            outage: OutageProbes::new(&options.breaker, now),
            adaptive_timeout: options.adaptive_timeout,
            attempt_ceiling: DEFAULT_ATTEMPT_CEILING,
            batch_wait: options.batch.map_or(Duration::ZERO, |b| b.wait),
            pacer: Rc::new(RefCell::new(Pacer::new(now))),
            head_rounds: Rc::new(RefCell::new(HeadRounds::new(head_poll, now))),
            head_rounds_key: None,
            heads_seen: 0,
            polling: false,
            endpoint_keys: Vec::new(),
            group_keys: Vec::new(),
            breaker_keys: Vec::new(),
            news: Vec::new(),
            selections: 0,
        };
        if let Some(realm) = realm {
            router.join_realm(realm, now);
        }
        router
    }

    /// The attempt timeout for `class` on `endpoint` (adaptive, capped at
    /// `ceiling`), from its [reference tail](Router::reference_tail): a node
    /// that hangs from the start must not cost the full timeout when its
    /// neighbours answer in milliseconds.
    pub fn attempt_timeout(&self, endpoint: usize, class: MethodClass, ceiling: Duration) -> Duration {
        crate::pool::endpoint::adaptive_timeout(self.reference_tail(endpoint, class), ceiling, self.adaptive_timeout)
    }

    /// Whether what goes to `endpoint` is paced by its quota group's plan
    /// (configured or learned): a retry after its 429 then waits for the
    /// group and pays the plan again, so it cannot add load past the plan.
    pub fn paced_by_plan(&self, endpoint: usize) -> bool {
        self.endpoints.get(endpoint).is_some_and(|e| self.groups[e.group].quota.borrow().paced())
    }

    /// The slow-end latency that stands for `endpoint`: its own trusted
    /// tail; with no history of its own, the slowest trusted tail of its
    /// peers; `None` when nobody has history (or no such endpoint).
    pub fn reference_tail(&self, endpoint: usize, class: MethodClass) -> Option<f64> {
        let own = self.endpoints.get(endpoint)?.trusted_tail(class);
        own.or_else(|| self.endpoints.iter().filter_map(|e| e.trusted_tail(class)).reduce(f64::max))
    }
}

pub mod backlog;
#[cfg(test)]
mod cost_tests;
mod early_probe;
mod fleet_probe;
mod heads;
mod lag;
#[cfg(test)]
mod lag_tests;
pub use heads::{HeadRound, PollTurn};
#[cfg(test)]
mod head_poll_fleet_tests;
#[cfg(test)]
mod heads_tests;
mod hedging;
#[cfg(test)]
mod hedging_tests;
#[cfg(test)]
mod news_tests;
mod outcomes;
mod pacing;
#[cfg(test)]
mod pacing_tests;
#[cfg(test)]
mod probe_time_tests;
#[cfg(test)]
mod quiet_check_tests;
mod reserve;
mod select;
#[cfg(test)]
mod select_tests;
mod shared;
#[cfg(test)]
mod shared_tests;
#[cfg(test)]
mod slow_start_tests;
#[cfg(test)]
mod tests;
