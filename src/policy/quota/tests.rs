//! Quota group transitions on explicit instants.

use std::time::Duration;

use super::*;

use crate::time::at;

fn plan(cu: f64) -> QuotaConfig {
    QuotaConfig { cu_per_second: cu, burst: cu, ..QuotaConfig::default() }
}

/// A configured plan's first limit episode in a minute: a warning, the rate kept.
fn warned(g: &mut QuotaGroup, now: Instant) {
    g.on_limited_sent(now, now, Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, g.config().plan(), "a warning lowers nothing");
}

#[test]
fn a_configured_plan_takes_its_first_limit_in_a_minute_as_a_warning_and_lowers_on_the_next() {
    let mut g = QuotaGroup::new(plan(20.0), at(0));
    let until = g.on_limited_sent(at(1000), at(900), Some(Duration::from_secs(1)), false, 0.5);
    assert_eq!((g.stats().allowed_rate, until), (20.0, at(2000)), "cooled, the plan kept");
    g.on_limited_sent(at(1400), at(950), None, false, 0.5);
    assert_eq!(g.stats().allowed_rate, 20.0, "the rest of the wave (sent before it) is the same episode");
    g.on_limited_sent(at(30_000), at(29_900), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 10.0, "again within a minute: repeated, the rate halves");
    // Grown back to the plan and calm for a minute: the next first episode is a warning again.
    for t in 1..=40 {
        g.on_success(at(30_000 + t * 10_000), 0.5);
    }
    assert_eq!(g.stats().allowed_rate, 20.0);
    g.on_limited_sent(at(500_000), at(499_900), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 20.0, "a warning");
    // Already lowered, a limit is never a warning.
    let mut low = QuotaGroup::new(plan(20.0), at(0));
    warned(&mut low, at(0));
    low.on_limited(at(200), Some(Duration::ZERO), false, 0.5);
    low.on_limited(at(100_000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(low.stats().allowed_rate, 5.0, "below the plan a minute later: lowered again");
}

#[test]
fn charges_every_attempt_and_refuses_beyond_the_plan() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    for _ in 0..10 {
        g.charge(at(0), 10.0).unwrap();
    }
    assert_eq!(g.charge(at(0), 10.0), Err(QuotaDenied::Exhausted(Duration::from_millis(100))));
    assert!(g.charge(at(100), 10.0).is_ok());
    assert_eq!(g.stats().cu_charged, 110.0);
}

#[test]
fn a_limit_cools_the_whole_group_honouring_retry_after_capped() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    let until = g.on_limited(at(0), Some(Duration::from_secs(5)), false, 0.5);
    assert_eq!(until, at(5000));
    assert_eq!(g.charge(at(4999), 1.0), Err(QuotaDenied::Cooling(at(5000))));
    assert!(g.charge(at(5000), 1.0).is_ok());
    let capped = g.on_limited(at(10_000), Some(Duration::from_secs(86_400)), false, 0.5);
    assert_eq!(capped, at(70_000), "Retry-After capped at cooldown_max");
}

#[test]
fn another_realms_cooldown_cools_the_group_and_never_shortens_its_own() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    g.cool_until(at(3000));
    assert_eq!(g.check(at(100), 1.0), Err(QuotaDenied::Cooling(at(3000))), "the word cools it");
    assert_eq!(g.cooldown_until(), at(3000));
    g.cool_until(at(2000));
    assert_eq!(g.cooldown_until(), at(3000), "an earlier end is no shortening");
    assert!(g.check(at(3000), 1.0).is_ok());
}

#[test]
fn retry_after_is_a_floor_that_grows_while_the_group_keeps_being_limited() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    let one = Some(Duration::from_secs(1));
    assert_eq!(g.on_limited(at(0), one, false, 0.999_999), at(1000), "the first limit waits what the server asked");
    let second = g.on_limited(at(1000), one, false, 0.999_999);
    assert!(second > at(2_999) && second <= at(3_000), "limited again at once: the doubled own step, up to 2 s");
    assert_eq!(g.on_limited(at(3000), one, false, 0.0), at(5000), "4 s step, half of it at the lowest draw");
    g.on_success(at(5000), 0.5);
    assert_eq!(g.on_limited(at(6000), one, false, 0.999_999), at(7000), "a success resets it to the server's wait");
}

