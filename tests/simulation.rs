//! The fleet simulation's targets, enforced: 1,000 independent clients per
//! scenario against 3–4 simulated providers, on virtual time, seeded.
//! (Run `cargo run --release --example simulate` for the full table.)

use breakwater_rpc::simulation::{run, run_with_counters, scenarios, Report, Scenario};

/// The scenario called `name` in `list`.
fn named(list: Vec<Scenario>, name: &str) -> Scenario {
    list.into_iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no scenario {name}"))
}

fn scenario(name: &str) -> Scenario {
    named(scenarios::all(), name)
}

fn report(name: &str) -> Report {
    let r = run(&scenario(name), 7);
    assert!(r.logical > 20_000, "{name}: only {} requests", r.logical);
    r
}

#[test]
fn every_scenario_has_at_least_a_thousand_independent_clients() {
    for s in scenarios::all() {
        assert!(s.clients >= 1000, "{}", s.name);
        assert!((3..=5).contains(&s.providers.len()), "{}", s.name);
    }
}

#[test]
fn a_revert_costs_exactly_one_attempt() {
    let r = report("10 % reverts");
    assert!(r.reverts > 1000);
    assert_eq!(r.attempts_per_revert, 1.0);
}

#[test]
fn one_provider_down_costs_little_and_loses_nothing() {
    let r = report("one provider down");
    assert!(r.amplification <= 1.2, "amplification {}", r.amplification);
    assert!(r.success_rate() >= 0.999, "success {}", r.success_rate());
}

#[test]
fn a_brownout_costs_little_and_loses_nothing() {
    let r = report("brownout (30 % 503)");
    assert!(r.amplification <= 1.2, "amplification {}", r.amplification);
    assert!(r.success_rate() >= 0.999, "success {}", r.success_rate());
}

#[test]
fn a_hung_provider_costs_the_hedge_delay_not_the_timeout() {
    let r = report("one provider hangs");
    assert!(r.p99_ms <= 2_000.0, "p99 {} ms (the attempt timeout is 10 s)", r.p99_ms);
    assert!(r.amplification <= 1.2, "amplification {}", r.amplification);
}

#[test]
fn while_one_healthy_provider_has_capacity_requests_succeed() {
    for name in [
        "healthy",
        "one provider hangs",
        "flapping every 3 s",
        "shared key, plan unknown",
        "shared key, 1/1000 share each",
        "wrong-chain endpoint first",
    ] {
        let r = report(name);
        assert!(r.success_rate() >= 0.999, "{name}: success {}", r.success_rate());
    }
}

#[test]
fn a_recovering_fleet_is_not_flooded() {
    let r = report("all down 15 s, then back");
    let peak = r.peak_after_recovery.unwrap_or(f64::INFINITY);
    assert!(peak <= 1.5, "peak after recovery {peak:.2}× steady demand");
}

#[test]
fn the_wrong_chain_endpoint_serves_nothing() {
    let r = report("wrong-chain endpoint first");
    assert_eq!(r.served_wrong_chain, 0);
}

#[test]
fn rate_limits_fade_once_clients_have_cooled_down() {
    // Plan known (each client its share): after the start-up burst, no 429s.
    let (r, c) = run_with_counters(&scenario("shared key, 1/1000 share each"), 7);
    let late: u64 = c.limited_per_second.iter().skip(10).sum();
    assert_eq!(late, 0, "{:?}", c.limited_per_second);
    assert!(r.amplification <= 1.05);
    // Plan unknown: AIMD learns it; the 429 rate falls far below its peak.
    let (_, c) = run_with_counters(&scenario("shared key, plan unknown"), 7);
    let peak = c.limited_per_second.iter().copied().max().unwrap_or(0) as f64;
    let tail = &c.limited_per_second[c.limited_per_second.len().saturating_sub(21)..];
    let tail_rate = tail.iter().sum::<u64>() as f64 / tail.len().max(1) as f64;
    assert!(peak > 50.0, "the scenario must actually hit the limit");
    assert!(tail_rate <= 0.15 * peak, "429/s in the last 20 s {tail_rate:.1} vs peak {peak}");
}

