//! Head polls in a fleet whose quota group is leased near its plan: a
//! poll the group cannot pay at its round's start waits its turn in the
//! group's line, as a read would, instead of being skipped. Skipped, two
//! members on a store sharing a 20 CU/s key (a 4 CU burst: each held 2 at
//! most, and spent them on its reads) polled one endpoint once in 15 s and
//! never the other.

use std::time::Duration;

use super::backlog::InLine;
use super::tests::{at, options, spec};
use super::*;
use crate::policy::fleet_bucket::FleetBucket;
use crate::policy::lease::LeaseAsk;
use crate::policy::ErrorClass;

/// A member: two URLs of one 20 CU/s key (1 CU a call, head polls
/// included), chain checked, head polls every 3 s. With `second_used`
/// false, the pool is a priority one (reads never use the second URL)
/// and the second's chain check is due (its first poll carries it).
fn member(realm: &Realm, second_used: bool) -> Router {
    let mut o = options(if second_used { Strategy::RoundRobin } else { Strategy::Priority });
    o.check_chain = true;
    o.chain_id = Some(1);
    o.head_poll = Duration::from_secs(3);
    o.quota_groups = vec![("key".into(), QuotaConfig { cu_per_second: 20.0, ..QuotaConfig::default() })];
    let specs = (0..2)
        .map(|i| {
            let mut s = spec(i);
            s.quota_group = Some("key".into());
            s.costs = vec![("*".to_string(), 1.0)];
            s
        })
        .collect();
    let mut r = Router::in_realm(specs, &o, Duration::from_secs(60), at(0), Some(realm));
    r.chain_checked(0, 1, at(0));
    if second_used {
        r.chain_checked(1, 1, at(0));
    }
    r
}

/// A chain check that rode with a poll answered, as the caller tells it
/// (`eth_chainId` first in the poll's batch).
fn answer_check(r: &mut Router, poll: &Reservation, now: Instant) {
    if poll.check_chain {
        r.chain_checked(poll.endpoint, 1, now);
    }
}

/// One member's head round under way: its polls still waiting, each with
/// its place in line once it has one, and the heads heard.
#[derive(Default)]
struct Round {
    waiting: Vec<(usize, Option<InLine>)>,
    heads: Vec<(usize, u64)>,
}

