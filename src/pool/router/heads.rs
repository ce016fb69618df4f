//! What endpoints say about the chain: their chain id (checked on first
//! use and again every `chain_recheck`) and their head (freshness, with
//! outlying claims ignored), heard from the app's own `eth_blockNumber`
//! calls and from head-poll rounds (`policy/head_poll.rs`).

use super::{ChainStatus, EndpointState, Reservation, RouteRequest, Router, RouterEvent, MAX_HEAD_JUMP};
use crate::coord::news::News;
use crate::policy::breaker::BreakerState;
use crate::rpc::methods::method_info;
use crate::time::Instant;

impl Router {
    /// The best head among endpoints on the right chain.
    pub fn best_head(&self) -> Option<u64> {
        self.endpoints.iter().filter(|e| !matches!(e.chain, ChainStatus::Mismatch(_))).filter_map(|e| e.head).max()
    }

    /// When every endpoint is disabled for serving another chain: the chain
    /// expected and each endpoint's (index, chain), for an error that says
    /// what was seen. `None` while any endpoint is not known to be wrong.
    pub fn all_on_other_chains(&self) -> Option<(u64, Vec<(usize, u64)>)> {
        let expected = self.expected_chain?;
        let seen: Option<Vec<(usize, u64)>> = self
            .endpoints
            .iter()
            .enumerate()
            .map(|(i, e)| match e.chain {
                ChainStatus::Mismatch(id) => Some((i, id)),
                _ => None,
            })
            .collect();
        seen.filter(|s| !s.is_empty()).map(|s| (expected, s))
    }

    /// When no endpoint can serve because each one refused our credentials
    /// (or serves another chain): the ones that refused, for an error that
    /// says the key was refused. `None` while any endpoint is usable.
    pub fn all_refused(&self, now: Instant) -> Option<Vec<usize>> {
        let usable = self.endpoints.iter().any(|e| !e.refused(now) && !matches!(e.chain, ChainStatus::Mismatch(_)));
        let refused: Vec<usize> =
            self.endpoints.iter().enumerate().filter(|(_, e)| e.refused(now)).map(|(i, _)| i).collect();
        (!usable && !refused.is_empty()).then_some(refused)
    }

    /// Records an endpoint's `eth_chainId` from this router's own check
    /// (shared with the realm and told to other realms); a mismatch
    /// disables it.
    pub fn chain_checked(&mut self, endpoint: usize, chain_id: u64, now: Instant) -> Option<RouterEvent> {
        self.share_chain(endpoint, chain_id, now);
        self.take_chain(endpoint, chain_id, now)
    }

    /// Whether `endpoint` refused a batch (its chain checks go alone).
    pub fn refuses_batches(&self, endpoint: usize) -> bool {
        self.endpoints.get(endpoint).is_some_and(|e| e.refuses_batches)
    }

    /// `endpoint` refused a batch: its chain checks go alone from now on.
    pub fn note_batches_refused(&mut self, endpoint: usize) {
        if let Some(ep) = self.endpoints.get_mut(endpoint) {
            ep.refuses_batches = true;
        }
    }

    /// A transaction signed for `chain` is to be sent: `true` when that is
    /// this relayer's chain, or its chain is not known yet (configured nor
    /// checked), which it now becomes: a node of another chain checked
    /// first is then disabled, not taken as the chain (a wrong-chain node
    /// listed first got the signed bytes). `false` when the relayer serves
    /// another chain.
    pub fn pin_chain(&mut self, chain: u64) -> bool {
        *self.expected_chain.get_or_insert(chain) == chain
    }

    /// The chain this relayer serves: configured, or the first one checked.
    pub fn serving_chain(&self) -> Option<u64> {
        self.expected_chain
    }

