//! The registry of state shared by the relayers of one realm (one wasm
//! instance: a Node process, a page, a worker).
//!
//! A member offers its own state for a key when it is built; the first
//! offer becomes the realm's, later members get that same object. The registry keeps
//! only weak references, so a state lives exactly as long as some member
//! holds it, and dead entries are swept as new ones are added (the list
//! never grows past the live keys plus what was added since the last sweep).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

pub use super::endpoint_record::EndpointRecord;
use super::head_rounds::{HeadRounds, HeardHeads};
use super::key::budget_key;
use super::news::News;
use crate::policy::breaker::Breaker;
use crate::policy::lease::{LeaseAsk, LeaseGrant};
use crate::policy::quota::QuotaGroup;
use crate::policy::{RetryBudget, RetryBudgetConfig};
use crate::runtime::notify::Notify;
use crate::time::Instant;

/// A quota group as its members hold it.
pub type SharedGroup = Rc<RefCell<QuotaGroup>>;

/// How long after a teller's breaker turns half-open its probe is waited
/// for (it goes with the teller's next request to the node).
const FLEET_PROBE_GRACE: Duration = Duration::from_secs(1);

/// One realm's shared states, by key.
#[derive(Default)]
pub struct Realm {
    groups: RefCell<Vec<(u64, Weak<RefCell<QuotaGroup>>)>>,
    chains: RefCell<Vec<(u64, Weak<EndpointRecord>)>>,
    budgets: RefCell<Vec<(u64, Weak<RefCell<RetryBudget>>)>>,
    breakers: RefCell<Vec<(u64, Weak<RefCell<Breaker>>)>>,
    /// Head-poll rounds of members on the same endpoints and interval.
    head_rounds: RefCell<Vec<(u64, Weak<RefCell<HeadRounds>>)>>,
    /// Heads other realms told, until their round's end is heard.
    heard_heads: RefCell<HeardHeads>,
    /// States of kinds defined in the layers above (the pool's recovery pacer).
    others: RefCell<Vec<(u64, Weak<dyn Any>)>>,
    wake: Rc<Notify>,
    /// A store shared with other processes holds the fleet's quota buckets.
    store: Cell<bool>,
    /// What hearing news made this realm's own to tell (a group's measure,
    /// `quota/gather.rs`), until the host takes it.
    told: RefCell<Vec<News>>,
}

impl Realm {
    /// An empty realm.
    pub fn new() -> Self {
        Self::default()
    }

    /// The group under `key`: the one a member holds, else `mine`, which
    /// from now on is the one every later member gets.
    pub fn quota_group(&self, key: u64, mine: SharedGroup) -> SharedGroup {
        shared(&self.groups, key, move || mine)
    }

    /// The breaker under `key`: the one a member holds, else `mine`.
    pub fn breaker(&self, key: u64, mine: Rc<RefCell<Breaker>>) -> Rc<RefCell<Breaker>> {
        shared(&self.breakers, key, move || mine)
    }

    /// The realm's wake-up: a member's attempt ending on shared state (a
    /// probe's verdict, a freed probe permit) may let another member's
    /// waiting request go, so members wait on it as well as on their own.
    pub fn wake(&self) -> Rc<Notify> {
        Rc::clone(&self.wake)
    }

    /// The chain record of the endpoint under `key`.
    pub fn endpoint_record(&self, key: u64) -> Rc<EndpointRecord> {
        shared(&self.chains, key, || Rc::new(EndpointRecord::default()))
    }

    /// The retry budget of the members tuned with `config` (full at `now`
    /// when made): what their retries and hedges together may add.
    pub fn retry_budget(&self, config: RetryBudgetConfig, now: Instant) -> Rc<RefCell<RetryBudget>> {
        shared(&self.budgets, budget_key(&config), || Rc::new(RefCell::new(RetryBudget::new(config, now))))
    }

    /// The head-poll rounds under `key` (`key::head_rounds_key`): the ones a member holds, else `mine`.
    pub fn head_rounds(&self, key: u64, mine: Rc<RefCell<HeadRounds>>) -> Rc<RefCell<HeadRounds>> {
        shared(&self.head_rounds, key, move || mine)
    }

