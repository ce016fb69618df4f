//! The router's side of recovery pacing after a total outage (`outage.rs`):
//! the demand it is relative to, whether one more attempt fits, and the
//! line in which held requests take their turns, oldest first.

use std::time::Duration;

use super::Router;
use crate::pool::outage::{Pace, PacedTurn};
use crate::time::Instant;

impl Router {
    /// Counts one logical request (the demand recovery pacing is relative
    /// to). While every endpoint is down too: the pacer keeps what it knew
    /// before as a floor (`Pacer::end_outage`).
    pub fn note_arrival(&mut self, now: Instant) {
        let mut pacer = self.pacer.borrow_mut();
        pacer.arrivals.record(now);
        if let Some(rec) = pacer.recovery.as_mut() {
            rec.arrival();
        }
    }

    /// Recovery pacing: `Ok` if one more attempt fits for a request that
    /// began at `since` (none: not in the line, e.g. a head poll), else the
    /// wait. A request younger than the oldest one held waits its turn.
    pub(super) fn recovery_check(&mut self, now: Instant, since: Option<Instant>) -> Result<(), Duration> {
        let mut pacer = self.pacer.borrow_mut();
        let oldest = pacer.oldest_held();
        let Some(rec) = pacer.recovery.as_mut() else { return Ok(()) };
        rec.keep_up(now);
        match rec.check(now) {
            Pace::Over => {
                pacer.recovery = None;
                Ok(())
            }
            Pace::Go if since.zip(oldest).is_some_and(|(mine, first)| first < mine) => Err(rec.interval()),
            Pace::Go => Ok(()),
            Pace::Wait(d) => Err(d),
        }
    }

    /// The recovery pacing in force, if any: its pace and the demand it
    /// was set from (per second), for `stats()`.
    pub fn recovery_pacing(&self) -> Option<(f64, f64)> {
        let pacer = self.pacer.borrow();
        pacer.recovery.as_ref().map(|rec| (rec.rate(), pacer.arrivals.rate()))
    }

    /// A place in the pacer's line for a request that began at `since`,
    /// held while the pacer is what it waits for.
    pub fn pace_turn(&self, since: Instant) -> PacedTurn {
        PacedTurn::take(&self.pacer, since)
    }
}
