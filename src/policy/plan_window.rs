//! A plan per second kept in every second, not on average: the default
//! shape of a quota group whose plan is configured without a `burst`
//! (beside its token bucket: `quota/bucket.rs`, `WindowedBucket`).
//!
//! A token bucket with rate R and burst B lets through B + R in one
//! second: with the burst defaulted to the plan (what a page load or a
//! job's start needs at once), twice the plan in the first second, which a
//! provider counting per second refuses. A new user's fleet on a 20 CU/s
//! key met exactly that: two 429s in its first second, which then halved
//! its rate. So such a group also keeps a log of the last second's charges
//! and refuses a charge that would take that second past the allowed rate:
//!
//! ```text
//!   charge(cost) at now:  drop entries older than one second
//!                         sum + cost ≤ cap (or the log is empty)  → log it
//!                         otherwise wait until enough entries leave the second
//!   cap = the allowed rate × 1 s   (lowered with the rate by AIMD)
//! ```
//!
//! A burst still goes out at once, up to the plan; no second (any
//! one, not only the provider's) carries more than the plan.
//!
//! A provider counts a request when it *arrives*, and that is not when it
//! was charged: a request that waited for its endpoint's chain check, or
//! for a new connection's handshake, arrives later than requests charged
//! after it on a warm connection. Counted at charge time, a second of
//! arrivals could then hold more than the plan (CI saw 22 in a 20/s
//! second: two reads sent after their chain check crossed the provider's
//! second boundary). So an answered charge moves to the instant its answer
//! came (`answered`), which is after its arrival:
//!
//! ```text
//!   answered(charged_at, cost, now):  the charge logged at charged_at
//!                                     now counts from now
//! ```
//!
//! Then any two requests whose arrivals lie within one second were both in
//! the log when the later-sent of them was charged (the earlier one's
//! answer came after its arrival, so less than a second before that
//! charge), and no second of arrivals carries more than the plan, whatever
//! the latency. The price: each CU is held one round trip longer (the plan
//! used at 1 s / (1 s + RTT)). A charge whose answer took longer than a
//! second has left the log already and stays gone: it arrived long ago,
//! on a slow call rather than a slow path. A charge
//! above a whole second's cap waits for an empty log, as a token bucket
//! charges a cost above its burst as a full bucket. Pure: time is an
//! argument. The log holds at most one second of charges (≤ cap / the
//! smallest cost entries) and its sum is kept, so a charge costs O(1)
//! amortised however many requests wait.

use std::collections::VecDeque;
use std::time::Duration;

use crate::time::Instant;

const SECOND: Duration = Duration::from_secs(1);

/// The charges of the last second and the most they may sum to.
#[derive(Clone, Debug)]
pub struct PlanWindow {
    cap: f64,
    log: VecDeque<(Instant, f64)>,
    sum: f64,
}

impl PlanWindow {
    /// At most `cap` in any second (infinite or NaN: no bound).
    pub fn new(cap: f64) -> Self {
        PlanWindow { cap: Self::sane(cap), log: VecDeque::new(), sum: 0.0 }
    }

    fn sane(cap: f64) -> f64 {
        if cap.is_nan() || cap <= 0.0 {
            f64::INFINITY
        } else {
            cap
        }
    }

    /// Changes the bound from now on (what was logged stays).
    pub fn set_cap(&mut self, cap: f64) {
        self.cap = Self::sane(cap);
    }

    fn expire(&mut self, now: Instant) {
        while let Some(&(at, cost)) = self.log.front() {
            if now.saturating_since(at) < SECOND {
                break;
            }
            self.log.pop_front();
            self.sum -= cost;
        }
        if self.log.is_empty() {
            self.sum = 0.0; // no drift from float sums
        }
    }

    /// Whether `cost` fits in the second ending now, or how long until it would.
    pub fn check(&mut self, now: Instant, cost: f64) -> Result<(), Duration> {
        self.expire(now);
        if self.cap.is_infinite() || self.log.is_empty() || self.sum + cost <= self.cap + 1e-9 {
            return Ok(());
        }
        // Wait until the oldest entries whose leaving makes room have left.
        let mut left = self.sum;
        for &(at, c) in &self.log {
            left -= c;
            if left + cost <= self.cap + 1e-9 || left <= 1e-9 {
                return Err((at + SECOND).saturating_since(now).max(Duration::from_millis(1)));
            }
        }
        Err(Duration::from_millis(1))
    }

