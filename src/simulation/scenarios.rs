//! The standard scenarios: 1,000 independent clients, 0.5 requests/s
//! each (500 requests/s in all), against 3–4 providers, for 60 s of
//! virtual time.

use std::time::Duration;

use super::fleet::{Mode, Provider};
use super::store::StoreBehaviour;
use super::Scenario;
use crate::config::RawOptions;

const S: fn(u64) -> Duration = Duration::from_secs;

fn defaults() -> RawOptions {
    RawOptions::default()
}

fn base(name: &'static str, providers: Vec<Provider>) -> Scenario {
    Scenario {
        name,
        providers,
        keys: Vec::new(),
        clients: 1000,
        rate: 0.5,
        duration: S(60),
        revert_fraction: 0.0,
        recovery_at: None,
        flaps: 0,
        groups: Vec::new(),
        options: defaults,
        realm: false,
        processes: 1,
        store: None,
    }
}

fn quota_options(cu_per_second: f64, share: f64) -> RawOptions {
    let mut o = RawOptions::default();
    let burst = if cu_per_second.is_finite() { 10.0 } else { 0.0 };
    let q = crate::policy::quota::QuotaConfig { cu_per_second, share, burst, ..Default::default() };
    o.pool.quota_groups = vec![("keyA".into(), q)];
    o
}

fn three() -> Vec<Provider> {
    vec![Provider::healthy(40), Provider::healthy(60), Provider::healthy(80)]
}

/// Every scenario, in table order.
pub fn all() -> Vec<Scenario> {
    let mut list = Vec::new();
    list.push(base("healthy", three()));

    let mut p = three();
    p[0] = p[0].clone().with(vec![(S(0), Mode::Down)]);
    list.push(base("one provider down", p));

    let mut p = three();
    p[0] = p[0].clone().with(vec![(S(0), Mode::Brownout(0.3))]);
    list.push(base("brownout (30 % 503)", p));

    let mut p = three();
    p[0] = p[0].clone().with(vec![(S(0), Mode::Hang)]);
    list.push(base("one provider hangs", p));

    // Providers 0 and 1 are two URLs on one API key limited to 150 req/s
    // (1,500 CU/s at 10 CU a call); provider 2 has its own key with room to
    // spare. First the clients are not told the plan (AIMD learns it), then
    // each is given its static share of it.
    let mut p = vec![Provider::healthy(40), Provider::healthy(50), Provider::healthy(80)];
    p[0].key = Some(0);
    p[1].key = Some(0);
    let mut s = base("shared key, plan unknown", p.clone());
    s.keys = vec![150.0];
    s.groups = vec![Some("keyA"), Some("keyA"), None];
    s.options = || quota_options(f64::INFINITY, 1.0);
    list.push(s);
    let mut s = base("shared key, 1/1000 share each", p);
    s.keys = vec![150.0];
    s.groups = vec![Some("keyA"), Some("keyA"), None];
    s.options = || quota_options(1500.0, 0.001);
    list.push(s);

    let mut p = three();
    p[0] = p[0].clone().with(vec![(S(0), Mode::Flapping(S(3)))]);
    let mut s = base("flapping every 3 s", p);
    s.flaps = 20;
    list.push(s);

    let outage = |p: Provider| p.with(vec![(S(0), Mode::Healthy), (S(10), Mode::Down), (S(25), Mode::Healthy)]);
    let p = three().into_iter().map(outage).collect();
    let mut s = base("all down 15 s, then back", p);
    s.recovery_at = Some(S(25));
    list.push(s);

    let mut s = base("10 % reverts", three());
    s.revert_fraction = 0.1;
    list.push(s);

    // The wrong-chain node is first and fastest; clients state the chain they want.
    let mut p = three();
    p.insert(0, Provider { chain_id: "0x5", ..Provider::healthy(10) });
    let mut s = base("wrong-chain endpoint first", p);
    s.options = || {
        let mut o = RawOptions::default();
        o.pool.chain_id = Some(1);
        o
    };
    list.push(s);
    list
}

