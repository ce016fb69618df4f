//! What endpoints say about the chain: their chain id (checked on first
//! use and again every `chain_recheck`) and their head (freshness, with
//! outlying claims ignored), heard from the app's own `eth_blockNumber`
//! calls and from head-poll rounds (`policy/head_poll.rs`).

use std::time::Duration;

use super::backlog::PlanLine;
use super::{ChainStatus, EndpointState, Reservation, RouteRequest, Router, RouterEvent, LAG_MEMORY, MAX_HEAD_JUMP};
use crate::coord::news::News;
use crate::policy::breaker::BreakerState;
use crate::policy::quota::QuotaDenied;
use crate::time::Instant;

/// A head-poll round as it starts ([`Router::start_head_round`]).
#[derive(Debug, Default)]
pub struct HeadRound {
    /// The polls reserved at once.
    pub polls: Vec<Reservation>,
    /// The endpoints whose polls wait their turn for their quota group.
    pub waiting: Vec<usize>,
}

/// A waiting poll tried again ([`Router::head_poll_turn`]).
#[derive(Debug)]
pub enum PollTurn {
    /// Its turn came and its group paid: the poll goes now.
    Reserved(Reservation),
    /// Not yet: try again after this long, or when woken (its turn, a grant).
    Wait(Duration),
    /// Not this round.
    Gone,
}

impl Router {
    /// The best head among endpoints on the right chain, heard within
    /// `LAG_MEMORY` of `now`. A node that died kept its last head as the
    /// best for good: the live node behind it was judged against it, and
    /// lagging, until the chain moved `maxLagBlocks` past it (45 s of a
    /// new user's trial at a block a second).
    pub fn best_head(&self, now: Instant) -> Option<u64> {
        let heard = |e: &&EndpointState| e.head_at.is_some_and(|at| now.saturating_since(at) < LAG_MEMORY);
        self.endpoints
            .iter()
            .filter(|e| !matches!(e.chain, ChainStatus::Mismatch(_)))
            .filter(heard)
            .filter_map(|e| e.head)
            .max()
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
    /// cost, counted in flight) on every endpoint that can take one now,
    /// its slots all taken or not (`may_poll`). An endpoint whose breaker
    /// is not closed is left to its probes; one resting, disabled for
    /// another chain, not serving the method or whose quota group is
    /// cooling down is skipped this round.
    /// One whose quota group cannot pay now (its CU spent, or reads waiting
    /// for them) is in the round's `waiting`: its poll waits its turn in the
    /// group's line as a read would ([`Router::head_poll_turn`]), when its
    /// price is common among the group's charges (else it is skipped: a
    /// dearer poll would hold the reads behind it). Skipped instead, a fleet
    /// on a store whose members each held a share of a 4 CU burst (a
    /// 20 CU/s plan, a fifth of a second of it) and spent it on their reads
    /// polled one endpoint once in 15 s and never the other.
    /// `None` when no round starts (a round with nobody to ask ends at once).
    pub fn start_head_round(&mut self, now: Instant) -> Option<HeadRound> {
        if !self.head_rounds.borrow_mut().poll.start(now) {
            return None;
        }
        let req = RouteRequest::own("eth_blockNumber");
        let mut round = HeadRound { polls: Vec::new(), waiting: Vec::new() };
        for i in 0..self.endpoints.len() {
            self.adopt_shared_chain(i, now);
            if !self.may_poll(i, now) {
                continue;
            }
            let cost = self.attempt_cost(i, &req, self.would_check_chain(i, now));
            // Quietly: a poll that waits is checked again in its turn, as its own charge then.
            // It waits only when its price is common among the group's charges: a dearer one
            // (a 10 CU `eth_blockNumber` among 1 CU reads) would hold every read behind it and
            // size a fleet's lease asks for itself (`QuotaGroup::common_charge`); it is skipped.
            // The poll's own price, not with a chain check that rides along once: priced with
            // it, an endpoint no read had used yet was never polled (its check stayed due).
            let poll_cost = self.attempt_cost(i, &req, false);
            let quota = &self.groups[self.endpoints[i].group].quota;
            let verdict = quota.borrow_mut().check_quietly_in_turn(now, cost, None);
            match verdict {
                Ok(()) => round.polls.extend(self.reserve(i, now, &req, false)),
                Err(QuotaDenied::Exhausted(_)) if quota.borrow().common_charge(poll_cost) => round.waiting.push(i),
                Err(_) => {}
            }
        }
        if round.polls.is_empty() && round.waiting.is_empty() {
            self.head_rounds.borrow_mut().poll.finish(now);
            return None;
        }
        self.polling = true;
        Some(round)
    }

    /// A waiting poll of the round under way tried again at `now`, from its
    /// `place` in its quota group's line (`None`: not in it yet): reserved
    /// when its turn has come and the group can pay; `Wait` with how long
    /// until it might; `Gone` when the endpoint cannot be polled this round
    /// after all (its breaker opened, its group began cooling down…).
    pub fn head_poll_turn(&mut self, endpoint: usize, now: Instant, place: Option<u64>) -> PollTurn {
        if endpoint >= self.endpoints.len() || !self.may_poll(endpoint, now) {
            return PollTurn::Gone;
        }
        let req = RouteRequest::own("eth_blockNumber");
        let cost = self.attempt_cost(endpoint, &req, self.would_check_chain(endpoint, now));
        let verdict = self.groups[self.endpoints[endpoint].group].quota.borrow_mut().check_in_turn(now, cost, place);
        match verdict {
            Ok(()) => self.reserve(endpoint, now, &req, false).map_or(PollTurn::Gone, PollTurn::Reserved),
            Err(QuotaDenied::Exhausted(wait)) => PollTurn::Wait(wait),
            Err(QuotaDenied::Cooling(_)) => PollTurn::Gone,
        }
    }

    /// The line a waiting poll of `endpoint` joins: its quota group's
    /// (`None` when the group paces nothing).
    pub fn head_poll_line(&mut self, endpoint: usize, now: Instant) -> Option<PlanLine> {
        let req = RouteRequest::own("eth_blockNumber");
        let cost = self.attempt_cost(endpoint, &req, false);
        let group = self.groups.get(self.endpoints.get(endpoint)?.group)?.quota.clone();
        let rate = group.borrow_mut().serving_rate(now);
        let fleet = group.borrow_mut().fleet_line(now);
        (rate.is_finite() && rate > 0.0).then(|| PlanLine { groups: vec![group], cost, rate, fleet })
    }

    /// Whether `endpoint` could be polled now but for its quota group.
    /// Its slots are not asked: a round polls an endpoint once, so a node
    /// whose every slot is taken sees one call past its `maxConcurrency`,
    /// one round at a time. Held by its slots, a relayer with thousands of
    /// reads waiting (every slot always taken) never polled, never knew a
    /// head, and sent `latest` reads to a lagging node unseen.
    fn may_poll(&mut self, endpoint: usize, now: Instant) -> bool {
        let ep = &mut self.endpoints[endpoint];
        !ep.chain_disabled(now, self.chain_recheck)
            && !ep.refused(now)
            && ep.spec.serves("eth_blockNumber")
            && ep.breaker.borrow_mut().state(now) == BreakerState::Closed
            && ep.rest_until <= now
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
        if self.best_head(now).is_some_and(|best| best > block.saturating_add(MAX_HEAD_JUMP)) {
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
        let best = self.best_head(now);
        if let Some(ep) = self.endpoints.get_mut(endpoint) {
            ep.observe_head(block, best, MAX_HEAD_JUMP, now);
        }
    }
}
