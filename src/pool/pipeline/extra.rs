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
//! Retries, failovers and hedges all draw on it. It works because breakers
//! are shared too: a hung or failing node is judged once for the realm, so
//! a few failures or lost races move every member off it, and requests
//! waiting out a total outage wait for the realm's probe instead of
//! retrying (with a breaker per relayer, each needed its own three
//! failures: a realm budget then starved the hedges a hung node needs, p99
//! 1.1 s → 10 s, and the retries an outage's requests need, 99 % success →
//! 90 %; with shared breakers and the realm's recovery pacer, the
//! simulation's outage, brownout, hung-node and slowdown scenarios in a
//! realm come out the same with retries on the realm budget or off it).

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

    /// A retry, failover or hedge: one token from each, or none from either.
    pub(super) fn try_withdraw(&mut self, now: Instant) -> bool {
        let Some(realm) = &self.realm else { return self.own.try_withdraw(now) };
        let mut realm = realm.borrow_mut();
        if realm.balance(now) < 1.0 || !self.own.try_withdraw(now) {
            return false;
        }
        realm.try_withdraw(now)
    }

    /// A hedge that must go (its primary is stranded on a node whose
    /// breaker opened): charged to both, into debt if need be.
    pub(super) fn overdraw(&mut self, now: Instant) {
        self.own.overdraw(now);
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
    fn an_extra_attempt_needs_a_token_from_each_and_takes_none_when_one_is_short() {
        let now = Instant::ZERO;
        let realm = Rc::new(RefCell::new(budget(0.2, 2.0)));
        let mut a = ExtraAttempts::new(budget(0.2, 5.0), Some(realm.clone()));
        let mut b = ExtraAttempts::new(budget(0.2, 5.0), Some(realm.clone()));
        assert!(a.try_withdraw(now));
        assert!(b.try_withdraw(now));
        assert!(!a.try_withdraw(now), "the realm's two tokens are spent, whoever spent them");
        assert_eq!(a.balance(now), 4.0, "a kept its own token when the realm said no");
        for _ in 0..5 {
            b.deposit(now); // five first attempts pay 0.2 each into both
        }
        assert!(a.try_withdraw(now), "b's traffic paid for a's retry");
        assert_eq!(a.balance(now), 3.0, "a paid its own token too");
        let mut alone = ExtraAttempts::new(budget(0.2, 1.0), None);
        assert!(alone.try_withdraw(now));
        assert!(!alone.try_withdraw(now));
        let mut left = ExtraAttempts::new(budget(0.2, 5.0), Some(realm.clone()));
        left.leave_realm();
        assert!(left.try_withdraw(now), "a relayer that left pays only its own");
        let before = realm.borrow_mut().balance(now);
        a.overdraw(now);
        assert_eq!(realm.borrow_mut().balance(now), before - 1.0, "a stranded hedge is paid for by the realm too");
        assert!(!b.try_withdraw(now), "and the next extra attempt waits for the debt to be repaid");
        assert!(realm.borrow_mut().balance(now) < 1.0);
    }
}
