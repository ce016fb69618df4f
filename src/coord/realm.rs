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

use super::head_rounds::{HeadRounds, HeardHeads};
use super::key::budget_key;
use super::news::News;
use crate::policy::breaker::Breaker;
use crate::policy::lease::{LeaseAsk, LeaseGrant};
use crate::policy::quota::QuotaGroup;
use crate::policy::tail::{Ewma, TailLatency, TRUSTED_TAIL_SAMPLES};
use crate::policy::{RetryBudget, RetryBudgetConfig};
use crate::rpc::methods::CLASSES;
use crate::runtime::notify::Notify;
use crate::time::Instant;

/// A quota group as its members hold it.
pub type SharedGroup = Rc<RefCell<QuotaGroup>>;

/// What the members learned of one endpoint: its chain (the id it
/// reported and when; the latest check wins, and whether a check is out),
/// the slow end of its latency per method class over every member's
/// successes, so a fresh member hedges it on what the realm knows instead
/// of a blind initial delay, and, per class, how long it has had attempts
/// out without answering any ([`EndpointRecord::silent_for`]).
#[derive(Debug, Default)]
pub struct EndpointRecord {
    seen: Cell<Option<(u64, Instant)>>,
    checking: Cell<u32>,
    tails: [Cell<TailLatency>; CLASSES],
    typical: [Cell<Ewma>; CLASSES],
    /// Per class: attempts out now, and since when none has been answered
    /// (the last answer, or when the first of them went out).
    busy: [Cell<u32>; CLASSES],
    quiet_since: [Cell<Instant>; CLASSES],
    /// Per class: the slow end another realm told (`News::Tail`), used
    /// until this realm's own is trusted; and what this realm last told, when.
    heard: [Cell<Option<f64>>; CLASSES],
    told: [Cell<Option<(f64, Instant)>>; CLASSES],
}

/// A realm tells its slow end of an endpoint again only once it moved by
/// this fraction since it last told, and at most this often.
const TAIL_TELL_CHANGE: f64 = 0.25;
const TAIL_TELL_EVERY: Duration = Duration::from_secs(10);
/// A heard slow end beyond this (ms) is no latency: ignored.
const TAIL_HEARD_MAX: f64 = 120_000.0;

impl EndpointRecord {
    /// A member's attempt of method class `class` went out at `now`.
    pub fn attempt_began(&self, class: usize, now: Instant) {
        if let (Some(busy), Some(quiet)) = (self.busy.get(class), self.quiet_since.get(class)) {
            if busy.get() == 0 {
                quiet.set(now);
            }
            busy.set(busy.get() + 1);
        }
    }

    /// A member's attempt of `class` ended: answered at `answered` (any
    /// reply of the node's own), or not (timed out, dropped, abandoned).
    pub fn attempt_ended(&self, class: usize, answered: Option<Instant>) {
        if let (Some(busy), Some(quiet)) = (self.busy.get(class), self.quiet_since.get(class)) {
            busy.set(busy.get().saturating_sub(1));
            if let Some(at) = answered {
                quiet.set(quiet.get().max(at));
            }
        }
    }

    /// A member leaving the realm takes its `n` attempts of `class` still
    /// out with it (they will end on its own record, not this one).
    pub fn forget_attempts(&self, class: usize, n: u32) {
        if let Some(busy) = self.busy.get(class) {
            busy.set(busy.get().saturating_sub(n));
        }
    }

    /// How long, at `now`, the endpoint has had attempts of `class` out and
    /// answered none of them (zero while it has none out): an endpoint
    /// silent this long is as slow right now as the attempt a hedge would
    /// rescue, so a hedge onto it cannot help.
    pub fn silent_for(&self, class: usize, now: Instant) -> Duration {
        match (self.busy.get(class), self.quiet_since.get(class)) {
            (Some(busy), Some(quiet)) if busy.get() > 0 => now.saturating_since(quiet.get()),
            _ => Duration::ZERO,
        }
    }

    /// A member's successful attempt of method class `class` took `ms`.
    pub fn observe_latency(&self, class: usize, ms: f64) {
        if let (Some(tail), Some(typical)) = (self.tails.get(class), self.typical.get(class)) {
            let (mut t, mut m) = (tail.get(), typical.get());
            t.observe(ms);
            m.observe(ms);
            tail.set(t);
            typical.set(m);
        }
    }

