//! What the relayers of a realm learned of one endpoint (`Realm::endpoint_record`).

use std::cell::Cell;
use std::time::Duration;

use crate::policy::tail::{Ewma, TailLatency, TRUSTED_TAIL_SAMPLES};
use crate::rpc::methods::CLASSES;
use crate::time::Instant;

/// What the members learned of one endpoint: its chain (the id it
/// reported and when; the latest check wins, and whether a check is out),
/// the slow end of its latency per method class over every member's
/// successes, so a fresh member hedges it on what the realm knows instead
/// of a blind initial delay, and, per class, how long it has had attempts
/// out without answering any ([`EndpointRecord::silent_for`]).
#[derive(Debug, Default)]
pub struct EndpointRecord {
    seen: Cell<Option<(u64, Instant)>>,
    checking: Cell<u32>,
    tails: [Cell<TailLatency>; CLASSES],
    typical: [Cell<Ewma>; CLASSES],
    /// Per class: attempts out now, and since when none has been answered
    /// (the last answer, or when the first of them went out).
    busy: [Cell<u32>; CLASSES],
    quiet_since: [Cell<Instant>; CLASSES],
    /// Per class: the slow end another realm told (`News::Tail`), used
    /// until this realm's own is trusted; and what this realm last told, when.
    heard: [Cell<Option<f64>>; CLASSES],
    told: [Cell<Option<(f64, Instant)>>; CLASSES],
}

/// A realm tells its slow end of an endpoint again only once it moved by
/// this fraction since it last told, and at most this often.
const TAIL_TELL_CHANGE: f64 = 0.25;
const TAIL_TELL_EVERY: Duration = Duration::from_secs(10);
/// A heard slow end beyond this (ms) is no latency: ignored.
const TAIL_HEARD_MAX: f64 = 120_000.0;

impl EndpointRecord {
    /// A member's attempt of method class `class` went out at `now`.
    pub fn attempt_began(&self, class: usize, now: Instant) {
        if let (Some(busy), Some(quiet)) = (self.busy.get(class), self.quiet_since.get(class)) {
            if busy.get() == 0 {
                quiet.set(now);
            }
            busy.set(busy.get() + 1);
        }
    }

    /// A member's attempt of `class` ended: answered at `answered` (any
    /// reply of the node's own), or not (timed out, dropped, abandoned).
    pub fn attempt_ended(&self, class: usize, answered: Option<Instant>) {
        if let (Some(busy), Some(quiet)) = (self.busy.get(class), self.quiet_since.get(class)) {
            busy.set(busy.get().saturating_sub(1));
            if let Some(at) = answered {
                quiet.set(quiet.get().max(at));
            }
        }
    }

    /// A member leaving the realm takes its `n` attempts of `class` still
    /// out with it (they will end on its own record, not this one).
    pub fn forget_attempts(&self, class: usize, n: u32) {
        if let Some(busy) = self.busy.get(class) {
            busy.set(busy.get().saturating_sub(n));
        }
    }

    /// How long, at `now`, the endpoint has had attempts of `class` out and
    /// answered none of them (zero while it has none out): an endpoint
    /// silent this long is as slow right now as the attempt a hedge would
    /// rescue, so a hedge onto it cannot help.
    pub fn silent_for(&self, class: usize, now: Instant) -> Duration {
        match (self.busy.get(class), self.quiet_since.get(class)) {
            (Some(busy), Some(quiet)) if busy.get() > 0 => now.saturating_since(quiet.get()),
            _ => Duration::ZERO,
        }
    }

    /// A member's successful attempt of method class `class` took `ms`.
    pub fn observe_latency(&self, class: usize, ms: f64) {
        if let (Some(tail), Some(typical)) = (self.tails.get(class), self.typical.get(class)) {
            let (mut t, mut m) = (tail.get(), typical.get());
            t.observe(ms);
            m.observe(ms);
            tail.set(t);
            typical.set(m);
        }
    }

    /// Every member's recent typical latency for `class` (ms), trusted as
    /// the tail is (once there are [`TRUSTED_TAIL_SAMPLES`] successes).
    pub fn typical(&self, class: usize) -> Option<f64> {
        self.tail(class).and(self.typical.get(class).and_then(|cell| cell.get().value()))
    }

    /// The slow end of every member's successes for `class` (ms), once
    /// they are [`TRUSTED_TAIL_SAMPLES`] together: a thousand relayers with
    /// a few requests each know together what none of them knows alone.
    /// Until then, what another realm told of it (a process joining a fleet
    /// hedges on the fleet's measure, not on a blind initial delay).
    pub fn tail(&self, class: usize) -> Option<f64> {
        self.own_tail(class).or_else(|| self.heard.get(class).and_then(Cell::get))
    }

    fn own_tail(&self, class: usize) -> Option<f64> {
        self.tails.get(class).and_then(|cell| cell.get().value(TRUSTED_TAIL_SAMPLES))
    }

    /// Another realm's slow end for `class` (ms); `false` if it is no latency.
    pub fn hear_tail(&self, class: usize, ms: f64) -> bool {
        let Some(cell) = self.heard.get(class) else { return false };
        if !(ms.is_finite() && ms > 0.0 && ms <= TAIL_HEARD_MAX) {
            return false;
        }
        cell.set(Some(ms));
        true
    }