    /// What an `eth_chainId` call would be answered at `now`, known without
    /// asking: this relayer's chain, once an endpoint was checked serving
    /// it (by this router or, in a realm, by another member) and is not due
    /// for a re-check. Wallets and ethers ask it often (an EIP-1193
    /// `connect` listener, ethers' network detection), and two relayers of
    /// one realm each sent one upstream though their chain was checked
    /// moments before. `None` under `checkChainId: false` (nothing was
    /// checked) or while no checked endpoint serves the relayer's chain:
    /// the call goes upstream as any read. With the id, the endpoint checked.
    pub fn known_chain(&self, now: Instant) -> Option<(u64, usize)> {
        let recheck = self.chain_recheck;
        let fresh = |ep: &EndpointState| ep.chain_checked_at.is_some() && !ep.chain_check_due(now, recheck);
        if let Some(expected) = self.expected_chain {
            if let Some(i) = self.endpoints.iter().position(|ep| ep.chain == ChainStatus::Verified && fresh(ep)) {
                return Some((expected, i));
            }
        }
        // Another member's check this router has not taken yet (it would
        // take it on its next route; with no `chainId`, as its chain).
        self.endpoints.iter().zip(&self.chains).enumerate().find_map(|(i, (ep, record))| {
            let would_check = ep.chain == ChainStatus::Unknown || ep.chain_check_due(now, recheck);
            let (id, _) = record.newer(None, now, recheck).filter(|_| would_check)?;
            (id == self.expected_chain.unwrap_or(id)).then_some((id, i))
        })
    }

    /// Takes an endpoint's chain id as this router's own, whoever checked
    /// it (an adopted check is not shared again: it came from the realm).
    pub(super) fn take_chain(&mut self, endpoint: usize, chain_id: u64, now: Instant) -> Option<RouterEvent> {
        let expected = *self.expected_chain.get_or_insert(chain_id);
        let ep = self.endpoints.get_mut(endpoint)?;
        ep.chain_checked_at = Some(now);
        if chain_id == expected {
            ep.chain = ChainStatus::Verified;
            None
        } else {
            ep.chain = ChainStatus::Mismatch(chain_id);
            Some(RouterEvent::ChainMismatch { endpoint, expected, got: chain_id })
        }
    }

    /// Whether a read that wants `latest` arriving at `now` would start a
    /// head-poll round (cheap: callers spawn background work only then).
    pub fn head_poll_due(&self, now: Instant) -> bool {
        self.head_rounds.borrow().poll.due(now)
    }

    /// Starts a head-poll round if one is due at `now`: an `eth_blockNumber`
    /// attempt reserved (breaker permit, quota charge at the endpoint's own
    /// cost, concurrency slot) on every endpoint that can take one now. An
    /// endpoint whose breaker is not closed is left to its probes; one
    /// resting, disabled for another chain, not serving the method, with no
    /// free slot or whose quota group cannot pay is skipped this round.
    /// `None` when no round starts (a round with nobody to ask ends at once).
    pub fn start_head_round(&mut self, now: Instant) -> Option<Vec<Reservation>> {
        if !self.head_rounds.borrow_mut().poll.start(now) {
            return None;
        }
        let info = method_info("eth_blockNumber");
        let req = RouteRequest {
            method: "eth_blockNumber",
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
        };
        let mut polls = Vec::new();
        for i in 0..self.endpoints.len() {
            self.adopt_shared_chain(i, now);
            let cost = self.attempt_cost(i, &req, self.would_check_chain(i, now));
            let ep = &mut self.endpoints[i];
            let free = !ep.chain_disabled(now, self.chain_recheck)
                && !ep.refused(now)
                && ep.spec.serves(req.method)
                && ep.breaker.borrow_mut().state(now) == BreakerState::Closed
                && ep.rest_until <= now
                && ep.in_flight < ep.concurrency_limit(now)
                // Quietly: a poll the plan cannot pay now is skipped, never waited for, so it
                // sizes no lease ask (a 10 CU `eth_blockNumber` among 1-request reads did: every
                // grant all-or-nothing 10, and a fleet's reads turned away).
                // Nor taken from requests waiting for the plan (it is background: not in the line).
                && self.groups[ep.group].quota.borrow_mut().check_quietly_in_turn(now, cost, None).is_ok();
            if let Some(r) = free.then(|| self.reserve(i, now, &req, false)).flatten() {
                polls.push(r);
            }
        }
        if polls.is_empty() {
            self.head_rounds.borrow_mut().poll.finish(now);
            return None;
        }
        self.polling = true;
        Some(polls)
    }

