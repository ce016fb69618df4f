//! Quota groups: endpoints that share an API key, account or project share
//! one compute-unit budget, because switching URLs must not route around
//! an exhausted key.
//!
//! ```text
//!   charge(cost)   every real attempt, probe and batch item; not refunded on failure
//!   on_limited     (429, -32005, "compute units per second"…)
//!      → the whole group cools down: Retry-After (capped) if given, else a
//!        jittered backoff that doubles with consecutive limits; limited
//!        again with no success in between, the longer of the two
//!      → AIMD: allowed rate × decrease (multiplicative), floored; once per
//!        episode: a signal for an attempt sent before the last decrease
//!        (or within 100 ms of the last signal) lowers nothing; a configured
//!        plan at its full rate takes its first episode in a minute as a
//!        warning (cooldown only), and lowers on the next
//!      → long horizon ("daily/monthly limit"): ejected for `long_ejection`
//!   on_success     after `stable_window` without a limit, allowed rate
//!                  + increase × plan (additive), capped at the plan; growth
//!                  past 90 % of the rate that was last limited waits three
//!                  windows (a plateau, so the limit is not probed constantly)
//! ```
//! When the plan is not configured, the first limit signal teaches it: the
//! CU the provider accepted over the last second (or the ten-second mean
//! of what was sent, if that second held too few charges to tell a rate)
//! becomes the ceiling, kept in every second from then on, and AIMD works
//! below it; a ceiling so learned probes upward while demand presses on it
//! and settles down a step when limited at itself (`quota/ceiling.rs`).
//!
//! Several processes behind one key can each be given a static `share` of
//! the plan; the bucket itself sits behind [`QuotaBucket`] so a store shared
//! across processes can replace it later.

use std::collections::VecDeque;
use std::time::Duration;

use super::lease::{Lease, LeaseAsk};
use super::token_bucket::TokenBucket;
use crate::config_error::ConfigError;
use crate::time::Instant;
pub use bucket::{QuotaBucket, WindowedBucket};
use line::QuotaLine;
pub use line::{line_place, line_wait};

/// Tuning of one quota group.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuotaConfig {
    /// The plan in compute units per second (infinite = no client-side limit).
    pub cu_per_second: f64,
    /// Burst in compute units.
    pub burst: f64,
    /// This process's share of the plan (0..=1).
    pub share: f64,
    /// Multiplicative decrease on a new limit signal.
    pub decrease: f64,
    /// Additive increase per stable window, as a fraction of the plan.
    pub increase: f64,
    /// Limit-free time before the rate grows again.
    pub stable_window: Duration,
    /// Lowest allowed rate, as a fraction of the plan.
    pub min_fraction: f64,
    /// Cooldown without Retry-After, first time (doubles, jittered).
    pub cooldown_base: Duration,
    /// Longest cooldown, and the cap on Retry-After.
    pub cooldown_max: Duration,
    /// Ejection after a daily/monthly limit.
    pub long_ejection: Duration,
}

impl Default for QuotaConfig {
    fn default() -> Self {
        QuotaConfig {
            cu_per_second: f64::INFINITY,
            burst: 0.0,
            share: 1.0,
            decrease: 0.5,
            increase: 0.05,
            stable_window: Duration::from_secs(10),
            min_fraction: 0.05,
            cooldown_base: Duration::from_secs(1),
            cooldown_max: Duration::from_secs(60),
            long_ejection: Duration::from_secs(3600),
        }
    }
}

