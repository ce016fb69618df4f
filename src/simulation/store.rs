//! A simulated fleet store (what Redis is to processes): it answers the
//! realms' lease asks with the fleet buckets' contract
//! ([`FleetBucket`]) and carries their news to the other realms, after a
//! latency, losing some, and not at all while it is down. The simulation
//! runs several processes (realms) against it to show that leases keep a
//! fleet on one key within the key, and that the store failing fails no
//! request.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use crate::coord::Realm;
use crate::policy::fleet_bucket::FleetBucket;
use crate::pool::PipelineEvent;
use crate::runtime::sim::SimRuntime;
use crate::runtime::Runtime;

/// How the store behaves.
#[derive(Clone, Copy, Debug)]
pub struct StoreBehaviour {
    /// Each answer's latency (jittered ±50 %).
    pub latency: Duration,
    /// Fraction of asks and news lost (an ask lost goes unanswered).
    pub loss: f64,
    /// The store is down from…to (asks fail at once; news is lost).
    pub down: Option<(Duration, Duration)>,
}

/// The store and the realms it serves.
pub struct SimStore {
    rt: SimRuntime,
    behaviour: StoreBehaviour,
    realms: Rc<Vec<Realm>>,
    buckets: RefCell<HashMap<u64, FleetBucket>>,
    /// Lease asks it received.
    pub asks: std::cell::Cell<u64>,
}

impl SimStore {
    /// A store for `realms` (each attached to it), which tells them when it comes back.
    pub fn start(rt: &SimRuntime, behaviour: StoreBehaviour, realms: Rc<Vec<Realm>>) -> Rc<SimStore> {
        for realm in realms.iter() {
            realm.attach_store();
        }
        let store = Rc::new(SimStore {
            rt: rt.clone(),
            behaviour,
            realms,
            buckets: RefCell::default(),
            asks: std::cell::Cell::new(0),
        });
        if let Some((_, back)) = behaviour.down {
            let (rt2, store2) = (rt.clone(), Rc::clone(&store));
            rt.spawn(async move {
                rt2.sleep(back).await;
                for (i, realm) in store2.realms.iter().enumerate() {
                    for (group, ask) in realm.store_back(rt2.now()) {
                        store2.on_event(i, &PipelineEvent::LeaseAsk { group, ask });
                    }
                }
            });
        }
        store
    }

    fn is_down(&self) -> bool {
        let now = self.rt.now().since_epoch();
        self.behaviour.down.is_some_and(|(from, to)| now >= from && now < to)
    }

    /// What realm `i` owes the others after hearing news or an answer (`Realm::take_told`).
    fn pass_on_told(self: &Rc<Self>, i: usize) {
        for told in self.realms[i].take_told() {
            self.on_event(i, &PipelineEvent::News(told));
        }
    }

    /// What a member of realm `from` emitted: lease asks and news go to the store.
    pub fn on_event(self: &Rc<Self>, from: usize, event: &PipelineEvent) {
        let (rt, store) = (self.rt.clone(), Rc::clone(self));
        match *event {
            PipelineEvent::LeaseAsk { group, ask } => {
                self.asks.set(self.asks.get() + 1);
                if self.is_down() {
                    // Refused at once, as a client whose connection is down fails a command.
                    let rt2 = rt.clone();
                    rt.spawn(async move {
                        rt2.sleep(Duration::ZERO).await;
                        store.realms[from].lease_failed(group, rt2.now());
                    });
                    return;
                }
                let lost = rt.random_unit() < self.behaviour.loss;
                let latency = self.behaviour.latency.mul_f64(0.5 + rt.random_unit());
                let rt2 = rt.clone();
                rt.spawn(async move {
                    rt2.sleep(latency / 2).await;
                    if lost || store.is_down() {
                        return; // never answered: the lease gives the ask up after its period
                    }
                    let grant = store.buckets.borrow_mut().entry(group).or_default().ask(rt2.now(), from as u64, ask);
                    rt2.sleep(latency / 2).await;
                    store.realms[from].lease_granted(group, rt2.now(), ask.want, grant);
                    store.pass_on_told(from);
                });
            }
            PipelineEvent::News(news) => {
                if self.is_down() || rt.random_unit() < self.behaviour.loss {
                    return;
                }
                let latency = self.behaviour.latency.mul_f64(0.5 + rt.random_unit());
                let rt2 = rt.clone();
                rt.spawn(async move {
                    rt2.sleep(latency).await;
                    for (i, realm) in store.realms.iter().enumerate() {
                        if i != from {
                            realm.hear(news, rt2.now(), rt2.random_unit());
                            store.pass_on_told(i);
                        }
                    }
                });
            }
            _ => {}
        }
    }
}