#[test]
fn flapping_flips_breakers_less_often_than_the_provider_flaps() {
    let r = report("flapping every 3 s");
    assert!(r.flips_per_client < r.flaps as f64, "{} flips per client for {} flaps", r.flips_per_client, r.flaps);
}

#[test]
fn the_simulation_is_deterministic() {
    let a = run(&scenario("brownout (30 % 503)"), 11);
    let b = run(&scenario("brownout (30 % 503)"), 11);
    assert_eq!(
        (a.logical, a.read_successes, a.amplification.to_bits()),
        (b.logical, b.read_successes, b.amplification.to_bits())
    );
}

fn one_process(name: &str) -> Report {
    let r = run(&named(scenarios::one_process(), name), 7);
    assert!(r.logical > 2_000, "{name}: only {} requests", r.logical);
    r
}

#[test]
fn relayers_of_one_process_sharing_a_key_behave_as_one() {
    let alone = one_process("100 in a process: shared key, alone");
    let sharing = one_process("100 in a process: shared key, sharing");
    // One bucket and one learned plan for the key; one chain check per
    // endpoint instead of one per relayer and endpoint.
    assert!(sharing.limited <= 10, "429s {} (alone: {})", sharing.limited, alone.limited);
    assert!(alone.limited >= 5 * sharing.limited.max(1), "alone {} vs sharing {}", alone.limited, sharing.limited);
    assert!(sharing.amplification <= 1.1, "amplification {}", sharing.amplification);
    assert!(sharing.chain_checks <= 30, "chain checks {} (alone: {})", sharing.chain_checks, alone.chain_checks);
    assert!(alone.chain_checks >= 150, "alone, every relayer checks: {}", alone.chain_checks);
    assert!(sharing.success_rate() >= 0.999, "success {}", sharing.success_rate());
}

#[test]
fn a_realm_hedge_budget_stops_fresh_relayers_hedging_onto_endpoints_as_slow() {
    let alone = one_process("1,000 in a process: all slow alike, alone");
    let budgeted = one_process("1,000 in a process: all slow alike, sharing");
    assert!(alone.amplification >= 1.5, "alone, every fresh relayer hedges: {}", alone.amplification);
    // What the realm learned (tails, typical latency) says no hedge could
    // win against endpoints this alike; the budget caps what is left.
    assert!(budgeted.amplification <= 1.05, "amplification {}", budgeted.amplification);
    assert!(budgeted.success_rate() >= 0.999, "success {}", budgeted.success_rate());
}

#[test]
fn no_hedge_storm_when_every_endpoint_slows_down_alike() {
    // Every endpoint 30× slower for 10 s: each attempt outlives its tail,
    // and every peer is as slow, so hedges could only add load.
    let sharing = one_process("1,000 in a process: every endpoint slows down 10 s, sharing");
    assert!(sharing.amplification <= 1.02, "amplification {}", sharing.amplification);
    assert_eq!(sharing.success_rate(), 1.0);
    // Busy relayers alone know their own endpoints well enough to see it.
    let busy = one_process("20 busy relayers: every endpoint slows down 10 s, alone");
    assert!(busy.amplification <= 1.05, "amplification {}", busy.amplification);
    assert_eq!(busy.success_rate(), 1.0);
    // Fresh relayers that opted out of sharing hedge on their initial delay.
    let alone = one_process("1,000 in a process: every endpoint slows down 10 s, alone");
    assert!(alone.amplification >= 1.2, "alone {}", alone.amplification);
}

#[test]
fn a_hung_provider_is_judged_once_for_the_realm() {
    // One breaker for the realm: a few lost hedge races eject the node for
    // every member, so the realm's hedge budget is never short of tokens.
    let r = one_process("1,000 in a process: one provider hangs, sharing");
    assert!(r.p99_ms <= 1_000.0, "p99 {} ms", r.p99_ms);
    assert!(r.amplification <= 1.02, "amplification {}", r.amplification);
    assert!(r.success_rate() >= 0.999, "success {}", r.success_rate());
}

