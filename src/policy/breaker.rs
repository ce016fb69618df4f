//! The circuit breaker of one endpoint.
//!
//! ```text
//!            N consecutive infrastructure failures, or failure rate ≥ threshold
//!            over the sliding window (with enough samples)
//!   Closed ───────────────────────────────────────────────────────────────► Open { until }
//!     ▲                                                                      │ now ≥ until
//!     │ `close_after` probe successes over at least `observe`, no failure     ▼
//!     └──────────────────────────────────────────────────────────────── HalfOpen
//!                                     a probe fails: Open again, open time doubles
//!                                     (base·2^ejections, capped, jittered)
//! ```
//! HalfOpen hands out at most `probe_permits` probes at a time; a permit is
//! reserved by [`Breaker::try_acquire`] and given back by exactly one of
//! `on_success` / `on_failure` / `on_neutral`, so two tasks never probe on
//! one permit. Outcomes that say nothing about health (reverts, capability
//! gaps, rate limits) are `on_neutral`: they release a permit and change
//! nothing else.
//!
//! Total outages: a breaker that is Open may still grant an **early probe**
//! ([`Breaker::try_early_probe`]), one at a time, at jittered exponential
//! spacing, for the pool to use when *every* endpoint is Open. A 5 s
//! outage then costs about 5 s, not the 30 s open time. An early probe that
//! succeeds moves the breaker to HalfOpen.
//!
//! After `reset_after` in Closed without tripping, the ejection count
//! returns to zero, so an endpoint that failed once long ago starts again
//! from the base open time.

use std::collections::VecDeque;
use std::time::Duration;

use crate::time::Instant;

mod config;
pub use config::BreakerConfig;

/// The externally visible state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    /// Traffic flows.
    Closed,
    /// No traffic until `until` (except early probes in a total outage).
    Open {
        /// When it turns HalfOpen.
        until: Instant,
    },
    /// A few probes decide.
    HalfOpen,
}

impl BreakerState {
    /// JS spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open { .. } => "open",
            BreakerState::HalfOpen => "halfOpen",
        }
    }
}

/// Whether a request may use the endpoint now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Go; `probe` says a HalfOpen permit (or an early probe) was reserved.
    Allowed {
        /// This attempt is a probe.
        probe: bool,
    },
    /// Not before `until`.
    Rejected {
        /// When to ask again.
        until: Instant,
    },
}

/// A state change, for events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transition {
    /// State before.
    pub from: BreakerState,
    /// State after.
    pub to: BreakerState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Inner {
    Closed { since: Instant },
    Open { until: Instant },
    HalfOpen,
}

/// The breaker. Pure: time and randomness are arguments.
#[derive(Clone, Debug)]
pub struct Breaker {
    config: BreakerConfig,
    inner: Inner,
    consecutive: u32,
    samples: VecDeque<(Instant, bool)>,
    ejections: u32,
    probes_in_flight: u32,
    probe_successes: u32,
    half_open_since: Instant,
    early_probe_at: Instant,
    early_spacing: Duration,
    /// When it last opened.
    opened_at: Instant,
    /// Another realm's probe of the node is in flight until then (`fleet_probe.rs`).
    fleet_probe_until: Instant,
    flips: u64,
}

/// At most this many samples are kept, whatever the traffic.
const MAX_SAMPLES: usize = 512;

impl Breaker {
    /// A closed breaker.
    pub fn new(config: BreakerConfig, now: Instant) -> Self {
        Breaker {
            config,
            inner: Inner::Closed { since: now },
            consecutive: 0,
            samples: VecDeque::new(),
            ejections: 0,
            probes_in_flight: 0,
            probe_successes: 0,
            half_open_since: now,
            early_probe_at: now,
            early_spacing: config.early_probe_base,
            opened_at: now,
            fleet_probe_until: Instant::ZERO,
            flips: 0,
        }
    }

    /// The state as of `now` (Open turns HalfOpen once its time is up).
    pub fn state(&mut self, now: Instant) -> BreakerState {
        if let Inner::Open { until } = self.inner {
            if now >= until {
                self.inner = Inner::HalfOpen;
                self.probes_in_flight = 0;
                self.probe_successes = 0;
                self.half_open_since = now;
                self.flips += 1;
            }
        }
        self.public()
    }

    fn public(&self) -> BreakerState {
        match self.inner {
            Inner::Closed { .. } => BreakerState::Closed,
            Inner::Open { until } => BreakerState::Open { until },
            Inner::HalfOpen => BreakerState::HalfOpen,
        }
    }

