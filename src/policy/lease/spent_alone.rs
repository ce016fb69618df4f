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
    /// that fails loses it, which costs at most one window's caution).
    pub(super) fn take(&mut self, now: Instant) -> f64 {
        self.drain_window(now) + std::mem::take(&mut self.owed)
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
        assert_eq!(alone.take(at(1_200)), 5.0, "the charge at 0 ms is out of the window");
        assert_eq!(alone.take(at(1_250)), 0.0, "told once");
        alone.paid(at(2_000), f64::NAN);
        assert_eq!(alone.take(at(2_000)), 0.0, "nothing that is not a charge");
    }

    #[test]
    fn a_grant_pays_what_was_spent_alone_and_the_rest_is_told() {
        let mut alone = SpentAlone::default();
        alone.paid(at(100), 4.0);
        alone.paid(at(300), 4.0);
        assert_eq!(alone.pay_from(at(400), 6.0), 0.0, "6 of the 8 paid from the grant");
        alone.paid(at(500), 1.0);
        assert_eq!(alone.take(at(600)), 3.0, "the 2 it could not pay, and 1 since");
        alone.paid(at(700), 2.0);
        assert_eq!(alone.pay_from(at(800), 5.0), 3.0);
        assert_eq!(alone.take(at(800)), 0.0);
    }
}