    /// The state of type `T` under `key`: the one a member holds, else
    /// `mine`. For state whose type this layer does not know (the pool's
    /// recovery pacer); keys of different kinds must differ.
    pub fn other<T: 'static>(&self, key: u64, mine: Rc<T>) -> Rc<T> {
        let mut map = self.others.borrow_mut();
        let alive = map.iter().filter(|(k, _)| *k == key).find_map(|(_, weak)| weak.upgrade()?.downcast::<T>().ok());
        if let Some(alive) = alive {
            return alive;
        }
        map.retain(|(_, weak)| weak.strong_count() > 0);
        let erased: Rc<dyn Any> = mine.clone();
        map.push((key, Rc::downgrade(&erased)));
        mine
    }

    /// Applies news another realm told (`news.rs`) to the live state under
    /// its key, at `now`: a cooldown cools the group, a breaker opening
    /// opens the breaker, a node back is probed now, a chain id is recorded, a slow end is
    /// kept until the realm has its own, a head-poll round's heads are
    /// taken in (`unit_random` spreads this realm's next round). `false`
    /// when nothing here holds that key (no member uses it: nothing to learn).
    pub fn hear(&self, news: News, now: Instant, unit_random: f64) -> bool {
        match news {
            News::Head { endpoint, block } => {
                let known = find(&self.chains, endpoint).is_some();
                if known {
                    self.heard_heads.borrow_mut().hear(endpoint, block);
                }
                known
            }
            News::HeadRound { rounds, at } => {
                let heads = self.heard_heads.borrow_mut().take();
                let Some(rounds) = find(&self.head_rounds, rounds) else { return false };
                rounds.borrow_mut().hear(heads, at.min(now), unit_random);
                true
            }
            News::Cooldown { group, until } => {
                find(&self.groups, group).map(|g| g.borrow_mut().cool_until(until)).is_some()
            }
            News::PlanAsked { group } => self.hear_for_group(group, |g| g.hear_plan_asked(now)),
            News::Measured { group, rate } => self.hear_for_group(group, |g| g.hear_measure(now, rate)),
            News::BreakerOpen { breaker, until } => {
                let Some(b) = find(&self.breakers, breaker) else { return false };
                let mut b = b.borrow_mut();
                b.open_until(now, until);
                // The teller probes the node when its time is up: its verdict
                // stands for this realm's half-open probe (`fleet_probe.rs`).
                b.hold_for_fleet_probe(now, until + FLEET_PROBE_GRACE);
                true
            }
            News::BreakerBack { breaker, at } => {
                let Some(b) = find(&self.breakers, breaker) else { return false };
                // Not one opened after the word was given: that is newer news.
                let released = b.borrow_mut().release_fleet_probe(now);
                if b.borrow_mut().hasten_unless_opened_since(now, at) || released {
                    self.wake.notify_all(); // requests waiting for a probe go now
                }
                true
            }
            News::Probing { breaker, until } => {
                find(&self.breakers, breaker).map(|b| b.borrow_mut().hold_for_fleet_probe(now, until)).is_some()
            }
            News::ProbeEnded { breaker } => {
                let Some(b) = find(&self.breakers, breaker) else { return false };
                b.borrow_mut().fleet_probe_ended(now, unit_random);
                if b.borrow_mut().release_fleet_probe(now) {
                    self.wake.notify_all(); // requests held for that probe look again
                }
                true
            }
            News::Tail { endpoint, class, ms } => {
                find(&self.chains, endpoint).is_some_and(|record| record.hear_tail(class as usize, ms))
            }
            News::Plan { group, rate } => {
                find(&self.groups, group).is_some_and(|g| g.borrow_mut().hear_plan(now, rate))
            }
            News::Raised { group, rate } => {
                find(&self.groups, group).is_some_and(|g| g.borrow_mut().hear_raise(now, rate))
            }
            News::Chain { endpoint, chain_id } => {
                find(&self.chains, endpoint).map(|record| record.record(chain_id, now)).is_some()
            }
        }
    }

    /// Applies `hear` to the group under `group` (false: none here), and
    /// keeps what that made it tell (`quota/gather.rs`) for the host.
    fn hear_for_group(&self, group: u64, hear: impl FnOnce(&mut QuotaGroup) -> bool) -> bool {
        let Some(g) = find(&self.groups, group) else { return false };
        let mut g = g.borrow_mut();
        let changed = hear(&mut g);
        self.told.borrow_mut().extend(News::told_by_group(group, &mut g));
        changed
    }

    /// The news hearing or a store's answer made this realm's own to tell
    /// (`hear`, `lease_granted`), once.
    pub fn take_told(&self) -> Vec<News> {
        std::mem::take(&mut *self.told.borrow_mut())
    }

    /// From now on, quota groups of members that join lease from the
    /// fleet's store (`policy::lease`); the host carries the asks.
    pub fn attach_store(&self) {
        self.store.set(true);
    }

    /// Members that join from now on learn alone again (the store's last user left).
    pub fn detach_store(&self) {
        self.store.set(false);
    }

    /// Whether a store is attached.
    pub fn has_store(&self) -> bool {
        self.store.get()
    }

    /// The store answered the lease ask of the group under `key` (for
    /// `want` CU): members waiting for quota may go. `false`: no such group.
    pub fn lease_granted(&self, key: u64, now: Instant, want: f64, grant: LeaseGrant) -> bool {
        let Some(group) = find(&self.groups, key) else { return false };
        group.borrow_mut().lease_granted(now, want, grant);
        self.told.borrow_mut().extend(News::told_by_group(key, &mut group.borrow_mut()));
        self.wake.notify_all();
        true
    }

    /// The store's connection came back: every leasing group stops
    /// waiting out its backoff; returns the asks due now.
    pub fn store_back(&self, now: Instant) -> Vec<(u64, LeaseAsk)> {
        for (_, weak) in self.groups.borrow().iter() {
            if let Some(group) = weak.upgrade() {
                group.borrow_mut().lease_store_back(now);
            }
        }
        self.lease_asks(now)
    }

    /// The store went down (the host saw its connection close): every
    /// leasing group falls back to its own bucket now, and waiters look again.
    pub fn store_down(&self, now: Instant) {
        for (_, weak) in self.groups.borrow().iter() {
            if let Some(group) = weak.upgrade() {
                group.borrow_mut().lease_store_down(now);
            }
        }
        self.wake.notify_all();
    }

    /// The asks of leasing groups due now (a member just joined, the store
    /// came back), so leases are held before the first request needs one.
    pub fn lease_asks(&self, now: Instant) -> Vec<(u64, LeaseAsk)> {
        let groups = self.groups.borrow();
        let live = groups.iter().filter_map(|(key, weak)| Some((*key, weak.upgrade()?)));
        live.filter_map(|(key, group)| Some((key, group.borrow_mut().lease_ask_now(now)?))).collect()
    }

    /// The store failed the group's ask: its own bucket governs (members
    /// waiting on the lease may go now).
    pub fn lease_failed(&self, key: u64, now: Instant) -> bool {
        let Some(group) = find(&self.groups, key) else { return false };
        group.borrow_mut().lease_failed(now);
        self.wake.notify_all();
        true
    }

    /// Live shared states (quota groups, chain records), for tests and stats.
    pub fn live(&self) -> (usize, usize) {
        let groups = self.groups.borrow().iter().filter(|(_, w)| w.strong_count() > 0).count();
        let chains = self.chains.borrow().iter().filter(|(_, w)| w.strong_count() > 0).count();
        (groups, chains)
    }
}