#[test]
fn without_retry_after_the_cooldown_is_jittered_and_doubles() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    let first = g.on_limited(at(0), None, false, 0.0);
    assert_eq!(first, at(500), "half of the 1 s base at the lowest draw");
    let second = g.on_limited(at(1000), None, false, 0.999_999);
    assert!(second > at(2_999) && second <= at(3_000), "2 s step, up to the full step");
}

#[test]
fn signals_for_attempts_sent_before_a_decrease_belong_to_its_episode() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    warned(&mut g, at(500));
    g.on_limited_sent(at(1000), at(950), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 50.0);
    // A slow node's late 429s for attempts sent before the cut: no new decrease.
    g.on_limited_sent(at(1300), at(990), Some(Duration::ZERO), false, 0.5);
    g.on_limited_sent(at(1900), at(999), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 50.0, "still the first episode");
    assert_eq!(g.stats().limited, 4, "every signal is counted");
    // An attempt sent after the cut and limited again: the lowered rate is too high.
    g.on_limited_sent(at(2000), at(1000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 25.0, "sent at the cut: a new episode");
    assert!(g.cooldown_until() > at(2000), "late signals still cool the group");
}

#[test]
fn aimd_halves_on_a_limit_and_grows_back_after_stable_windows() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    warned(&mut g, at(0));
    g.on_limited(at(200), Some(Duration::ZERO), false, 0.5);
    g.on_limited(at(250), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 50.0, "two signals within 100 ms are one decrease");
    g.on_limited(at(700), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 25.0);
    g.on_success(at(5000), 0.5);
    assert_eq!(g.stats().allowed_rate, 25.0, "not stable long enough");
    g.on_success(at(10_700), 0.5);
    assert_eq!(g.stats().allowed_rate, 30.0, "+5 % of the plan");
    for t in 2..=60 {
        g.on_success(at(700 + t * 10_000), 0.5);
    }
    assert_eq!(g.stats().allowed_rate, 100.0, "capped at the plan");
    for i in 0..20 {
        g.on_limited(at(300_000 + i * 200), Some(Duration::ZERO), false, 0.5);
    }
    assert_eq!(g.stats().allowed_rate, 5.0, "floored at min_fraction of the plan");
}

#[test]
fn long_horizon_limits_eject_the_group_for_long() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    assert_eq!(g.on_limited(at(0), Some(Duration::from_secs(1)), true, 0.5), at(3_600_000));
}

#[test]
fn shares_split_a_plan_between_processes() {
    let cfg = QuotaConfig { share: 0.25, ..plan(100.0) };
    let mut g = QuotaGroup::new(cfg, at(0));
    assert_eq!(g.stats().allowed_rate, 25.0);
    let mut taken = 0.0;
    while g.charge(at(0), 1.0).is_ok() {
        taken += 1.0;
    }
    assert_eq!(taken, 100.0, "the burst is the group's; the refill is the share");
    assert!(g.charge(at(40), 1.0).is_ok());
    assert!(g.charge(at(40), 1.0).is_err());
}

#[test]
fn an_unlimited_group_still_cools_down() {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    for _ in 0..10_000 {
        g.charge(at(0), 500.0).unwrap();
    }
    g.on_limited(at(0), Some(Duration::from_secs(2)), false, 0.5);
    assert!(matches!(g.charge(at(1000), 1.0), Err(QuotaDenied::Cooling(_))));
}

#[test]
fn config_errors_name_the_field() {
    let bad = [
        (QuotaConfig { cu_per_second: 0.0, ..plan(1.0) }, "q.cuPerSecond"),
        (QuotaConfig { share: 1.5, ..plan(1.0) }, "q.share"),
        (QuotaConfig { decrease: 1.0, ..plan(1.0) }, "q.decrease"),
        (QuotaConfig { burst: -1.0, ..plan(1.0) }, "q.burst"),
    ];
    for (cfg, field) in bad {
        assert_eq!(cfg.validate("q").unwrap_err().field(), field);
    }
}

#[test]
fn an_unknown_plan_is_learned_from_the_rate_at_the_first_limit() {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    for i in 0..100 {
        g.charge(at(i * 100), 10.0).unwrap(); // 1000 CU over ten seconds
    }
    g.on_limited(at(10_000), Some(Duration::ZERO), false, 0.5);
    assert_eq!(g.stats().allowed_rate, 50.0, "half the observed 100 CU/s");
    g.on_success(at(21_000), 0.5);
    assert_eq!(g.stats().allowed_rate, 55.0, "grows by 5 % of the learned ceiling");
    assert!(g.charge(at(21_000), 10.0).is_ok());
}