    /// Every member's recent typical latency for `class` (ms), trusted as
    /// the tail is (once there are [`TRUSTED_TAIL_SAMPLES`] successes).
    pub fn typical(&self, class: usize) -> Option<f64> {
        self.tail(class).and(self.typical.get(class).and_then(|cell| cell.get().value()))
    }

    /// The slow end of every member's successes for `class` (ms), once
    /// they are [`TRUSTED_TAIL_SAMPLES`] together: a thousand relayers with
    /// a few requests each know together what none of them knows alone.
    /// Until then, what another realm told of it (a process joining a fleet
    /// hedges on the fleet's measure, not on a blind initial delay).
    pub fn tail(&self, class: usize) -> Option<f64> {
        self.own_tail(class).or_else(|| self.heard.get(class).and_then(Cell::get))
    }

    fn own_tail(&self, class: usize) -> Option<f64> {
        self.tails.get(class).and_then(|cell| cell.get().value(TRUSTED_TAIL_SAMPLES))
    }

    /// Another realm's slow end for `class` (ms); `false` if it is no latency.
    pub fn hear_tail(&self, class: usize, ms: f64) -> bool {
        let Some(cell) = self.heard.get(class) else { return false };
        if !(ms.is_finite() && ms > 0.0 && ms <= TAIL_HEARD_MAX) {
            return false;
        }
        cell.set(Some(ms));
        true
    }

    /// This realm's own trusted slow end for `class`, if it is news at
    /// `now`: never told, or moved by a quarter since, at most every 10 s.
    pub fn tail_to_tell(&self, class: usize, now: Instant) -> Option<f64> {
        let ms = self.own_tail(class)?;
        let told = self.told.get(class)?;
        let due = match told.get() {
            None => true,
            Some((last, at)) => {
                now.saturating_since(at) >= TAIL_TELL_EVERY && (ms - last).abs() > TAIL_TELL_CHANGE * last
            }
        };
        due.then(|| {
            told.set(Some((ms, now)));
            ms
        })
    }

    /// A check of this endpoint's chain went out: until it ends, requests
    /// that would check it too wait for its answer instead.
    pub fn begin_check(&self) {
        self.checking.set(self.checking.get() + 1);
    }

    /// A check ended (answered or not).
    pub fn end_check(&self) {
        self.checking.set(self.checking.get().saturating_sub(1));
    }

    /// Whether a check is out.
    pub fn checking(&self) -> bool {
        self.checking.get() > 0
    }

    /// Records a check's answer at `at` (an older answer never replaces a newer one).
    pub fn record(&self, chain_id: u64, at: Instant) {
        if self.seen.get().is_none_or(|(_, known)| known <= at) {
            self.seen.set(Some((chain_id, at)));
        }
    }

