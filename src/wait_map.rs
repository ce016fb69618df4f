//! The one ordered map of waiters the relayer's module compiles.
//!
//! Four queues of the relayer keep waiters in order: `runtime::notify`
//! (slot waiters and the ones woken; the shutdown switch's), the quota
//! line (`policy::quota::line`) and the outage pacer's held requests
//! (`pool::outage`); the transaction module's send order (`tx::order`)
//! too. Each was a `BTreeMap` of its own key and value types, and a
//! `BTreeMap` is compiled once per pair: ~8 KB of wasm each (search,
//! insert, remove, rebalancing), 34.5 KB in the relayer's module (twiggy,
//! 2026-12-05). With one key type (`u64`) and one value type
//! ([`Waiting`]) its code is there once: 10.7 KB (the module 508.8 →
//! 485.3 KB raw, 204.5 → 197.7 KB gzip).

use std::collections::BTreeMap;
use std::task::Waker;

/// A waiter in a [`WaitMap`]: what it weighs and, while it sleeps, its waker.
#[derive(Clone, Debug, Default)]
pub struct Waiting {
    /// What the waiter counts for: a request's CU in a quota line, the
    /// number of requests begun at one instant in the pacer; unused (0)
    /// where only the order counts.
    pub weight: f64,
    /// Woken when its turn comes (`None`: nothing to wake, or already woken).
    pub waker: Option<Waker>,
}

impl Waiting {
    /// A sleeping waiter with nothing but its waker.
    pub fn woken_by(waker: &Waker) -> Self {
        Waiting { weight: 0.0, waker: Some(waker.clone()) }
    }

    /// Refreshes the waker in place (a future polled by another task's waker).
    pub fn refresh(&mut self, waker: &Waker) {
        match &mut self.waker {
            Some(w) => w.clone_from(waker),
            None => self.waker = Some(waker.clone()),
        }
    }
}

/// Waiters by an ordered `u64` key (lowest first).
pub type WaitMap = BTreeMap<u64, Waiting>;

/// Wakes every waiter of `waiters` (a switch thrown, an order changed),
/// taken out of its map first: a woken task may register again.
pub fn wake_all(waiters: WaitMap) {
    waiters.into_values().filter_map(|w| w.waker).for_each(Waker::wake);
}
