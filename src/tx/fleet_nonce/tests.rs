use std::collections::BTreeMap;
use std::time::Duration;

use proptest::prelude::*;

use super::*;

use crate::time::at;

const HOLD: Duration = Duration::from_secs(5);

#[test]
fn members_take_distinct_nonces_and_a_released_one_is_handed_out_first() {
    let mut b = FleetNonceBook::default();
    assert_eq!(b.allocate(at(0), "a", HOLD), FleetReply::NeedsInit);
    assert_eq!(b.resync(at(0), 1200), FleetReply::Ok(1200));
    assert_eq!(b.allocate(at(0), "a", HOLD), FleetReply::Ok(1200));
    assert_eq!(b.allocate(at(0), "b", HOLD), FleetReply::Ok(1201));
    assert_eq!(b.allocate(at(0), "a", HOLD), FleetReply::Ok(1202));
    assert_eq!(b.release(at(0), "b", 1200), FleetReply::Lost, "only its own reservation");
    assert_eq!(b.release(at(0), "b", 1201), FleetReply::Ok(1201));
    assert_eq!(b.allocate(at(0), "a", HOLD), FleetReply::Ok(1201), "the hole first: no gap stays");
    assert_eq!(b.live(at(0), "a", 1200), FleetReply::Ok(1200));
    assert_eq!(b.live(at(1), "a", 1200), FleetReply::Ok(1200), "idempotent");
    assert_eq!(b.release(at(1), "a", 1200), FleetReply::IsLive);
    assert_eq!(b.live(at(1), "b", 1202), FleetReply::Lost, "another member's");
}

#[test]
fn a_lapsed_reservation_is_recycled_and_its_member_may_not_broadcast_a_live_one_never_is() {
    let mut b = FleetNonceBook::default();
    b.resync(at(0), 7);
    assert_eq!(b.allocate(at(0), "dies", Duration::from_millis(150)), FleetReply::Ok(7));
    assert_eq!(b.allocate(at(0), "sent", Duration::from_millis(150)), FleetReply::Ok(8));
    assert_eq!(b.live(at(100), "sent", 8), FleetReply::Ok(8));
    assert_eq!(b.allocate(at(149), "c", HOLD), FleetReply::Ok(9), "7 still held at 149 ms");
    assert_eq!(b.allocate(at(150), "c", HOLD), FleetReply::Ok(7), "lapsed at 150 ms: a hole");
    assert_eq!(b.live(at(151), "dies", 7), FleetReply::Lost);
    assert_eq!(b.allocate(at(3_000), "c", HOLD), FleetReply::Ok(10), "8 is live: never again");
    assert_eq!(b.abandon(at(3_000), 8), FleetReply::Ok(8));
    assert_eq!(b.allocate(at(3_000), "c", HOLD), FleetReply::Ok(8));
}

#[test]
fn a_resync_waits_for_held_reservations_and_never_moves_back() {
    let mut b = FleetNonceBook::default();
    b.resync(at(0), 100);
    assert_eq!(b.allocate(at(0), "a", Duration::from_secs(2)), FleetReply::Ok(100));
    assert_eq!(b.resync(at(10), 105), FleetReply::Busy(Duration::from_millis(1_990)));
    b.live(at(20), "a", 100);
    assert_eq!(b.allocate(at(20), "a", Duration::from_secs(2)), FleetReply::Ok(101));
    b.release(at(30), "a", 101);
    assert_eq!(b.resync(at(40), 105), FleetReply::Ok(105), "101-104 were used elsewhere: the hole goes");
    assert_eq!(b.allocate(at(40), "b", HOLD), FleetReply::Ok(105));
    b.live(at(50), "b", 105);
    assert_eq!(b.resync(at(60), 90), FleetReply::Ok(106), "a node behind: never backwards");
}

#[derive(Clone, Debug)]
enum Op {
    Allocate(usize),
    Live(usize),
    Release(usize),
    Abandon,
    Settle,
    Resync(u64),
    Wait(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..3usize).prop_map(Op::Allocate),
        3 => (0..3usize).prop_map(Op::Live),
        1 => (0..3usize).prop_map(Op::Release),
        1 => Just(Op::Abandon),
        1 => Just(Op::Settle),
        1 => (0..40u64).prop_map(Op::Resync),
        2 => (0..300u64).prop_map(Op::Wait),
    ]
}

proptest! {
    /// Whatever three members do in whatever order and timing: a nonce is
    /// never live for two of them, never handed out while live or held, and
    /// a member broadcasts (marks live) only a nonce it was handed.
    #[test]
    fn no_nonce_is_ever_live_twice_or_handed_out_while_out(ops in proptest::collection::vec(op(), 1..120)) {
        // A reservation's member id is unique per send (the engine's
        // contract): a lapsed reservation never matches a later one.
        let hold = Duration::from_millis(200);
        let mut sends = 0u32;
        let mut b = FleetNonceBook::default();
        let mut now = 0u64;
        // What each member believes: the nonces it was handed and not yet
        // marked live, and who holds each live nonce.
        let mut mine: Vec<Vec<(u64, String)>> = vec![Vec::new(); 3];
        let mut live: BTreeMap<u64, usize> = BTreeMap::new();
        b.resync(at(0), 10);
        for op in ops {
            match op {
                Op::Allocate(m) => {
                    sends += 1;
                    let id = format!("w{m}-{sends}");
                    if let FleetReply::Ok(n) = b.allocate(at(now), &id, hold) {
                        prop_assert!(!live.contains_key(&n), "{n} handed out while live");
                        mine[m].push((n, id));
                    }
                }
                Op::Live(m) => {
                    if let Some((n, id)) = mine[m].pop() {
                        if b.live(at(now), &id, n) == FleetReply::Ok(n) {
                            prop_assert!(live.insert(n, m).is_none(), "{n} live for two sends");
                        }
                    }
                }
                Op::Release(m) => {
                    if let Some((n, id)) = mine[m].pop() {
                        let reply = b.release(at(now), &id, n);
                        prop_assert!(reply != FleetReply::IsLive || live.contains_key(&n));
                    }
                }
                Op::Abandon => {
                    if let Some((&n, _)) = live.iter().next() {
                        b.abandon(at(now), n);
                        live.remove(&n);
                    }
                }
                Op::Settle => {
                    if let Some((&n, _)) = live.iter().next_back() {
                        b.settle(at(now), n);
                        live.remove(&n);
                    }
                }
                Op::Resync(p) => {
                    let before = b.next;
                    if let FleetReply::Ok(to) = b.resync(at(now), p) {
                        prop_assert!(before.is_none_or(|n| to >= n), "never backwards");
                    }
                }
                Op::Wait(ms) => now += ms,
            }
            // Every live nonce is below next and never a hole.
            for n in live.keys() {
                prop_assert!(!b.holes.contains(n), "live {n} is a hole");
                prop_assert!(b.next.is_some_and(|next| *n < next));
            }
        }
    }
}
