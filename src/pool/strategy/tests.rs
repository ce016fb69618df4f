//! The strategies' orderings on explicit instants and draws: round robin's
//! cursor after a failover, the latency strategy's two choices (the second
//! draw uniform over the others, draws at the top of the range, endpoints
//! with no history, load, slow start, ties) and `weighted_pick`'s weights.

use std::time::Duration;

use super::*;
use crate::options::{EndpointSpec, PoolOptions};
use crate::policy::slow_start::SlowStartConfig;
use crate::redact::EndpointUrl;
use crate::rpc::methods::MethodClass;

use crate::time::at;

fn options() -> PoolOptions {
    PoolOptions {
        slow_start: SlowStartConfig { warmup: Duration::from_secs(10), floor: 0.1, min_rps: 1.0 },
        ..PoolOptions::default()
    }
}

/// `n` endpoints; those in `latencies` have one observation (ms) of the cheap class.
fn endpoints(n: usize, latencies: &[(usize, u64)]) -> Vec<EndpointState> {
    let o = options();
    let mut eps: Vec<EndpointState> = (0..n)
        .map(|i| {
            let url = EndpointUrl::parse(&format!("http://127.0.0.1:{}", 7000 + i), "u").unwrap();
            EndpointState::new(EndpointSpec::from_url(url, i), i, &o, at(0))
        })
        .collect();
    for &(i, ms) in latencies {
        eps[i].observe_latency(MethodClass::Cheap, Duration::from_millis(ms));
    }
    eps
}

fn request(after: Option<usize>) -> RouteRequest<'static> {
    RouteRequest {
        method: "eth_blockNumber",
        class: MethodClass::Cheap,
        cost: 10.0,
        wants_latest: true,
        tried: &[],
        only_untried: false,
        after,
        hedge_of: None,
        since: None,
        deadline: None,
        place: None,
    }
}

/// The latency strategy's order of every endpoint of `eps` for `draws`.
fn by_latency(eps: &mut [EndpointState], draws: (f64, f64)) -> Vec<usize> {
    let pool: Vec<usize> = (0..eps.len()).collect();
    let state = StrategyState { cursor: &mut 0, sticky: None };
    let order = rank(Strategy::Latency, eps, state, &pool, &request(None), at(0), draws);
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, pool, "an ordering of the whole pool: {order:?}");
    order
}

#[test]
fn after_a_failover_round_robin_goes_on_after_the_endpoint_it_moved_to() {
    let mut eps = endpoints(3, &[]);
    let mut cursor = 0;
    let state = StrategyState { cursor: &mut cursor, sticky: None };
    let order = rank(Strategy::RoundRobin, &mut eps, state, &[0, 1, 2], &request(Some(0)), at(0), (0.5, 0.5));
    assert_eq!(order, vec![1, 2, 0], "the one after the failed endpoint first");
    assert_eq!(cursor, 2, "the next request starts after endpoint 1");
}

#[test]
fn the_second_choice_is_drawn_evenly_from_the_other_endpoints() {
    // Endpoint 0 is the first choice (draw 0); the slower loses.
    for (second, partner, order) in [(0.0, 1, [1, 0, 2]), (0.4, 1, [1, 0, 2]), (0.5, 2, [2, 0, 1]), (0.9, 2, [2, 0, 1])]
    {
        let mut eps = endpoints(3, &[(0, 100), (1, 50), (2, 10)]);
        assert_eq!(by_latency(&mut eps, (0.0, second)), order.to_vec(), "second draw {second}: endpoint {partner}");
    }
}

#[test]
fn draws_at_the_top_of_the_range_still_pick_two_endpoints() {
    for n in [2, 3, 5] {
        for draws in [(1.0, 1.0), (0.0, 1.0), (1.0, 0.0)] {
            let mut eps = endpoints(n, &[]);
            let order = by_latency(&mut eps, draws);
            assert_ne!(order[0], order[1], "{n} endpoints, draws {draws:?}");
        }
    }
    // Five endpoints, both draws 1: the last against the one before it.
    let mut eps = endpoints(5, &[(3, 10), (4, 20)]);
    assert_eq!(by_latency(&mut eps, (1.0, 1.0))[..2], [3, 4]);
}

#[test]
fn an_endpoint_with_no_latency_yet_still_counts_its_load() {
    // No history counts as 1 ms: with three in flight (score 4) it loses to
    // an idle endpoint of 2 ms (score 3).
    let mut eps = endpoints(2, &[(1, 2)]);
    eps[0].in_flight = 3;
    assert_eq!(by_latency(&mut eps, (0.0, 0.0)), vec![1, 0]);
    // One in flight (score 2) beats the idle 2 ms.
    eps[0].in_flight = 1;
    assert_eq!(by_latency(&mut eps, (0.0, 0.0)), vec![0, 1]);
}

#[test]
fn a_warming_endpoint_loses_to_an_equally_fast_warm_one() {
    let mut eps = endpoints(2, &[(0, 10), (1, 10)]);
    eps[0].begin_warmup(at(0)); // factor 0.1: ten times the score
    assert_eq!(by_latency(&mut eps, (0.0, 0.0)), vec![1, 0]);
    let mut eps = endpoints(2, &[(0, 10), (1, 12)]);
    assert_eq!(by_latency(&mut eps, (0.0, 0.0)), vec![0, 1], "warm, the faster wins");
}

#[test]
fn a_tie_goes_to_the_first_draws_endpoint() {
    let mut eps = endpoints(3, &[(0, 10), (1, 10), (2, 10)]);
    assert_eq!(by_latency(&mut eps, (0.0, 0.0)), vec![0, 1, 2]);
    assert_eq!(by_latency(&mut eps, (0.9, 0.0)), vec![2, 0, 1]);
}

#[test]
fn weighted_pick_counts_non_finite_and_non_positive_weights_as_zero() {
    // The total is 2 (the -1 is left out): 0.75 of it is past the first weight.
    assert_eq!(weighted_pick(&[1.0, -1.0, 1.0], 0.75), 2);
    // Walking the weights, the -1 steps over nothing.
    assert_eq!(weighted_pick(&[1.0, -1.0, 1.0, 1.0], 0.5), 2);
    assert_eq!(weighted_pick(&[1.0, f64::NAN, 1.0], 0.75), 2);
    assert_eq!(weighted_pick(&[0.0, -1.0], 0.5), 0, "nothing to weigh: the first");
    assert_eq!(weighted_pick(&[0.0, 1.0], 0.0), 1, "a zero weight is never picked, even by a draw of 0");
}

#[test]
fn each_weight_takes_a_half_open_share_of_the_draws() {
    // [0, 0.5) picks the first of two equal weights, [0.5, 1] the second.
    assert_eq!(weighted_pick(&[1.0, 1.0], 0.0), 0);
    assert_eq!(weighted_pick(&[1.0, 1.0], 0.5), 1);
    assert_eq!(weighted_pick(&[1.0, 1.0], 1.0), 1);
    assert_eq!(weighted_pick(&[3.0, 1.0], 0.74), 0);
    assert_eq!(weighted_pick(&[3.0, 1.0], 0.76), 1);
}
