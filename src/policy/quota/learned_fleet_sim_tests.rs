//! A fleet with no configured plan (`cuPerSecond: Infinity`) learning its
//! key's plan on a store beside a provider that refuses what passes the
//! plan in any one-second window (HTTP 429): a new user's bot fleet, its
//! workers made (their chain check charged) seconds before they read. The
//! news (cooldowns, plans, measures: `coord::news`) goes through the store,
//! one way there and one back, as Redis's pub/sub carries it.

use std::collections::VecDeque;
use std::time::Duration;

use super::store_sim_tests::StoreSim;
use super::{QuotaConfig, QuotaGroup};
use crate::runtime::SeededRandom;
use crate::time::{at, Instant};

/// What a member tells the others.
#[derive(Clone, Copy)]
enum Word {
    Cooldown(Instant),
    Plan(f64),
    Raised(f64),
    Measured(f64),
}

/// Another client on the key: `rate` CU/s until `until` ms.
#[derive(Clone, Copy)]
struct Foreign {
    rate: f64,
    until: u64,
}

/// What a run came to.
struct Learned {
    /// CU the provider accepted from `paid_from` ms to the end, per second.
    paid: f64,
    /// 429s the provider sent.
    refused: usize,
    /// Each member's allowed rate at the end.
    allowed: Vec<f64>,
    /// The lowest allowed rate of any member once all were at 95 % of the key.
    lowest: f64,
}

/// Queues what member `from` has to tell at `now`, due `way` ms later.
fn tell(news: &mut Vec<(u64, usize, Word)>, g: &mut QuotaGroup, from: usize, due: u64, until: Option<Instant>) {
    news.extend(until.map(|u| (due, from, Word::Cooldown(u))));
    news.extend(g.take_decrease().map(|r| (due, from, Word::Plan(r))));
    news.extend(g.take_raise().map(|r| (due, from, Word::Raised(r))));
    news.extend(g.take_measure().map(|r| (due, from, Word::Measured(r))));
}

/// `n` members on a store 1–3 ms away each way, 1-CU reads at `demand` a
/// second in all from 2.5 s, each member's chain check at 0; a `key` CU/s
/// provider; 150 s (a plan that drifts, probed past the key and halved, shows by then).
fn learning_fleet(n: usize, key: f64, demand: f64, seed: u64) -> Learned {
    learning_fleet_beside(
        n,
        (key, demand),
        seed,
        Foreign { rate: 0.0, until: 0 },
        (20_000, 150_000),
        QuotaConfig::default(),
    )
}

/// As `learning_fleet`, with another client on the key, for `span` =
/// (`paid_from`, the end) in ms, each member's group configured so.
fn learning_fleet_beside(
    n: usize,
    (key, demand): (f64, f64),
    seed: u64,
    foreign: Foreign,
    span: (u64, u64),
    config: QuotaConfig,
) -> Learned {
    let (paid_from, end) = span;
    let mut members: Vec<QuotaGroup> = (0..n).map(|_| QuotaGroup::new(config, at(0))).collect();
    let mut store = StoreSim::new((1, 3));
    let mut rng = SeededRandom::new(seed);
    let mut window: VecDeque<u64> = VecDeque::new();
    let mut news: Vec<(u64, usize, Word)> = Vec::new();
    let mut waiting = vec![0usize; n];
    let (mut paid, mut refused) = (0usize, 0usize);
    let (mut reached, mut lowest) = (false, f64::INFINITY);
    for m in members.iter_mut() {
        m.join_fleet(at(0));
        m.charge(at(0), 1.0).unwrap(); // the chain check of `new`
        m.on_accepted(at(5), 1.0);
    }
    for now in 0..end {
        let rates = members.iter().map(|m| m.stats().allowed_rate);
        reached |= rates.clone().all(|a| a.is_finite() && a >= key * 0.95);
        if reached {
            lowest = rates.fold(lowest, f64::min);
        }
        store.step(now, &mut members, &mut rng);
        let arrived: Vec<_> = news.iter().copied().filter(|&(due, _, _)| due <= now).collect();
        news.retain(|&(due, _, _)| due > now);
        for (_, from, word) in arrived {
            for (j, other) in members.iter_mut().enumerate().filter(|&(j, _)| j != from) {
                match word {
                    Word::Cooldown(until) => other.cool_until(until),
                    Word::Plan(rate) => drop(other.hear_plan(at(now), rate)),
                    Word::Raised(rate) => drop(other.hear_raise(at(now), rate)),
                    Word::Measured(rate) => drop(other.hear_measure(at(now), rate)),
                }
                let due = now + 2 + (4.0 * rng.next_unit()) as u64;
                tell(&mut news, other, j, due, None);
            }
        }
        while window.front().is_some_and(|&t| t + 1000 <= now) {
            window.pop_front();
        }
        if now < foreign.until && (window.len() as f64) < key && rng.next_unit() < foreign.rate / 1000.0 {
            window.push_back(now);
        }
        for i in 0..n {
            if now >= 2_500 && rng.next_unit() < demand / n as f64 / 1000.0 {
                waiting[i] += 1;
            }
            while waiting[i] > 0 && members[i].charge(at(now), 1.0).is_ok() {
                if window.len() as f64 + 1.0 > key {
                    refused += 1;
                    let until = members[i].on_limited(at(now), None, false, rng.next_unit());
                    let due = now + 2 + (4.0 * rng.next_unit()) as u64;
                    tell(&mut news, &mut members[i], i, due, Some(until));
                    break; // the read stays first in line
                }
                window.push_back(now);
                members[i].on_accepted(at(now), 1.0);
                members[i].on_success(at(now), rng.next_unit());
                waiting[i] -= 1;
                paid += usize::from(now >= paid_from);
                let due = now + 2 + (4.0 * rng.next_unit()) as u64;
                tell(&mut news, &mut members[i], i, due, None); // the router drains news after each attempt
            }
            // Reads wait at most their 30 s deadline's worth: the line is bounded.
            waiting[i] = waiting[i].min((demand / n as f64 * 30.0) as usize);
            if let Some(ask) = members[i].take_lease_ask() {
                store.send(now, i, ask, &mut rng);
            }
        }
    }
    Learned {
        paid: paid as f64 * 1000.0 / (end - paid_from) as f64,
        refused,
        allowed: members.iter().map(|m| m.stats().allowed_rate).collect(),
        lowest,
    }
}

