//! A pipeline's end: `close()` and what waits on it (requests, transaction
//! watchers, the realm's wake-ups).

use super::Pipeline;

impl Pipeline {
    /// Stops the pipeline: waits and backoffs in progress end at once (their
    /// timers are cleared) and every request still running fails with
    /// [`StopReason::Closed`](crate::error::StopReason::Closed) at its next step.
    pub fn close(&self) {
        self.shutdown.trigger();
        // A closed relayer learns nothing more: what it shared lives on
        // only with the realm's other members.
        if let Ok(mut router) = self.router.try_borrow_mut() {
            router.leave_realm();
        }
        if let Ok(mut budget) = self.budget.try_borrow_mut() {
            budget.leave_realm();
        }
    }

    /// Completes when another member of the realm ends an attempt (never
    /// outside a realm); waiters are woken in `turn` (`Notify::notified_in_turn`).
    pub(super) async fn realm_woken(&self, turn: u64) {
        match &self.realm_wake {
            Some(wake) => wake.notified_in_turn(turn).await,
            None => std::future::pending().await,
        }
    }

    /// Whether [`Pipeline::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shutdown.is_triggered()
    }

    /// Completes when [`Pipeline::close`] is called (for loops outside the
    /// pipeline, like transaction watchers, that must stop with it).
    pub async fn closing(&self) {
        self.shutdown.wait().await;
    }
}