#[test]
fn growth_pauses_below_the_rate_that_was_limited() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    warned(&mut g, at(0));
    g.on_limited(at(200), Some(Duration::ZERO), false, 0.5); // limited at 100 → 50
    for t in 1..=7 {
        g.on_success(at(200 + t * 10_000), 0.5);
    }
    assert_eq!(g.stats().allowed_rate, 85.0, "+5 per 10 s window while below 90 % of the limited rate");
    g.on_success(at(80_200), 0.5);
    g.on_success(at(90_200), 0.5);
    assert_eq!(g.stats().allowed_rate, 85.0, "reaching 90 % waits three calm windows");
    g.on_success(at(100_200), 0.5);
    assert_eq!(g.stats().allowed_rate, 90.0);
}

#[test]
fn every_bound_of_the_tuning_is_checked() {
    let ok = |cfg: QuotaConfig| cfg.validate("q").is_ok();
    let field = |cfg: QuotaConfig| cfg.validate("q").unwrap_err().field().to_string();
    let p = plan(1.0);
    assert!(ok(QuotaConfig { cu_per_second: 0.001, burst: 0.0, ..p }), "a tiny plan, no burst");
    assert_eq!(field(QuotaConfig { cu_per_second: f64::NAN, ..p }), "q.cuPerSecond");
    assert_eq!(field(QuotaConfig { burst: f64::INFINITY, ..p }), "q.burst");
    for (share, good) in [(0.0, false), (0.5, true), (1.0, true), (1.01, false)] {
        assert_eq!(ok(QuotaConfig { share, ..p }), good, "share {share}");
    }
    for (decrease, good) in [(0.0, false), (0.5, true), (0.999, true), (1.0, false)] {
        assert_eq!(ok(QuotaConfig { decrease, ..p }), good, "decrease {decrease}");
    }
    for (increase, good) in [(0.0, false), (0.05, true), (1.0, true), (1.5, false)] {
        assert_eq!(ok(QuotaConfig { increase, ..p }), good, "increase {increase}");
    }
    assert_eq!(field(QuotaConfig { increase: 0.0, ..p }), "q.increase");
    for (min_fraction, good) in [(0.0, false), (0.05, true), (1.0, true), (1.5, false)] {
        assert_eq!(ok(QuotaConfig { min_fraction, ..p }), good, "minFraction {min_fraction}");
    }
    assert_eq!(field(QuotaConfig { min_fraction: 0.0, ..p }), "q.minFraction");
}

#[test]
fn checking_asks_the_bucket_without_spending() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    for _ in 0..10 {
        g.charge(at(0), 10.0).unwrap();
    }
    assert_eq!(g.check(at(0), 10.0), Err(QuotaDenied::Exhausted(Duration::from_millis(100))));
    assert_eq!(g.check(at(100), 10.0), Ok(()));
    assert_eq!(g.check(at(100), 10.0), Ok(()), "a check takes nothing");
    assert!(g.charge(at(100), 10.0).is_ok());
}

#[test]
fn a_decrease_slows_the_bucket_itself() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    warned(&mut g, at(0));
    g.on_limited(at(200), Some(Duration::ZERO), false, 0.5); // 100 → 50 CU/s
    assert!(g.cooldown_until() < at(5000));
    while g.charge(at(5000), 10.0).is_ok() {}
    let granted = (1..=100).filter(|i| g.charge(at(5000 + i * 10), 10.0).is_ok()).count();
    assert_eq!(granted, 5, "50 CU/s over one second: five 10-CU calls");
}

#[test]
fn a_learned_plan_keeps_its_rate_in_every_second_burst_included() {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    for i in 0..100 {
        g.charge(at(i * 100), 10.0).unwrap(); // 100 CU/s
    }
    g.on_limited(at(10_000), Some(Duration::ZERO), false, 0.5); // ceiling 100, allowed 50
    let at_once = (0..100).take_while(|_| g.charge(at(60_000), 10.0).is_ok()).count();
    assert_eq!(at_once, 5, "after a long calm, a burst of the allowed 50 CU, not burst + rate");
    assert!(g.charge(at(60_999), 10.0).is_err(), "and nothing more within that second");
    assert!(g.charge(at(61_000), 10.0).is_ok());
}