impl QuotaConfig {
    /// Checks every field; `path` is the option path (`quota.alchemy`).
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let f = |name: &str| format!("{path}.{name}");
        if self.cu_per_second.is_nan() || self.cu_per_second <= 0.0 {
            return Err(ConfigError::new(f("cuPerSecond"), "must be a positive number"));
        }
        if !(self.burst.is_finite() && self.burst >= 0.0) {
            return Err(ConfigError::new(f("burst"), "must be a finite number >= 0"));
        }
        if !(self.share > 0.0 && self.share <= 1.0) {
            return Err(ConfigError::new(f("share"), "must be in (0, 1]"));
        }
        if !(self.decrease > 0.0 && self.decrease < 1.0) {
            return Err(ConfigError::new(f("decrease"), "must be in (0, 1)"));
        }
        if !(self.increase > 0.0 && self.increase <= 1.0) {
            return Err(ConfigError::new(f("increase"), "must be in (0, 1]"));
        }
        if !(self.min_fraction > 0.0 && self.min_fraction <= 1.0) {
            return Err(ConfigError::new(f("minFraction"), "must be in (0, 1]"));
        }
        Ok(())
    }

    /// This process's plan rate.
    pub fn plan(&self) -> f64 {
        self.cu_per_second * self.share
    }

    /// Whether the plan is kept in every second (`policy::plan_window`): a
    /// plan given without a `burst`. A burst means token-bucket terms, and
    /// an unknown plan has nothing to keep.
    pub fn kept_per_second(&self) -> bool {
        self.burst <= 0.0 && self.plan().is_finite()
    }
}

/// How long a configured plan's first limit episode is remembered: another
/// within it lowers the rate.
pub const STRIKE_MEMORY: Duration = Duration::from_secs(60);

/// Window over which an unknown plan's rate is observed.
const RATE_WINDOW: Duration = Duration::from_secs(10);

/// The fewest charges (within two seconds) an unknown plan's rate is
/// learned from (`rate_evidence`).
const MIN_EVIDENCE: usize = 10;

/// Why a charge was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuotaDenied {
    /// The group is cooling down or ejected until then.
    Cooling(Instant),
    /// Not enough compute units now; enough after this wait.
    Exhausted(Duration),
}

/// Counters for stats.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QuotaStats {
    /// Compute units charged in total.
    pub cu_charged: f64,
    /// Limit signals received.
    pub limited: u64,
    /// The allowed rate now (CU/s).
    pub allowed_rate: f64,
    /// Cooling down until (if in the future).
    pub cooldown_until: Instant,
}

/// One group's live state.
pub struct QuotaGroup {
    config: QuotaConfig,
    bucket: Box<dyn QuotaBucket>,
    allowed: f64,
    /// The rate AIMD grows back to: the plan, or (plan unknown) the rate
    /// observed when the first limit signal arrived.
    ceiling: f64,
    /// The allowed rate when the last limit signal arrived: growth stops
    /// just below it and only probes past it after a long calm.
    limit_rate: f64,
    /// This group's stable window, jittered: clients that were limited
    /// together must not all grow back (and overshoot) together.
    stable: Duration,
    recent: VecDeque<(Instant, f64)>,
    /// The charges the provider answered with a success in the last
    /// second (`on_accepted`): what it let through when it first refuses.
    accepted: VecDeque<(Instant, f64)>,
    cooldown_until: Instant,
    consecutive_limits: u32,
    /// When the last 429 that counted in `consecutive_limits` was heard:
    /// a 429 for a request sent before it is the same wave.
    last_counted_limit: Option<Instant>,
    last_limit: Option<Instant>,
    /// When the last limit episode began (the rate lowered, or a warning
    /// taken): a signal for an attempt sent before then belongs to it.
    episode_began: Option<Instant>,
    /// When a configured plan last took a limit episode as a warning.
    strike: Option<Instant>,
    last_increase: Instant,
    cu_charged: f64,
    limited: u64,
    /// The bucket's burst now (what a fleet bucket is asked to hold).
    burst: f64,
    /// The lease on the fleet's bucket, when the realm has a store (`fleet.rs`).
    lease: Option<Lease>,
    /// The ask the lease made, until the host takes it.
    ask: Option<LeaseAsk>,
    /// The allowed rate after a decrease, until told to the fleet.
    decreased: Option<f64>,
    /// The allowed rate at the last grant of a lease that was up (taken
    /// back after spending alone: `lease_granted`).
    leased_rate: Option<f64>,
    /// Whether the lease paid at the last check (its fall starts `alone`).
    was_leased: bool,
    /// Spending alone since the store failed (`quota/alone.rs`).
    alone: Option<alone::Alone>,
    /// Until when a 429 is the residue of spending alone (`lease_granted`).
    residue_until: Instant,
    /// Until the store first answers (at most until then), the own bucket
    /// runs at [`fleet::COLD_SHARE`] of the plan (`join_fleet`).
    cold: Option<fleet::Cold>,
    /// Requests waiting for this group's CU now, from every relayer that
    /// shares it, in turn (`pool::router::backlog`).
    line: QuotaLine,
    /// When a request last waited for CU (a learned ceiling probes only
    /// when pressed: `ceiling.rs`).
    pressed: Option<Instant>,
    /// A learned ceiling's upward probe (`ceiling.rs`).
    probe: ceiling::Probe,
    /// The fleet counting what its members got through, before it learns
    /// its plan (`gather.rs`).
    gather: Option<gather::Gathering>,
    /// Its measure, until the host tells it (`take_measure`).
    to_tell: Option<f64>,
    /// A plan learned as a fleet's member while its lease was down: its
    /// own part, to be replaced by the fleet's count it hears (`gather.rs`).
    learned_alone: bool,
    /// When it last told its plan to a member counting alone (`gather.rs`).
    replied: Option<Instant>,
    /// Joined its fleet with a plan to learn: to ask the others for it (`gather.rs`).
    plan_asked: bool,
    /// A probe step it took for its fleet, until the host tells it (`fleet_probe.rs`).
    raised: Option<f64>,
}

