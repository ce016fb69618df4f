//! What a realm and the fleet's store say to each other about a lease
//! (`policy::lease`): the ask, and the store's answer as read back from it.

use std::time::Duration;

/// The most asks a realm has out for one group: one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeaseAsk {
    /// Compute units wanted.
    pub want: f64,
    /// The fleet's allowed rate as this realm knows it (CU/s); zero for an
    /// unknown plan (the store grants all and only counts).
    pub rate: f64,
    /// The bucket's burst (CU).
    pub burst: f64,
    /// What the realm still holds of earlier grants (CU): the store counts
    /// it as part of the burst in use.
    pub held: f64,
    /// How long granted units stay spendable (the store forgets the hold then).
    pub hold: Duration,
    /// The realm's largest single charge (CU): a share below it would never
    /// pay for one, so the store lets a member hold at least that much.
    pub least: f64,
    /// What the realm gives back of its hold (CU): part of a charge that
    /// cannot pay the charge waiting. The store puts it back into its
    /// tokens (at most what it counts as this member's hold).
    pub released: f64,
    /// What the realm would spend now (CU/s): its rate lately plus its
    /// line of waiting charges drained over a couple of seconds. The store
    /// sums the members' so a member beside a slow store can take its part
    /// of the plan by need (`QuotaGroup`'s shares), not by what it got.
    pub demand: f64,
    /// What the realm spent alone (its own bucket, the lease not up: a
    /// fleet's start, a store that was away) in the last second (CU), told
    /// with its first ask back: the store takes it from its tokens, as the
    /// provider's window still holds it (a new bucket starting full on top
    /// of what four workers had spent alone met a 429 at a fleet's start).
    pub alone: f64,
    /// The most the fleet may send in any one second (CU), for a plan kept
    /// per second; 0 for none (token-bucket terms: a configured burst, or
    /// an unknown plan). The store keeps what it learned was spent in the
    /// last second plus everything held within it
    /// (`policy::fleet_bucket::window`), so its bucket may refill at the
    /// whole plan.
    pub window: f64,
    /// `alone` by age (`lease/spent_alone.rs`): slot `i` what was spent
    /// `i` to `i + 1` tenths of a second before the ask. A store keeping
    /// the window counts each where it falls; zeros (an older member) say
    /// nothing of the ages, and `alone` then counts from the ask.
    pub alone_ages: [f64; 10],
    /// How long the realm's oldest charge still waiting for this plan has
    /// waited; `None` while none waits, or unsaid (an older member). A
    /// short store serves first the member whose oldest read has waited
    /// longest, so a fleet's reads wait in one line whichever member took
    /// them (`policy::fleet_bucket`).
    pub waited: Option<Duration>,
    /// What the realm's charges waiting for this plan cost together now
    /// (CU; NaN: unsaid, an older member). The store sums the other
    /// members' (`LeaseGrant::others_line`), so each member reckons a new
    /// read's wait by the fleet's one line, not by its own part of it.
    pub line: f64,
}

/// The store's answer to an ask.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeaseGrant {
    /// Compute units granted (≤ wanted; zero when the bucket was empty).
    pub granted: f64,
    /// When less than wanted was granted: how long until the bucket holds the rest.
    pub short_for: Duration,
    /// What the whole fleet took from this bucket lately (CU/s).
    pub fleet_rate: f64,
    /// The most one member may hold now (CU): the burst over the members
    /// holding. Infinite when the store sets no such bound (an unknown plan).
    pub share: f64,
    /// What the other members would spend now (CU/s), the sum of their last
    /// `demand`s; `None` when one of them said none (an older version) or
    /// the store does not count them.
    pub others_demand: Option<f64>,
    /// What the other members' charges waiting for the plan cost together
    /// (CU), the sum of their last `line`s; `None` when one of them said
    /// none (an older version) or the store does not count them.
    pub others_line: Option<f64>,
    /// Whether the store kept the ask's one-second window
    /// (`LeaseAsk::window`). A store of an older version does not say so,
    /// and its bucket, keeping none, is then asked token-bucket terms.
    pub windowed: bool,
}

impl LeaseGrant {
    /// An answer read from the store (through the host), or `None` for one
    /// that cannot be trusted (not numbers, negative, more than `want`):
    /// a broken or hostile store counts as a failed ask, never as quota.
    /// `share` 0 means "no bound" (the store's text for infinity); an
    /// `said` is what a store of this version says beside: the others'
    /// demand, 1 when the window was kept, the others' line. An
    /// `others_demand` or `others_line` that is not a number ≥ 0 (an older
    /// store sends none, the store's text for "unknown" is −1) is unknown,
    /// not a broken answer.
    pub fn read(
        want: f64,
        granted: f64,
        short_for_ms: f64,
        fleet_rate: f64,
        share: f64,
        said: [f64; 3],
    ) -> Option<LeaseGrant> {
        let [others_demand, windowed, others_line] = said;
        let sane = |x: f64| x.is_finite() && x >= 0.0;
        // The store prints numbers to 17 significant digits; one that rounds up past
        // `want` by a hair is `want`, more is a broken answer.
        if !(sane(granted) && sane(short_for_ms) && sane(fleet_rate) && sane(share)) || granted > want * (1.0 + 1e-9) {
            return None;
        }
        let granted = granted.min(want);
        let short_for = Duration::from_secs_f64(short_for_ms.min(3_600_000.0) / 1000.0);
        let share = if share > 0.0 { share } else { f64::INFINITY };
        let others_demand = sane(others_demand).then_some(others_demand);
        let others_line = sane(others_line).then_some(others_line);
        Some(LeaseGrant {
            granted,
            short_for,
            fleet_rate,
            share,
            others_demand,
            others_line,
            windowed: windowed == 1.0,
        })
    }

    /// All of `want`, with nothing else said (for tests: a store that only counts).
    #[cfg(test)]
    pub fn all(want: f64) -> LeaseGrant {
        LeaseGrant {
            granted: want,
            short_for: Duration::ZERO,
            fleet_rate: 0.0,
            share: f64::INFINITY,
            others_demand: None,
            others_line: None,
            windowed: false,
        }
    }
}
