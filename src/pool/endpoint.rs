//! The live state of one endpoint: breaker, slow start, in-flight count,
//! latency per method class, counters, chain-id status and head.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use super::options::{EndpointSpec, PoolOptions};
use crate::policy::breaker::Breaker;
use crate::policy::slow_start::{RateMeter, SlowStart};
use crate::policy::token_bucket::TokenBucket;
use crate::rpc::methods::{MethodClass, CLASSES};
use crate::time::Instant;

/// Whether the endpoint serves the expected chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainStatus {
    /// Not checked yet: the first request checks `eth_chainId` first.
    Unknown,
    /// Checked and matching.
    Verified,
    /// Serves another chain: disabled for good.
    Mismatch(u64),
}

pub use crate::policy::tail::{Ewma, TailLatency, TRUSTED_TAIL_SAMPLES};

/// An attempt timeout from a slow-end latency (ms): `multiplier` × it,
/// between `floor` and `ceiling`; the ceiling without a latency or when
/// adaptive timeouts are off.
pub fn adaptive_timeout(tail_ms: Option<f64>, ceiling: Duration, adaptive: Option<(f64, Duration)>) -> Duration {
    match (tail_ms, adaptive) {
        (Some(ms), Some((multiplier, floor))) => {
            crate::time::duration_from_millis_f64(ms * multiplier).max(floor).min(ceiling)
        }
        _ => ceiling,
    }
}

/// One endpoint's live state.
#[derive(Clone, Debug)]
pub struct EndpointState {
    /// Its configuration.
    pub spec: EndpointSpec,
    /// Index of its quota group in the router.
    pub group: usize,
    /// Circuit breaker, shared with the realm's other members that use the
    /// same endpoint with the same breaker tuning (`coord::realm`).
    pub breaker: Rc<RefCell<Breaker>>,
    /// Warm-up ramp.
    pub slow_start: SlowStart,
    /// Attempts in flight.
    pub in_flight: u32,
    /// Latency in ms per method class.
    pub latency: [Ewma; CLASSES],
    /// Slow-end latency of successes, per method class (adaptive timeouts).
    pub tail: [TailLatency; CLASSES],
    /// Healthy outcomes.
    pub successes: u64,
    /// Infrastructure failures.
    pub failures: u64,
    /// Chain-id status.
    pub chain: ChainStatus,
    /// When the chain id was last verified.
    pub chain_checked_at: Option<Instant>,
    /// It refused a JSON-RPC batch: its chain checks go alone
    /// (`pipeline/chain_check.rs`).
    pub refuses_batches: bool,
    /// The last head it reported.
    pub head: Option<u64>,
    /// When it reported it: a head not heard for a while (a node that
    /// died) is no reference for the others' lag (`Router::best_head`).
    pub head_at: Option<Instant>,
    /// How far behind the best known head it was when it last reported,
    /// and when. Heads are only compared at the moment they are observed:
    /// an old observation of a quiet endpoint says nothing about now.
    pub lag: Option<(u64, Instant)>,
    /// Rest requested by the endpoint itself (a 503 with Retry-After).
    pub rest_until: Instant,
    /// Out of service until then: it refused our credentials (HTTP
    /// 401/403, "invalid API key"). Keys do not fix themselves in seconds.
    pub refused_until: Option<Instant>,
    /// Throughput while healthy.
    pub meter: RateMeter,
    /// The warm-up rate cap (present only while slow start runs).
    pub warm: Option<Warm>,
}

/// The rate cap of a warming endpoint.
#[derive(Clone, Debug)]
pub struct Warm {
    bucket: TokenBucket,
    since: Instant,
    denied_at: Option<Instant>,
}

impl EndpointState {
    /// Fresh state for `spec` (slow start begins now, as for a joining node).
    pub fn new(spec: EndpointSpec, group: usize, options: &PoolOptions, now: Instant) -> Self {
        EndpointState {
            spec,
            group,
            breaker: Rc::new(RefCell::new(Breaker::new(options.breaker, now))),
            slow_start: SlowStart::warm(options.slow_start),
            in_flight: 0,
            latency: [Ewma::default(); CLASSES],
            tail: [TailLatency::default(); CLASSES],
            successes: 0,
            failures: 0,
            chain: if options.check_chain { ChainStatus::Unknown } else { ChainStatus::Verified },
            chain_checked_at: None,
            refuses_batches: false,
            head: None,
            head_at: None,
            lag: None,
            rest_until: Instant::ZERO,
            refused_until: None,
            meter: RateMeter::new(now),
            warm: None,
        }
    }

