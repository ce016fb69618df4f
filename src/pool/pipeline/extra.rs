//! Who pays for an extra attempt (a retry, a failover, a hedge): the
//! relayer's own retry budget and, in a realm, the realm's one as well.
//!
//! Each relayer's budget bounds its own extra attempts to a share of its
//! own traffic, but a fresh relayer starts with a full burst: a thousand
//! relayers in one process that all hit trouble at once may add a thousand
//! bursts of retries and hedges to the overload they react to. The realm's
//! budget (`coord::Realm::retry_budget`) is paid by every member's
//! requests and charged by every member's extra attempts, so together
//! they add at most its share of the process's traffic, plus one burst.
//! Retries, failovers and hedges all draw on it, with one exception paid
//! for: an extra attempt for a request stranded on a node whose breaker
//! has opened (the node hung or died under it) goes even when the realm's
//! budget, or the relayer's own, is empty, and overdraws them (at most one
//! burst of debt each), so the share holds over time. That node takes no new attempts, so such extra
//! attempts are bounded by what was in flight on it when it was judged,
//! and each goes to another node and saves a request: a new user's 300
//! relayers whose warmed-up node hung lost 11–32 % of their reads in flight
//! while these drew on the realm's budget like any retry (its 20 tokens
//! went to the first few, the rest failed). It works because breakers are
//! shared too: a hung or failing node is judged once for the realm, so a
//! few failures or lost races move every member off it, and requests
//! waiting out a total outage wait for the realm's probe instead of
//! retrying (with a breaker per relayer, each needed its own three, and a
//! realm budget starved them: p99 1.1 s → 10 s, and an outage's success
//! 99 % → 90 % in the simulation).

use std::cell::RefCell;
use std::rc::Rc;

use crate::policy::RetryBudget;
use crate::time::Instant;

/// The budgets an extra attempt draws on.
pub(super) struct ExtraAttempts {
    own: RetryBudget,
    realm: Option<Rc<RefCell<RetryBudget>>>,
}

impl ExtraAttempts {
    /// The relayer's own budget, and the realm's if it shares one.
    pub(super) fn new(own: RetryBudget, realm: Option<Rc<RefCell<RetryBudget>>>) -> Self {
        ExtraAttempts { own, realm }
    }

    /// A first attempt pays into both.
    pub(super) fn deposit(&mut self, now: Instant) {
        self.own.deposit(now);
        if let Some(realm) = &self.realm {
            realm.borrow_mut().deposit(now);
        }
    }

    /// A retry (or failover): one token from each, or none from either;
    /// for a request `stranded` on a node whose breaker opened, always,
    /// paid for by both, into at most one burst of debt each (the node's
    /// in-flight attempts when it was judged bound these retries, as the
    /// module doc says). With the relayer's own token required, a bot with
    /// 64 reads in flight on a node that died lost 56 of them to
    /// `RetryBudgetError` (burst 5) while two healthy nodes stood idle.
    pub(super) fn try_withdraw_retry(&mut self, now: Instant, stranded: bool) -> bool {
        if stranded {
            if !self.own.try_withdraw(now) {
                self.own.overdraw(now);
            }
            self.overdraw_realm(now);
            return true;
        }
        self.try_withdraw_hedge(now)
    }

    /// A hedge: one token from each, or none from either.
    pub(super) fn try_withdraw_hedge(&mut self, now: Instant) -> bool {
        let Some(realm) = &self.realm else { return self.own.try_withdraw(now) };
        let mut realm = realm.borrow_mut();
        if realm.balance(now) < 1.0 || !self.own.try_withdraw(now) {
            return false;
        }
        realm.try_withdraw(now)
    }

    /// A hedge that must go (its primary is stranded on a node whose
    /// breaker opened): charged to the realm's budget, into debt if need
    /// be, so the realm's hedges keep their share over time. Never to the
    /// relayer's own: its retries are what its requests need to succeed.
    pub(super) fn overdraw_realm(&mut self, now: Instant) {
        if let Some(realm) = &self.realm {
            realm.borrow_mut().overdraw(now);
        }
    }

    /// The relayer's own balance (for stats).
    pub(super) fn balance(&mut self, now: Instant) -> f64 {
        self.own.balance(now)
    }

    /// Stops charging the realm (the relayer closed).
    pub(super) fn leave_realm(&mut self) {
        self.realm = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::RetryBudgetConfig;

    fn budget(ratio: f64, burst: f64) -> RetryBudget {
        RetryBudget::new(RetryBudgetConfig { ratio, min_per_second: 0.0, burst }, Instant::ZERO)
    }

    #[test]
    fn a_hedge_needs_a_token_from_each_and_takes_none_when_one_is_short() {
        let now = Instant::ZERO;
        let realm = Rc::new(RefCell::new(budget(0.2, 2.0)));
        let mut a = ExtraAttempts::new(budget(0.2, 5.0), Some(realm.clone()));
        let mut b = ExtraAttempts::new(budget(0.2, 5.0), Some(realm.clone()));
        assert!(a.try_withdraw_hedge(now));
        assert!(b.try_withdraw_hedge(now));
        assert!(!a.try_withdraw_hedge(now), "the realm's two tokens are spent, whoever spent them");
        assert_eq!(a.balance(now), 4.0, "a kept its own token when the realm said no");
        assert!(!a.try_withdraw_retry(now, false), "a retry needs the realm's token too");
        assert!(a.try_withdraw_retry(now, true), "unless it is stranded on a judged node");
        assert_eq!(a.balance(now), 3.0, "which still pays its own");
        for _ in 0..10 {
            b.deposit(now); // ten first attempts pay 0.2 each into both (one token repays the debt)
        }
        assert!(a.try_withdraw_hedge(now), "b's traffic paid for a's hedge");
        let before = realm.borrow_mut().balance(now);
        a.overdraw_realm(now);
        assert_eq!(realm.borrow_mut().balance(now), before - 1.0, "a stranded hedge is paid for by the realm");
        assert_eq!(a.balance(now), 2.0, "not by the relayer: its retries stay its own");
        assert!(!b.try_withdraw_hedge(now), "the next hedge waits for the debt to be repaid");
        assert!(!b.try_withdraw_retry(now, false), "and so does the next retry");
        let mut alone = ExtraAttempts::new(budget(0.2, 1.0), None);
        assert!(alone.try_withdraw_hedge(now));
        assert!(!alone.try_withdraw_hedge(now));
        alone.overdraw_realm(now);
        let mut left = ExtraAttempts::new(budget(0.2, 5.0), Some(realm.clone()));
        left.leave_realm();
        assert!(left.try_withdraw_hedge(now), "a relayer that left pays only its own");
        assert!(realm.borrow_mut().balance(now) < 1.0);
    }

    #[test]
    fn a_retry_stranded_on_a_judged_node_goes_into_debt_when_the_relayers_own_budget_is_empty() {
        let now = Instant::ZERO;
        let mut alone = ExtraAttempts::new(budget(0.2, 2.0), None);
        assert!(alone.try_withdraw_retry(now, false));
        assert!(alone.try_withdraw_retry(now, false));
        assert!(!alone.try_withdraw_retry(now, false), "the burst of 2 is spent");
        for _ in 0..5 {
            assert!(alone.try_withdraw_retry(now, true), "every request stranded on a node that died fails over");
        }
        assert_eq!(alone.balance(now), -2.0, "paid for, into at most one burst of debt");
        for _ in 0..10 {
            alone.deposit(now); // 2 tokens: the debt repaid, nothing more
        }
        assert!(!alone.try_withdraw_retry(now, false), "ordinary retries wait until the debt is repaid");
    }
}
