//! The options object and the upstream list exactly as a user writes them
//! (JS names, every field optional), decoded from whatever the host hands
//! over (a JS value in the package, JSON in tests: `source.rs`), then
//! resolved into the core's typed configuration (`resolve.rs`).
//!
//! Why it is shaped like this:
//! - One declared contract: the field names live on these structs, once;
//!   an unknown key is refused with the nearest known name as a hint
//!   (`decode::unknown`), and every refusal names the full path
//!   (`upstreams[1].methods.allow`, `quota.main.cuPerSecond`).
//! - Numbers arrive as JS numbers (`Num`): their ranges and defaults are
//!   the core's (`ranges.rs`, the config types' `Default`), never restated
//!   here.
//! - The shapes that take more than one type (a URL or an endpoint object;
//!   `true`/`false` or settings; a chain id as a number, bigint or string)
//!   are their own small types in `decode.rs`.
//!
//! The structs are declared by `input_struct!` (`decode.rs`): one small
//! decoder per struct that sees every key and names the path of a refusal.
//! No serde: see `source.rs` for what it cost.

mod decode;
mod errors;
mod resolve;
mod source;

use decode::{input_struct, Ignored};
pub use decode::{ChainIdInput, Decode, Entries, FromEntries, List, Num, Switch, UpstreamInput, UpstreamList};
pub use errors::{nearest, Refusal};
pub use source::{Shape, Source};

/// Decodes `T` from `value`; a failure names its path under `root`
/// (`""` for the options object, `"upstreams"` for the list).
pub fn decode<T: Decode, S: Source>(value: S, root: &str) -> Result<T, ConfigError> {
    T::decode(value).map_err(|refusal| errors::config_error(refusal, root))
}

use crate::config::RawOptions;
use crate::config_error::ConfigError;
use crate::options::EndpointSpec;
use crate::policy::classify::UserRule;

/// The options object (absent or `null`: every default), resolved.
pub fn options<S: Source>(value: S) -> Result<(RawOptions, Vec<UserRule>), ConfigError> {
    match decode::<Option<OptionsInput>, S>(value, "")? {
        Some(input) => input.resolve(),
        None => Ok((RawOptions::default(), Vec::new())),
    }
}

/// The upstream list, resolved: each endpoint's spec, and whether it is a
/// wrapped provider (whose call function the host keeps).
pub fn upstreams<S: Source>(value: S) -> Result<Vec<(EndpointSpec, bool)>, ConfigError> {
    decode::<UpstreamList, S>(value, "upstreams")?.resolve()
}

input_struct! {
    /// The relayer's options object (`new FaultTolerantRelayer(urls, options)`).
    OptionsInput {
        max_retries: Num = "maxRetries",
        base_delay_ms: Num = "baseDelayMs",
        max_delay_ms: Num = "maxDelayMs",
        backoff: String = "backoff",
        attempt_timeout_ms: Num = "attemptTimeoutMs",
        deadline_ms: Num = "deadlineMs",
        budget: BudgetInput = "budget",
        max_retry_after_ms: Num = "maxRetryAfterMs",
        max_response_bytes: Num = "maxResponseBytes",
        classify: List<RuleInput> = "classify",
        strategy: String = "strategy",
        breaker: BreakerInput = "breaker",
        slow_start: SlowStartInput = "slowStart",
        quota: Entries<QuotaInput> = "quota",
        chain_id: ChainIdInput = "chainId",
        check_chain_id: bool = "checkChainId",
        chain_recheck_ms: Num = "chainRecheckMs",
        max_lag_blocks: Num = "maxLagBlocks",
        head_poll_ms: Num = "headPollMs",
        max_queue: Num = "maxQueue",
        dedup: bool = "dedup",
        cache: Switch<CacheInput> = "cache",
        adaptive_timeout: Switch<AdaptiveInput> = "adaptiveTimeout",
        hedge: Switch<HedgeInput> = "hedge",
        batch: Switch<BatchInput> = "batch",
        /// Read by the transaction layer (`tx::option_fields`), which also
        /// reads each call's `options` the same way.
        /// `false`: this relayer learns alone instead of sharing with the
        /// relayers of its JS realm (`coord`); settings: how it shares.
        fleet: Switch<FleetInput> = "fleet",
        transactions: Ignored = "transactions",
        /// The JS wrapper's own (`logger`, `wrap`): known here so that a typo
        /// of them gets its hint too.
        logger: Ignored = "logger",
        #[allow(missing_docs)]
        wrap: Ignored = "wrap",
    }
}