/// Fifteen seconds of two members on one store, each reading one after
/// the other (a read every 130 ms once the last was served, 16 a second
/// together of the key's 20); the store answers 2 ms after an ask. Each
/// member's polls per endpoint, reads served, and the instants (ms) of
/// the lease asks it sized for more than a 1 CU charge.
fn fifteen_seconds(second_used: bool) -> ([[usize; 2]; 2], [usize; 2], [Vec<u64>; 2]) {
    let realms = [Realm::new(), Realm::new()];
    for realm in &realms {
        realm.attach_store();
    }
    let mut members: Vec<Router> = realms.iter().map(|realm| member(realm, second_used)).collect();
    let mut bucket = FleetBucket::default();
    let mut out: Vec<(u64, usize, u64, LeaseAsk)> = Vec::new();
    let ok = super::tests::verdict(ErrorClass::Success, false);
    let mut next_read = [0u64, 60];
    let mut rounds: [Option<Round>; 2] = [None, None];
    let mut polls = [[0usize; 2]; 2];
    let mut reads = [0usize; 2];
    let mut dear_asks: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    for ms in 0..15_000u64 {
        let now = at(ms);
        for (m, realm) in realms.iter().enumerate() {
            for (key, ask) in realm.lease_asks(now).into_iter().chain(members[m].take_lease_asks()) {
                if ask.least > 1.0 {
                    dear_asks[m].push(ms);
                }
                out.push((ms + 2, m, key, ask));
            }
        }
        for (_, m, key, ask) in out.iter().filter(|(due, ..)| *due == ms) {
            realms[*m].lease_granted(*key, now, ask.want, bucket.ask(now, *m as u64, *ask));
        }
        out.retain(|(due, ..)| *due > ms);
        for m in 0..2 {
            let r = &mut members[m];
            if let Some(round) = rounds[m].as_mut() {
                // Its waiting polls look again every millisecond (woken by a grant or their turn).
                let mut still = Vec::new();
                for (endpoint, mut line) in round.waiting.drain(..) {
                    match r.head_poll_turn(endpoint, now, line.as_ref().map(InLine::place)) {
                        PollTurn::Reserved(poll) => {
                            drop(line);
                            answer_check(r, &poll, now);
                            r.complete(now, &poll, &ok, MethodClass::Cheap, Duration::from_millis(5), 0.5);
                            round.heads.push((endpoint, 100));
                            polls[m][endpoint] += 1;
                        }
                        PollTurn::Wait(_) => {
                            if line.is_none() {
                                line = r.head_poll_line(endpoint, now).map(|l| InLine::join(&l, now));
                            }
                            still.push((endpoint, line));
                        }
                        PollTurn::Gone => {}
                    }
                }
                round.waiting = still;
                if round.waiting.is_empty() {
                    let heads = std::mem::take(&mut round.heads);
                    r.end_head_round(&heads, now);
                    rounds[m] = None;
                }
            }
            if ms < next_read[m] {
                continue;
            }
            if r.head_poll_due(now) {
                let start = r.start_head_round(now).expect("a round starts");
                let mut round =
                    Round { waiting: start.waiting.into_iter().map(|i| (i, None)).collect(), heads: vec![] };
                for poll in &start.polls {
                    answer_check(r, poll, now);
                    r.complete(now, poll, &ok, MethodClass::Cheap, Duration::from_millis(5), 0.5);
                    round.heads.push((poll.endpoint, 100));
                    polls[m][poll.endpoint] += 1;
                }
                rounds[m] = Some(round);
            }
            let tried = [false, false];
            let deadline = Some(now + Duration::from_secs(10));
            let own = RouteRequest::own("eth_getBalance");
            let read = RouteRequest { wants_latest: true, tried: &tried, since: Some(now), deadline, ..own };
            if let Selection::Reserved(res) = r.select(now, &read, (0.5, 0.5)) {
                r.complete(now, &res, &ok, read.class, Duration::from_millis(5), 0.5);
                reads[m] += 1;
                next_read[m] = ms + 130;
            } else {
                next_read[m] = ms + 1;
            }
        }
    }
    (polls, reads, dear_asks)
}

#[test]
fn a_fleet_leased_near_its_plan_still_polls_every_endpoint_every_round() {
    let (polls, reads, _) = fifteen_seconds(true);
    // Rounds fall due at 3, 6, 9 and 12 s: four per endpoint per member.
    assert_eq!(polls, [[4, 4], [4, 4]], "every endpoint polled in every round (reads {reads:?})");
    assert!(reads.iter().all(|&n| n >= 100), "reads still served at their pace: {reads:?}");
}

#[test]
fn an_endpoint_no_read_uses_is_polled_too_its_chain_check_riding_with_the_first_poll() {
    // Priced with the check (2 CU among 1 CU reads), its poll was never common enough to wait its
    // turn: never polled, its head never known (`fleet-heads.test` in one `npm test`: 5 and 0).
    let (polls, reads, _) = fifteen_seconds(false);
    assert!(
        polls.iter().all(|member| member[1] >= 3),
        "the unused URL polled in most rounds: {polls:?} (reads {reads:?})"
    );
}

#[test]
fn the_chain_check_riding_with_a_poll_sizes_a_lease_ask_in_its_first_round_only() {
    // The unused URL's first poll waits its turn priced 2 CU (the check rides along): the asks
    // made while it waits are sized for 2. Once checked, its polls are 1 CU like the reads, and
    // so are the asks (priced with the check every round, a fleet asked for 2 CU every 3 s).
    let (polls, _, dear_asks) = fifteen_seconds(false);
    assert!(polls.iter().all(|member| member[1] >= 3), "polled: {polls:?}");
    let after_first_round: Vec<u64> = dear_asks.iter().flatten().copied().filter(|&ms| ms >= 6_000).collect();
    assert!(after_first_round.is_empty(), "asks sized 2 CU after the check was answered: {dear_asks:?}");
}