    /// Ends a head-poll round with the heads it heard. They are recorded
    /// best first, so each is judged against the freshest head of the same
    /// round (recorded in answer order, a lagging node that answered first
    /// would have been compared with nothing).
    pub fn end_head_round(&mut self, heads: &[(usize, u64)], now: Instant) {
        self.observe_round(heads.to_vec(), now);
        let keyed = heads
            .iter()
            .filter_map(|&(i, head)| self.endpoint_keys.get(i).copied().flatten().map(|k| (k, head)))
            .collect();
        if let Some(rounds) = self.head_rounds_key {
            // Told to the other realms: each head, then the round's end (`coord/head_rounds.rs`).
            for &(endpoint, block) in &keyed {
                self.news.push(News::Head { endpoint, block });
            }
            self.news.push(News::HeadRound { rounds, at: now });
        }
        let mut rounds = self.head_rounds.borrow_mut();
        rounds.publish(keyed, now);
        self.heads_seen = rounds.generation;
        self.polling = false;
    }

    /// Takes in the heads of a round another member of the realm polled
    /// since this router last looked, as if its own round had heard them.
    pub(super) fn adopt_head_rounds(&mut self) {
        let heard = {
            let rounds = self.head_rounds.borrow();
            if rounds.generation <= self.heads_seen {
                return;
            }
            self.heads_seen = rounds.generation;
            let by_index =
                |&(key, head): &(u64, u64)| self.endpoint_keys.iter().position(|k| *k == Some(key)).map(|i| (i, head));
            (rounds.heads.iter().filter_map(by_index).collect::<Vec<_>>(), rounds.ended_at)
        };
        self.observe_round(heard.0, heard.1);
    }

    /// Records one round's heads, best first.
    fn observe_round(&mut self, mut heads: Vec<(usize, u64)>, at: Instant) {
        crate::small_sort::sort_by_key(&mut heads, |&(_, head)| std::cmp::Reverse(head));
        for (endpoint, head) in heads {
            self.observe_head(endpoint, head, at);
        }
    }

    /// Records a block number an endpoint reported as its head. A claim
    /// far beyond the best known head is ignored; and when the first claim
    /// heard was the outlier (a node announcing a head far in the future
    /// before anyone else answered), an honest head far below it exposes it:
    /// the outlying claims are forgotten, so honest nodes are not judged
    /// "lagging" against a liar.
    pub fn observe_head(&mut self, endpoint: usize, block: u64, now: Instant) {
        if self.best_head().is_some_and(|best| best > block.saturating_add(MAX_HEAD_JUMP)) {
            for ep in self.endpoints.iter_mut() {
                if ep.head.is_some_and(|h| h > block.saturating_add(MAX_HEAD_JUMP)) {
                    ep.head = None;
                    ep.lag = None;
                }
            }
            // A lag is judged against the best head of its time (its head
            // plus the lag): one above the cut was an outlier's.
            for ep in self.endpoints.iter_mut() {
                if ep
                    .head
                    .zip(ep.lag)
                    .is_some_and(|(h, (lag, _))| h.saturating_add(lag) > block.saturating_add(MAX_HEAD_JUMP))
                {
                    ep.lag = None;
                }
            }
        }
        let best = self.best_head();
        if let Some(ep) = self.endpoints.get_mut(endpoint) {
            ep.observe_head(block, best, MAX_HEAD_JUMP, now);
        }
    }
}
