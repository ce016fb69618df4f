//! What a realm's lease knows of the fleet from the store's last answer
//! (its rate, the share, the members, the others' needs) and tells it of
//! itself (its own need): read by the quota group's shares and its
//! serving rate (`policy::quota`).

use super::{Lease, YOUNG};
use crate::time::Instant;

impl Lease {
    /// What the fleet took lately, as the store last said (CU/s).
    pub fn fleet_rate(&self) -> f64 {
        self.fleet_rate
    }

    /// What this realm would spend now (CU/s: its rate and its line), told
    /// by its group before each ask: an answer that takes longer than half
    /// of what the realm may hold lasts at that rate is late (`store_speed`).
    pub fn demand(&mut self, demand: f64) {
        self.demand = if demand.is_finite() { demand.max(0.0) } else { 0.0 };
    }

    /// What the other members would spend now (CU/s), as the store last
    /// said; `None` before it said, or when one of them said nothing.
    pub fn others_demand(&self) -> Option<f64> {
        self.others_demand
    }

    /// What the other members' charges waiting for the plan cost (CU), as
    /// the store last said; `None` before it said, or when one of them said nothing.
    pub fn others_line(&self) -> Option<f64> {
        self.others_line
    }

    /// The most the store lets this realm hold, as it last said (its part
    /// of the fleet's burst; infinite: no bound said).
    pub fn share(&self) -> f64 {
        self.share
    }

    /// Whether the store ever answered: this realm is a member of a fleet
    /// (its lease may be down for a lost ask, the fleet's news still comes).
    pub fn has_answered(&self) -> bool {
        self.answered_since.is_some()
    }

    /// Whether the store first answered less than [`YOUNG`] ago (or not yet):
    /// what this realm was paid so far says little of its part of the fleet.
    pub fn young(&self, now: Instant) -> bool {
        self.answered_since.is_none_or(|first| now.saturating_since(first) < YOUNG)
    }

    /// How many members spend from the group, as the store last counted them
    /// (its share is the burst over them, this realm included; members that
    /// only report count too: `FleetBucket`'s `REPORT_PRESENCE`). `None`
    /// before the store said a bound.
    pub fn members(&self) -> Option<f64> {
        (self.share.is_finite() && self.share > 0.0 && self.burst.is_finite())
            .then(|| (self.burst / self.share).round().max(1.0))
    }

    /// Whether the store's last answer granted less than was asked: the
    /// fleet leaves nothing of its rate unused now (what the store's
    /// 10-second fleet rate says only after seconds).
    pub fn short(&self) -> bool {
        self.short
    }

    /// Whether the store keeps a plan's one-second window, as its last answer said.
    pub fn store_keeps_window(&self) -> bool {
        self.windowed
    }

    /// The charge the lease is sized for (CU; `charge_sizes`): large among the recent ones.
    pub fn largest(&self) -> f64 {
        self.largest.large()
    }
}
