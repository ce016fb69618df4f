//! The fleet's shared nonce book from the wasm side (`tx::fleet_nonce`):
//! the wrapper attaches a function that runs the book's script on its
//! Redis store (`fleet-nonces.js`), and a relayer that named that store
//! takes its nonces from it. Conversions only: when to call what is the
//! engine's (`tx/engine_fleet.rs`).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::tx_module::WasmTxEngine;
use std::time::Duration;

use crate::tx::fleet_nonce::journal::{JournalCall, JournalOp, JournalReply};
use crate::tx::fleet_nonce::{FleetCall, FleetNonces, FleetOp, FleetReply, FleetUnavailable};

thread_local! {
    static BOOK: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// Attaches the store's book: `call(op, account, member, n)` returns a
/// promise of the script's reply (`['ok', n]`, `['init']`, `['busy', ms]`…).
#[wasm_bindgen(js_name = attachFleetNonces)]
pub fn attach_fleet_nonces(call: JsValue) {
    BOOK.with(|b| *b.borrow_mut() = call.dyn_into::<Function>().ok());
}

/// Detaches it (the store closed): shared sends fail with a coordination
/// error from now on (never a guessed nonce).
#[wasm_bindgen(js_name = detachFleetNonces)]
pub fn detach_fleet_nonces() {
    BOOK.with(|b| b.borrow_mut().take());
}

/// The attached store's book, as the engine sees it.
struct JsFleetNonces;

/// Runs the store's script with `args` (op, account, member, n[, record, owner, lease]).
async fn run_script(args: Array) -> Result<JsValue, FleetUnavailable> {
    let unavailable = |why: &str| FleetUnavailable(why.to_owned());
    let Some(call) = BOOK.with(|b| b.borrow().clone()) else {
        return Err(unavailable("no store is attached"));
    };
    let promise = call.apply(&JsValue::UNDEFINED, &args).map_err(|_| unavailable("the store threw"))?;
    JsFuture::from(Promise::resolve(&promise)).await.map_err(|e| {
        let why = js_sys::Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string());
        // The wrapper words it without credentials (`storeReason`).
        unavailable(&why.unwrap_or_else(|| "the store failed".into()).chars().take(200).collect::<String>())
    })
}

fn not_the_script() -> FleetUnavailable {
    FleetUnavailable("the store answered something else than the nonce script's reply".into())
}

impl FleetNonces for JsFleetNonces {
    fn call(&self, op: FleetOp, account: u64, member: &str, arg: u64) -> FleetCall<'_> {
        let args =
            Array::of4(&op.as_str().into(), &format!("{account:016x}").into(), &member.into(), &(arg as f64).into());
        Box::pin(async move { read_reply(&run_script(args).await?).ok_or_else(not_the_script) })
    }

    fn journal(&self, op: JournalOp, account: u64, owner: &str, nonce: u64, lease: Duration) -> JournalCall<'_> {
        let (member, record) = match &op {
            JournalOp::Live { member, record } => (member.as_str(), record.as_str()),
            JournalOp::Write { record } => (owner, record.as_str()),
            JournalOp::Renew | JournalOp::Orphans => (owner, ""),
        };
        let args =
            Array::of4(&op.as_str().into(), &format!("{account:016x}").into(), &member.into(), &(nonce as f64).into());
        args.push(&record.into());
        args.push(&owner.into());
        args.push(&(lease.as_millis() as f64).into());
        Box::pin(async move { read_journal_reply(&run_script(args).await?).ok_or_else(not_the_script) })
    }
}

/// The script's reply to a journal call.
fn read_journal_reply(reply: &JsValue) -> Option<JournalReply> {
    let reply = reply.dyn_ref::<Array>()?;
    match reply.get(0).as_string()?.as_str() {
        "ok" => Some(JournalReply::Ok),
        "lost" => Some(JournalReply::Lost),
        "orphans" => {
            let mut found = Vec::new();
            let mut i = 1;
            while i + 1 < reply.length() {
                let nonce: u64 = reply.get(i).as_string()?.parse().ok()?;
                found.push((nonce, reply.get(i + 1).as_string()?));
                i += 2;
            }
            Some(JournalReply::Orphans(found))
        }
        _ => None,
    }
}

/// The script's reply: a status and, for most, a number.
fn read_reply(reply: &JsValue) -> Option<FleetReply> {
    let reply = reply.dyn_ref::<Array>()?;
    let status = reply.get(0).as_string()?;
    let number = || {
        let n: f64 = reply.get(1).as_string()?.parse().ok()?;
        (n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0).then_some(n as u64)
    };
    match status.as_str() {
        "ok" => number().map(FleetReply::Ok),
        "init" => Some(FleetReply::NeedsInit),
        "lost" => Some(FleetReply::Lost),
        "live" => Some(FleetReply::IsLive),
        "busy" => number().map(|ms| FleetReply::Busy(std::time::Duration::from_millis(ms))),
        _ => None, // 'layout' and anything unknown: the store cannot answer for this version
    }
}

#[wasm_bindgen]
impl WasmTxEngine {
    /// This relayer's sends take their nonces from the attached store's
    /// book (`member`: a random name for this relayer).
    #[wasm_bindgen(js_name = shareNonces)]
    pub fn share_nonces(&self, member: String) {
        self.tx.share_nonces(Rc::new(JsFleetNonces), member);
    }
}
