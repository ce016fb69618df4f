//! A deterministic fleet simulation: many independent clients (each its
//! own relayer: own budget, breakers, quota state) against a fleet of
//! simulated providers, on virtual time, from one seed.
//!
//! It exists to prove the pool's promises at scale — no retry storm when a
//! provider dies, an exhausted key is not hammered through another URL, a
//! recovering fleet is not flooded — which unit tests of single state
//! machines cannot show. `cargo test` runs it with targets; the
//! `simulate` example prints the table.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use crate::config::{RawOptions, RelayerConfig};
use crate::coord::Realm;
use crate::policy::Classifier;
use crate::pool::options::EndpointSpec;
use crate::pool::{Call, Pipeline, PipelineEvent};
use crate::redact::EndpointUrl;
use crate::runtime::sim::{join_all, SimRuntime};
use crate::runtime::{Runtime, Transport};
use crate::time::Instant;

pub mod fleet;
pub mod scenarios;
pub mod store;

use fleet::{Fleet, Provider, SimCall};
use store::{SimStore, StoreBehaviour};

/// One simulated situation.
pub struct Scenario {
    /// Short name for the table.
    pub name: &'static str,
    /// The providers, in the clients' priority order.
    pub providers: Vec<Provider>,
    /// Server-side limits (requests/s) of shared API keys.
    pub keys: Vec<f64>,
    /// Independent clients.
    pub clients: usize,
    /// Requests per second per client.
    pub rate: f64,
    /// How long clients send.
    pub duration: Duration,
    /// Fraction of requests that are reverting `eth_call`s.
    pub revert_fraction: f64,
    /// When a total outage ends, for the post-recovery peak.
    pub recovery_at: Option<Duration>,
    /// Provider state changes in the run (for the flapping target).
    pub flaps: u64,
    /// The quota group each endpoint names (empty: none).
    pub groups: Vec<Option<&'static str>>,
    /// Client options (defaults unless the scenario says otherwise).
    pub options: fn() -> RawOptions,
    /// Every client in one realm (relayers of one process, sharing what
    /// they learn); otherwise each client is alone (independent users).
    pub realm: bool,
    /// With `realm`: the clients are spread over this many processes (one
    /// realm each; 0 or 1: one process).
    pub processes: usize,
    /// With several processes: the store they share (`store.rs`), if any.
    pub store: Option<StoreBehaviour>,
}

/// What one run measured.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Scenario name.
    pub name: &'static str,
    /// Logical requests issued.
    pub logical: u64,
    /// Non-revert requests.
    pub reads: u64,
    /// Non-revert requests that succeeded.
    pub read_successes: u64,
    /// Reverting requests issued.
    pub reverts: u64,
    /// Median latency of successful reads (ms).
    pub p50_ms: f64,
    /// 99th percentile latency of successful reads (ms).
    pub p99_ms: f64,
    /// Request attempts counted by the fleet ÷ logical requests.
    pub amplification: f64,
    /// Chain-id checks counted by the fleet (once per client and endpoint).
    pub chain_checks: u64,
    /// 429s sent by the fleet.
    pub limited: u64,
    /// 429s sent after the first 10 s (after the first cooldowns).
    pub limited_after_10s: u64,
    /// Upstream attempts per reverting request.
    pub attempts_per_revert: f64,
    /// Peak upstream attempts per second after recovery ÷ steady demand per second.
    pub peak_after_recovery: Option<f64>,
    /// The same over 100 ms windows (noisier: random arrivals alone reach ~1.3×).
    pub peak_100ms_after_recovery: Option<f64>,
    /// Average breaker state changes per client.
    pub flips_per_client: f64,
    /// Provider flaps in the run.
    pub flaps: u64,
    /// Requests answered by a wrong-chain provider.
    pub served_wrong_chain: u64,
    /// Failed non-revert requests by stop reason.
    pub failures: std::collections::BTreeMap<&'static str, u64>,
    /// Lease asks the fleet store received (0 without one).
    pub store_asks: u64,
    /// Attempts the shared API keys let through (what the fleet used of what it pays for).
    pub key_served: u64,
}

impl Report {
    /// Fraction of non-revert requests that succeeded.
    pub fn success_rate(&self) -> f64 {
        if self.reads == 0 {
            1.0
        } else {
            self.read_successes as f64 / self.reads as f64
        }
    }
}

struct Outcome {
    ok: bool,
    revert: bool,
    latency: Duration,
    failure: Option<&'static str>,
}

/// Runs `scenario` deterministically from `seed`.
pub fn run(scenario: &Scenario, seed: u64) -> Report {
    run_with_counters(scenario, seed).0
}

