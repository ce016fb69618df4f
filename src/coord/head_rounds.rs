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
//!   Polling ── another realm's round heard ─► Polling, its heads published,
//!           the next round due no sooner than it would be had this realm
//!           been idle (two realms whose rounds overlapped would otherwise
//!           both fall due one interval after their own, and poll in
//!           lockstep for ever: the random quarter parts them)
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
//!
//! Several realms may still poll at once: all are due as the load starts,
//! and bots reading on one timer grid (`setInterval`, started together)
//! start their rounds in the same tick however the quarter fell. Had each
//! put its next round off after the last one it heard, they would all fall
//! due again within a quarter interval, which on a 100 ms read grid is one
//! or two ticks: in a run a new user made, four processes polled together
//! every round for 4 s. So a collision is settled by who ended first: a
//! realm that hears a round which ended less than a quarter interval after
//! its own keeps its schedule (it leads), every other one yields, and
//! the fleet has one leader one interval later. Clocks skewed across
//! machines could make two realms each see itself first; a leader
//! contested [`MAX_CONTESTED`] rounds in a row yields like the others, and
//! the random quarter parts them.

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
    /// When this realm's own last round ended (a colliding round is judged against it).
    own_end: Option<Instant>,
    /// Whether a round that ended after this realm's last own round was
    /// heard and this realm kept the lead over it.
    contested: bool,
    /// Whether this realm put its next round off for one it heard since its own last ended.
    yielded: bool,
    /// Own rounds in a row whose lead was contested.
    contested_rounds: u32,
}

/// Own rounds in a row a realm keeps the lead when another realm's round
/// collides with each (clock skew could let two realms each see itself
/// first for ever).
pub const MAX_CONTESTED: u32 = 2;

impl HeadRounds {
    /// No round yet.
    pub fn new(poll: HeadPoll, now: Instant) -> Self {
        HeadRounds {
            poll,
            generation: 0,
            heads: Vec::new(),
            ended_at: now,
            own_end: None,
            contested: false,
            yielded: false,
            contested_rounds: 0,
        }
    }

