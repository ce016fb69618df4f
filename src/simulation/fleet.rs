//! Simulated providers for the fleet simulation: each follows a timeline
//! of modes (healthy, down, brownout, hang, flapping), may share a
//! server-side rate limit with others (one API key), may report another
//! chain, and counts every request it receives — so amplification is
//! measured by the fleet, not by the clients.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use crate::policy::classify::{Observation, Reply, RpcErrorInfo, TransportFailure};
use crate::policy::token_bucket::TokenBucket;
use crate::runtime::sim::SimRuntime;
use crate::runtime::{AttemptTarget, Purpose, Runtime, SeededRandom, Transport};
use crate::time::Instant;

/// What a provider does during a phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Answers after its latency.
    Healthy,
    /// Connection refused.
    Down,
    /// HTTP 503 with this probability, else healthy.
    Brownout(f64),
    /// Accepts and never answers.
    Hang,
    /// Healthy and down alternately, switching every `period`.
    Flapping(Duration),
    /// Healthy, but every answer takes this many times its latency (a
    /// congested chain, a slow network: every provider slows down alike).
    Slow(f64),
}

/// One simulated provider.
#[derive(Clone, Debug)]
pub struct Provider {
    /// Base latency of an answer.
    pub latency: Duration,
    /// `(from, mode)` phases, sorted by start.
    pub timeline: Vec<(Duration, Mode)>,
    /// Index of the server-side quota (API key) it enforces, if any.
    pub key: Option<usize>,
    /// The chain id it reports.
    pub chain_id: &'static str,
}

impl Provider {
    /// A healthy provider with `latency`.
    pub fn healthy(latency_ms: u64) -> Self {
        Provider {
            latency: Duration::from_millis(latency_ms),
            timeline: vec![(Duration::ZERO, Mode::Healthy)],
            key: None,
            chain_id: "0x1",
        }
    }

    /// The same provider following `timeline`.
    pub fn with(mut self, timeline: Vec<(Duration, Mode)>) -> Self {
        self.timeline = timeline;
        self
    }

    fn mode_at(&self, t: Duration) -> Mode {
        let mode = self.timeline.iter().rev().find(|(from, _)| *from <= t).map_or(Mode::Healthy, |(_, m)| *m);
        match mode {
            Mode::Flapping(period) if !period.is_zero() => {
                if (t.as_millis() / period.as_millis()) % 2 == 0 {
                    Mode::Healthy
                } else {
                    Mode::Down
                }
            }
            other => other,
        }
    }
}

/// What the fleet counted.
#[derive(Clone, Debug, Default)]
pub struct FleetCounters {
    /// Request attempts per provider (chain checks excluded).
    pub requests: Vec<u64>,
    /// Chain-id checks per provider.
    pub chain_checks: Vec<u64>,
    /// Request attempts per 100 ms bucket, all providers together.
    pub per_100ms: Vec<u64>,
    /// Request attempts per second, per provider.
    pub per_second_by_provider: Vec<Vec<u64>>,
    /// 429s sent per 1 s bucket.
    pub limited_per_second: Vec<u64>,
    /// Requests answered by a provider on the wrong chain.
    pub served_wrong_chain: u64,
    /// `eth_call` attempts that reverted.
    pub revert_attempts: u64,
    /// Attempts a server-side quota (an API key) let through.
    pub key_admitted: u64,
}

/// The fleet and its server-side quotas.
pub struct Fleet {
    runtime: SimRuntime,
    providers: Vec<Provider>,
    keys: RefCell<Vec<TokenBucket>>,
    rng: RefCell<SeededRandom>,
    counters: RefCell<FleetCounters>,
}

/// A simulated call: the method decides revert behaviour.
#[derive(Clone, Copy, Debug)]
pub struct SimCall {
    /// `eth_blockNumber`, or `eth_call` (which reverts).
    pub method: &'static str,
}

impl Fleet {
    /// A fleet of `providers`; `keys` are server-side limits in requests/s.
    pub fn new(runtime: &SimRuntime, providers: Vec<Provider>, keys: Vec<f64>, seed: u64) -> Rc<Self> {
        let n = providers.len();
        let keys = keys.into_iter().map(|rps| TokenBucket::new(rps, rps.max(1.0), Instant::ZERO, true)).collect();
        Rc::new(Fleet {
            runtime: runtime.clone(),
            providers,
            keys: RefCell::new(keys),
            rng: RefCell::new(SeededRandom::new(seed)),
            counters: RefCell::new(FleetCounters {
                requests: vec![0; n],
                chain_checks: vec![0; n],
                ..FleetCounters::default()
            }),
        })
    }

    /// A snapshot of the counters.
    pub fn counters(&self) -> FleetCounters {
        self.counters.borrow().clone()
    }

