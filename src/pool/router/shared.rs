//! A router joining its realm (`coord::realm`): its quota groups become
//! the realm's (one bucket, cooldown and learned plan for every member
//! using the same group), its endpoints' breakers too (one judgement of a
//! node, one half-open probe and one early probe for the realm), and what
//! it learns of an endpoint's chain is recorded for the others, who adopt
//! it instead of checking again.

use std::cell::RefCell;
use std::rc::Rc;

use super::{ChainStatus, Recovery, RouteRequest, Router, RouterEvent};
use crate::coord::key::{breaker_key, endpoint_key, fleet_key, group_key, head_rounds_key, pacer_key};
use crate::coord::realm::{EndpointRecord, Realm};
use crate::policy::lease::LeaseAsk;
use crate::policy::quota::QuotaGroup;
use crate::rpc::methods::method_info;
use crate::runtime::notify::Notify;
use crate::time::Instant;

impl Router {
    /// Swaps each quota group for the realm's under the same key (a member
    /// holding one already wins; otherwise this router's becomes the
    /// realm's) and takes each endpoint's chain record. Groups or
    /// endpoints without a key (wrapped providers) stay this router's own.
    pub(super) fn join_realm(&mut self, realm: &Realm, now: Instant) {
        // Each endpoint's key once (a keccak each); everything else is keyed from them.
        self.endpoint_keys = self.endpoints.iter().map(|e| endpoint_key(&e.spec)).collect();
        self.group_keys.clear();
        for (g, group) in self.groups.iter_mut().enumerate() {
            let members: Vec<Option<u64>> =
                self.endpoints.iter().zip(&self.endpoint_keys).filter(|(e, _)| e.group == g).map(|(_, k)| *k).collect();
            let config = *group.quota.borrow().config();
            let key = group_key(&group.name, &members, &config);
            if let Some(key) = key {
                group.quota = realm.quota_group(key, Rc::clone(&group.quota));
                if realm.has_store() {
                    group.quota.borrow_mut().join_fleet(now);
                }
            }
            self.group_keys.push(key);
        }
        self.breaker_keys.clear();
        for (i, (ep, key)) in self.endpoints.iter_mut().zip(&self.endpoint_keys).enumerate() {
            let Some(key) = *key else {
                self.breaker_keys.push(None);
                continue;
            };
            self.chains[i] = realm.endpoint_record(key);
            let tuning = *ep.breaker.borrow().config();
            let breaker = breaker_key(key, &tuning);
            ep.breaker = realm.breaker(breaker, Rc::clone(&ep.breaker));
            self.breaker_keys.push(Some(breaker));
        }
        if let Some(fleet) = fleet_key(&self.endpoint_keys) {
            self.pacer = realm.other(pacer_key(fleet), Rc::clone(&self.pacer));
            let interval = self.head_rounds.borrow().poll.interval();
            let rounds = head_rounds_key(fleet, interval.as_secs_f64() * 1000.0);
            self.head_rounds = realm.head_rounds(rounds, Rc::clone(&self.head_rounds));
            self.head_rounds_key = Some(rounds);
        }
        self.wake = Some(realm.wake());
    }

    /// The realm's wake-up, if this router is in one: a member's attempt
    /// ending may let another member's waiting request go.
    pub fn realm_wake(&self) -> Option<Rc<Notify>> {
        self.wake.clone()
    }

    /// Stops sharing: each group becomes a fresh one of this router's own,
    /// each breaker a private copy, and chain records are let go, always,
    /// even when this router was the last member holding them: a closed
    /// relayer lives on until the host collects it, and while it held the
    /// realm's objects the registry still handed them to new relayers,
    /// breakers open from an outage long over and cooldowns included (new
    /// relayers then waited seconds on a healthy fleet; found by the fault
    /// bench running its scenarios one after another in one process).
    pub fn leave_realm(&mut self) {
        let now = Instant::ZERO;
        for group in &mut self.groups {
            // The last holder moves its state to a new allocation (the
            // registry's weak reference dies with the old one); others start afresh.
            detach(&mut group.quota, |q| QuotaGroup::new(*q.config(), now));
        }
        for (record, out) in self.chains.iter_mut().zip(&self.attempts_out) {
            // Attempts still out end on the fresh record: the realm's must
            // not count them as waiting forever (a silent endpoint).
            let mine = EndpointRecord::default();
            for (class, &n) in out.iter().enumerate() {
                record.forget_attempts(class, n);
                for _ in 0..n {
                    mine.attempt_began(class, Instant::ZERO);
                }
            }
            *record = Rc::new(mine);
        }
        for ep in &mut self.endpoints {
            detach(&mut ep.breaker, Clone::clone);
        }
        detach(&mut self.pacer, Clone::clone);
        if std::mem::take(&mut self.polling) {
            // Its round ends on its own copy; the realm's is due again.
            self.head_rounds.borrow_mut().abandon();
        }
        detach(&mut self.head_rounds, Clone::clone);
        self.head_rounds_key = None;
        self.endpoint_keys.clear();
        self.group_keys.clear();
        self.breaker_keys.clear();
        self.news.clear();
        self.wake = None;
    }