    /// Starts slow start after a recovery: the ramp restarts and the rate
    /// bucket starts empty.
    pub fn begin_warmup(&mut self, now: Instant) {
        self.slow_start.restart(now);
        self.meter.restart(); // what it serves while warming is not its healthy rate
        if !self.meter.has_rate() {
            // No healthy rate to return to (it never served a full second):
            // nothing to cap against. Share and concurrency still ramp, and
            // herds are paced pool-wide after total outages. (Capping at
            // minRps here held a fresh single-node client to 1 request/s for
            // the whole warm-up: found by the chaos transaction test.)
            self.warm = None;
            return;
        }
        let rate = self.slow_start.rate_cap(self.meter.rate(), self.slow_start.ramp(now, now));
        // One token to start with: the probe that proves recovery goes at once;
        // everything after it is paced.
        self.warm = Some(Warm { bucket: TokenBucket::new(rate, 1.0, now, true), since: now, denied_at: None });
    }

    /// While warming: `Ok` if one more request fits the ramped rate cap,
    /// else the wait. The cap goes away once the ramp passed 1 and nothing
    /// was held back by it for a while (no backlog left to flood out).
    pub fn warm_check(&mut self, now: Instant) -> Result<(), Duration> {
        let healthy = self.meter.rate();
        let slow_start = self.slow_start;
        let Some(warm) = self.warm.as_mut() else { return Ok(()) };
        let ramp = slow_start.ramp(warm.since, now);
        let calm = warm.denied_at.is_none_or(|t| now.saturating_since(t) >= Duration::from_secs(2));
        if ramp >= 1.0 && calm {
            self.warm = None;
            return Ok(());
        }
        warm.bucket.set_rate(now, slow_start.rate_cap(healthy, ramp));
        let verdict = warm.bucket.check(now, 1.0);
        if verdict.is_err() {
            warm.denied_at = Some(now);
        }
        verdict
    }

    /// Takes the warm-up token of a reserved request.
    pub fn warm_take(&mut self, now: Instant) {
        if let Some(warm) = self.warm.as_mut() {
            let _ = warm.bucket.try_take(now, 1.0);
        }
    }

    /// Concurrency allowed now: the configured limit scaled by slow start.
    pub fn concurrency_limit(&mut self, now: Instant) -> u32 {
        let factor = self.slow_start.factor(now);
        ((self.spec.max_concurrency as f64 * factor).ceil() as u32).max(1)
    }

    /// Latency estimate (ms) for a class; unknown endpoints borrow the
    /// fastest class estimate they have, else `None`.
    pub fn latency_ms(&self, class: MethodClass) -> Option<f64> {
        self.latency[class as usize].value().or_else(|| self.latency.iter().filter_map(Ewma::value).reduce(f64::min))
    }

    /// The attempt timeout for `class`: a multiple of the slow-end latency
    /// of this endpoint's successes, between `floor` and `ceiling` (the
    /// configured timeout), once it has enough history. A hung node then
    /// costs about its usual worst latency, not the full timeout.
    pub fn attempt_timeout(
        &self,
        class: MethodClass,
        ceiling: Duration,
        adaptive: Option<(f64, Duration)>,
    ) -> Duration {
        adaptive_timeout(self.trusted_tail(class), ceiling, adaptive)
    }

    /// The slow-end latency of this endpoint's successes for `class`, once
    /// there are [`TRUSTED_TAIL_SAMPLES`] of them (adaptive timeouts and
    /// hedge delays both wait for that much history).
    pub fn trusted_tail(&self, class: MethodClass) -> Option<f64> {
        self.tail[class as usize].value(TRUSTED_TAIL_SAMPLES)
    }

    /// Records an attempt's duration.
    pub fn observe_latency(&mut self, class: MethodClass, elapsed: Duration) {
        self.latency[class as usize].observe(elapsed.as_secs_f64() * 1000.0);
    }

    /// Records a head seen from this endpoint at `now`; a head that goes
    /// back in time (a reorg or a node reset) is believed, a jump beyond
    /// `max_jump` blocks past the best known head is not.
    pub fn observe_head(&mut self, block: u64, best_known: Option<u64>, max_jump: u64, now: Instant) {
        if best_known.is_some_and(|best| block > best.saturating_add(max_jump)) {
            return;
        }
        self.head = Some(block);
        self.head_at = Some(now);
        self.lag = Some((best_known.map_or(0, |best| best.saturating_sub(block)), now));
    }