    fn bump(v: &mut Vec<u64>, i: usize) {
        if v.len() <= i {
            v.resize(i + 1, 0);
        }
        v[i] += 1;
    }
}

impl Transport for Fleet {
    type Payload = String;
    type Call = SimCall;

    async fn send(&self, call: &SimCall, target: AttemptTarget) -> Observation<String> {
        if target.purpose != Purpose::CheckedRequest {
            return self.exchange(call, target).await;
        }
        // `[eth_chainId, call]`: the call's exchange, its check answered beside it.
        let chain_id = self.providers.get(target.endpoint).map(|p| p.chain_id.to_string());
        match self.exchange(call, AttemptTarget { purpose: Purpose::Request, ..target }).await {
            Observation::Http { status: 200, reply: call @ (Reply::Result(_) | Reply::Error(_)), .. } => {
                self.counters.borrow_mut().chain_checks[target.endpoint] += 1;
                let items = crate::runtime::batch_text(&[chain_id.map(Reply::Result), Some(call)]);
                Observation::Http { status: 200, retry_after: None, reply: Reply::Result(items) }
            }
            failed => failed,
        }
    }
}

impl Fleet {
    /// A request answered to its caller by `endpoint`: counted when that
    /// provider serves another chain (its answer reached the caller; an
    /// answer the chain check dropped did not).
    pub fn answered_by(&self, endpoint: usize) {
        if self.providers.get(endpoint).is_some_and(|p| p.chain_id != "0x1") {
            self.counters.borrow_mut().served_wrong_chain += 1;
        }
    }

    /// One HTTP exchange: a lone chain check or a request.
    async fn exchange(&self, call: &SimCall, target: AttemptTarget) -> Observation<String> {
        let now = self.runtime.now().since_epoch();
        let Some(p) = self.providers.get(target.endpoint) else {
            return Observation::Transport(TransportFailure::ConnectionRefused);
        };
        let mode = p.mode_at(now);
        {
            // A chain check is overhead only when it succeeds; a failed one
            // is a failed attempt like any other.
            let mut c = self.counters.borrow_mut();
            if target.purpose == Purpose::ChainId && matches!(mode, Mode::Healthy) {
                c.chain_checks[target.endpoint] += 1;
            } else {
                c.requests[target.endpoint] += 1;
                Fleet::bump(&mut c.per_100ms, (now.as_millis() / 100) as usize);
                if c.per_second_by_provider.len() <= target.endpoint {
                    c.per_second_by_provider.resize(target.endpoint + 1, Vec::new());
                }
                Fleet::bump(&mut c.per_second_by_provider[target.endpoint], now.as_secs() as usize);
            }
        }
        let http = |status, retry_after: Option<&str>, reply| Observation::Http {
            status,
            retry_after: retry_after.map(str::to_string),
            reply,
        };
        let healthy = match mode {
            Mode::Down => return Observation::Transport(TransportFailure::ConnectionRefused),
            Mode::Hang => {
                self.runtime.sleep(target.timeout).await;
                return Observation::Transport(TransportFailure::Timeout);
            }
            Mode::Brownout(p503) => self.rng.borrow_mut().next_unit() >= p503,
            _ => true,
        };
        // Jittered latency: 50–150 % of the base.
        let slower = if let Mode::Slow(factor) = mode { factor } else { 1.0 };
        let latency = p.latency.mul_f64((0.5 + self.rng.borrow_mut().next_unit()) * slower);
        if latency >= target.timeout {
            self.runtime.sleep(target.timeout).await;
            return Observation::Transport(TransportFailure::Timeout);
        }
        self.runtime.sleep(latency).await;
        if !healthy {
            return http(503, None, Reply::NotJson);
        }
        if target.purpose == Purpose::ChainId {
            return http(200, None, Reply::Result(p.chain_id.to_string()));
        }
        if let Some(key) = p.key {
            let admitted =
                self.keys.borrow_mut().get_mut(key).is_none_or(|b| b.try_take(self.runtime.now(), 1.0).is_ok());
            if !admitted {
                let second = self.runtime.now().since_epoch().as_secs() as usize;
                Fleet::bump(&mut self.counters.borrow_mut().limited_per_second, second);
                return http(429, Some("1"), Reply::NotJson);
            }
            self.counters.borrow_mut().key_admitted += 1;
        }
        if call.method == "eth_call" {
            self.counters.borrow_mut().revert_attempts += 1;
            let error =
                RpcErrorInfo { code: Some(3), message: "execution reverted".into(), data: None, backoff_hint: None };
            return http(200, None, Reply::Error(error));
        }
        http(200, None, Reply::Result(format!("{:#x}", 1000 + now.as_secs())))
    }
}