impl QuotaGroup {
    /// Whether a rate is enforced now (configured, or learned from a 429):
    /// what is sent in the group is paced by its plan, retries included.
    pub fn paced(&self) -> bool {
        self.allowed.is_finite()
    }

    /// A group with a local token bucket (starting full).
    pub fn new(config: QuotaConfig, now: Instant) -> Self {
        let plan = config.plan();
        let burst = if config.burst > 0.0 {
            config.burst
        } else if plan.is_finite() {
            plan
        } else {
            1.0
        };
        // A plan without a burst is kept in every second (`plan_window`); a configured burst means
        // token-bucket terms: up to burst + rate × T in any T.
        let bucket: Box<dyn QuotaBucket> = if config.kept_per_second() {
            Box::new(WindowedBucket::new(plan, burst, now))
        } else {
            Box::new(TokenBucket::new(plan, burst, now, true))
        };
        let mut group = Self::with_bucket(config, bucket, now);
        group.burst = burst;
        group
    }

    /// Its tuning.
    pub fn config(&self) -> &QuotaConfig {
        &self.config
    }

    /// A group over any bucket implementation.
    pub fn with_bucket(config: QuotaConfig, bucket: Box<dyn QuotaBucket>, now: Instant) -> Self {
        let allowed = config.plan();
        QuotaGroup {
            config,
            bucket,
            allowed,
            ceiling: allowed,
            limit_rate: f64::INFINITY,
            stable: config.stable_window,
            recent: VecDeque::new(),
            accepted: VecDeque::new(),
            cooldown_until: Instant::ZERO,
            consecutive_limits: 0,
            last_counted_limit: None,
            last_limit: None,
            episode_began: None,
            strike: None,
            last_increase: now,
            cu_charged: 0.0,
            limited: 0,
            burst: if config.burst > 0.0 { config.burst } else { 1.0 },
            lease: None,
            ask: None,
            decreased: None,
            leased_rate: None,
            was_leased: false,
            alone: None,
            residue_until: Instant::ZERO,
            cold: None,
            line: QuotaLine::default(),
            pressed: None,
            probe: ceiling::Probe::default(),
            gather: None,
            to_tell: None,
            learned_alone: false,
            replied: None,
            plan_asked: false,
            raised: None,
        }
    }

    /// Whether `cost` could be charged now, without charging, out of turn
    /// (a probe's check; a request checks in turn: `check_in_turn`).
    pub fn check(&mut self, now: Instant, cost: f64) -> Result<(), QuotaDenied> {
        self.check_as(now, cost, true)
    }