input_struct! {
    /// `budget: { ratio, minPerSecond, burst }`.
    BudgetInput {
        ratio: Num = "ratio",
        min_per_second: Num = "minPerSecond",
        burst: Num = "burst",
    }
}

input_struct! {
    /// One `classify` rule: what to match and the class to give it.
    RuleInput {
        code: Num = "code",
        message: String = "message",
        status: Num = "status",
        method: String = "method",
        class: String = "class",
    }
}

input_struct! {
    /// `breaker: { … }` (`policy::breaker::BreakerConfig`).
    BreakerInput {
        consecutive_failures: Num = "consecutiveFailures",
        failure_rate: Num = "failureRate",
        window_ms: Num = "windowMs",
        min_samples: Num = "minSamples",
        open_ms: Num = "openMs",
        open_max_ms: Num = "openMaxMs",
        jitter: Num = "jitter",
        probe_permits: Num = "probePermits",
        close_after: Num = "closeAfter",
        observe_ms: Num = "observeMs",
        early_probe_ms: Num = "earlyProbeMs",
        reset_after_ms: Num = "resetAfterMs",
    }
}

input_struct! {
    /// `slowStart: { warmupMs, floor, minRps }`.
    SlowStartInput {
        warmup_ms: Num = "warmupMs",
        floor: Num = "floor",
        min_rps: Num = "minRps",
    }
}

input_struct! {
    /// One quota group under `quota: { name: { … } }`.
    QuotaInput {
        cu_per_second: Num = "cuPerSecond",
        burst: Num = "burst",
        share: Num = "share",
        decrease: Num = "decrease",
        increase: Num = "increase",
        stable_window_ms: Num = "stableWindowMs",
        min_fraction: Num = "minFraction",
        cooldown_ms: Num = "cooldownMs",
        cooldown_max_ms: Num = "cooldownMaxMs",
        long_ejection_ms: Num = "longEjectionMs",
    }
}

input_struct! {
    /// `cache: { latestTtlMs, immutableTtlMs, maxEntries }`.
    CacheInput {
        latest_ttl_ms: Num = "latestTtlMs",
        immutable_ttl_ms: Num = "immutableTtlMs",
        max_entries: Num = "maxEntries",
    }
}

input_struct! {
    /// `adaptiveTimeout: { multiplier, floorMs }`.
    AdaptiveInput {
        multiplier: Num = "multiplier",
        floor_ms: Num = "floorMs",
    }
}

input_struct! {
    /// `fleet: { budget }`: how a relayer shares with its realm.
    FleetInput {
        budget: Switch<BudgetInput> = "budget",
        /// The JS wrapper's own (the store: `redis`, `prefix`, `tabs`,
        /// `indexedDB`): known here so that a typo of them gets its hint too.
        #[allow(missing_docs)]
        redis: Ignored = "redis",
        #[allow(missing_docs)]
        prefix: Ignored = "prefix",
        #[allow(missing_docs)]
        tabs: Ignored = "tabs",
        #[allow(missing_docs)]
        indexed_db: Ignored = "indexedDB",
    }
}

input_struct! {
    /// `hedge: { initialDelayMs, minDelayMs }`.
    HedgeInput {
        initial_delay_ms: Num = "initialDelayMs",
        min_delay_ms: Num = "minDelayMs",
    }
}

input_struct! {
    /// `batch: { maxSize, waitMs }` (`policy::wire_batch`).
    BatchInput {
        max_size: Num = "maxSize",
        wait_ms: Num = "waitMs",
    }
}

input_struct! {
    /// An endpoint object in the upstream list.
    EndpointInput {
        url: String = "url",
        /// A wrapped provider: the host reads the value itself (a JS function
        /// the wrapper made); here only its presence counts.
        provider: Ignored = "provider",
        label: String = "label",
        headers: Entries<String> = "headers",
        quota_group: String = "quotaGroup",
        weight: Num = "weight",
        priority: Num = "priority",
        methods: MethodsInput = "methods",
        costs: Entries<Num> = "costs",
        max_concurrency: Num = "maxConcurrency",
        timeout_ms: Num = "timeoutMs",
    }
}

input_struct! {
    /// `methods: { allow, deny }` of an endpoint.
    MethodsInput {
        allow: List<String> = "allow",
        deny: List<String> = "deny",
    }
}

#[cfg(test)]
mod tests;