    /// Whether its chain id should be checked again: `recheck` after the
    /// last check (for a verified node and a disabled one alike: a backend
    /// can be swapped either way). Zero means never.
    pub fn chain_check_due(&self, now: Instant, recheck: Duration) -> bool {
        !recheck.is_zero() && self.chain_checked_at.is_some_and(|at| now.saturating_since(at) >= recheck)
    }

    /// Whether it is out of service for serving another chain (until its
    /// next re-check is due).
    pub fn chain_disabled(&self, now: Instant, recheck: Duration) -> bool {
        matches!(self.chain, ChainStatus::Mismatch(_)) && !self.chain_check_due(now, recheck)
    }

    /// Whether it refused our credentials recently (out of service).
    pub fn refused(&self, now: Instant) -> bool {
        self.refused_until.is_some_and(|until| until > now)
    }

    /// Whether it was more than `max_lag` blocks behind when last heard
    /// from, within `memory` (after that it gets another chance).
    pub fn lagging(&self, max_lag: u64, now: Instant, memory: Duration) -> bool {
        self.lag.is_some_and(|(lag, at)| lag > max_lag && now.saturating_since(at) < memory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_from_the_future_are_not_believed() {
        let url = crate::redact::EndpointUrl::parse("http://127.0.0.1:1", "u").unwrap();
        let mut s = EndpointState::new(EndpointSpec::from_url(url, 0), 0, &PoolOptions::default(), Instant::ZERO);
        let now = Instant::ZERO;
        s.observe_head(100, Some(100), 1000, now);
        s.observe_head(u64::MAX, Some(100), 1000, now);
        assert_eq!(s.head, Some(100));
        s.observe_head(90, Some(100), 1000, now);
        assert_eq!(s.head, Some(90), "going back is believed (reorg, resync)");
        assert!(s.lagging(5, now, Duration::from_secs(30)));
        assert!(!s.lagging(5, now + Duration::from_secs(30), Duration::from_secs(30)), "another chance later");
        s.observe_head(100, Some(106), 1000, now);
        assert!(s.lagging(5, now, Duration::from_secs(30)), "6 behind, more than 5");
        s.observe_head(100, Some(105), 1000, now);
        assert!(!s.lagging(5, now, Duration::from_secs(30)), "exactly 5 behind is not lagging");
        s.refused_until = Some(now + Duration::from_secs(1));
        assert!(s.refused(now) && !s.refused(now + Duration::from_secs(1)), "refused until, not at, the instant");
        s.observe_head(1100, Some(100), 1000, now);
        assert_eq!(s.head, Some(1100), "exactly the largest jump allowed is believed");
        s.observe_head(1101 + 1000, Some(1100), 1000, now);
        assert_eq!(s.head, Some(1100));
    }

    #[test]
    fn latency_is_kept_in_milliseconds() {
        let url = crate::redact::EndpointUrl::parse("http://127.0.0.1:1", "u").unwrap();
        let mut s = EndpointState::new(EndpointSpec::from_url(url, 0), 0, &PoolOptions::default(), Instant::ZERO);
        s.observe_latency(MethodClass::Cheap, Duration::from_millis(250));
        assert_eq!(s.latency_ms(MethodClass::Cheap), Some(250.0));
    }
}

#[cfg(test)]
mod timeout_tests {
    use super::*;
    use crate::redact::EndpointUrl;

    #[test]
    fn the_attempt_timeout_adapts_to_the_slow_end_of_observed_latency() {
        let url = EndpointUrl::parse("http://127.0.0.1:1", "u").unwrap();
        let mut s = EndpointState::new(EndpointSpec::from_url(url, 0), 0, &PoolOptions::default(), Instant::ZERO);
        let adaptive = Some((5.0, Duration::from_secs(2)));
        let ceiling = Duration::from_secs(10);
        assert_eq!(
            s.attempt_timeout(MethodClass::Call, ceiling, adaptive),
            ceiling,
            "no history: the configured timeout"
        );
        for _ in 0..20 {
            s.tail[MethodClass::Call as usize].observe(100.0);
        }
        assert_eq!(
            s.attempt_timeout(MethodClass::Call, ceiling, adaptive),
            Duration::from_secs(2),
            "5 × 100 ms, floored at 2 s"
        );
        for _ in 0..5 {
            s.tail[MethodClass::Call as usize].observe(3000.0);
        }
        let t = s.attempt_timeout(MethodClass::Call, ceiling, adaptive);
        assert!(t == ceiling, "slow successes push it up to the ceiling: {t:?}");
        assert_eq!(s.attempt_timeout(MethodClass::Heavy, ceiling, adaptive), ceiling, "per method class");
        assert_eq!(s.attempt_timeout(MethodClass::Call, ceiling, None), ceiling, "off when disabled");
    }
}