    /// Its tuning.
    pub fn config(&self) -> &BreakerConfig {
        &self.config
    }

    /// How many times the state changed (for stats and the flapping target).
    pub fn flips(&self) -> u64 {
        self.flips
    }

    /// Probes allowed at once in HalfOpen.
    pub fn probe_permits(&self) -> u32 {
        self.config.probe_permits
    }

    /// Probes currently reserved.
    pub fn probes_in_flight(&self) -> u32 {
        self.probes_in_flight
    }

    /// Whether a probe permit is free (what HalfOpen lets through).
    pub fn probe_permit_free(&self) -> bool {
        self.probes_in_flight < self.config.probe_permits
    }

    /// Whether `try_acquire` would let a request through now, reserving
    /// nothing: Closed, or HalfOpen with a probe permit free.
    pub fn admits(&mut self, now: Instant) -> bool {
        match self.state(now) {
            BreakerState::Closed => true,
            BreakerState::HalfOpen => self.probe_permit_free(),
            BreakerState::Open { .. } => false,
        }
    }

    /// Asks to send one request; reserves a probe permit in HalfOpen.
    pub fn try_acquire(&mut self, now: Instant) -> Admission {
        match self.state(now) {
            BreakerState::Closed => Admission::Allowed { probe: false },
            BreakerState::Open { until } => Admission::Rejected { until },
            BreakerState::HalfOpen => {
                if self.probe_permit_free() {
                    self.probes_in_flight += 1;
                    Admission::Allowed { probe: true }
                } else {
                    // Ask again soon: a probe in flight will decide.
                    Admission::Rejected { until: now + self.config.early_probe_base }
                }
            }
        }
    }

    /// During a total outage: one probe at a time while Open, spaced by a
    /// jittered, doubling interval. `unit_random` in `[0, 1)`.
    pub fn try_early_probe(&mut self, now: Instant, unit_random: f64) -> Admission {
        match self.state(now) {
            BreakerState::Open { until } => {
                if self.probes_in_flight > 0 || now < self.early_probe_at {
                    return Admission::Rejected { until: self.early_probe_at.max(now).min(until) };
                }
                self.probes_in_flight = 1;
                let spacing = jittered(self.early_spacing, self.config.jitter, unit_random);
                self.early_probe_at = now + spacing;
                self.early_spacing = self.early_spacing.saturating_mul(2).min(self.config.open_base);
                Admission::Allowed { probe: true }
            }
            _ => self.try_acquire(now),
        }
    }

    /// Opens the breaker until `until` on another realm's word (its members
    /// saw the node fail: `coord::news`), so this realm does not spend its
    /// own failures learning it. Only a Closed breaker takes it: one already
    /// Open knows, and keeps its own time; a HalfOpen one is proving the node
    /// with its own probes, whose verdict is fresher than the word. (Taking
    /// every member's longest time kept a fleet of processes on Redis open
    /// up to twice as long after a total outage ended: 75 % of reads
    /// answered instead of 89 %, benches/fleet-redis.mjs.) For the same
    /// reason it opens at most for a first ejection's time. Ejections (which
    /// lengthen the next open time) count only what this breaker saw itself.
    pub fn open_until(&mut self, now: Instant, until: Instant) {
        if until <= now {
            return;
        }
        match self.inner {
            Inner::Open { .. } | Inner::HalfOpen => {}
            Inner::Closed { .. } => {
                // At most a first ejection's time: the teller's longer time
                // reflects its own repeated failures, not anything seen here.
                self.inner = Inner::Open { until: until.min(now + self.config.open_base) };
                self.opened_at = now;
                self.flips += 1;
                self.probe_successes = 0;
                self.consecutive = 0;
                self.early_probe_at = now + self.config.early_probe_base;
            }
        }
    }

    /// Brings an Open breaker's half-open probe forward to `at` (never
    /// later than it was): after a total outage, one endpoint found back
    /// says the others may well be back too (a shared cause ended), so each
    /// gets one probe soon instead of waiting out its open time.
    pub fn hasten(&mut self, at: Instant) {
        if let Inner::Open { until } = self.inner {
            self.inner = Inner::Open { until: until.min(at) };
        }
    }

    /// Another realm's probe found the node back at `at`: an Open breaker
    /// turns HalfOpen now (its own probes prove the node), unless it opened
    /// after `at` (its own failure is newer word). Whether it did.
    pub fn hasten_unless_opened_since(&mut self, now: Instant, at: Instant) -> bool {
        match self.inner {
            Inner::Open { .. } if self.opened_at <= at => {
                self.hasten(now);
                true
            }
            _ => false,
        }
    }

