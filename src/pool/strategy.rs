//! The five routing strategies, as an ordering of eligible endpoints (the
//! router reserves the first that still fits).

use super::endpoint::EndpointState;
use super::options::Strategy;
use super::route_request::RouteRequest;
use crate::small_sort::sort_by_key;
use crate::time::Instant;

/// The mutable state strategies keep between requests.
pub struct StrategyState<'a> {
    /// Round-robin position.
    pub cursor: &'a mut usize,
    /// The endpoint `sticky` is bound to.
    pub sticky: Option<usize>,
}

/// Orders `pool` (indexes into `endpoints`) by `strategy`.
pub fn rank(
    strategy: Strategy,
    endpoints: &mut [EndpointState],
    state: StrategyState<'_>,
    pool: &[usize],
    req: &RouteRequest<'_>,
    now: Instant,
    draws: (f64, f64),
) -> Vec<usize> {
    let mut order = pool.to_vec();
    let n = endpoints.len().max(1);
    match strategy {
        Strategy::RoundRobin => {
            let start = req.after.map_or(*state.cursor, |a| (a + 1) % n);
            sort_by_key(&mut order, |&i| (i + n - start) % n);
            if let Some(&first) = order.first() {
                *state.cursor = (first + 1) % n;
            }
        }
        Strategy::Priority => sort_by_key(&mut order, |&i| (endpoints[i].spec.priority, i)),
        Strategy::Sticky => {
            sort_by_key(&mut order, |&i| (Some(i) != state.sticky, endpoints[i].spec.priority, i));
        }
        Strategy::Weighted => {
            let weights: Vec<f64> =
                order.iter().map(|&i| endpoints[i].spec.weight * endpoints[i].slow_start.factor(now)).collect();
            let pick = weighted_pick(&weights, draws.0);
            order.swap(0, pick);
        }
        Strategy::Latency => {
            if order.len() >= 2 {
                let a = ((draws.0 * order.len() as f64) as usize).min(order.len() - 1);
                let mut b = ((draws.1 * (order.len() - 1) as f64) as usize).min(order.len() - 2);
                if b >= a {
                    b += 1;
                }
                let score = |ep: &mut EndpointState| {
                    let lat = ep.latency_ms(req.class).unwrap_or(0.0) + 1.0;
                    lat * f64::from(ep.in_flight + 1) / ep.slow_start.factor(now)
                };
                let (ia, ib) = (order[a], order[b]);
                let (sa, sb) = (score(&mut endpoints[ia]), score(&mut endpoints[ib]));
                let (win, lose) = if sb < sa { (b, a) } else { (a, b) };
                let (w, l) = (order[win], order[lose]);
                order.retain(|&i| i != w && i != l);
                order.insert(0, l);
                order.insert(0, w);
            }
        }
    }
    order
}

/// Index picked with probability proportional to its weight.
pub fn weighted_pick(weights: &[f64], draw: f64) -> usize {
    let total: f64 = weights.iter().filter(|w| w.is_finite() && **w > 0.0).sum();
    if total <= 0.0 {
        return 0;
    }
    let mut target = crate::policy::bound(draw, 0.0, 1.0) * total;
    for (i, w) in weights.iter().enumerate() {
        let w = if w.is_finite() && *w > 0.0 { *w } else { 0.0 };
        if target < w {
            return i;
        }
        target -= w;
    }
    weights.len() - 1
}

#[cfg(test)]
mod tests;