    /// Logs `cost` at `now` (after a `check` that said yes).
    pub fn take(&mut self, now: Instant, cost: f64) {
        if self.cap.is_infinite() || cost.is_nan() || cost <= 0.0 {
            return;
        }
        self.push(now, cost);
    }

    fn push(&mut self, now: Instant, cost: f64) {
        match self.log.back_mut() {
            // A burst charged at one instant is one entry (and later instants are never earlier).
            Some((at, logged)) if *at >= now => *logged += cost,
            _ => self.log.push_back((now, cost)),
        }
        self.sum += cost;
    }

    /// The charge of `cost` logged at `charged_at` was answered `now`: it
    /// counts from now (see the module doc). Nothing, when it has left the
    /// second already or was never logged here (a fleet lease paid for it).
    pub fn answered(&mut self, charged_at: Instant, cost: f64, now: Instant) {
        if self.cap.is_infinite() || cost.is_nan() || cost <= 0.0 || now <= charged_at {
            return;
        }
        self.expire(now);
        let first = self.log.partition_point(|&(at, _)| at < charged_at);
        let mut moved = 0.0;
        for (at, logged) in self.log.range_mut(first..) {
            if *at != charged_at || moved >= cost {
                break;
            }
            let part = logged.min(cost - moved);
            *logged -= part;
            moved += part;
        }
        if moved > 0.0 {
            self.sum -= moved;
            self.push(now, moved);
        }
    }

    /// What was charged in the second ending now.
    pub fn used(&mut self, now: Instant) -> f64 {
        self.expire(now);
        self.sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::at;

    #[test]
    fn the_wait_is_until_enough_of_the_second_has_left() {
        let mut w = PlanWindow::new(10.0);
        w.take(at(0), 4.0);
        w.take(at(300), 4.0);
        assert_eq!(w.check(at(500), 2.0), Ok(()));
        assert_eq!(w.check(at(500), 3.0), Err(Duration::from_millis(500)), "the first 4 leave at 1000 ms");
        assert_eq!(w.check(at(500), 7.0), Err(Duration::from_millis(800)), "both must leave: 1300 ms");
        assert_eq!(w.check(at(500), 30.0), Err(Duration::from_millis(800)), "above the cap: an empty second");
        assert_eq!(w.used(at(999)), 8.0);
        assert_eq!(w.used(at(1000)), 4.0, "an entry leaves the second exactly one second later");
        assert_eq!(w.check(at(1300), 30.0), Ok(()));
    }

    #[test]
    fn an_answered_charge_counts_from_its_answer() {
        let mut w = PlanWindow::new(10.0);
        w.take(at(0), 4.0);
        w.take(at(0), 4.0);
        w.take(at(200), 2.0);
        w.answered(at(0), 4.0, at(300));
        assert_eq!(w.used(at(300)), 10.0, "moved, not added");
        assert_eq!(w.used(at(1000)), 6.0, "the unanswered 4 left at 1000 ms");
        assert_eq!(w.used(at(1200)), 4.0, "the 2 charged at 200 ms left; the answered 4 holds until 1300 ms");
        assert_eq!(w.check(at(1200), 7.0), Err(Duration::from_millis(100)));
        assert_eq!(w.used(at(1300)), 0.0);
    }

    #[test]
    fn a_late_answer_a_foreign_charge_or_an_early_clock_moves_nothing() {
        let mut w = PlanWindow::new(10.0);
        w.take(at(0), 4.0);
        w.take(at(500), 4.0);
        w.answered(at(0), 4.0, at(1200));
        assert_eq!(w.used(at(1200)), 4.0, "answered after its second: it stays gone");
        w.answered(at(700), 4.0, at(1300));
        assert_eq!(w.used(at(1300)), 4.0, "no charge at 700 ms (a fleet lease paid): nothing moves");
        w.answered(at(500), 9.0, at(1400));
        assert_eq!(w.used(at(1400)), 4.0, "never more than was logged moves");
        assert_eq!(w.used(at(2399)), 4.0);
        assert_eq!(w.used(at(2400)), 0.0);
        w.take(at(3000), 1.0);
        w.answered(at(3000), 1.0, at(2900));
        assert_eq!(w.used(at(3000)), 1.0, "an answer before its charge moves nothing");
    }

    #[test]
    fn nonsense_means_no_bound() {
        let mut w = PlanWindow::new(f64::NAN);
        w.take(at(0), 1e9);
        assert_eq!((w.check(at(0), 1e9), w.used(at(0))), (Ok(()), 0.0));
    }
}