#[test]
fn reads_in_flight_when_a_warmed_up_provider_hangs_all_succeed() {
    // Found by a new user: a realm budget on retries let the hedges of reads
    // stranded on the hung node spend what the other reads' retries needed.
    let s = named(scenarios::one_process(), "300 busy relayers: a warmed-up provider hangs, sharing");
    for seed in 1..=4 {
        let r = run(&s, seed);
        assert_eq!(r.success_rate(), 1.0, "seed {seed}: {:?}", r.failures);
        assert!(r.amplification <= 1.05, "seed {seed}: amplification {}", r.amplification);
    }
}

#[test]
fn a_browning_out_provider_is_judged_once_for_the_realm() {
    // A shared breaker moves every member off the 503s, so few retries are needed.
    let r = one_process("1,000 in a process: brownout (30 % 503), sharing");
    assert!(r.amplification <= 1.05, "amplification {}", r.amplification);
    assert!(r.success_rate() >= 0.999, "success {}", r.success_rate());
}

#[test]
fn a_total_outage_costs_the_realm_probes_not_retries() {
    let alone = one_process("100 in a process: all down 5 s, alone");
    let sharing = one_process("100 in a process: all down 5 s, sharing");
    // Requests wait for the shared probe's verdict instead of failing.
    assert!(sharing.success_rate() >= 0.99, "success {} (alone {})", sharing.success_rate(), alone.success_rate());
    assert!(sharing.amplification <= 1.1, "amplification {} (alone {})", sharing.amplification, alone.amplification);
    assert!(alone.amplification >= 1.3, "alone {}", alone.amplification);
    let peak = sharing.peak_after_recovery.expect("a recovery");
    assert!(peak <= 1.3, "post-recovery peak {peak} × demand");
}

fn processes(name: &str) -> Report {
    let r = run(&named(scenarios::processes(), name), 7);
    assert!(r.logical > 20_000, "{name}: only {} requests", r.logical);
    r
}

#[test]
fn ten_thousand_relayers_in_twenty_processes_keep_one_key_on_a_store_and_lose_nothing_when_it_fails() {
    let alone = processes("10,000 in 20 processes: shared key, no store");
    let shared = processes("10,000 in 20 processes: shared key, on a store");
    let down = processes("10,000 in 20 processes: shared key, store down 10-20 s");
    let slow = processes("10,000 in 20 processes: shared key, slow store (600 ms)");
    // One bucket for the key across the processes, leased ahead of need, at the plan the fleet
    // learned together (`policy/quota/gather.rs`): it uses the key it pays for. Learned from one
    // member's part, it sent 30 requests a second to this 150/s key (9 429s, 60 store asks per
    // 1,000 requests: the rest went to the other provider); now 97-117 over seeds 1-4 and 7
    // (17-26 429s where alone 61-73: the key keeps a token bucket, so the first count holds its
    // burst, 2,412 CU/s where about 1,400 is sustained, and AIMD brings it down as one relayer's).
    assert!(
        shared.key_served * 10 >= alone.key_served * 6,
        "key used {} (alone {})",
        shared.key_served,
        alone.key_served
    );
    assert!(
        shared.limited <= 30 && shared.limited * 2 <= alone.limited,
        "429s {} (alone {})",
        shared.limited,
        alone.limited
    );
    assert!(shared.chain_checks < alone.chain_checks, "chain news: {} vs {}", shared.chain_checks, alone.chain_checks);
    // About one ask per request through the key: each of 20 members may hold its share of a burst
    // of a fifth of the plan (`FLEET_WINDOW_BURST`), the CU of a request or two (docs/coordination.md).
    let per_thousand = 1000 * shared.store_asks / shared.logical;
    assert!(per_thousand <= 250, "store round trips per 1,000 requests: {per_thousand}");
    // The store failing or slow fails no request.
    for r in [&alone, &shared, &down, &slow] {
        assert!(r.success_rate() >= 0.999, "{}: success {} {:?}", r.name, r.success_rate(), r.failures);
        assert!(r.amplification <= 1.05, "{}: amplification {}", r.name, r.amplification);
    }
    // The store dies 0.9 s after the fleet learned its plan, before the key's first refusal had
    // brought that count down: each of the 20 processes, alone and without news, comes down on its
    // own 429s (77-112 over seeds 1-4 and 7, 61-73 with no store at all; 9 when the fleet had
    // learned one member's part and used a fifth of the key).
    assert!(down.limited <= alone.limited * 2, "store down 10 s: {} 429s (alone {})", down.limited, alone.limited);
    assert!(slow.limited < alone.limited, "slow store: {} 429s (alone {})", slow.limited, alone.limited);
}