    /// A round ended at `now` with `heads` (by endpoint key).
    pub fn publish(&mut self, heads: Vec<(u64, u64)>, now: Instant) {
        self.poll.finish(now);
        self.contested_rounds = if self.contested { self.contested_rounds + 1 } else { 0 };
        self.contested = false;
        self.yielded = false;
        self.own_end = Some(now);
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
    /// later (a round of its own under way still ends as it will, and the
    /// next waits as long). Unless the heard round collided with this
    /// realm's own, which ended first: then this realm leads and its
    /// schedule stands (see the module's doc).
    pub fn hear(&mut self, heads: Vec<(u64, u64)>, now: Instant, unit_random: f64) {
        let interval = self.poll.interval();
        let leads = !self.poll.polling()
            && !self.yielded
            && self.own_end.is_some_and(|own| now > own && now.saturating_since(own) < interval / 4)
            && self.contested_rounds < MAX_CONTESTED;
        if leads {
            self.contested = true;
        } else {
            let spread = 1.25 + 0.25 * crate::policy::bound(unit_random, 0.0, 1.0);
            self.poll.postpone(now + interval.mul_f64(spread));
            self.yielded = true;
            self.contested = false;
            self.contested_rounds = 0;
        }
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
        assert!(!r.poll.due(at(50_009)) && r.poll.due(at(50_010)), "as long after the round it heard as if idle");
        // A hostile or broken random stays in bounds.
        r.hear(vec![], at(50_000), f64::NAN);
        assert!(!r.poll.due(at(64_999)) && r.poll.due(at(65_000)));
    }

    /// Rounds started per 100 ms tick by `n` realms whose reads all come
    /// on one timer grid (bots on `setInterval`, started together). Realm
    /// `i`'s rounds take `20 + i × skew` ms; each round's end reaches the
    /// other realms `latency` ms later, in time order with everything else.
    fn grid_fleet(n: usize, ticks: u64, skew: f64, latency: f64, seed: u64) -> Vec<u64> {
        let interval = Duration::from_millis(500);
        let mut realms: Vec<HeadRounds> =
            (0..n).map(|_| HeadRounds::new(HeadPoll::new(interval, at(0)), at(0))).collect();
        let mut seed = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1; // a fixed xorshift per seed: deterministic
        let mut unit = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let ms = |t: f64| Instant::ZERO + Duration::from_secs_f64(t / 1000.0);
        let mut started = Vec::new();
        for tick in 0..ticks {
            let now = 500.0 + tick as f64 * 100.0;
            let polling: Vec<usize> = (0..n).filter(|&i| realms[i].poll.start(ms(now))).collect();
            started.extend(polling.iter().map(|_| tick));
            // (time, realm, heard from): a round's end (heard from itself) or its news reaching another.
            let mut events: Vec<(f64, usize, usize)> = Vec::new();
            for &i in &polling {
                let end = now + 20.0 + i as f64 * skew;
                events.push((end, i, i));
                events.extend((0..n).filter(|&j| j != i).map(|j| (end + latency, j, i)));
            }
            events.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (t, realm, from) in events {
                if realm == from {
                    realms[realm].publish(vec![], ms(t));
                } else {
                    realms[realm].hear(vec![], ms(t - latency), unit());
                }
            }
        }
        started
    }

    /// In a run a new user made, four processes polled together every round:
    /// all ended within a few ms, heard each other after their own end, and
    /// put their next rounds off into the same tick or two. The first to end
    /// now leads and the fleet polls once per interval from the second round.
    #[test]
    fn realms_that_polled_together_part_and_then_poll_once_per_interval() {
        for seed in 1..=40 {
            for skew in [0.5, -0.5] {
                let started = grid_fleet(4, 200, skew, 5.0, seed);
                assert_eq!(started.iter().filter(|&&t| t == 0).count(), 4, "all four were due as the load started");
                // After the first second: 38 intervals of 500 ms.
                let later = started.iter().filter(|&&t| t >= 10).count();
                assert!(later <= 38, "seed {seed}: one round per interval for the fleet, not one per realm: {later}");
                assert!(later >= 30, "seed {seed}: and still polling: {later}");
            }
        }
    }

    #[test]
    fn a_colliding_round_that_ended_later_leaves_the_lead_here_until_contested_too_often() {
        let mut r = HeadRounds::new(HeadPoll::new(Duration::from_millis(500), at(0)), at(0));
        assert!(r.poll.start(at(500)));
        r.publish(vec![], at(520));
        r.hear(vec![(7, 1)], at(530), 0.0); // another realm's round, 10 ms after this one's
        assert_eq!(r.heads, vec![(7, 1)], "its heads are taken in all the same");
        assert!(r.poll.due(at(1_020)), "this realm leads: one interval after its own end");
        // Contested round after round (clocks skewed: each realm sees itself first): after MAX_CONTESTED it yields.
        assert!(r.poll.start(at(1_020)));
        r.publish(vec![], at(1_040));
        r.hear(vec![], at(1_050), 0.0);
        assert!(r.poll.due(at(1_540)), "contested twice: leads still");
        assert!(r.poll.start(at(1_540)));
        r.publish(vec![], at(1_560));
        r.hear(vec![], at(1_570), 0.0);
        assert!(!r.poll.due(at(2_194)) && r.poll.due(at(2_195)), "a third time: yields (1.25 intervals after)");
        // A round that ended first, or long after this realm's own: yields.
        assert!(r.poll.start(at(2_200)));
        r.publish(vec![], at(2_220));
        r.hear(vec![], at(2_219), 0.0);
        assert!(!r.poll.due(at(2_843)), "it ended first: this realm follows");
        r.hear(vec![], at(2_230), 0.0);
        assert!(!r.poll.due(at(2_854)), "having yielded once, a later round does not make it lead");
        assert!(r.poll.start(at(2_900)));
        r.publish(vec![], at(2_920));
        r.hear(vec![], at(3_045), 0.0);
        assert!(
            !r.poll.due(at(3_669)) && r.poll.due(at(3_670)),
            "a quarter interval after its own: no collision, yields"
        );
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
