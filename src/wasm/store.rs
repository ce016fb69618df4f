//! The fleet store's side of this realm (`policy::lease`): the wrapper
//! attaches a store (Redis: it runs the lease script) and answers each ask
//! through the realm. Conversions only: what to ask, when, and what an
//! answer means are the core's.

use std::cell::RefCell;

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js_runtime::JsRuntime;
use super::news::with_realm;
use crate::coord::news::read_key;
use crate::policy::lease::{LeaseAsk, LeaseGrant};
use crate::runtime::Runtime;

thread_local! {
    static ASK: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// Attaches the fleet store: `ask(key, want, rate, burst, held, holdMs,
/// least, released, demand, alone, window, aloneAges)` is called for each lease ask and must answer later (never from inside the call)
/// through `realmLeaseGranted` or `realmLeaseFailed`. Groups of relayers
/// created from now on lease from it.
#[wasm_bindgen(js_name = attachRealmStore)]
pub fn attach_realm_store(ask: JsValue) {
    let Ok(ask) = ask.dyn_into::<Function>() else { return };
    ASK.with(|a| *a.borrow_mut() = Some(ask));
    with_realm(|realm| realm.attach_store());
}

/// Detaches the store (its last relayer closed): relayers created from
/// now on learn alone again; asks of groups still leasing fail at once.
#[wasm_bindgen(js_name = detachRealmStore)]
pub fn detach_realm_store() {
    ASK.with(|a| a.borrow_mut().take());
    with_realm(|realm| realm.detach_store());
}

/// The store's connection is (back) up: leases are asked at the next charge.
/// The fleet's store went down (its connection closed or failed): the
/// realm's groups spend from their own buckets from now on.
#[wasm_bindgen(js_name = realmStoreDown)]
pub fn realm_store_down() {
    with_realm(|realm| realm.store_down(JsRuntime.now()));
}

#[wasm_bindgen(js_name = realmStoreBack)]
pub fn realm_store_back() {
    send(with_realm(|realm| realm.store_back(JsRuntime.now())));
}

/// Sends the asks due now (after a relayer joined the realm).
pub(super) fn send_due_asks() {
    send(with_realm(|realm| realm.lease_asks(JsRuntime.now())));
}

/// Passes each ask to the store (outside the realm's borrow: a failing store answers at once).
fn send(asks: Vec<(u64, LeaseAsk)>) {
    for (group, due) in asks {
        ask(group, &due);
    }
}

/// The store answered the ask for `want` CU of the group under `key`
/// (`share`: the most one member may hold, 0 for no bound; `others_demand`:
/// what the other members need, −1 or absent when unknown; `windowed`: 1
/// when the store kept the ask's one-second window, absent from an older
/// store; `others_line`: what the other members' lines cost, −1 or absent
/// when unknown); an answer that
/// makes no sense counts as a failure. `true` when a group of this realm took it.
#[wasm_bindgen(js_name = realmLeaseGranted)]
#[allow(clippy::too_many_arguments)] // the store's answer, number by number: no array to build per lease
pub fn realm_lease_granted(
    key: &str,
    want: f64,
    granted: f64,
    short_for_ms: f64,
    fleet_rate: f64,
    share: f64,
    others_demand: Option<f64>,
    windowed: Option<f64>,
    others_line: Option<f64>,
) -> bool {
    let Some(key) = read_key(key) else { return false };
    let now = JsRuntime.now();
    let others_demand = others_demand.unwrap_or(f64::NAN);
    let windowed = windowed.unwrap_or(0.0);
    let others_line = others_line.unwrap_or(f64::NAN);
    let read = LeaseGrant::read(want, granted, short_for_ms, fleet_rate, share, [others_demand, windowed, others_line]);
    let taken = with_realm(|realm| match read {
        Some(grant) => realm.lease_granted(key, now, want, grant),
        None => realm.lease_failed(key, now),
    });
    super::news::tell_what_the_realm_owes(); // a member that joined may ask for the plan
    taken
}

/// The store failed the ask of the group under `key` (down, timed out, refused).
#[wasm_bindgen(js_name = realmLeaseFailed)]
pub fn realm_lease_failed(key: &str) -> bool {
    read_key(key).is_some_and(|key| with_realm(|realm| realm.lease_failed(key, JsRuntime.now())))
}

/// Passes an ask to the store; no store, or a throwing one, is a failed ask.
pub(super) fn ask(group: u64, ask: &LeaseAsk) {
    let Some(store) = ASK.with(|a| a.borrow().clone()) else {
        with_realm(|realm| realm.lease_failed(group, JsRuntime.now()));
        return;
    };
    let hold_ms = ask.hold.as_secs_f64() * 1000.0;
    let args = Array::of4(&format!("{group:016x}").into(), &ask.want.into(), &ask.rate.into(), &ask.burst.into());
    for extra in [ask.held, hold_ms, ask.least, ask.released, ask.demand, ask.alone, ask.window] {
        args.push(&extra.into());
    }
    args.push(&js_sys::Float64Array::from(&ask.alone_ages[..]).into());
    // How long its oldest charge has waited (ms; −1: unsaid), and what its line costs (CU; −1: unsaid).
    args.push(&ask.waited.map_or(-1.0, |w| w.as_secs_f64() * 1000.0).into());
    args.push(&(if ask.line.is_finite() { ask.line } else { -1.0 }).into());
    if store.apply(&JsValue::UNDEFINED, &args).is_err() {
        with_realm(|realm| realm.lease_failed(group, JsRuntime.now()));
    }
}
