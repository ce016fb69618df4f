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
//!     a read that wants `latest` arrives or is answered at now ≥ next_at
//!       ─► Polling (a round starts; answered too: a burst queued at once
//!          has no arrival after it, `wasm/core.rs`)
//!     anything earlier ─────────────────────────────────────► stays Idle
//!   Polling { not_before }
//!     new reads start nothing (one round at a time)
//!     another pool's round heard ─► not_before raised (`postpone`)
//!     the round ends at t (every poll answered, failed or timed out)
//!       ─► Idle { next_at: max(t + interval, not_before) }
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
    Idle {
        next_at: Instant,
    },
    /// A round is under way; the next is due no sooner than `not_before`
    /// (another pool's round heard meanwhile).
    Polling {
        not_before: Instant,
    },
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

    /// Whether a round is under way.
    pub fn polling(&self) -> bool {
        matches!(self.state, State::Polling { .. })
    }

    /// Starts a round if one is due at `now`; `true` if it did.
    pub fn start(&mut self, now: Instant) -> bool {
        let due = self.due(now);
        if due {
            self.state = State::Polling { not_before: Instant::ZERO };
        }
        due
    }

    /// The round ended at `now`: the next is due one interval later, or
    /// later still if another pool's round heard meanwhile said so.
    pub fn finish(&mut self, now: Instant) {
        let not_before = match self.state {
            State::Polling { not_before } => not_before,
            State::Idle { .. } => Instant::ZERO,
        };
        self.state = State::Idle { next_at: (now + self.interval).max(not_before) };
    }

    /// Another pool's round was heard: the next round falls due no sooner
    /// than `at`. A round under way is left to end, and the next one waits
    /// for `at` too: two pools whose rounds overlapped would otherwise both
    /// fall due one interval after their own and poll together for ever.
    pub fn postpone(&mut self, at: Instant) {
        match &mut self.state {
            State::Idle { next_at } => *next_at = (*next_at).max(at),
            State::Polling { not_before } => *not_before = (*not_before).max(at),
        }
    }

    /// The round will not end here (its poller went away): due at once.
    pub fn abandon(&mut self) {
        if matches!(self.state, State::Polling { .. }) {
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
    fn a_round_heard_while_polling_holds_the_next_one_back() {
        let mut p = HeadPoll::new(Duration::from_secs(12), at(0));
        assert!(p.start(at(12_000)));
        p.postpone(at(27_000)); // another pool's round, heard mid-round
        assert!(!p.due(at(12_050)), "the round under way goes on");
        p.finish(at(12_100));
        assert!(!p.due(at(26_999)) && p.due(at(27_000)), "not one interval after its own end (24.1 s)");
        // Heard earlier than its own next would be: one interval after its end stands.
        assert!(p.start(at(27_000)));
        p.postpone(at(30_000));
        p.finish(at(27_100));
        assert!(!p.due(at(39_099)) && p.due(at(39_100)));
    }

    #[test]
    fn a_zero_interval_never_polls() {
        let mut p = HeadPoll::new(Duration::ZERO, at(0));
        assert!(!p.start(at(0)) && !p.start(at(u32::MAX as u64)));
    }
}