    /// When an Open breaker next allows an early probe.
    pub fn early_probe_at(&self) -> Instant {
        self.early_probe_at
    }

    /// Records a healthy outcome.
    pub fn on_success(&mut self, now: Instant, probe: bool) -> Option<Transition> {
        self.release(probe);
        self.consecutive = 0;
        self.sample(now, true);
        let before = self.public();
        match self.inner {
            Inner::Closed { since } => {
                if self.ejections > 0 && now.saturating_since(since) >= self.config.reset_after {
                    self.ejections = 0;
                }
                None
            }
            Inner::Open { .. } if probe => {
                // An early probe got through: the node is back, verify in HalfOpen.
                self.inner = Inner::HalfOpen;
                self.probe_successes = 1;
                self.half_open_since = now;
                self.close_if_proven(now, before)
            }
            Inner::Open { .. } => None,
            Inner::HalfOpen if probe => {
                self.probe_successes += 1;
                self.close_if_proven(now, before)
            }
            Inner::HalfOpen => None,
        }
    }

    fn close_if_proven(&mut self, now: Instant, before: BreakerState) -> Option<Transition> {
        if self.probe_successes >= self.config.close_after
            && now.saturating_since(self.half_open_since) >= self.config.observe
        {
            self.inner = Inner::Closed { since: now };
            self.samples.clear();
            self.fleet_probe_until = Instant::ZERO;
            self.early_spacing = self.config.early_probe_base;
        }
        self.transition(before)
    }

    /// Records an infrastructure failure (timeout, 5xx, refused…).
    /// `unit_random` jitters the open time.
    pub fn on_failure(&mut self, now: Instant, probe: bool, unit_random: f64) -> Option<Transition> {
        self.release(probe);
        self.consecutive = self.consecutive.saturating_add(1);
        self.sample(now, false);
        let before = self.public();
        let trip = match self.inner {
            Inner::Closed { .. } => self.consecutive >= self.config.consecutive_failures || self.rate_exceeded(),
            Inner::HalfOpen => true,
            // A failed early probe keeps it open; the spacing already grew.
            Inner::Open { .. } => false,
        };
        if trip {
            self.open(now, unit_random);
        }
        self.transition(before)
    }

    /// Releases a probe permit for an outcome that says nothing about health.
    pub fn on_neutral(&mut self, probe: bool) {
        self.release(probe);
    }

    fn release(&mut self, probe: bool) {
        if probe {
            self.probes_in_flight = self.probes_in_flight.saturating_sub(1);
        }
    }

    fn open(&mut self, now: Instant, unit_random: f64) {
        let base = self.config.open_base.saturating_mul(1u32 << self.ejections.min(20));
        let open_for =
            jittered(base.min(self.config.open_max), self.config.jitter, unit_random).min(self.config.open_max);
        self.ejections = self.ejections.saturating_add(1);
        self.inner = Inner::Open { until: now + open_for };
        self.opened_at = now;
        self.probe_successes = 0;
        self.consecutive = 0;
        self.early_probe_at = now + self.config.early_probe_base;
    }

    fn transition(&mut self, before: BreakerState) -> Option<Transition> {
        let after = self.public();
        if std::mem::discriminant(&before) == std::mem::discriminant(&after) {
            return None;
        }
        self.flips += 1;
        Some(Transition { from: before, to: after })
    }

    fn sample(&mut self, now: Instant, ok: bool) {
        self.samples.push_back((now, ok));
        while self.samples.len() > MAX_SAMPLES
            || self.samples.front().is_some_and(|(t, _)| now.saturating_since(*t) > self.config.window)
        {
            self.samples.pop_front();
        }
    }

    fn rate_exceeded(&self) -> bool {
        let total = self.samples.len() as u32;
        if total < self.config.min_samples {
            return false;
        }
        let failures = self.samples.iter().filter(|(_, ok)| !ok).count() as f64;
        failures / total as f64 >= self.config.failure_rate
    }
}

/// `d` scaled by a factor uniform in `[1 − jitter, 1 + jitter)`.
fn jittered(d: Duration, jitter: f64, unit_random: f64) -> Duration {
    let r = if unit_random.is_finite() { crate::policy::bound(unit_random, 0.0, 1.0) } else { 0.5 };
    let factor = 1.0 - jitter + 2.0 * jitter * r;
    Duration::try_from_secs_f64(d.as_secs_f64() * factor).unwrap_or(d)
}

mod fleet_probe;

#[cfg(test)]
mod tests;