    /// The latest answer, if it is newer than `than` and younger than
    /// `recheck` at `now` (`recheck` zero: never due again).
    pub fn newer(&self, than: Option<Instant>, now: Instant, recheck: Duration) -> Option<(u64, Instant)> {
        let (id, at) = self.seen.get()?;
        let fresh = recheck.is_zero() || now.saturating_since(at) < recheck;
        (fresh && than.is_none_or(|mine| at > mine)).then_some((id, at))
    }
}

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
            News::BreakerOpen { breaker, until } => {
                find(&self.breakers, breaker).map(|b| b.borrow_mut().open_until(now, until)).is_some()
            }
            News::BreakerBack { breaker, at } => {
                let Some(b) = find(&self.breakers, breaker) else { return false };
                // Not one opened after the word was given: that is newer news.
                if b.borrow_mut().hasten_unless_opened_since(now, at) {
                    self.wake.notify_all(); // requests waiting for a probe go now
                }
                true
            }
            News::Tail { endpoint, class, ms } => {
                find(&self.chains, endpoint).is_some_and(|record| record.hear_tail(class as usize, ms))
            }
            News::Plan { group, rate } => {
                find(&self.groups, group).is_some_and(|g| g.borrow_mut().hear_plan(now, rate))
            }
            News::Chain { endpoint, chain_id } => {
                find(&self.chains, endpoint).map(|record| record.record(chain_id, now)).is_some()
            }
        }
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
        self.wake.notify_all();
        true
    }

    /// The store's connection came back: every leasing group stops
    /// waiting out its backoff; returns the asks due now.
    pub fn store_back(&self, now: Instant) -> Vec<(u64, LeaseAsk)> {
        for (_, weak) in self.groups.borrow().iter() {
            if let Some(group) = weak.upgrade() {
                group.borrow_mut().lease_store_back();
            }
        }
        self.lease_asks(now)
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
    fn a_endpoint_record_keeps_the_latest_answer_while_it_is_fresh() {
        let at = |ms: f64| Instant::from_millis_f64(ms);
        let record = EndpointRecord::default();
        let recheck = Duration::from_secs(300);
        assert_eq!(record.newer(None, at(0.0), recheck), None);
        record.record(1, at(1000.0));
        record.record(5, at(500.0)); // an older answer arriving late
        assert_eq!(record.newer(None, at(2000.0), recheck), Some((1, at(1000.0))));
        assert_eq!(record.newer(Some(at(1000.0)), at(2000.0), recheck), None, "nothing newer than mine");
        assert_eq!(record.newer(Some(at(900.0)), at(2000.0), recheck), Some((1, at(1000.0))));
        assert_eq!(record.newer(None, at(301_000.0), recheck), None, "due for a recheck: not trusted");
        assert_eq!(record.newer(None, at(10_000_000.0), Duration::ZERO), Some((1, at(1000.0))), "never due");
    }

    #[test]
    fn an_endpoint_is_silent_while_it_has_attempts_out_and_answers_none() {
        let at = |ms: f64| Instant::from_millis_f64(ms);
        let ms = Duration::from_millis;
        let record = EndpointRecord::default();
        assert_eq!(record.silent_for(0, at(5000.0)), Duration::ZERO, "nothing out: not silent");
        record.attempt_began(0, at(1000.0));
        record.attempt_began(0, at(1200.0));
        assert_eq!(record.silent_for(0, at(1500.0)), ms(500), "since the first went out");
        assert_eq!(record.silent_for(1, at(1500.0)), Duration::ZERO, "another class is not this one");
        record.attempt_ended(0, Some(at(1600.0)));
        assert_eq!(record.silent_for(0, at(1700.0)), ms(100), "since the last answer");
        record.attempt_ended(0, Some(at(1550.0))); // an answer observed out of order
        assert_eq!(record.silent_for(0, at(1700.0)), Duration::ZERO, "nothing out any more");
        record.attempt_began(0, at(2000.0));
        record.attempt_began(0, at(2100.0));
        record.attempt_ended(0, None); // timed out: no answer
        assert_eq!(record.silent_for(0, at(2500.0)), ms(500), "an unanswered end is no answer");
        record.attempt_ended(0, None);
        record.attempt_ended(0, None); // one too many never wraps
        assert_eq!(record.silent_for(0, at(9000.0)), Duration::ZERO);
        record.attempt_began(9, at(1.0)); // no such class: ignored
        assert_eq!(record.silent_for(9, at(2.0)), Duration::ZERO);
    }

    #[test]
    fn a_slow_end_is_told_when_trusted_then_only_when_it_moved_a_quarter_and_at_most_every_10_s() {
        let r = EndpointRecord::default();
        let at = |ms: u64| Instant::from_epoch(Duration::from_millis(ms));
        for _ in 0..9 {
            r.observe_latency(1, 100.0);
        }
        assert_eq!(r.tail_to_tell(1, at(0)), None, "not trusted yet");
        r.observe_latency(1, 100.0);
        assert_eq!(r.tail_to_tell(1, at(0)), Some(100.0));
        assert_eq!(r.tail_to_tell(1, at(20_000)), None, "unchanged");
        r.observe_latency(1, 200.0); // jumps up by 30 %: 130
        assert_eq!(r.tail_to_tell(1, at(5_000)), None, "too soon");
        assert_eq!(r.tail_to_tell(1, at(20_000)), Some(130.0));
        assert!(!r.hear_tail(2, f64::NAN) && !r.hear_tail(2, -1.0) && !r.hear_tail(2, 1e9), "no latency");
        assert!(r.hear_tail(2, 50.0));
        assert_eq!(r.tail(2), Some(50.0), "heard, until its own is trusted");
        assert_eq!(r.tail(1), Some(130.0), "its own stands");
    }
}
