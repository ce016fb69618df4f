//! Head-poll rounds shared by the relayers on the same endpoints: one
//! round per interval for all of them, its heads heard by every member, in
//! this realm and (as news) in the other realms of the fleet.
//!
//! Each relayer polling every endpoint for its head (`policy/head_poll.rs`)
//! is cheap alone, but a process with 300 relayers on two endpoints sent
//! 600 `eth_blockNumber` every 12 s that nobody asked for (+30 % on the
//! load a new user measured). Members with the same endpoints and interval
//! hold one [`HeadRounds`]: whoever's read finds a round due starts it, and
//! when it ends its heads are published under the endpoints' keys, in
//! order of rounds; every other member takes them in as if its own round
//! had heard them (`Router::adopt_head_rounds`).
//!
//! ```text
//!   Idle ── a member's read finds it due ─► Polling (that member polls)
//!   Polling ── its polls end ─► Idle, generation + 1, the heads published
//!                               (and told to the other realms: `News::Head`)
//!   Polling ── the polling member leaves the realm (closed) ─► Idle, due now
//!   Idle ── another realm's round heard (`News::HeadRound`) ─► Idle,
//!           generation + 1, its heads published, the next round due one
//!           interval, a quarter, and a random quarter of one later
//!   Polling ── another realm's round heard ─► Polling, its heads published
//! ```
//! Across realms (processes on Redis, tabs), the realm that polled first
//! keeps polling: the others' next rounds fall due a quarter interval or
//! more after its next one (its round starts with its first read after
//! it is due, and takes a round trip), so they hear it before their own
//! is due, and a fleet of N processes sends about one round per interval,
//! not N; a follower's heads are at most 1.5 intervals old. The random
//! quarter keeps the rest from falling due at one instant if that realm
//! goes quiet (several would then poll at once before any heard the
//! others).

use crate::policy::head_poll::HeadPoll;
use crate::time::Instant;

/// One realm's (or one relayer's) head-poll schedule and its last round.
#[derive(Clone, Debug)]
pub struct HeadRounds {
    /// The schedule.
    pub poll: HeadPoll,
    /// Rounds ended so far.
    pub generation: u64,
    /// The last round's heads, by endpoint key, and when it ended.
    pub heads: Vec<(u64, u64)>,
    /// When the last round ended.
    pub ended_at: Instant,
}

impl HeadRounds {
    /// No round yet.
    pub fn new(poll: HeadPoll, now: Instant) -> Self {
        HeadRounds { poll, generation: 0, heads: Vec::new(), ended_at: now }
    }

    /// A round ended at `now` with `heads` (by endpoint key).
    pub fn publish(&mut self, heads: Vec<(u64, u64)>, now: Instant) {
        self.poll.finish(now);
        self.generation += 1;
        self.heads = heads;
        self.ended_at = now;
    }

    /// The round's poller left before it ended: the next read may start one.
    pub fn abandon(&mut self) {
        self.poll.abandon();
    }

    /// Another realm's round ended at `now` with `heads` (by endpoint key):
    /// members take them in as their own, and this realm's next round falls
    /// due no sooner than 1.25 intervals and `unit_random` of a quarter of one
    /// later (a round of its own under way still ends as it will).
    pub fn hear(&mut self, heads: Vec<(u64, u64)>, now: Instant, unit_random: f64) {
        let spread = 1.25 + 0.25 * crate::policy::bound(unit_random, 0.0, 1.0);
        self.poll.postpone(now + self.poll.interval().mul_f64(spread));
        self.generation += 1;
        self.heads = heads;
        self.ended_at = now;
    }
}

/// The most heads kept between a round's heads and its end (more are a
/// broken or hostile teller: the oldest are dropped).
const MAX_HEARD_HEADS: usize = 64;

/// Heads other realms told (`News::Head`), by endpoint key, until the end
/// of their round (`News::HeadRound`) hands them to the rounds it names.
/// Bounded, whatever arrives.
#[derive(Debug, Default)]
pub struct HeardHeads(Vec<(u64, u64)>);

impl HeardHeads {
    /// An endpoint's head as told (a second word on it replaces the first).
    pub fn hear(&mut self, endpoint: u64, block: u64) {
        self.0.retain(|&(key, _)| key != endpoint);
        if self.0.len() >= MAX_HEARD_HEADS {
            self.0.remove(0);
        }
        self.0.push((endpoint, block));
    }

    /// The heads heard since the last round's end.
    pub fn take(&mut self) -> Vec<(u64, u64)> {
        std::mem::take(&mut self.0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    use crate::time::at;

    #[test]
    fn a_round_publishes_its_heads_and_an_abandoned_one_is_due_again() {
        let mut r = HeadRounds::new(HeadPoll::new(Duration::from_secs(12), at(0)), at(0));
        assert!(r.poll.start(at(12_000)));
        r.publish(vec![(7, 100)], at(12_100));
        assert_eq!((r.generation, r.heads.clone(), r.ended_at), (1, vec![(7, 100)], at(12_100)));
        assert!(!r.poll.due(at(24_099)) && r.poll.due(at(24_100)), "one interval after it ended");
        assert!(r.poll.start(at(24_100)));
        r.abandon();
        assert!(r.poll.due(at(24_101)), "its poller left: due at once");
        assert_eq!(r.generation, 1, "an abandoned round publishes nothing");
    }

    #[test]
    fn another_realms_round_is_taken_in_and_puts_this_realms_next_after_its_next() {
        let mut r = HeadRounds::new(HeadPoll::new(Duration::from_secs(12), at(0)), at(0));
        r.hear(vec![(7, 100), (8, 99)], at(5_000), 0.5);
        assert_eq!((r.generation, r.heads.clone(), r.ended_at), (1, vec![(7, 100), (8, 99)], at(5_000)));
        // Due at 5 s + 12 s × 1.375: well after the teller's own next round (17 s).
        assert!(!r.poll.due(at(21_499)) && r.poll.due(at(21_500)));
        r.hear(vec![(7, 101)], at(17_000), 0.0);
        assert!(!r.poll.due(at(31_999)) && r.poll.due(at(32_000)), "each round heard puts it off again");
        // A round of its own under way ends as it will; the heard heads are taken in meanwhile.
        assert!(r.poll.start(at(32_000)));
        r.hear(vec![(7, 102)], at(32_010), 1.0);
        assert_eq!(r.generation, 3);
        assert!(!r.poll.due(at(32_020)), "still polling");
        r.publish(vec![(7, 102)], at(32_100));
        assert!(r.poll.due(at(44_100)), "one interval after its own round ended");
        // A hostile or broken random stays in bounds.
        r.hear(vec![], at(50_000), f64::NAN);
        assert!(!r.poll.due(at(64_999)) && r.poll.due(at(65_000)));
    }

    #[test]
    fn heard_heads_are_one_per_endpoint_and_bounded() {
        let mut h = HeardHeads::default();
        h.hear(1, 10);
        h.hear(1, 11);
        h.hear(2, 12);
        assert_eq!(h.take(), vec![(1, 11), (2, 12)]);
        assert!(h.take().is_empty(), "a round takes them once");
        for key in 0..1_000 {
            h.hear(key, key);
        }
        let kept = h.take();
        assert_eq!((kept.len(), kept[0]), (MAX_HEARD_HEADS, (936, 936)), "the newest 64");
    }
}
