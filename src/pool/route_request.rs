//! What one attempt asks of the router: the method, its class and cost,
//! whether it reads at `latest`, and what this request already tried. Its
//! own module because the router and the strategies both read it (the
//! strategies rank endpoints for it; the router owns neither).

use std::time::Duration;

use crate::rpc::methods::MethodClass;
use crate::time::Instant;

/// What one attempt wants.
#[derive(Clone, Copy, Debug)]
pub struct RouteRequest<'a> {
    /// JSON-RPC method.
    pub method: &'a str,
    /// Its latency class.
    pub class: MethodClass,
    /// Its default cost (endpoints may override).
    pub cost: f64,
    /// Whether it reads at `latest` (freshness applies).
    pub wants_latest: bool,
    /// Endpoints already tried in this request.
    pub tried: &'a [bool],
    /// Only endpoints not yet tried (capability failover).
    pub only_untried: bool,
    /// The endpoint that just failed, if any.
    pub after: Option<usize>,
    /// For a hedge: how long the attempt it races has run. Endpoints
    /// silent about as long skip it (a hedge onto them cannot help).
    pub hedge_of: Option<Duration>,
    /// When the request began: after a total outage, held requests take
    /// the pacer's turns oldest first (`None`: not in that line).
    pub since: Option<Instant>,
    /// When the request's deadline passes: a breaker's probe goes only to
    /// a request with time to prove the node (`policy::silence`); `None`:
    /// no deadline to respect (head polls, tests).
    pub deadline: Option<Instant>,
    /// Its place in its plans' lines while it waits for CU
    /// (`backlog::InLine`): a group's CU go to the head of its line, so a
    /// request with others ahead of it (or none, and a line) takes none.
    pub place: Option<u64>,
}

impl RouteRequest<'static> {
    /// A request of the relayer's own (a head poll's `eth_blockNumber`):
    /// `method` at its table class and cost, nothing tried, not at
    /// `latest`, with no deadline and no place in a line yet.
    pub fn own(method: &'static str) -> Self {
        let info = crate::rpc::methods::method_info(method);
        RouteRequest {
            method,
            class: info.class,
            cost: info.cost,
            wants_latest: false,
            tried: &[],
            only_untried: false,
            after: None,
            hedge_of: None,
            since: None,
            deadline: None,
            place: None,
        }
    }
}
