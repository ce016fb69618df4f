//! What an attempt costs its quota group, on explicit instants: the
//! endpoint's own price for the method, and the `eth_chainId` check sent
//! before it (the provider counts that request like any other).

use std::time::Duration;

use super::tests::{at, options, pick, spec};
use super::*;
use crate::policy::ErrorClass;

#[test]
fn an_endpoints_own_cost_for_a_method_is_what_its_quota_group_is_charged() {
    let mut o = options(Strategy::Priority);
    o.quota_groups = vec![("key".into(), QuotaConfig { cu_per_second: 100.0, burst: 100.0, ..QuotaConfig::default() })];
    let mut specs: Vec<EndpointSpec> = (0..2).map(spec).collect();
    specs[0].quota_group = Some("key".into());
    specs[0].costs = vec![("eth_blockNumber".into(), 40.0)];
    let mut r = Router::new(specs, &o, Duration::from_secs(60), at(0));
    let first = pick(&mut r, at(0), (0.5, 0.5));
    assert_eq!((first.endpoint, first.cost), (0, 40.0), "its own price, not the table's 10");
    let chosen: Vec<usize> = (0..3).map(|_| pick(&mut r, at(0), (0.5, 0.5)).endpoint).collect();
    assert_eq!(chosen, vec![0, 1, 1], "40 + 40 fit the 100-CU burst, a third 40 does not (at 10 each, ten would)");
}

/// A router checking chains, its endpoints on one key of `burst` CU (1 CU/s), each with its own
/// price for `eth_chainId` or none.
fn on_one_key(burst: f64, chain_id_prices: &[Option<f64>]) -> Router {
    let mut o = options(Strategy::Priority);
    o.check_chain = true;
    o.chain_recheck = Duration::from_secs(300);
    o.quota_groups = vec![("key".into(), QuotaConfig { cu_per_second: 1.0, burst, ..QuotaConfig::default() })];
    let specs = chain_id_prices
        .iter()
        .enumerate()
        .map(|(i, price)| {
            let mut s = spec(i);
            s.quota_group = Some("key".into());
            s.costs = price.map(|p| ("eth_chainId".into(), p)).into_iter().collect();
            s
        })
        .collect();
    Router::new(specs, &o, Duration::from_secs(60), at(0))
}

#[test]
fn the_chain_check_before_an_attempt_is_charged_at_the_endpoints_price_for_eth_chain_id() {
    let mut r = on_one_key(100.0, &[Some(5.0), None]);
    let group = r.groups[r.endpoints[0].group].quota.clone();
    let first = pick(&mut r, at(0), (0.5, 0.5));
    assert!(first.check_chain);
    assert_eq!((first.endpoint, first.cost), (0, 15.0), "the request's 10 and the check's 5");
    assert_eq!(group.borrow().stats().cu_charged, 15.0);
    assert_eq!(r.chain_checked(0, 1, at(0)), None);
    r.release(&first);
    let verified = pick(&mut r, at(1), (0.5, 0.5));
    assert_eq!((verified.check_chain, verified.cost), (false, 10.0), "verified: the request alone");
    r.release(&verified);
    // Without a price of its own, eth_chainId costs what the method table says (nothing).
    let mut r = on_one_key(10.0, &[None]);
    let unpriced = pick(&mut r, at(0), (0.5, 0.5));
    assert_eq!((unpriced.check_chain, unpriced.cost), (true, 10.0));
    r.release(&unpriced);
    // The check's price decides what fits: 10 CU left pay a priced endpoint's request but not its check.
    let mut r = on_one_key(25.0, &[Some(5.0), None]);
    let checked = pick(&mut r, at(0), (0.5, 0.5));
    assert_eq!((checked.endpoint, checked.cost), (0, 15.0));
    r.release(&checked); // no answer: its chain is still to be checked
    let spilled = pick(&mut r, at(0), (0.5, 0.5));
    assert_eq!((spilled.endpoint, spilled.cost), (1, 10.0), "15 CU do not fit in the 10 left; the unpriced check does");
}

#[test]
fn in_a_plan_kept_per_second_an_answered_attempt_counts_from_its_answer() {
    // 20 CU/s and no burst: every second within the plan, counted by arrival (answers come after it).
    let mut o = options(Strategy::Priority);
    o.quota_groups = vec![("key".into(), QuotaConfig { cu_per_second: 20.0, ..QuotaConfig::default() })];
    let mut specs: Vec<EndpointSpec> = (0..2).map(spec).collect();
    specs[0].quota_group = Some("key".into());
    specs[0].costs = vec![("eth_blockNumber".into(), 10.0)];
    let mut r = Router::new(specs, &o, Duration::from_secs(60), at(0));
    let (late, other) = (pick(&mut r, at(0), (0.5, 0.5)), pick(&mut r, at(0), (0.5, 0.5)));
    assert_eq!((late.endpoint, other.endpoint), (0, 0));
    assert_eq!(pick(&mut r, at(0), (0.5, 0.5)).endpoint, 1, "the key's second is full");
    let ok = super::tests::verdict(ErrorClass::Success, false);
    r.complete(at(300), &late, &ok, MethodClass::Cheap, Duration::from_millis(300), 0.5);
    r.release(&other);
    let after_a_second = pick(&mut r, at(1000), (0.5, 0.5));
    assert_eq!(after_a_second.endpoint, 0, "the unanswered charge left the second");
    assert_eq!(pick(&mut r, at(1000), (0.5, 0.5)).endpoint, 1, "the one answered at 300 ms still counts");
    assert_eq!(pick(&mut r, at(1300), (0.5, 0.5)).endpoint, 0, "a second after its answer");
}

/// An unknown plan (`cuPerSecond: Infinity`) learns at its first 429 what
/// the provider *accepted* in the last second: the router tells the group
/// each success (`QuotaGroup::on_accepted`). Without that call the group
/// falls back to the ten-second mean of what was sent, and nothing else
/// would fail.
#[test]
fn an_unknown_plan_is_learned_from_the_successes_the_router_reports() {
    let mut o = options(Strategy::Priority);
    o.quota_groups = vec![("key".into(), QuotaConfig::default())];
    let mut specs = vec![spec(0)];
    specs[0].quota_group = Some("key".into());
    let mut r = Router::new(specs, &o, Duration::from_secs(60), at(0));
    let group = r.groups[r.endpoints[0].group].quota.clone();
    // Nine quiet seconds, one 10-CU read each.
    for s in 0..9u64 {
        let res = pick(&mut r, at(s * 1000), (0.5, 0.5));
        super::tests::finish(&mut r, at(s * 1000 + 10), res, ErrorClass::Success, false);
    }
    // Then a busy second: 12 reads accepted, the 13th refused with a 429.
    for i in 0..12u64 {
        let res = pick(&mut r, at(9000 + i * 70), (0.5, 0.5));
        super::tests::finish(&mut r, at(9000 + i * 70 + 10), res, ErrorClass::Success, false);
    }
    let refused = pick(&mut r, at(9900), (0.5, 0.5));
    super::tests::finish(&mut r, at(9910), refused, ErrorClass::RateLimited, false);
    // Accepted in the last second: 120 CU, the rate starts at 90 % of it → 108 CU/s. The
    // ten-second mean of what was sent ((9 + 13) × 10 CU / 10 s = 22), halved, would give 11.
    let allowed = group.borrow().stats().allowed_rate;
    assert!((allowed - 108.0).abs() < 1e-9, "learned from the 120 CU accepted: {allowed}");
}
