//! Head-poll rounds shared by the relayers of one realm on the same
//! endpoints: one round per interval for all of them, its heads heard by
//! every member.
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
//!   Polling ── the polling member leaves the realm (closed) ─► Idle, due now
//! ```

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
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_epoch(Duration::from_millis(ms))
    }

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
}