/// Relayers of one process (one realm): 100 relayers at 1 request/s each
/// for 30 s, where providers 0 and 1 are two URLs on one API key limited
/// to 60 requests/s (demand above it) and provider 2 has room; the plan is
/// not configured. Each scenario twice: relayers alone, then sharing.
pub fn one_process() -> Vec<Scenario> {
    let mut p = vec![Provider::healthy(40), Provider::healthy(50), Provider::healthy(80)];
    p[0].key = Some(0);
    p[1].key = Some(0);
    let shared_key = |name, realm| {
        let mut s = base(name, p.clone());
        s.clients = 100;
        s.rate = 1.0;
        s.duration = S(30);
        s.keys = vec![60.0];
        s.groups = vec![Some("keyA"), Some("keyA"), None];
        s.options = || quota_options(f64::INFINITY, 1.0);
        s.realm = realm;
        s
    };
    let outage = |p: Provider| p.with(vec![(S(0), Mode::Healthy), (S(12), Mode::Down), (S(17), Mode::Healthy)]);
    let all_down = |name, realm| {
        let mut s = base(name, three().into_iter().map(outage).collect());
        s.clients = 100;
        s.rate = 1.0;
        s.duration = S(30);
        s.recovery_at = Some(S(17));
        s.realm = realm;
        s
    };
    // Every endpoint answers in 1.5 s: past a fresh relayer's initial hedge
    // delay (1 s), so each one's first reads hedge, on endpoints that are
    // no faster than the first: extra attempts that cannot help.
    let slow_alike = |name, realm| {
        let mut s = base(name, vec![Provider::healthy(1500), Provider::healthy(1500), Provider::healthy(1500)]);
        s.clients = 1000;
        s.rate = 0.2;
        s.duration = S(30);
        s.realm = realm;
        s
    };
    // Every endpoint fast, then 30 times slower for 10 s (a congested
    // chain): every attempt outlives the tails the realm learned, and a
    // hedge onto a peer exactly as slow cannot help.
    let slow_down = |name, clients, rate, realm| {
        let slowing =
            |p: Provider| p.with(vec![(S(0), Mode::Healthy), (S(10), Mode::Slow(30.0)), (S(20), Mode::Healthy)]);
        let mut s = base(name, three().into_iter().map(slowing).collect());
        s.duration = S(30);
        s.clients = clients;
        s.rate = rate;
        s.realm = realm;
        s
    };
    let mut brownout = three();
    brownout[0] = brownout[0].clone().with(vec![(S(0), Mode::Brownout(0.3))]);
    let browning = |name, realm| {
        let mut s = base(name, brownout.clone());
        s.realm = realm;
        s
    };
    let mut hung = three();
    hung[0] = hung[0].clone().with(vec![(S(0), Mode::Hang)]);
    let hangs = |name, realm| {
        let mut s = base(name, hung.clone());
        s.realm = realm;
        s
    };
    let mut later = three();
    later[0] = later[0].clone().with(vec![(S(0), Mode::Healthy), (S(10), Mode::Hang)]);
    let hangs_later = |name, realm| {
        let mut s = base(name, later.clone());
        s.clients = 300;
        s.rate = 3.0;
        s.duration = S(20);
        s.realm = realm;
        s
    };
    vec![
        slow_alike("1,000 in a process: all slow alike, alone", false),
        slow_alike("1,000 in a process: all slow alike, sharing", true),
        slow_down("1,000 in a process: every endpoint slows down 10 s, alone", 1000, 0.5, false),
        slow_down("1,000 in a process: every endpoint slows down 10 s, sharing", 1000, 0.5, true),
        slow_down("20 busy relayers: every endpoint slows down 10 s, alone", 20, 25.0, false),
        hangs("1,000 in a process: one provider hangs, sharing", true),
        hangs_later("300 busy relayers: a warmed-up provider hangs, sharing", true),
        browning("1,000 in a process: brownout (30 % 503), sharing", true),
        shared_key("100 in a process: shared key, alone", false),
        shared_key("100 in a process: shared key, sharing", true),
        all_down("100 in a process: all down 5 s, alone", false),
        all_down("100 in a process: all down 5 s, sharing", true),
    ]
}

/// A fleet of processes on one key: 10,000 relayers in 20 processes (500
/// in each, one realm per process) at 0.1 requests/s each, for 30 s;
/// providers 0 and 1 are two URLs on one API key limited to 150
/// requests/s (far below the demand of 1,000/s), provider 2 has room; the
/// plan is not configured. Without a store, then on a simulated store
/// (`store.rs`: 2 ms, 1 % of asks and news lost), on one that is down from
/// 10 s to 20 s, and on a slow one (every answer 600 ms late).
pub fn processes() -> Vec<Scenario> {
    let mut p = vec![Provider::healthy(40), Provider::healthy(50), Provider::healthy(80)];
    p[0].key = Some(0);
    p[1].key = Some(0);
    let fleet = |name, store| {
        let mut s = base(name, p.clone());
        s.clients = 10_000;
        s.rate = 0.1;
        s.duration = S(30);
        s.keys = vec![150.0];
        s.groups = vec![Some("keyA"), Some("keyA"), None];
        s.options = || quota_options(f64::INFINITY, 1.0);
        s.realm = true;
        s.processes = 20;
        s.store = store;
        s
    };
    let store = |latency, down| Some(StoreBehaviour { latency, loss: 0.01, down });
    let outage = |p: Provider| p.with(vec![(S(0), Mode::Healthy), (S(12), Mode::Down), (S(17), Mode::Healthy)]);
    let all_down_in = |name, store, clients: usize, processes| {
        let mut s = base(name, three().into_iter().map(outage).collect());
        s.clients = clients;
        s.rate = 100.0 / clients as f64;
        s.duration = S(30);
        s.recovery_at = Some(S(17));
        s.realm = true;
        s.processes = processes;
        s.store = store;
        s.options = || RawOptions { deadline_ms: Some(10_000.0), ..RawOptions::default() };
        s
    };
    let all_down = |name, store| all_down_in(name, store, 100, 4);
    vec![
        fleet("10,000 in 20 processes: shared key, no store", None),
        fleet("10,000 in 20 processes: shared key, on a store", store(Duration::from_millis(2), None)),
        fleet(
            "10,000 in 20 processes: shared key, store down 10-20 s",
            store(Duration::from_millis(2), Some((S(10), S(20)))),
        ),
        fleet("10,000 in 20 processes: shared key, slow store (600 ms)", store(Duration::from_millis(600), None)),
        all_down("100 in 4 processes: all down 5 s, no store", None),
        all_down("100 in 4 processes: all down 5 s, on a store", store(Duration::from_millis(2), None)),
        all_down_in("1,000 in 50 processes: all down 5 s, no store", None, 1_000, 50),
        all_down_in(
            "1,000 in 50 processes: all down 5 s, on a store",
            store(Duration::from_millis(2), None),
            1_000,
            50,
        ),
    ]
}