/// The live state under `key` in `map`, if any.
fn find<T>(map: &RefCell<Vec<(u64, Weak<T>)>>, key: u64) -> Option<Rc<T>> {
    map.borrow().iter().filter(|(k, _)| *k == key).find_map(|(_, weak)| weak.upgrade())
}

/// The state under `key` in `map`, made by `make` when none is alive;
/// entries whose state died are swept when a new one is added.
fn shared<T>(map: &RefCell<Vec<(u64, Weak<T>)>>, key: u64, make: impl FnOnce() -> Rc<T>) -> Rc<T> {
    let mut map = map.borrow_mut();
    if let Some(alive) = map.iter().find(|(k, _)| *k == key).and_then(|(_, weak)| weak.upgrade()) {
        return alive;
    }
    map.retain(|(_, weak)| weak.strong_count() > 0);
    let made = make();
    map.push((key, Rc::downgrade(&made)));
    made
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::quota::QuotaConfig;

    #[test]
    fn members_get_one_state_per_key_and_it_dies_with_its_last_member() {
        let realm = Realm::new();
        let now = Instant::from_millis_f64(0.0);
        let make = || Rc::new(RefCell::new(QuotaGroup::new(QuotaConfig::default(), now)));
        let a = realm.quota_group(1, make());
        let b = realm.quota_group(1, make());
        assert!(Rc::ptr_eq(&a, &b), "the second member gets the first one's group");
        let c = realm.quota_group(2, make());
        assert!(!Rc::ptr_eq(&a, &c));
        assert_eq!(realm.live(), (2, 0));
        drop((a, b));
        assert_eq!(realm.live(), (1, 0), "the last member gone, the state is gone");
        let again = realm.quota_group(1, make());
        assert_eq!(Rc::strong_count(&again), 1, "made afresh");
        drop(c);
        let _d = realm.quota_group(3, make());
        assert_eq!(realm.groups.borrow().len(), 2, "q:2 died and was swept as q:3 came: q:1 and q:3 remain");
    }

    #[test]
    fn what_a_group_owes_the_fleet_after_a_stores_answer_or_news_is_kept_for_the_host_once() {
        let realm = Realm::new();
        let at = Instant::from_millis_f64;
        let group = realm.quota_group(7, Rc::new(RefCell::new(QuotaGroup::new(QuotaConfig::default(), at(0.0)))));
        group.borrow_mut().join_fleet(at(0.0));
        let (key, ask) = realm.lease_asks(at(0.0)).pop().expect("joining asks");
        assert!(realm.lease_granted(key, at(2.0), ask.want, LeaseGrant::all(ask.want)));
        assert_eq!(realm.take_told(), vec![News::PlanAsked { group: 7 }], "joined with a plan to learn: it asks");
        assert!(realm.take_told().is_empty(), "once");
        assert!(realm.hear(News::Measured { group: 7, rate: 12.0 }, at(500.0), 0.5), "another member counts: it joins");
        assert_eq!(
            realm.take_told(),
            vec![News::Measured { group: 7, rate: 0.0 }],
            "with its own measure (nothing sent)"
        );
        assert!(!realm.hear(News::Measured { group: 8, rate: 12.0 }, at(500.0), 0.5), "no such group here");
        assert!(realm.take_told().is_empty());
    }
}