/// Runs `scenario` and also returns the fleet's raw counters (timelines).
pub fn run_with_counters(scenario: &Scenario, seed: u64) -> (Report, fleet::FleetCounters) {
    let rt = SimRuntime::new(seed);
    let fleet = Fleet::new(&rt, scenario.providers.clone(), scenario.keys.clone(), seed ^ 0x5eed);
    let outcomes: Rc<RefCell<Vec<Outcome>>> = Rc::default();
    let requests: Rc<RefCell<Vec<crate::runtime::sim::JoinHandle<()>>>> = Rc::default();
    let processes = scenario.processes.max(1);
    let realms: Rc<Vec<Realm>> = Rc::new((0..processes).map(|_| Realm::new()).collect());
    let store = scenario.store.filter(|_| scenario.realm).map(|b| SimStore::start(&rt, b, Rc::clone(&realms)));
    let pipelines: Vec<Rc<Pipeline>> = (0..scenario.clients)
        .map(|i| Rc::new(client(scenario, rt.now(), scenario.realm.then(|| &realms[i % processes]))))
        .collect();

    let loops: Vec<_> = pipelines
        .iter()
        .enumerate()
        .map(|(i, pipeline)| {
            let (rt2, fleet, outcomes, requests, pipeline) =
                (rt.clone(), fleet.clone(), outcomes.clone(), requests.clone(), pipeline.clone());
            let to_store = store.clone().map(|store| (store, i % processes));
            let (rate, duration, revert_fraction) = (scenario.rate, scenario.duration, scenario.revert_fraction);
            rt.spawn(async move {
                let mean = Duration::from_secs_f64(1.0 / rate);
                // Clients start over the first 10 s, as real ones do.
                rt2.sleep(Duration::from_secs(10).mul_f64(rt2.random_unit())).await;
                loop {
                    rt2.sleep(mean.mul_f64(0.5 + rt2.random_unit())).await;
                    if rt2.now().since_epoch() >= duration {
                        break;
                    }
                    let revert = rt2.random_unit() < revert_fraction;
                    let handle = request(&rt2, &fleet, &pipeline, &outcomes, revert, to_store.clone());
                    requests.borrow_mut().push(handle);
                }
            })
        })
        .collect();
    let requests_for_root = requests.clone();
    rt.block_on(async move {
        join_all(loops).await;
        let pending: Vec<_> = requests_for_root.borrow_mut().drain(..).collect();
        join_all(pending).await;
    })
    .unwrap_or_default();

    // A breaker shared by a realm's members flips once for all of them.
    let mut seen = Vec::new();
    let mut flips = 0u64;
    for pipeline in &pipelines {
        pipeline.with_router(|r| {
            for e in &r.endpoints {
                let breaker = Rc::as_ptr(&e.breaker);
                if !seen.contains(&breaker) {
                    seen.push(breaker);
                    flips += e.breaker.borrow().flips();
                }
            }
        });
    }
    let outcomes = outcomes.borrow();
    let mut report = report(scenario, &outcomes, &fleet, flips);
    report.store_asks = store.map_or(0, |s| s.asks.get());
    (report, fleet.counters())
}

fn client(scenario: &Scenario, now: Instant, realm: Option<&Realm>) -> Pipeline {
    let specs = (0..scenario.providers.len())
        .map(|i| {
            let url = EndpointUrl::parse(&format!("http://sim-{i}.invalid:8545"), "upstreams")
                .unwrap_or_else(|_| unreachable_url());
            let mut spec = EndpointSpec::from_url(url, i);
            spec.quota_group = scenario.groups.get(i).copied().flatten().map(str::to_string);
            spec
        })
        .collect();
    let config = match RelayerConfig::build(specs, (scenario.options)()) {
        Ok(c) => c,
        Err(e) => panic!("scenario {} has an invalid client config: {e}", scenario.name),
    };
    Pipeline::in_realm(config, Classifier::default(), now, realm)
}

fn unreachable_url() -> EndpointUrl {
    panic!("simulation URLs are valid by construction")
}

