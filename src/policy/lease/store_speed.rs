//! Whether a fleet's store answers fast enough to lease from (`Lease`).
//!
//! Leasing, a realm holds at most its share of the fleet's burst (at least
//! its largest charge), so it is paid at most that per round trip: a store
//! answering later than that hold lasts at the realm's demand starves it,
//! however fast the store is in absolute terms. The verdict, per answer:
//!
//! ```text
//!   timely:  took ≤ TIMELY_PART × (whole charges it may hold) / demand, at most a quarter period
//!   Leasing ── SLOW_STREAK late answers in a row, or one after a whole period ──► Slow (spend alone, report)
//!   Slow ── BACK_STREAK answers in a row within BACK_WITHIN of the timely bound ──► Leasing
//! ```
//! Measured in `quota::slow_store_tests`' fleet (four members at 75 % of a
//! 600 CU/s plan, 20 CU charges, each holding one or two), eight seeds per
//! store delay, p90 waits after the first ten seconds:
//!
//! | the store each way | a quarter period, back at once | this verdict |
//! |---|---|---|
//! | 1 ms | 0.4–1.1 s | the same (leased throughout) |
//! | 20–60 ms | 1.7–4.8 s | 0.8–1.2 s |
//! | 50–100 ms | 7.6–9.8 s, up to 72 reads past 10 s | 0.8–1.2 s |
//! | 100–250 ms | 2.8–5.9 s | 0.7–1.2 s |
//! | 300–600 ms | 0.8–1.2 s | the same |
//!
//! Half the hold's time, not all of it: a realm paid one hold per round
//! trip at a round trip near that time queues as at 100 % (1.7–5 s at
//! p90). The way back asks more than the way out: near the bound, members
//! flipped between leasing and spending alone some 200 times a minute, and
//! each fall and return cost a transition (1.1–1.9 s at p90).

use std::time::Duration;

/// Late answers in a row after which a store is too slow to lease from,
/// counted from its first answer. Two, not three counted from two seconds
/// after the first: a fleet starting beside a store 300–600 ms away was
/// paid 60–160 CU/s of 450 for its first four seconds, and its line took
/// 20 s to drain. The wait was for a process starting under CPU load that
/// reads its first answers late: alone at a share its first second's rate
/// made tiny, it turned reads away; shares by need (`quota::alone`) are
/// not tiny for a member with a line.
pub const SLOW_STREAK: u32 = 2;

/// Answers in a row within half (`BACK_WITHIN`) of the timely bound that bring
/// a slow store back to leasing.
pub const BACK_STREAK: u32 = 3;

/// The part of the timely bound an answer must keep to count towards
/// [`BACK_STREAK`].
const BACK_WITHIN: f64 = 0.5;

/// The part of the time a realm's hold lasts at its demand that an answer
/// may take and still be timely.
const TIMELY_PART: f64 = 0.5;

/// Late and timely answers in a row.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StoreSpeed {
    late: u32,
    back: u32,
}

impl StoreSpeed {
    /// Whether the store is too slow to lease from.
    pub(super) fn slow(&self) -> bool {
        self.late >= SLOW_STREAK
    }

    /// An answer that `took` this long, with `timely` the bound; one that
    /// came after the whole `period` (the lease fell waiting for it) makes
    /// the store slow at once: a fleet starting beside a Redis 300–600 ms
    /// away each way leased for another round trip of a charge or so each,
    /// and its line grew to ten reads a process that took 10 s to drain.
    pub(super) fn answered(&mut self, took: Duration, timely: Duration, period: Duration) {
        if took > period {
            self.late = self.late.max(SLOW_STREAK);
            self.back = 0;
        } else if took > timely {
            self.late = self.late.saturating_add(1);
            self.back = 0;
        } else if !self.slow() {
            self.late = 0;
        } else if took.as_secs_f64() <= BACK_WITHIN * timely.as_secs_f64() {
            self.back += 1;
            if self.back >= BACK_STREAK {
                *self = StoreSpeed::default();
            }
        } else {
            self.back = 0;
        }
    }
}

/// How long an answer may take and still pay a realm: [`TIMELY_PART`] of
/// the time the whole charges it may hold (its share of the burst, at
/// least its `largest` charge) last at its `demand` (CU/s), at most a
/// quarter `period`; the quarter period when either is unknown.
pub(super) fn timely(period: Duration, share: f64, burst: f64, largest: f64, demand: f64) -> Duration {
    let quarter = period / 4;
    let may_hold = share.min(burst);
    if !(may_hold.is_finite() && largest > 0.0 && demand > 0.0) {
        return quarter;
    }
    let whole = ((may_hold / largest).floor() * largest).max(largest);
    Duration::from_secs_f64((TIMELY_PART * whole / demand).min(quarter.as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_timely_within_half_of_what_the_whole_charges_a_realm_may_hold_last() {
        let period = Duration::from_secs(1);
        // 30 CU of share, 20 CU charges: one whole charge, 0.18 s at 112 CU/s, half of it.
        assert_eq!(timely(period, 30.0, 120.0, 20.0, 112.0), Duration::from_secs_f64(0.5 * 20.0 / 112.0));
        assert_eq!(timely(period, 10.0, 120.0, 20.0, 100.0), Duration::from_millis(100), "at least one charge");
        assert_eq!(timely(period, 600.0, 120.0, 20.0, 100.0), Duration::from_millis(250), "a quarter period at most");
        assert_eq!(
            timely(period, f64::INFINITY, f64::INFINITY, 1.0, 100.0),
            Duration::from_millis(250),
            "no bound said"
        );
        assert_eq!(timely(period, 30.0, 120.0, 20.0, 0.0), Duration::from_millis(250), "no demand");
    }

    #[test]
    fn two_late_answers_make_a_store_slow_and_three_quick_ones_bring_it_back() {
        let (bound, period) = (Duration::from_millis(100), Duration::from_secs(1));
        let mut speed = StoreSpeed::default();
        speed.answered(Duration::from_millis(150), bound, period);
        speed.answered(Duration::from_millis(50), bound, period);
        speed.answered(Duration::from_millis(150), bound, period);
        assert!(!speed.slow(), "a timely answer between two late ones starts the count again");
        speed.answered(Duration::from_millis(150), bound, period);
        assert!(speed.slow());
        // Timely but not within half the bound: no way back; a late one starts the way back over.
        for took in [80, 40, 40, 150, 40, 40] {
            speed.answered(Duration::from_millis(took), bound, period);
            assert!(speed.slow(), "after {took} ms");
        }
        speed.answered(Duration::from_millis(40), bound, period);
        assert!(!speed.slow(), "three quick answers in a row");
        // One answer after the whole period: slow at once.
        speed.answered(Duration::from_millis(1_100), bound, period);
        assert!(speed.slow(), "an answer the lease fell waiting for");
    }
}
