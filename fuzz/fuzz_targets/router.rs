//! The router under any sequence of selections, completions (any
//! verdict, any latency), head reports, chain checks and clock steps:
//! every reservation is counted while held and released when completed,
//! probes never exceed permits, nothing panics.
#![no_main]
use std::borrow::Cow;
use std::time::Duration;

use breakwater_rpc::policy::{ErrorClass, Verdict};
use breakwater_rpc::pool::options::{EndpointSpec, PoolOptions, Strategy};
use breakwater_rpc::pool::router::{RouteRequest, Router, Selection};
use breakwater_rpc::redact::EndpointUrl;
use breakwater_rpc::rpc::methods::MethodClass;
use breakwater_rpc::time::Instant;
use libfuzzer_sys::{arbitrary, fuzz_target};

#[derive(arbitrary::Arbitrary, Debug)]
enum Op {
    Select { latest: bool, untried: bool, draw: (u8, u8) },
    Complete { which: u8, class: u8, health: bool, retry_after: Option<u16>, ms: u16 },
    Head { endpoint: u8, block: u64 },
    Chain { endpoint: u8, id: u8 },
    Advance(u16),
}

const CLASSES: [ErrorClass; 9] = ErrorClass::ALL;

fuzz_target!(|input: (u8, u8, bool, Vec<Op>)| {
    let (n, strategy, grouped, ops) = input;
    let n = 1 + usize::from(n % 4);
    let mut options = PoolOptions {
        strategy: [Strategy::Priority, Strategy::RoundRobin, Strategy::Weighted, Strategy::Latency, Strategy::Sticky]
            [usize::from(strategy % 5)],
        ..PoolOptions::default()
    };
    if grouped {
        options.quota_groups.push(("g".into(), Default::default()));
    }
    let specs: Vec<EndpointSpec> = (0..n)
        .map(|i| {
            let mut s =
                EndpointSpec::from_url(EndpointUrl::parse(&format!("http://127.0.0.1:{}", 9000 + i), "u").unwrap(), i);
            if grouped && i > 0 {
                s.quota_group = Some("g".into());
            }
            s.max_concurrency = 3;
            s
        })
        .collect();
    let mut now = Instant::from_epoch(Duration::ZERO);
    let mut router = Router::new(specs, &options, Duration::from_secs(60), now);
    let mut held = Vec::new();
    let tried = vec![false; n];
    for op in ops.into_iter().take(300) {
        match op {
            Op::Select { latest, untried, draw } => {
                let req = RouteRequest {
                    method: "eth_call",
                    class: MethodClass::Call,
                    cost: 26.0,
                    wants_latest: latest,
                    tried: &tried,
                    only_untried: untried,
                    after: None,
                };
                if let Selection::Reserved(r) =
                    router.select(now, &req, (f64::from(draw.0) / 256.0, f64::from(draw.1) / 256.0))
                {
                    held.push(r);
                }
            }
            Op::Complete { which, class, health, retry_after, ms } => {
                if held.is_empty() {
                    continue;
                }
                let r = held.remove(usize::from(which) % held.len());
                let verdict = Verdict {
                    class: CLASSES[usize::from(class) % CLASSES.len()],
                    rule: Cow::Borrowed("fuzz"),
                    health_failure: health,
                    retry_after: retry_after.map(|s| Duration::from_millis(s.into())),
                    long_horizon: false,
                };
                router.complete(now, &r, &verdict, MethodClass::Call, Duration::from_millis(ms.into()), 0.5);
            }
            Op::Head { endpoint, block } => router.observe_head(usize::from(endpoint) % n, block, now),
            Op::Chain { endpoint, id } => {
                let _ = router.chain_checked(usize::from(endpoint) % n, u64::from(id % 3), now);
            }
            Op::Advance(ms) => now = now + Duration::from_millis(ms.into()),
        }
        for (i, ep) in router.endpoints.iter().enumerate() {
            let mine = held.iter().filter(|r| r.endpoint == i).count() as u32;
            assert_eq!(ep.in_flight, mine, "endpoint {i}: in-flight count drifted from the reservations held");
            assert!(ep.breaker.probes_in_flight() <= ep.breaker.probe_permits());
        }
    }
    for r in held.drain(..) {
        let verdict = Verdict {
            class: ErrorClass::Success,
            rule: Cow::Borrowed("end"),
            health_failure: false,
            retry_after: None,
            long_horizon: false,
        };
        router.complete(now, &r, &verdict, MethodClass::Call, Duration::from_millis(1), 0.5);
    }
    assert!(router.endpoints.iter().all(|e| e.in_flight == 0), "every reservation was released");
});