#[test]
fn processes_come_back_from_a_total_outage_within_ten_second_deadlines() {
    for name in ["100 in 4 processes: all down 5 s, no store", "100 in 4 processes: all down 5 s, on a store"] {
        let s = named(scenarios::processes(), name);
        // Held reads take the pacer's turns oldest first, and one endpoint
        // found back brings the others' probes forward: 65-67 % before both.
        // A seed whose last early probe lands late still loses a few (seed
        // 7: 96.4 %, the fleet found back 2 s after it returned).
        let mut rates: Vec<f64> = Vec::new();
        for seed in 1..=8 {
            let r = run(&s, seed);
            assert!(r.success_rate() >= 0.95, "{name}, seed {seed}: success {} {:?}", r.success_rate(), r.failures);
            assert!(r.amplification <= 1.1, "{name}, seed {seed}: amplification {}", r.amplification);
            let peak = r.peak_after_recovery.unwrap_or(f64::INFINITY);
            assert!(peak <= 1.5, "{name}, seed {seed}: peak after recovery {peak}");
            rates.push(r.success_rate());
        }
        rates.sort_by(f64::total_cmp);
        assert!(rates[1] >= 0.99, "{name}: all but one seed at 99 % or more: {rates:?}");
    }
}

#[test]
fn fifty_small_processes_come_back_from_a_total_outage_at_their_demand() {
    // 1,000 clients in 50 processes, 2 requests a second each: a pacer set
    // from a demand measured low kept its line growing for the minute of
    // pacing (94-97 % success over seeds 1-4; 99.2-99.95 % once the pace
    // never falls below the arrivals while it paces).
    // Over seeds 1-20: 98.99-100 % (median 99.71 %) with members asking the fleet for a plan at
    // their store's first answer (`planAsked` news), 99.36-99.90 % (99.75 %) without: the same
    // spread, its draws moved (the simulated store draws each message's loss and delay). So all
    // but one of seeds 1-4 at 99 %, as `processes_come_back_…`, and none below 98.5 %.
    let s = named(scenarios::processes(), "1,000 in 50 processes: all down 5 s, on a store");
    let mut rates: Vec<f64> = Vec::new();
    for seed in 1..=4 {
        let r = run(&s, seed);
        assert!(r.success_rate() >= 0.985, "seed {seed}: success {} {:?}", r.success_rate(), r.failures);
        rates.push(r.success_rate());
        let peak = r.peak_after_recovery.unwrap_or(f64::INFINITY);
        assert!(peak <= 1.3, "seed {seed}: peak after recovery {peak}");
        // The fleet probes a dead node about once per early-probe base, not
        // each process on its own schedule: a process that hears another's
        // probe of the node ended puts its own a jittered base later
        // (`Breaker::fleet_probe_ended`). 1.27-1.29 before (80-160 attempts
        // a second through the outage, 100 requests a second held), 1.05-1.08
        // after (9-13 a second).
        assert!(r.amplification <= 1.12, "seed {seed}: amplification {}", r.amplification);
    }
    rates.sort_by(f64::total_cmp);
    assert!(rates[1] >= 0.99, "all but one seed at 99 % or more: {rates:?}");
}
