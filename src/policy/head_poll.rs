//! When the pool asks its endpoints for their head.
//!
//! Freshness routing (`maxLagBlocks`) needs every endpoint's head, and an
//! app that never calls `eth_blockNumber` itself would never show it. So
//! while reads that want the latest state flow, the pool asks every
//! endpoint for its head in the background, one *round* at a time:
//!
//! ```text
//!   Off (interval zero) ─── never polls
//!   Idle { next_at }
//!     a read that wants `latest` arrives at now ≥ next_at ─► Polling (a round starts)
//!     anything earlier ─────────────────────────────────────► stays Idle
//!   Polling
//!     new reads start nothing (one round at a time)
//!     the round ends at t (every poll answered, failed or timed out)
//!       ─► Idle { next_at: t + interval }
//! ```
//! The first round is due one interval after the relayer starts: a
//! relayer that lives for a few seconds (a script) sends no polls at all,
//! and a fresh client's first burst is not joined by one poll per endpoint.
//! So each endpoint gets at most one `eth_blockNumber` per interval, and a
//! quiet pool (no reads) sends none. Heads answered in one round are
//! compared with each other, so a lagging endpoint is seen as lagging as
//! soon as one round has heard from both it and a fresher one.
//!
//! Pure: the time is an argument; which endpoints a round asks is the
//! router's decision (`pool/router/heads.rs`), the sending the pipeline's
//! (`pool/pipeline/head_poll.rs`).

use std::time::Duration;

use crate::time::Instant;

/// The head-poll schedule of one pool.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeadPoll {
    interval: Duration,
    state: State,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    Idle { next_at: Instant },
    Polling,
}

impl HeadPoll {
    /// A schedule polling every `interval` (zero: never), the first round
    /// due one interval after `now`.
    pub fn new(interval: Duration, now: Instant) -> Self {
        HeadPoll { interval, state: State::Idle { next_at: now + interval } }
    }

    /// The interval (zero: never polls).
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Whether a read that wants `latest` arriving at `now` would start a round.
    pub fn due(&self, now: Instant) -> bool {
        !self.interval.is_zero() && matches!(self.state, State::Idle { next_at } if now >= next_at)
    }

    /// Starts a round if one is due at `now`; `true` if it did.
    pub fn start(&mut self, now: Instant) -> bool {
        let due = self.due(now);
        if due {
            self.state = State::Polling;
        }
        due
    }

    /// The round ended at `now`: the next is due one interval later.
    pub fn finish(&mut self, now: Instant) {
        self.state = State::Idle { next_at: now + self.interval };
    }

    /// Another pool's round was heard: an idle schedule's next round falls
    /// due no sooner than `at` (a round under way is left to end).
    pub fn postpone(&mut self, at: Instant) {
        if let State::Idle { next_at } = &mut self.state {
            *next_at = (*next_at).max(at);
        }
    }

    /// The round will not end here (its poller went away): due at once.
    pub fn abandon(&mut self) {
        if self.state == State::Polling {
            self.state = State::Idle { next_at: Instant::ZERO };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::time::at;

    #[test]
    fn one_round_at_a_time_and_the_next_one_interval_after_the_last_ended() {
        let mut p = HeadPoll::new(Duration::from_secs(12), at(0));
        assert!(!p.start(at(11_999)), "the first round waits one interval");
        assert!(p.start(at(12_000)));
        assert!(!p.due(at(20_000)) && !p.start(at(20_000)), "a round is running");
        p.finish(at(12_500));
        assert!(!p.start(at(24_499)));
        assert!(p.start(at(24_500)));
    }

    #[test]
    fn an_abandoned_round_is_due_at_once_and_an_idle_one_stays_as_it_was() {
        let mut p = HeadPoll::new(Duration::from_secs(12), at(0));
        p.abandon();
        assert!(!p.due(at(1)), "idle: abandoning changes nothing");
        assert!(p.start(at(12_000)));
        p.abandon();
        assert!(p.start(at(12_001)));
    }

    #[test]
    fn a_zero_interval_never_polls() {
        let mut p = HeadPoll::new(Duration::ZERO, at(0));
        assert!(!p.start(at(0)) && !p.start(at(u32::MAX as u64)));
    }
}