    /// Takes the chain id another member learned for endpoint `i` since
    /// this router last knew it (and before a recheck is due), as if its
    /// own check had answered then: no check of its own is needed.
    pub(super) fn adopt_shared_chain(&mut self, i: usize, now: Instant) {
        let Some(record) = self.chains.get(i) else { return };
        let ep = &self.endpoints[i];
        // Only what this router would check itself (never under `checkChainId: false`).
        if ep.chain != ChainStatus::Unknown && !ep.chain_check_due(now, self.chain_recheck) {
            return;
        }
        if let Some((chain_id, at)) = record.newer(self.endpoints[i].chain_checked_at, now, self.chain_recheck) {
            // A mismatch by this router's own expectation is news for its own
            // listeners too (the member that checked may expect another chain).
            if let Some(event) = self.take_chain(i, chain_id, at) {
                self.adopted.push(event);
            }
        }
    }

    /// In a realm, the probe that ends a total outage may be another
    /// member's: the first member that saw every endpoint open and now sees
    /// one that is not starts the pacing (1.2× the demand, `pool/outage.rs`)
    /// of the pacer its fleet shares, so the realm's waiting requests go
    /// at one pace together, not each member's at its own (per-member
    /// pacing left the realm's peak at 1.00–1.59× demand over eight seeds).
    /// Alone, its own outage probe starts the pacing.
    ///
    ///
    /// Alone or not, the pacer learns of the outage (`Pacer::begin_outage`,
    /// `end_outage`): the demand it paces at is never less than before it.
    pub(super) fn note_outage(&mut self, all_open: bool, now: Instant) {
        if all_open {
            self.pacer.borrow_mut().begin_outage();
        } else {
            self.pacer.borrow_mut().end_outage(now);
        }
        if self.wake.is_none() {
            return;
        }
        if all_open {
            self.outage_seen = true;
        } else if std::mem::take(&mut self.outage_seen) {
            let mut pacer = self.pacer.borrow_mut();
            if pacer.recovery.is_none() {
                pacer.recovery = Some(Recovery::start_at(1.2, pacer.arrivals.rate_so_far(now), now));
            }
        }
    }

    /// The asks this router's quota groups made of the fleet's store
    /// (`policy::lease`), by group key, for the host to carry.
    pub fn take_lease_asks(&self) -> Vec<(u64, LeaseAsk)> {
        self.groups
            .iter()
            .zip(&self.group_keys)
            .filter_map(|(group, key)| Some(((*key)?, group.quota.borrow_mut().take_lease_ask()?)))
            .collect()
    }

    /// The mismatches adopted since the last call (see `adopt_shared_chain`).
    pub fn take_adopted(&mut self) -> Vec<RouterEvent> {
        std::mem::take(&mut self.adopted)
    }

    /// Records an answer of this router's own chain check for the realm.
    pub(super) fn share_chain(&mut self, i: usize, chain_id: u64, at: Instant) {
        if let Some(record) = self.chains.get(i) {
            record.record(chain_id, at);
        }
        if let Some(endpoint) = self.endpoint_keys.get(i).copied().flatten() {
            self.news.push(crate::coord::news::News::Chain { endpoint, chain_id });
        }
    }

    /// Whether a request on endpoint `i` would check its chain while a
    /// check (this router's or, in a realm, another member's) is already
    /// out: it waits for that answer instead of sending its own.
    pub(super) fn awaiting_chain_check(&self, i: usize, now: Instant) -> bool {
        self.would_check_chain(i, now) && self.chains[i].checking()
    }

    /// Whether an attempt on endpoint `i` now would check its chain first
    /// (not yet known, or its re-check is due).
    pub(super) fn would_check_chain(&self, i: usize, now: Instant) -> bool {
        let ep = &self.endpoints[i];
        ep.chain == ChainStatus::Unknown || ep.chain_check_due(now, self.chain_recheck)
    }

    /// What an attempt of `req` on endpoint `i` costs its quota group: the
    /// request, plus the `eth_chainId` check sent before it when
    /// `check_chain` (a request the provider counts like any other; priced
    /// by the endpoint's `costs`, else the method table).
    pub(super) fn attempt_cost(&self, i: usize, req: &RouteRequest<'_>, check_chain: bool) -> f64 {
        let spec = &self.endpoints[i].spec;
        let check = if check_chain { spec.cost("eth_chainId", method_info("eth_chainId").cost) } else { 0.0 };
        spec.cost(req.method, req.cost) + check
    }

    /// A reservation that was to check endpoint `i`'s chain came back.
    pub(super) fn chain_check_ended(&self, i: usize) {
        if let Some(record) = self.chains.get(i) {
            record.end_check();
        }
    }
}

/// A shared `Rc` made private: moved to a new allocation when this was its
/// last strong holder (so a registry's weak reference to it dies), else
/// replaced by `fresh(shared state)`.
fn detach<T>(shared: &mut Rc<RefCell<T>>, fresh: impl FnOnce(&T) -> T) {
    let replacement = Rc::new(RefCell::new(fresh(&shared.borrow())));
    if let Ok(cell) = Rc::try_unwrap(std::mem::replace(shared, replacement)) {
        *shared = Rc::new(cell);
    }
}