fn request(
    rt: &SimRuntime,
    fleet: &Rc<Fleet>,
    pipeline: &Rc<Pipeline>,
    outcomes: &Rc<RefCell<Vec<Outcome>>>,
    revert: bool,
    store: Option<(Rc<SimStore>, usize)>,
) -> crate::runtime::sim::JoinHandle<()> {
    let (rt2, fleet, pipeline, outcomes) = (rt.clone(), fleet.clone(), pipeline.clone(), outcomes.clone());
    rt.spawn(async move {
        let method = if revert { "eth_call" } else { "eth_blockNumber" };
        let call = SimCall { method };
        let start = rt2.now();
        let emit = |event: PipelineEvent| {
            if let Some((store, from)) = &store {
                store.on_event(*from, &event);
            }
        };
        let result = pipeline.execute(&rt2, Call::new(method), |t| fleet.send(&call, t), &emit).await;
        if let Ok(success) = &result {
            fleet.answered_by(success.endpoint);
        }
        let failure = result.as_ref().err().map(|f| f.reason.as_str());
        outcomes.borrow_mut().push(Outcome {
            ok: result.is_ok(),
            revert,
            latency: rt2.now().saturating_since(start),
            failure,
        });
    })
}

fn report(scenario: &Scenario, outcomes: &[Outcome], fleet: &Fleet, flips: u64) -> Report {
    let counters = fleet.counters();
    let logical = outcomes.len() as u64;
    let reads: Vec<&Outcome> = outcomes.iter().filter(|o| !o.revert).collect();
    let mut latencies: Vec<f64> = reads.iter().filter(|o| o.ok).map(|o| o.latency.as_secs_f64() * 1000.0).collect();
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| latencies.get(((latencies.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0);
    let attempts: u64 = counters.requests.iter().sum();
    let reverts = outcomes.iter().filter(|o| o.revert).count() as u64;
    let steady_per_100ms = scenario.clients as f64 * scenario.rate / 10.0;
    let from = scenario.recovery_at.map(|at| (at.as_millis() / 100) as usize);
    let peak_100ms_after_recovery = from.map(|from| {
        let peak = counters.per_100ms.iter().skip(from).take(400).copied().max().unwrap_or(0);
        peak as f64 / steady_per_100ms
    });
    let peak_after_recovery = from.map(|from| {
        let window: Vec<u64> = counters.per_100ms.iter().skip(from).take(400).copied().collect();
        let peak = window.windows(10).map(|w| w.iter().sum::<u64>()).max().unwrap_or(0);
        peak as f64 / (steady_per_100ms * 10.0)
    });
    let mut failures = std::collections::BTreeMap::new();
    for reason in reads.iter().filter_map(|o| o.failure) {
        *failures.entry(reason).or_insert(0) += 1;
    }
    Report {
        failures,
        name: scenario.name,
        logical,
        reads: reads.len() as u64,
        read_successes: reads.iter().filter(|o| o.ok).count() as u64,
        reverts,
        p50_ms: pct(0.5),
        p99_ms: pct(0.99),
        amplification: if logical == 0 { 0.0 } else { attempts as f64 / logical as f64 },
        chain_checks: counters.chain_checks.iter().sum(),
        limited: counters.limited_per_second.iter().sum(),
        limited_after_10s: counters.limited_per_second.iter().skip(10).sum(),
        attempts_per_revert: if reverts == 0 { 0.0 } else { counters.revert_attempts as f64 / reverts as f64 },
        peak_after_recovery,
        peak_100ms_after_recovery,
        flips_per_client: flips as f64 / scenario.clients.max(1) as f64,
        flaps: scenario.flaps,
        served_wrong_chain: counters.served_wrong_chain,
        store_asks: 0,
        key_served: counters.key_admitted,
    }
}

/// The reports as a markdown table.
pub fn table(reports: &[Report]) -> String {
    let mut out = String::from(
        "| scenario | requests | success | p50 ms | p99 ms | amplification | chain checks | 429s (after 10 s) | attempts/revert | peak rate after recovery ÷ demand | breaker flips/client (flaps) | served by wrong chain |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in reports {
        let peak = match (r.peak_after_recovery, r.peak_100ms_after_recovery) {
            (Some(p), Some(q)) => format!("{p:.2}× (100 ms: {q:.2}×)"),
            _ => "–".to_string(),
        };
        let reverts = if r.reverts == 0 { "–".to_string() } else { format!("{:.2}", r.attempts_per_revert) };
        let flaps = if r.flaps == 0 { String::new() } else { format!(" ({})", r.flaps) };
        out.push_str(&format!(
            "| {} | {} | {:.2} % | {:.0} | {:.0} | {:.3} | {} | {} ({}) | {} | {} | {:.1}{} | {} |\n",
            r.name,
            r.logical,
            r.success_rate() * 100.0,
            r.p50_ms,
            r.p99_ms,
            r.amplification,
            r.chain_checks,
            r.limited,
            r.limited_after_10s,
            reverts,
            peak,
            r.flips_per_client,
            flaps,
            r.served_wrong_chain,
        ));
    }
    out
}