    /// As [`QuotaGroup::check`], for a dearer way to the same plan than one
    /// also checked (`Router::select`: an endpoint of the group whose chain
    /// check is due beside one whose is not): a refusal sizes no lease ask.
    /// Checked as the request's own, the pending check of a second URL on
    /// the key (2 CU beside 1) sized every ask of a fleet of 1-request reads
    /// for it (all-or-nothing grants of 2, held a quarter period).
    pub fn check_quietly(&mut self, now: Instant, cost: f64) -> Result<(), QuotaDenied> {
        self.check_as(now, cost, false)
    }

    fn check_as(&mut self, now: Instant, cost: f64, waits: bool) -> Result<(), QuotaDenied> {
        if now < self.cooldown_until {
            return Err(QuotaDenied::Cooling(self.cooldown_until));
        }
        let verdict = match self.lease_check(now, cost, waits) {
            Ok(true) => Ok(()),
            Ok(false) => self.bucket.check(now, cost).map_err(QuotaDenied::Exhausted),
            Err(denied) => Err(denied),
        };
        if waits && verdict.is_err() {
            self.pressed_at(now);
        }
        verdict
    }

    /// Charges one attempt of `cost` compute units.
    pub fn charge(&mut self, now: Instant, cost: f64) -> Result<(), QuotaDenied> {
        if now < self.cooldown_until {
            return Err(QuotaDenied::Cooling(self.cooldown_until));
        }
        // A lease that is up governs alone (the fleet's bucket is the limit); otherwise the own bucket.
        let taken = match self.lease_check(now, cost, true) {
            Ok(true) => Ok(()),
            Ok(false) => self.bucket.try_take(now, cost).map_err(QuotaDenied::Exhausted),
            Err(denied) => Err(denied),
        };
        if let Err(denied) = taken {
            self.pressed_at(now);
            return Err(denied);
        }
        self.lease_spend(now, cost);
        self.cu_charged += cost.max(0.0);
        self.recent.push_back((now, cost.max(0.0)));
        self.prune(now);
        Ok(())
    }

    /// The attempt charged `cost` at `charged_at` was answered `now`: a plan
    /// kept per second counts it from its answer (`policy::plan_window`).
    pub fn answered(&mut self, charged_at: Instant, cost: f64, now: Instant) {
        self.bucket.answered(charged_at, cost, now);
    }

    /// Cools the group until `until` at least (another realm heard the
    /// provider's 429: `coord::news`). Learns no plan: this realm did not
    /// see what was sent (a fleet counting itself says so with a measure:
    /// `gather.rs`).
    pub fn cool_until(&mut self, until: Instant) {
        self.cooldown_until = self.cooldown_until.max(until);
    }

    /// When the group may be used again (past instants mean "now").
    pub fn cooldown_until(&self) -> Instant {
        self.cooldown_until
    }

    /// A snapshot for stats.
    pub fn stats(&self) -> QuotaStats {
        QuotaStats {
            cu_charged: self.cu_charged,
            limited: self.limited,
            allowed_rate: self.allowed,
            cooldown_until: self.cooldown_until,
        }
    }
}

mod aimd;
mod alone;
mod bucket;
mod ceiling;
mod fleet;
mod fleet_raise;
mod gather;
#[cfg(test)]
mod learned_fleet_sim_tests;
pub use fleet::FleetMode;
#[cfg(test)]
mod fleet_window_tests;
#[cfg(test)]
mod largest_charge_tests;
mod line;
#[cfg(test)]
mod overload_split_sim_tests;
#[cfg(test)]
mod queue_fairness_sim_tests;
mod recent;
mod serving;
#[cfg(test)]
mod serving_rate_tests;
mod shares;

#[cfg(test)]
mod provider_sim_tests;
#[cfg(test)]
mod slow_store_tests;
#[cfg(test)]
mod store_sim_tests;
#[cfg(test)]
mod tests;
