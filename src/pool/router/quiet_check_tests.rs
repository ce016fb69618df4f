//! A fleet member's lease is sized by the charges its requests wait for,
//! never by a dearer way to the same plan that selection only looked at:
//! the key's second URL with its chain check due (2 CU beside 1), or a
//! head poll priced by the method table (10 CU among 1 CU reads). Checked
//! as their own, either sized every ask (all-or-nothing grants of 2 or
//! 10); `Lease::check_quietly` is tested in `policy/lease/tests.rs`, this
//! tests that the router calls it where it must.

use std::time::Duration;

use super::backlog::InLine;
use super::tests::{at, options, spec};
use super::*;
use crate::policy::fleet_bucket::FleetBucket;
use crate::policy::lease::LeaseAsk;
use crate::policy::ErrorClass;
use crate::rpc::methods::method_info;

/// One member on a realm with a store: two URLs of one 30 CU/s key, a
/// priority pool (the second URL is never used, so its chain check stays
/// due), 1 CU reads and chain checks (`eth_blockNumber` keeps the
/// table's 10), head polls every second.
fn member(realm: &Realm) -> Router {
    let mut o = options(Strategy::Priority);
    o.check_chain = true;
    o.chain_id = Some(1);
    o.head_poll = Duration::from_secs(1);
    o.quota_groups = vec![("key".into(), QuotaConfig { cu_per_second: 30.0, ..QuotaConfig::default() })];
    let specs = (0..2)
        .map(|i| {
            let mut s = spec(i);
            s.quota_group = Some("key".into());
            s.costs = vec![("eth_getBalance".to_string(), 1.0), ("eth_chainId".to_string(), 1.0)];
            s
        })
        .collect();
    let mut r = Router::in_realm(specs, &o, Duration::from_secs(60), at(0), Some(realm));
    r.chain_checked(0, 1, at(0));
    r
}

/// Ten seconds of reads at 40 a second (past the 24 CU/s the fleet's
/// bucket pays), waiting reads looking again every millisecond, the store
/// answering each ask 5 ms later; every ask the member made.
fn asks_of_a_busy_member() -> Vec<LeaseAsk> {
    let realm = Realm::new();
    realm.attach_store();
    let mut r = member(&realm);
    let mut bucket = FleetBucket::default();
    let mut asks = Vec::new();
    let mut out: Vec<(u64, u64, LeaseAsk)> = Vec::new();
    let info = method_info("eth_getBalance");
    let ok = super::tests::verdict(ErrorClass::Success, false);
    let mut waiting = 0u32;
    let mut round: Vec<(usize, Option<InLine>)> = Vec::new();
    for ms in 0..10_000 {
        let now = at(ms);
        for (key, ask) in realm.lease_asks(now).into_iter().chain(r.take_lease_asks()) {
            asks.push(ask);
            out.push((ms + 5, key, ask));
        }
        for (_, key, ask) in out.iter().filter(|(due, _, _)| *due == ms) {
            realm.lease_granted(*key, now, ask.want, bucket.ask(now, 0, *ask));
        }
        out.retain(|(due, _, _)| *due > ms);
        // A round's polls: at once, or (those the group cannot pay at once) in their turn,
        // looking again every millisecond as a waiting read does.
        if round.is_empty() && r.head_poll_due(now) {
            let start = r.start_head_round(now).unwrap_or_default();
            for poll in start.polls {
                r.complete(now, &poll, &ok, MethodClass::Cheap, Duration::ZERO, 0.5);
            }
            round = start.waiting.into_iter().map(|i| (i, None)).collect();
            if round.is_empty() {
                r.end_head_round(&[], now);
            }
        } else if !round.is_empty() {
            let mut still = Vec::new();
            for (endpoint, mut line) in round.drain(..) {
                match r.head_poll_turn(endpoint, now, line.as_ref().map(InLine::place)) {
                    PollTurn::Reserved(poll) => {
                        r.complete(now, &poll, &ok, MethodClass::Cheap, Duration::ZERO, 0.5);
                    }
                    PollTurn::Wait(_) => {
                        line = line.or_else(|| r.head_poll_line(endpoint, now).map(|l| InLine::join(&l, now)));
                        still.push((endpoint, line));
                    }
                    PollTurn::Gone => {}
                }
            }
            round = still;
            if round.is_empty() {
                r.end_head_round(&[], now);
            }
        }
        waiting += u32::from(ms % 25 == 0);
        let tried = [false, false];
        let read = RouteRequest {
            method: "eth_getBalance",
            class: info.class,
            cost: info.cost,
            wants_latest: false,
            tried: &tried,
            only_untried: false,
            after: None,
            hedge_of: None,
            since: Some(now),
            deadline: Some(now + Duration::from_secs(10)),
            place: None,
        };
        while waiting > 0 {
            let Selection::Reserved(res) = r.select(now, &read, (0.5, 0.5)) else { break };
            assert_eq!(res.endpoint, 0, "the checked URL serves");
            r.complete(now, &res, &ok, info.class, Duration::from_millis(5), 0.5);
            waiting -= 1;
        }
    }
    asks
}

#[test]
fn a_busy_members_asks_are_sized_for_its_reads_not_for_what_it_only_looked_at() {
    let asks = asks_of_a_busy_member();
    assert!(asks.len() > 50, "a busy member asks often: {}", asks.len());
    // Past its first asks (a fresh lease knows no charge yet).
    let sized: Vec<f64> = asks.iter().skip(3).map(|a| a.least).collect();
    assert!(
        sized.iter().all(|&least| least == 1.0),
        "every ask is sized for a 1 CU read, not for the second URL's 2 or the head poll's 10: {sized:?}"
    );
}
