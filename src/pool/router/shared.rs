//! A router joining its realm (`coord::realm`): its quota groups become
//! the realm's (one bucket, cooldown and learned plan for every member
//! using the same group), and what it learns of an endpoint's chain is
//! recorded for the others, who adopt it instead of checking again.

use std::rc::Rc;

use super::{ChainStatus, Router};
use crate::coord::key::{endpoint_key, group_key};
use crate::coord::realm::Realm;
use crate::policy::quota::QuotaGroup;
use crate::time::Instant;

impl Router {
    /// Swaps each quota group for the realm's under the same key (a member
    /// holding one already wins; otherwise this router's becomes the
    /// realm's) and takes each endpoint's chain record. Groups or
    /// endpoints without a key (wrapped providers) stay this router's own.
    pub(super) fn join_realm(&mut self, realm: &Realm) {
        for (g, group) in self.groups.iter_mut().enumerate() {
            let members: Vec<_> = self.endpoints.iter().filter(|e| e.group == g).map(|e| &e.spec).collect();
            let config = *group.quota.borrow().config();
            if let Some(key) = group_key(&group.name, &members, &config) {
                group.quota = realm.quota_group(key, Rc::clone(&group.quota));
            }
        }
        for (i, ep) in self.endpoints.iter().enumerate() {
            self.chains[i] = endpoint_key(&ep.spec).map(|key| realm.chain_record(key));
        }
    }

    /// Stops sharing: each group becomes a fresh one of this router's own
    /// (a closed relayer must not keep the realm's state alive) and chain
    /// records are let go.
    pub fn leave_realm(&mut self) {
        let now = Instant::ZERO;
        for group in &mut self.groups {
            if Rc::strong_count(&group.quota) > 1 {
                let config = *group.quota.borrow().config();
                group.quota = Rc::new(std::cell::RefCell::new(QuotaGroup::new(config, now)));
            }
        }
        self.chains.iter_mut().for_each(|c| *c = None);
    }

    /// Takes the chain id another member learned for endpoint `i` since
    /// this router last knew it (and before a recheck is due), as if its
    /// own check had answered then: no check of its own is needed.
    pub(super) fn adopt_shared_chain(&mut self, i: usize, now: Instant) {
        let Some(record) = self.chains.get(i).and_then(Option::as_ref) else { return };
        let ep = &self.endpoints[i];
        // Only what this router would check itself (never under `checkChainId: false`).
        if ep.chain != ChainStatus::Unknown && !ep.chain_check_due(now, self.chain_recheck) {
            return;
        }
        if let Some((chain_id, at)) = record.newer(self.endpoints[i].chain_checked_at, now, self.chain_recheck) {
            // The member that checked has told its listeners of a mismatch.
            let _ = self.chain_checked(i, chain_id, at);
        }
    }

    /// Records an answer of this router's own chain check for the realm.
    pub(super) fn share_chain(&self, i: usize, chain_id: u64, at: Instant) {
        if let Some(record) = self.chains.get(i).and_then(Option::as_ref) {
            record.record(chain_id, at);
        }
    }
}
