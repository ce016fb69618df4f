//! The ask a lease sends its store: when one is due, how big a chunk, how
//! long its units stay spendable, and what part of a held chunk goes back
//! (see the module doc of `policy::lease`).

use std::time::Duration;

use super::{Lease, LeaseAsk};
use crate::time::Instant;

impl Lease {
    /// The ask to send now, if one is due: none is out, no backoff or
    /// shortage is running, and less than half a chunk is held. A chunk is
    /// one period of `recent_rate` (the realm's CU/s), at least a few of
    /// the largest charges; for a known plan, at most the burst and the
    /// share the store last allowed (never below one largest charge).
    /// `window`: the most the fleet may send in one second (0: none; `LeaseAsk::window`).
    pub fn ask(&mut self, now: Instant, recent_rate: f64, rate: f64, burst: f64, window: f64) -> Option<LeaseAsk> {
        self.expire_ask(now);
        if self.out.is_some() || now < self.retry_at || now < self.short_until {
            return None;
        }
        let largest = self.largest.large();
        let chunk = (recent_rate * self.period.as_secs_f64()).max(4.0 * largest);
        let chunk = if rate.is_finite() && rate > 0.0 { chunk.min(burst.min(self.share).max(largest)) } else { chunk };
        // Enough held: half a chunk, and what a refused charge needs (it must ask, or it would
        // wait for the held units to expire).
        let held = self.held(now);
        if self.up && held >= (chunk / 2.0).max(self.need) {
            return None;
        }
        // Part of a charge that cannot pay the one waiting is given back when parts can fill the
        // fleet's burst: charges above a member's share of it (the members' parts together may
        // leave no room for a whole one), or a part above the share itself (see the module doc).
        // Charges within the share always fit beside the others' parts, and those parts are kept
        // for the store to add to: given back at every refusal, a tab a round trip from the
        // leader tab got 35 of its reads where the leader got 52 (42 against 40 kept).
        // An unknown plan's store only counts: no burst for parts to fill.
        self.burst = if rate.is_finite() && rate > 0.0 { burst } else { f64::INFINITY };
        let blocking = held > self.share || self.parts_block();
        let released = if blocking && self.up && held > 0.0 && held < self.need.max(largest) { held } else { 0.0 };
        if released > 0.0 {
            self.held = 0.0;
        }
        let held = held - released;
        self.out = Some(now);
        let rate = if rate.is_finite() { rate } else { 0.0 };
        let window = if window.is_finite() && window > 0.0 && rate > 0.0 { window } else { 0.0 };
        if self.slow() {
            // A report of what was spent alone, taken from the bucket and held for no time.
            let want = std::mem::take(&mut self.unreported);
            self.reporting = Some(want);
            return Some(LeaseAsk {
                want,
                rate,
                burst,
                held: 0.0,
                hold: Duration::ZERO,
                least: want,
                released: 0.0,
                demand: self.demand,
                alone: 0.0,
                window,
                alone_ages: [0.0; 10],
                waited: None,
                line: 0.0,
            });
        }
        self.reporting = None;
        let (alone, alone_ages) = self.alone.take_by_age(now);
        Some(LeaseAsk {
            want: chunk,
            rate,
            burst,
            held,
            hold: self.hold(),
            least: largest,
            released,
            demand: self.demand,
            alone,
            window,
            alone_ages,
            waited: None,
            line: 0.0,
        })
    }

    /// How long granted units stay spendable, counted from the ask (the
    /// store counts from its answer, later: it never forgets a hold first).
    /// A quarter period when this realm's charges are above its share of
    /// the burst or half of it (`parts_block`): its grant is then one
    /// charge, spent at once, and a hold
    /// the store still counts after its units were spent (the realm asks
    /// again only when it needs more) kept the whole burst from the fleet:
    /// six processes on a 100 CU/s plan with 26 CU calls stood still for
    /// 2 s at a time.
    pub(super) fn hold(&self) -> Duration {
        if self.parts_block() {
            self.period / 4
        } else {
            self.period * 2
        }
    }

    /// Whether parts of this realm's charges can fill the fleet's burst: a
    /// charge above this realm's share of it, or above half of it (the
    /// share moves with the members holding; the burst does not).
    fn parts_block(&self) -> bool {
        let largest = self.largest.large();
        self.burst.is_finite() && (largest > self.share || largest * 2.0 > self.burst)
    }
}
