//! Pool options and endpoint specifications, validated into typed errors
//! naming the option (`upstreams[1].weight`, `breaker.probePermits`…).

use std::time::Duration;

use crate::config_error::ConfigError;
use crate::policy::breaker::BreakerConfig;
use crate::policy::quota::QuotaConfig;
use crate::policy::slow_start::SlowStartConfig;
use crate::policy::RetryBudgetConfig;
use crate::redact::EndpointUrl;

/// The shortest head-poll interval: faster than any chain makes blocks,
/// and it bounds the background load a typo could cause.
const MIN_HEAD_POLL: Duration = Duration::from_millis(100);

/// Adaptive attempt timeouts by default: 5 × an endpoint's slow-end
/// latency, never below 2 s.
pub const ADAPTIVE_TIMEOUT: (f64, Duration) = (5.0, Duration::from_secs(2));

/// How the pool picks among eligible endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Rotate through eligible endpoints.
    RoundRobin,
    /// Lowest `priority` first; spill to the next when it is unavailable or at budget.
    #[default]
    Priority,
    /// Random, proportional to `weight` × slow-start factor.
    Weighted,
    /// Power of two choices on EWMA latency (per method class) × (in-flight + 1).
    Latency,
    /// Stay on one endpoint while it is eligible; when it is not, bind to
    /// the best eligible one by priority and stay there (no automatic
    /// return, so a session sees one node's view of the chain).
    Sticky,
}

impl Strategy {
    /// Parses the JS spelling.
    pub fn parse(name: &str) -> Result<Self, ConfigError> {
        Ok(match name {
            "roundRobin" => Strategy::RoundRobin,
            "priority" => Strategy::Priority,
            "weighted" => Strategy::Weighted,
            "latency" => Strategy::Latency,
            "sticky" => Strategy::Sticky,
            _ => {
                return Err(ConfigError::new(
                    "strategy",
                    "must be one of roundRobin, priority, weighted, latency, sticky",
                ))
            }
        })
    }
}

/// Response cache settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CacheConfig {
    /// Whether results are cached at all.
    pub enabled: bool,
    /// Lifetime of head-dependent results (`latest`).
    pub latest_ttl: Duration,
    /// Lifetime of results that cannot change.
    pub immutable_ttl: Duration,
    /// Entry limit (oldest evicted first).
    pub max_entries: usize,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            enabled: true,
            latest_ttl: Duration::from_millis(1000),
            immutable_ttl: Duration::from_secs(300),
            max_entries: 1000,
        }
    }
}

/// Everything about the pool beyond the retry policy.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolOptions {
    /// Selection strategy.
    pub strategy: Strategy,
    /// Breaker tuning, per endpoint.
    pub breaker: BreakerConfig,
    /// Slow-start tuning.
    pub slow_start: SlowStartConfig,
    /// Named quota groups.
    pub quota_groups: Vec<(String, QuotaConfig)>,
    /// The expected chain id; `None` means "the first one seen".
    pub chain_id: Option<u64>,
    /// Endpoints this many blocks behind the best head are skipped for `latest`.
    pub max_lag_blocks: u64,
    /// Requests that may wait for an endpoint at once; beyond, fail fast.
    pub max_queue: u32,
    /// Share identical in-flight reads.
    pub dedup: bool,
    /// Response cache.
    pub cache: CacheConfig,
    /// Check `eth_chainId` before the first request to each endpoint.
    pub check_chain: bool,
    /// Check it again this long after the last check (a node behind a load
    /// balancer can be swapped for one on another chain mid-session);
    /// zero: never.
    pub chain_recheck: Duration,
    /// Adaptive attempt timeouts: `(multiplier, floor)` over each endpoint's
    /// slow-end latency; `None` uses the fixed timeout.
    pub adaptive_timeout: Option<(f64, Duration)>,
    /// Hedged reads; `None` never hedges.
    pub hedge: Option<HedgeConfig>,
    /// Auto-batching on the wire (`policy::wire_batch`); `None` sends
    /// every attempt alone.
    pub batch: Option<crate::policy::wire_batch::WireBatchConfig>,
    /// How often, while reads that want `latest` flow, every endpoint is
    /// asked for its head in the background (freshness needs heads the app
    /// may never ask for); zero: never (see `policy/head_poll.rs`).
    pub head_poll: Duration,
    /// Share quota groups and chain checks with the other relayers of this
    /// realm that use the same endpoints (`coord`); `false`: learn alone.
    pub share_in_realm: bool,
    /// A realm-wide budget for extra attempts (retries, failovers, hedges),
    /// paid by every member's first attempts and charged by every member's
    /// extra attempts besides its own budget (`pool/pipeline/extra.rs`):
    /// 10 % of the realm's requests, a burst of 20 and 2 per second (JS
    /// `fleet.budget`); `None`: each relayer's own budget only.
    pub realm_budget: Option<RetryBudgetConfig>,
}

/// When a read is hedged to a second endpoint (see `pipeline/hedge.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HedgeConfig {
    /// The hedge delay while no endpoint has latency history yet.
    pub initial_delay: Duration,
    /// The shortest hedge delay, however fast the endpoint usually is (a
    /// loopback node's tail of 2 ms must not double every request that
    /// meets a scheduling hiccup).
    pub min_delay: Duration,
}

