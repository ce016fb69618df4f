//! What a realm spent alone lately: from its own bucket while its lease
//! was not up (a fleet's start before the store's first answer, a store
//! that failed). The provider's one-second window still holds those
//! requests, and a fleet bucket that starts (or restarts) full would pay
//! its burst on top of them: a new user's four workers met a 429 right
//! after their first leases. So the last second of it is paid for:
//!
//! ```text
//!   an ask while spending alone   tells it (`LeaseAsk::alone`): the store takes it
//!                                 from its tokens, even below zero
//!   the grant that puts the lease up
//!                                 pays what was spent alone since (the asks went out
//!                                 before it was spent): the hold is that much smaller,
//!                                 and what the grant cannot pay is told with the next ask
//! ```

use std::collections::VecDeque;
use std::time::Duration;

use crate::time::Instant;

/// How far back spending alone still counts: the provider's window.
pub const ALONE_WINDOW: Duration = Duration::from_secs(1);

/// The ages what was spent alone is told in (`LeaseAsk::alone_ages`): the
/// last second in tenths, youngest first.
pub const AGE_SLOTS: usize = 10;

/// Charges paid alone in the last [`ALONE_WINDOW`], oldest first, and
/// what a grant could not pay of them, to tell the store.
#[derive(Clone, Debug, Default)]
pub(super) struct SpentAlone {
    recent: VecDeque<(Instant, f64)>,
    owed: f64,
}

impl SpentAlone {
    /// A charge paid alone at `now`.
    pub(super) fn paid(&mut self, now: Instant, cost: f64) {
        self.forget_before(now);
        if cost.is_finite() && cost > 0.0 {
            self.recent.push_back((now, cost));
        }
    }

    /// What the next ask tells the store (CU), told once: what was paid
    /// alone in the last window and what a grant could not pay (an ask
    /// that fails loses it, which costs at most one window's caution), and the same CU by age: slot `i` what
    /// was paid `i` to `i + 1` tenths of a second ago (what a grant could
    /// not pay, of no known age, counts as the youngest). A store keeping a
    /// plan's second counts each where it falls, not all of it from now: a
    /// fleet rejoining a restarted Redis, its members' last second alone
    /// counted from their first asks, stood still for 0.4–1.0 s.
    pub(super) fn take_by_age(&mut self, now: Instant) -> (f64, [f64; AGE_SLOTS]) {
        self.forget_before(now);
        let mut ages = [0.0; AGE_SLOTS];
        let tenth = ALONE_WINDOW.as_millis() as u64 / AGE_SLOTS as u64;
        for (at, cost) in self.recent.drain(..) {
            let slot = (now.saturating_since(at).as_millis() as u64 / tenth) as usize;
            ages[slot.min(AGE_SLOTS - 1)] += cost;
        }
        ages[0] += std::mem::take(&mut self.owed);
        (ages.iter().sum(), ages)
    }

    /// A grant put the lease up, `held` CU now held: what was paid alone
    /// in the last window is paid from it first; returns what is left
    /// held (the rest is owed to the store).
    pub(super) fn pay_from(&mut self, now: Instant, held: f64) -> f64 {
        let spent = self.drain_window(now);
        let paid = spent.min(held.max(0.0));
        self.owed += spent - paid;
        held - paid
    }

    /// What was paid alone in the window before `now` (CU), forgotten once read.
    fn drain_window(&mut self, now: Instant) -> f64 {
        self.forget_before(now);
        self.recent.drain(..).map(|(_, cost)| cost).sum()
    }

    fn forget_before(&mut self, now: Instant) {
        while self.recent.front().is_some_and(|&(at, _)| now.saturating_since(at) >= ALONE_WINDOW) {
            self.recent.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::at;

    #[test]
    fn the_last_second_alone_is_told_once() {
        let mut alone = SpentAlone::default();
        alone.paid(at(0), 5.0);
        alone.paid(at(600), 3.0);
        alone.paid(at(900), 2.0);
        assert_eq!(alone.take_by_age(at(1_200)).0, 5.0, "the charge at 0 ms is out of the window");
        assert_eq!(alone.take_by_age(at(1_250)).0, 0.0, "told once");
        alone.paid(at(2_000), f64::NAN);
        assert_eq!(alone.take_by_age(at(2_000)).0, 0.0, "nothing that is not a charge");
    }

    #[test]
    fn what_was_spent_alone_is_told_by_tenths_of_its_age_and_owed_as_the_youngest() {
        let mut alone = SpentAlone::default();
        alone.paid(at(100), 4.0);
        alone.paid(at(300), 4.0);
        assert_eq!(alone.pay_from(at(400), 6.0), 0.0); // 2 owed, of no known age
        alone.paid(at(650), 1.0);
        alone.paid(at(1_050), 3.0);
        let (total, ages) = alone.take_by_age(at(1_099));
        assert_eq!(total, 6.0);
        assert_eq!(ages, [3.0 + 2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn a_grant_pays_what_was_spent_alone_and_the_rest_is_told() {
        let mut alone = SpentAlone::default();
        alone.paid(at(100), 4.0);
        alone.paid(at(300), 4.0);
        assert_eq!(alone.pay_from(at(400), 6.0), 0.0, "6 of the 8 paid from the grant");
        alone.paid(at(500), 1.0);
        assert_eq!(alone.take_by_age(at(600)).0, 3.0, "the 2 it could not pay, and 1 since");
        alone.paid(at(700), 2.0);
        assert_eq!(alone.pay_from(at(800), 5.0), 3.0);
        assert_eq!(alone.take_by_age(at(800)).0, 0.0);
    }
}