#[test]
fn a_fleet_learning_its_plan_on_a_store_settles_near_the_key_not_at_a_members_part() {
    for n in [2, 4] {
        for seed in 1..=4 {
            let run = learning_fleet(n, 30.0, 36.0, seed);
            eprintln!("n={n} seed={seed} paid={:.1} refused={} allowed={:?}", run.paid, run.refused, run.allowed);
            assert!(
                run.paid >= 24.0,
                "{n} members, seed {seed}: {:.1} CU/s of a 30 CU/s key paid after 20 s",
                run.paid
            );
            assert!(run.refused <= 10, "{n} members, seed {seed}: {} 429s", run.refused);
            let (low, high) = run.allowed.iter().fold((f64::MAX, 0.0f64), |(l, h), &a| (l.min(a), h.max(a)));
            assert!(
                high <= low * 1.25,
                "{n} members, seed {seed}: the members disagree on the plan: {:?}",
                run.allowed
            );
        }
    }
}

#[test]
fn a_fleet_whose_count_came_out_low_probes_its_plan_up_to_the_key_as_one() {
    // Another client takes 6 of the key's 30 a second while the fleet first meets the key: its
    // count comes out at 24 (80 %). Kept, 24 stayed for good (a new user's fleet kept 28 of 30).
    for n in [2, 4] {
        for seed in 1..=4 {
            let foreign = Foreign { rate: 6.0, until: 20_000 };
            let run = learning_fleet_beside(n, (30.0, 36.0), seed, foreign, (240_000, 360_000), QuotaConfig::default());
            eprintln!("n={n} seed={seed} paid={:.1} refused={} allowed={:?}", run.paid, run.refused, run.allowed);
            // A fleet on the right plan pays 26-28.5 of it here; kept at its count, 15.7-23.6.
            assert!(run.paid >= 24.5, "{n} members, seed {seed}: {:.1} CU/s of a 30 CU/s key in minutes 5-6", run.paid);
            assert!(run.allowed.iter().all(|&a| a >= 28.5), "{n} members, seed {seed}: the plan at {:?}", run.allowed);
            assert!(run.refused <= 15, "{n} members, seed {seed}: {} 429s in six minutes", run.refused);
            let (low, high) = run.allowed.iter().fold((f64::MAX, 0.0f64), |(l, h), &a| (l.min(a), h.max(a)));
            assert!(
                high <= low * 1.1 + 1e-9,
                "{n} members, seed {seed}: the members disagree on the plan: {:?}",
                run.allowed
            );
        }
    }
}

#[test]
fn a_fleet_whose_probe_stayed_calm_past_its_key_steps_back_at_a_later_limit_and_never_halves() {
    // A fleet sends a little under its plan, so a probe step past the key can stay calm a window
    // and be kept; a 429 came later. Taken as a limit at a learned plan, it halved the fleet: 3
    // of these 26 runs fell to 15.6-16.0 of a 30/s key (`fleet-raise.test` ended at 16), and
    // they met 5-13 429s, a calm step making the next probe as eager as the first (now 5-7).
    // Calm windows of 2 s as that test runs them, so minutes of probing fit in two.
    let config = QuotaConfig { stable_window: Duration::from_secs(2), ..QuotaConfig::default() };
    for seed in 100..=125 {
        let foreign = Foreign { rate: 8.0, until: 6_000 };
        let run = learning_fleet_beside(2, (30.0, 36.0), seed, foreign, (40_000, 120_000), config);
        assert!(run.lowest >= 24.0, "seed {seed}: the plan reached the key, then fell to {:.1}", run.lowest);
        assert!(run.paid >= 24.5, "seed {seed}: {:.1} CU/s of a 30 CU/s key paid", run.paid);
        assert!(run.refused <= 9, "seed {seed}: {} 429s in two minutes", run.refused);
    }
}