    /// This realm's own trusted slow end for `class`, if it is news at
    /// `now`: never told, or moved by a quarter since, at most every 10 s.
    pub fn tail_to_tell(&self, class: usize, now: Instant) -> Option<f64> {
        let ms = self.own_tail(class)?;
        let told = self.told.get(class)?;
        let due = match told.get() {
            None => true,
            Some((last, at)) => {
                now.saturating_since(at) >= TAIL_TELL_EVERY && (ms - last).abs() > TAIL_TELL_CHANGE * last
            }
        };
        due.then(|| {
            told.set(Some((ms, now)));
            ms
        })
    }

    /// A check of this endpoint's chain went out: until it ends, requests
    /// that would check it too wait for its answer instead.
    pub fn begin_check(&self) {
        self.checking.set(self.checking.get() + 1);
    }

    /// A check ended (answered or not).
    pub fn end_check(&self) {
        self.checking.set(self.checking.get().saturating_sub(1));
    }

    /// Whether a check is out.
    pub fn checking(&self) -> bool {
        self.checking.get() > 0
    }

    /// Records a check's answer at `at` (an older answer never replaces a newer one).
    pub fn record(&self, chain_id: u64, at: Instant) {
        if self.seen.get().is_none_or(|(_, known)| known <= at) {
            self.seen.set(Some((chain_id, at)));
        }
    }

    /// The latest answer, if it is newer than `than` and younger than
    /// `recheck` at `now` (`recheck` zero: never due again).
    pub fn newer(&self, than: Option<Instant>, now: Instant, recheck: Duration) -> Option<(u64, Instant)> {
        let (id, at) = self.seen.get()?;
        let fresh = recheck.is_zero() || now.saturating_since(at) < recheck;
        (fresh && than.is_none_or(|mine| at > mine)).then_some((id, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_endpoint_record_keeps_the_latest_answer_while_it_is_fresh() {
        let at = |ms: f64| Instant::from_millis_f64(ms);
        let record = EndpointRecord::default();
        let recheck = Duration::from_secs(300);
        assert_eq!(record.newer(None, at(0.0), recheck), None);
        record.record(1, at(1000.0));
        record.record(5, at(500.0)); // an older answer arriving late
        assert_eq!(record.newer(None, at(2000.0), recheck), Some((1, at(1000.0))));
        assert_eq!(record.newer(Some(at(1000.0)), at(2000.0), recheck), None, "nothing newer than mine");
        assert_eq!(record.newer(Some(at(900.0)), at(2000.0), recheck), Some((1, at(1000.0))));
        assert_eq!(record.newer(None, at(301_000.0), recheck), None, "due for a recheck: not trusted");
        assert_eq!(record.newer(None, at(10_000_000.0), Duration::ZERO), Some((1, at(1000.0))), "never due");
    }

    #[test]
    fn an_endpoint_is_silent_while_it_has_attempts_out_and_answers_none() {
        let at = |ms: f64| Instant::from_millis_f64(ms);
        let ms = Duration::from_millis;
        let record = EndpointRecord::default();
        assert_eq!(record.silent_for(0, at(5000.0)), Duration::ZERO, "nothing out: not silent");
        record.attempt_began(0, at(1000.0));
        record.attempt_began(0, at(1200.0));
        assert_eq!(record.silent_for(0, at(1500.0)), ms(500), "since the first went out");
        assert_eq!(record.silent_for(1, at(1500.0)), Duration::ZERO, "another class is not this one");
        record.attempt_ended(0, Some(at(1600.0)));
        assert_eq!(record.silent_for(0, at(1700.0)), ms(100), "since the last answer");
        record.attempt_ended(0, Some(at(1550.0))); // an answer observed out of order
        assert_eq!(record.silent_for(0, at(1700.0)), Duration::ZERO, "nothing out any more");
        record.attempt_began(0, at(2000.0));
        record.attempt_began(0, at(2100.0));
        record.attempt_ended(0, None); // timed out: no answer
        assert_eq!(record.silent_for(0, at(2500.0)), ms(500), "an unanswered end is no answer");
        record.attempt_ended(0, None);
        record.attempt_ended(0, None); // one too many never wraps
        assert_eq!(record.silent_for(0, at(9000.0)), Duration::ZERO);
        record.attempt_began(9, at(1.0)); // no such class: ignored
        assert_eq!(record.silent_for(9, at(2.0)), Duration::ZERO);
    }

    #[test]
    fn a_slow_end_is_told_when_trusted_then_only_when_it_moved_a_quarter_and_at_most_every_10_s() {
        let r = EndpointRecord::default();
        let at = |ms: u64| Instant::from_epoch(Duration::from_millis(ms));
        for _ in 0..9 {
            r.observe_latency(1, 100.0);
        }
        assert_eq!(r.tail_to_tell(1, at(0)), None, "not trusted yet");
        r.observe_latency(1, 100.0);
        assert_eq!(r.tail_to_tell(1, at(0)), Some(100.0));
        assert_eq!(r.tail_to_tell(1, at(20_000)), None, "unchanged");
        r.observe_latency(1, 200.0); // jumps up by 30 %: 130
        assert_eq!(r.tail_to_tell(1, at(5_000)), None, "too soon");
        assert_eq!(r.tail_to_tell(1, at(20_000)), Some(130.0));
        assert!(!r.hear_tail(2, f64::NAN) && !r.hear_tail(2, -1.0) && !r.hear_tail(2, 1e9), "no latency");
        assert!(r.hear_tail(2, 50.0));
        assert_eq!(r.tail(2), Some(50.0), "heard, until its own is trusted");
        assert_eq!(r.tail(1), Some(130.0), "its own stands");
    }
}
