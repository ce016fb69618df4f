//! A fleet member's share of the plan while its store answers too slowly
//! to lease from (`quota::alone`): by need when every member said its own,
//! else by what each spent. Pure: rates in, a part of the plan out.

use super::fleet::FLEET_WINDOW_BURST;

/// The most of a per-second plan shares by need hand out (`share_by_need`).
/// More than [`share_beside`]'s 80 %: every member's share is read from
/// one sum of needs (each as the store last heard it), not from its own
/// rate against a fleet rate ten seconds late, so they add up to the
/// handed part within what the needs moved in a round trip. Measured
/// beside a store 300–600 ms away (`slow_store_tests`, eight seeds at 75 %
/// of the plan): at 80 % the start's line never drained (p50 waits 2–5 s);
/// at 90 % the busiest second after the first ten carried 560–600 CU of
/// 600; at 95 %, up to 620.
pub(super) const NEED_HANDED: f64 = 0.9;

/// A member's share of the plan while its store answers too slowly to
/// lease from, when every member said its need (`LeaseAsk::demand`: its
/// rate plus its waiting line drained over two seconds, `alone::LINE_DRAIN`): its part of
/// [`NEED_HANDED`] of the plan in proportion to its need when the needs
/// add up to more, else its need plus an equal part of what is left
/// (`members` of them). At least `floor`.
///
/// Why by need: shares from what each member got (`share_beside`) hand a
/// member with a long line the same spare as one with none, and at 75 % of
/// the plan the start's line drained at a few CU/s: a new user's four
/// workers on a Redis 600–1,200 ms away waited 4.7–5 s at p90 and turned
/// 2.7–3.5 % of reads away.
pub(super) fn share_by_need(own: f64, others: f64, plan: f64, members: f64, floor: f64) -> f64 {
    let handed = NEED_HANDED * plan;
    let needed = own + others;
    let part = if needed > handed { handed * own / needed } else { own + (handed - needed) / members.max(1.0) };
    // `max`/`min`, not `clamp` (its panic message formats floats: 17 KB of wasm).
    (part / plan).max(floor.min(1.0)).min(1.0)
}

/// A member's share of the plan while its store answers too slowly to
/// lease from: what it spent lately plus an equal part of what the fleet
/// leaves unused of 80 % of the plan (what the fleet's bucket sustains:
/// [`FLEET_WINDOW_BURST`]; `members` of them, the store's count), over the
/// plan; at least `floor`. Its own rate over the fleet's (`share_of_fleet`)
/// when either rate or the count is unknown.
///
/// Why not own over fleet: that gives each member the unused rate in
/// proportion to what it got, and a member that got less by chance (its
/// per-second window fuller than the others', a burst of arrivals) got
/// less room to recover, and then less again: in a simulated fleet of four
/// at 75 % of its plan, shares drifted to 0.19–0.39, the busiest second
/// carried 660–820 CU of a 600 CU/s plan, and one seed's requests waited
/// 2.4 s at p90. Equal parts of the spare rate pull every member towards
/// its need. Handed out up to the whole plan, the parts added up to more
/// than it while a start's backlog drained (the own rates rise ahead of a
/// fleet rate read a round trip and ten seconds late): a new user's four
/// workers on a Redis 600–1,200 ms away met 429s that halved the plan for
/// the fleet, and 16–19 % of their reads were turned away
/// (`provider_sim_tests` shows it: 2–4 429s and the halving in every seed;
/// at 80 %, 0–1 and none).
pub(super) fn share_beside(own: f64, fleet: f64, plan: f64, members: Option<f64>, floor: f64) -> f64 {
    match members {
        Some(n) if own > 0.0 && fleet > 0.0 && plan > 0.0 => {
            let handed = (1.0 - FLEET_WINDOW_BURST) * plan;
            ((own + (handed - fleet).max(0.0) / n) / plan).max(floor.min(1.0)).min(1.0)
        }
        _ => share_of_fleet(own, fleet, floor),
    }
}

/// A member's share of the fleet: its own rate over the fleet's (both
/// CU/s over about ten seconds), at least `floor`; the whole plan when
/// either rate is unknown.
pub(super) fn share_of_fleet(own: f64, fleet: f64, floor: f64) -> f64 {
    if !(own > 0.0 && fleet > 0.0) {
        return 1.0;
    }
    crate::policy::bound((own / fleet).max(floor), 0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_the_own_rate_over_the_fleets_never_below_the_floor() {
        assert_eq!(share_of_fleet(25.0, 100.0, 0.1), 0.25);
        assert_eq!(share_of_fleet(5.0, 100.0, 0.25), 0.25, "the floor at least");
        assert_eq!(share_of_fleet(150.0, 100.0, 0.0), 1.0, "never more than the plan");
        assert_eq!(share_of_fleet(0.0, 100.0, 0.25), 1.0, "a quiet member: nothing to go by");
        assert_eq!(share_of_fleet(10.0, 0.0, 0.25), 1.0, "no fleet rate said");
        assert_eq!(share_of_fleet(f64::NAN, 100.0, 0.25), 1.0);
    }

    #[test]
    fn beside_a_slow_store_a_share_is_what_was_spent_plus_an_equal_part_of_the_spare_rate() {
        // 4 members, the fleet took 400 of a 600 CU/s plan: 80 of the 480 handed out are spare, 20 each.
        assert_eq!(share_beside(100.0, 400.0, 600.0, Some(4.0), 0.05), 0.2);
        // A member that got less by chance gets the same room to catch up, not less.
        assert_eq!(share_beside(60.0, 400.0, 600.0, Some(4.0), 0.05), 80.0 / 600.0);
        assert!(share_of_fleet(60.0, 400.0, 0.05) * 480.0 < 80.0, "in proportion: less room");
        // Nothing spare: what it spent; never below the floor, never above the plan.
        assert_eq!(share_beside(150.0, 700.0, 600.0, Some(4.0), 0.05), 0.25);
        assert_eq!(share_beside(1.0, 600.0, 600.0, Some(4.0), 0.05), 0.05);
        assert_eq!(share_beside(590.0, 100.0, 600.0, Some(1.0), 0.05), 1.0);
        // The count or a rate unknown: in proportion, as when the store failed.
        assert_eq!(share_beside(25.0, 100.0, 600.0, None, 0.1), 0.25);
        assert_eq!(share_beside(0.0, 100.0, 600.0, Some(4.0), 0.25), 1.0);
    }

    #[test]
    fn shares_by_need_hand_out_ninety_percent_of_the_plan_by_need() {
        // Needs past the handed part (540 of 600): in proportion.
        assert_eq!(share_by_need(300.0, 300.0, 600.0, 2.0, 0.05), 0.45);
        assert_eq!(share_by_need(450.0, 150.0, 600.0, 2.0, 0.05), 0.675, "a long line takes more");
        // Needs below it: the own need and an equal part of what is left.
        assert_eq!(share_by_need(100.0, 200.0, 600.0, 3.0, 0.05), (100.0 + 80.0) / 600.0);
        // No need while the others need more than the plan: the floor.
        assert_eq!(share_by_need(0.0, 900.0, 600.0, 4.0, 0.05), 0.05);
    }
}
