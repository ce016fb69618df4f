//! What a fleet spent in its last second, as its bucket learns it
//! (`policy::fleet_bucket`): for a plan kept per second, the store keeps
//! `spent in the last second + everything held ≤ the plan`.
//!
//! The store never sees a charge. It learns what a member spent at the
//! member's next ask (its hold then, less what it still holds and gives
//! back), and counts it *then*: later than it went out, so counted longer
//! than it was in the provider's window, never shorter. What a member
//! still holds may go out at any moment, so it is counted whole beside
//! the window. A hold that ends unasked counts as spent when it ends.
//!
//! In any second ending at `t`, the fleet sends at most what it reported
//! within it plus what it held at `t`: each unit is either reported by
//! then (counted here) or still held. Both only move into each other
//! between asks, and each grant keeps their sum within the plan, so no
//! second carries more (a member's report of spending alone, its store
//! slow, is the exception: told after the fact, it is counted, not
//! refused). A token bucket of burst B and rate R keeps it only at
//! B + R = the plan, sustaining R (80 % of it, `FLEET_WINDOW_BURST`);
//! this sustains the plan less what is held.
//!
//! Slots of [`SLOT_MS`]: a spend counts for 1.00–1.02 s. (At 100 ms, the
//! seeded fleet of `quota/slow_store_tests.rs` on a fast store sustained
//! 84 % of the plan; at 20 ms, 86–91 %: what is held is the rest.)

use crate::time::Instant;

/// The window's grain (ms).
pub const SLOT_MS: u64 = 20;

/// Slots a spend counts for after its own: one second.
const SLOTS: u64 = 1000 / SLOT_MS;

/// CU reported spent, by slot (oldest first, at most `SLOTS + 1`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpentWindow {
    slots: Vec<(u64, f64)>,
}

fn slot_of(at: Instant) -> u64 {
    at.since_epoch().as_millis() as u64 / SLOT_MS
}

impl SpentWindow {
    /// `cu` spent, as far as the store knows, at `at` (a hold's end may be
    /// earlier than the last report: kept in slot order). Nothing for a
    /// `cu` that is not a positive number.
    pub fn add(&mut self, at: Instant, cu: f64) {
        if !(cu.is_finite() && cu > 0.0) {
            return;
        }
        let slot = slot_of(at);
        match self.slots.binary_search_by_key(&slot, |&(s, _)| s) {
            Ok(i) => self.slots[i].1 += cu,
            Err(i) => self.slots.insert(i, (slot, cu)),
        }
    }

    /// What counts at `now` (slots older than one second are dropped).
    pub fn total(&mut self, now: Instant) -> f64 {
        let first = slot_of(now).saturating_sub(SLOTS);
        self.slots.retain(|&(s, _)| s >= first);
        self.slots.iter().map(|&(_, cu)| cu).sum()
    }

    /// How long from `now` (ms) until `cu` of what counts has left the
    /// window (0 for nothing; when less than `cu` counts, until all of it left).
    pub fn frees_in(&self, now: Instant, cu: f64) -> f64 {
        if cu.is_nan() || cu <= 0.0 {
            return 0.0;
        }
        let now_ms = now.since_epoch().as_secs_f64() * 1000.0;
        let mut freed = 0.0;
        let mut last = 0.0;
        for &(slot, spent) in &self.slots {
            last = ((slot + SLOTS + 1) * SLOT_MS) as f64 - now_ms;
            freed += spent;
            if freed >= cu {
                break;
            }
        }
        last.max(0.0).ceil()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::at;

    #[test]
    fn a_spend_counts_for_at_least_a_second_and_at_most_one_slot_more() {
        let mut w = SpentWindow::default();
        w.add(at(1_050), 10.0);
        w.add(at(1_059), 5.0);
        w.add(at(1_420), 20.0);
        assert_eq!(w.total(at(1_420)), 35.0);
        assert_eq!(w.total(at(2_059)), 35.0, "1,059 + 1 s: still counted");
        assert_eq!(w.total(at(2_060)), 20.0, "the slot of 1,040-1,059 left at 2,060");
        assert_eq!(w.total(at(2_439)), 20.0);
        assert_eq!(w.total(at(2_440)), 0.0);
    }

    #[test]
    fn a_late_entry_keeps_slot_order_and_nonsense_counts_nothing() {
        let mut w = SpentWindow::default();
        w.add(at(1_500), 4.0);
        w.add(at(1_200), 6.0); // a hold that ended before the last report
        for bad in [f64::NAN, -3.0, f64::INFINITY, 0.0] {
            w.add(at(1_500), bad);
        }
        assert_eq!(w.total(at(1_500)), 10.0);
        assert_eq!(w.frees_in(at(1_500), 5.0), 720.0, "the 1,200 slot leaves at 2,220");
        assert_eq!(w.frees_in(at(1_500), 7.0), 1_020.0, "then the 1,500 one at 2,520");
        assert_eq!(w.frees_in(at(1_500), 50.0), 1_020.0, "more than counts: when all left");
        assert_eq!(w.frees_in(at(1_500), 0.0), 0.0);
    }
}