#[test]
fn the_last_second_and_the_learning_window_count_exactly_their_span() {
    let mut g = QuotaGroup::new(QuotaConfig::default(), at(0));
    g.charge(at(0), 1000.0).unwrap(); // ten seconds before the limit: out of the window
    g.charge(at(1), 7.0).unwrap(); // exactly ten seconds before: in
    for i in 0..10 {
        g.charge(at(1000 + i * 1000), 10.0).unwrap();
    }
    assert_eq!(g.cu_last_second(at(10_001)), 10.0, "the charge at 10 000 ms only");
    assert_eq!(g.cu_last_second(at(11_000)), 10.0, "a charge exactly one second old still counts");
    assert_eq!(g.cu_last_second(at(11_001)), 0.0);
    let mut g2 = QuotaGroup::new(QuotaConfig::default(), at(0));
    g2.charge(at(0), 1000.0).unwrap();
    g2.charge(at(1), 7.0).unwrap();
    for i in 0..10 {
        g2.charge(at(1000 + i * 1000), 10.0).unwrap();
    }
    g2.on_limited(at(10_001), Some(Duration::ZERO), false, 0.5);
    // (7 + 100) CU over the 10 s window, halved; the 1000 CU charge left it.
    assert!((g2.stats().allowed_rate - 5.35).abs() < 1e-9, "{}", g2.stats().allowed_rate);
}

#[test]
fn a_first_limit_waits_exactly_the_servers_retry_after() {
    let mut g = QuotaGroup::new(plan(100.0), at(0));
    assert_eq!(g.on_limited(at(0), Some(Duration::from_millis(100)), false, 0.9), at(100), "no backoff of our own yet");
    let again = g.on_limited(at(100), Some(Duration::from_millis(100)), false, 0.9);
    assert!(again > at(200), "limited again with no success between: our own backoff on top ({again:?})");
}

#[test]
fn the_429s_of_requests_sent_together_are_one_step_of_backoff_not_one_each() {
    // Sixteen requests released together after a cooldown all come back 429
    // with `Retry-After: 1`: one wave, one step (it used to double per 429:
    // 1, 1.5, 3 … 52 s, the key idle for most of a minute).
    let mut g = QuotaGroup::new(plan(20.0), at(0));
    let first = g.on_limited_sent(at(100), at(90), Some(Duration::from_secs(1)), false, 0.5);
    assert_eq!(first, at(1_100));
    let mut until = first;
    for k in 0..16u64 {
        // Sent at 1.1 s, heard over the next 18 ms.
        until = g.on_limited_sent(at(1_110 + k), at(1_100), Some(Duration::from_secs(1)), false, 0.5);
    }
    // The second wave: one step up from the first (the equal-jitter step of 2 s: 1.5 s at 0.5).
    assert_eq!(until, at(1_125 + 1_500), "one step for the whole wave (from its last 429)");
    // A third wave, sent after the second was heard, backs off one step more (3 s at 0.5).
    let third = g.on_limited_sent(at(4_000), at(3_000), Some(Duration::from_secs(1)), false, 0.5);
    assert_eq!(third, at(7_000));
    // A success ends the episode: the next 429 starts from Retry-After again.
    g.on_success(at(8_000), 0.5);
    assert_eq!(g.on_limited_sent(at(9_000), at(8_900), Some(Duration::from_secs(1)), false, 0.5), at(10_000));
}

/// A new user's node answered its first request with a 429: an unknown
/// plan learned from it that one read was the rate (0.5 reads a second
/// after halving) and crawled for minutes. Too little sent to tell a plan
/// is no lesson: the group only cools down, and learns from a 429 that
/// comes after enough was sent.
#[test]
fn an_unknown_plan_learns_nothing_from_a_429_to_its_first_requests() {
    let unknown = QuotaConfig { cu_per_second: f64::INFINITY, ..QuotaConfig::default() };
    let mut g = QuotaGroup::new(unknown, at(0));
    g.charge(at(0), 10.0).unwrap();
    let until = g.on_limited_sent(at(50), at(0), Some(Duration::from_secs(1)), false, 0.5);
    assert_eq!(until, at(1050), "cooled for its Retry-After");
    assert!(g.stats().allowed_rate.is_infinite(), "no plan learned from one request");
    // Then twenty requests over two seconds, and a 429: that is a rate to learn from.
    for ms in (1100..3100).step_by(100) {
        g.charge(at(ms), 10.0).unwrap();
    }
    g.on_limited_sent(at(3200), at(3100), None, false, 0.5);
    let learned = g.stats().allowed_rate;
    assert!(learned.is_finite() && learned >= 25.0, "half of what was sent lately (210 CU over 3.2 s): {learned}");
}