impl Default for HedgeConfig {
    fn default() -> Self {
        HedgeConfig { initial_delay: Duration::from_secs(1), min_delay: Duration::from_millis(50) }
    }
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            strategy: Strategy::default(),
            breaker: BreakerConfig::default(),
            slow_start: SlowStartConfig::default(),
            quota_groups: Vec::new(),
            chain_id: None,
            max_lag_blocks: 5,
            max_queue: 10_000,
            dedup: true,
            cache: CacheConfig::default(),
            check_chain: true,
            chain_recheck: Duration::from_secs(300),
            adaptive_timeout: Some(ADAPTIVE_TIMEOUT),
            hedge: Some(HedgeConfig::default()),
            batch: Some(crate::policy::wire_batch::WireBatchConfig::default()),
            head_poll: Duration::from_secs(12),
            share_in_realm: true,
            realm_budget: Some(RetryBudgetConfig { ratio: 0.1, min_per_second: 2.0, burst: 20.0 }),
        }
    }
}

/// One endpoint as configured.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointSpec {
    /// URL and its redacted label.
    pub url: EndpointUrl,
    /// Extra HTTP headers (values are treated as secrets).
    pub headers: Vec<(String, String)>,
    /// Name of the quota group, if it shares one.
    pub quota_group: Option<String>,
    /// Weight for the weighted strategy.
    pub weight: f64,
    /// Priority (lower first) for priority and sticky.
    pub priority: i32,
    /// Only these methods, if set.
    pub allow: Option<Vec<String>>,
    /// Never these methods.
    pub deny: Vec<String>,
    /// Compute-unit costs overriding the method table.
    pub costs: Vec<(String, f64)>,
    /// Most attempts in flight at once.
    pub max_concurrency: u32,
    /// Per-attempt timeout overriding the relayer's.
    pub timeout: Option<Duration>,
}

impl EndpointSpec {
    /// An endpoint with every default, at `priority` = its index.
    pub fn from_url(url: EndpointUrl, index: usize) -> Self {
        EndpointSpec {
            url,
            headers: Vec::new(),
            quota_group: None,
            weight: 1.0,
            priority: index as i32,
            allow: None,
            deny: Vec::new(),
            costs: Vec::new(),
            max_concurrency: 64,
            timeout: None,
        }
    }

    /// Whether this endpoint may serve `method`.
    pub fn serves(&self, method: &str) -> bool {
        self.allow.as_ref().is_none_or(|a| a.iter().any(|m| m == method)) && !self.deny.iter().any(|m| m == method)
    }

    /// The cost of `method` here: its own entry in `costs`, else the `"*"`
    /// entry (every other method: a provider that counts requests, where the
    /// relayer's own calls, a head poll's `eth_blockNumber` or the chain
    /// check, must cost what the user's do), else `default` (the table's).
    pub fn cost(&self, method: &str, default: f64) -> f64 {
        let entry = |name: &str| self.costs.iter().find(|(m, _)| m == name).map(|(_, c)| *c);
        entry(method).or_else(|| entry("*")).unwrap_or(default)
    }

    /// Checks the numbers; `path` is `upstreams[i]`.
    pub fn validate(&self, path: &str, groups: &[(String, QuotaConfig)]) -> Result<(), ConfigError> {
        if !(self.weight.is_finite() && self.weight > 0.0) {
            return Err(ConfigError::new(format!("{path}.weight"), "must be a positive number"));
        }
        if self.max_concurrency == 0 {
            return Err(ConfigError::new(format!("{path}.maxConcurrency"), "must be at least 1"));
        }
        if let Some((m, _)) = self.costs.iter().find(|(_, c)| !(c.is_finite() && *c >= 0.0)) {
            return Err(ConfigError::new(format!("{path}.costs.{m}"), "must be a finite number >= 0"));
        }
        if let Some(group) = &self.quota_group {
            if !groups.iter().any(|(name, _)| name == group) {
                return Err(ConfigError::new(
                    format!("{path}.quotaGroup"),
                    format!("names `{group}`, which is not defined under `quota`"),
                ));
            }
        }
        if self.allow.as_ref().is_some_and(|a| a.is_empty()) {
            return Err(ConfigError::new(format!("{path}.methods.allow"), "must not be empty"));
        }
        Ok(())
    }
}

impl PoolOptions {
    /// Checks every nested option.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.breaker.validate()?;
        self.slow_start.validate()?;
        if let Some(budget) = &self.realm_budget {
            budget.validate_at("fleet.budget")?;
        }
        for (name, q) in &self.quota_groups {
            q.validate(&format!("quota.{name}"))?;
        }
        let mut names: Vec<&String> = self.quota_groups.iter().map(|(n, _)| n).collect();
        crate::small_sort::sort_by(&mut names, |a, b| a < b);
        if names.windows(2).any(|w| w[0] == w[1]) {
            return Err(ConfigError::new("quota", "group names must be unique"));
        }
        if let Some((multiplier, _)) = self.adaptive_timeout {
            if !(multiplier.is_finite() && multiplier >= 1.0) {
                return Err(ConfigError::new("adaptiveTimeout.multiplier", "must be a number >= 1"));
            }
        }
        if !self.head_poll.is_zero() && self.head_poll < MIN_HEAD_POLL {
            return Err(ConfigError::new("headPollMs", "must be 0 (off) or at least 100 ms"));
        }
        if self.cache.max_entries == 0 && self.cache.enabled {
            return Err(ConfigError::new("cache.maxEntries", "must be at least 1"));
        }
        Ok(())
    }
}
