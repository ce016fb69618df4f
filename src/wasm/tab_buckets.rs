//! The buckets the leader tab keeps for the tabs and workers of its origin
//! (`pkg-template/src/tab-store.js`: the tab holding the leader lock
//! answers every tab's lease asks from here, on its own clock).
//! Conversions only: the bucket's rules are `policy::fleet_bucket`'s.

use std::cell::RefCell;
use std::time::Duration;

use wasm_bindgen::prelude::*;

use super::js_runtime::JsRuntime;
use crate::policy::fleet_bucket::FleetBuckets;
use crate::policy::lease::LeaseAsk;
use crate::runtime::Runtime;

thread_local! {
    static BUCKETS: RefCell<FleetBuckets> = RefCell::new(FleetBuckets::default());
}

/// The longest hold an ask may name (a hostile or broken tab cannot pin the burst for long).
const LONGEST_HOLD_MS: f64 = 60_000.0;

/// One tab's ask for the bucket under `key`: `numbers` are want, rate,
/// burst, held, hold (ms), least and (when some is given back) released,
/// as the engine made them; `said` what the tab told beside them, each NaN
/// when unsaid (a tab of an earlier version): what it needs (CU/s), what it
/// spent alone in the last second (CU, `LeaseAsk::alone`), the most the
/// tabs may send in one second (CU, `LeaseAsk::window`; 0: none), how
/// long its oldest charge has waited (ms, `LeaseAsk::waited`), and what its
/// line costs (CU, `LeaseAsk::line`);
/// `alone_ages` what it spent alone by tenth of a second of age (ten numbers; absent: unsaid).
/// Returns granted, ms until the rest could
/// be, the fleet's rate, the share (0: no bound), what the other tabs
/// need (−1: unknown), 1 when the window was kept and what the other tabs'
/// lines cost (−1: unknown), or nothing for an ask that makes no sense (any
/// number missing, negative or not finite): the asking tab counts that as
/// a failed ask, never as quota.
#[wasm_bindgen(js_name = tabBucketAsk)]
pub fn tab_bucket_ask(key: &str, member: &str, numbers: &[f64], said: &[f64], alone_ages: Option<Vec<f64>>) -> Vec<f64> {
    // A seventh number, what the tab gives back of its hold, comes only when it gives some.
    let (&[want, rate, burst, held, hold_ms, least], released) = (match numbers {
        [six @ .., released] if numbers.len() == 7 => (six, *released),
        six => (six, 0.0),
    }) else {
        return Vec::new();
    };
    if key.is_empty() || member.is_empty() || !numbers.iter().all(|x| x.is_finite() && *x >= 0.0) {
        return Vec::new();
    }
    let hold = Duration::from_secs_f64(hold_ms.min(LONGEST_HOLD_MS) / 1000.0);
    // What makes no sense is unsaid.
    let told = |i: usize| said.get(i).copied().filter(|x| x.is_finite() && *x >= 0.0);
    // An unsaid need is unknown (the bucket then answers "unknown" to the others).
    let demand = told(0).unwrap_or(f64::NAN);
    let alone = told(1).unwrap_or(0.0);
    let window = told(2).unwrap_or(0.0);
    // (Bounded as a hold is: no read of a tab waits past its deadline, let alone a minute.)
    let waited = told(3).map(|w| Duration::from_secs_f64(w.min(LONGEST_HOLD_MS) / 1000.0));
    let line = told(4).unwrap_or(f64::NAN);
    // By age, ten tenths of a second (`LeaseAsk::alone_ages`); anything else says nothing of the ages.
    let mut ages = [0.0; 10];
    if let Some(told) = alone_ages.filter(|a| a.len() == 10 && a.iter().all(|x| x.is_finite() && *x >= 0.0)) {
        ages.copy_from_slice(&told);
    }
    let ask = LeaseAsk { want, rate, burst, held, hold, least, released, demand, alone, window, alone_ages: ages, waited, line };
    let grant = BUCKETS.with(|b| b.borrow_mut().ask(JsRuntime.now(), key, member, ask));
    let share = if grant.share.is_finite() { grant.share } else { 0.0 };
    let windowed = if grant.windowed { 1.0 } else { 0.0 };
    vec![
        grant.granted,
        grant.short_for.as_secs_f64() * 1000.0,
        grant.fleet_rate,
        share,
        grant.others_demand.unwrap_or(-1.0),
        windowed,
        grant.others_line.unwrap_or(-1.0),
    ]
}
