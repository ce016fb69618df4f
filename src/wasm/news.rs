//! This instance's realm (`coord::Realm`), and its news for the others of
//! its origin (`coord::news`):
//! the wrapper gives a sink (it posts to a `BroadcastChannel`) and hands
//! over what it hears. Conversions only: what is news and how it is
//! applied are the core's.

use std::cell::RefCell;

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js_runtime::JsRuntime;
use crate::coord::news::News;
use crate::coord::Realm;
use crate::runtime::Runtime;

thread_local! {
    /// The realm every relayer of this wasm instance joins (`coord`): one
    /// per JS realm, since a realm loads the module once.
    static REALM: Realm = Realm::new();
    static SINK: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// Runs `f` on this instance's realm.
pub(super) fn with_realm<T>(f: impl FnOnce(&Realm) -> T) -> T {
    REALM.with(f)
}

/// Where this realm's news goes: `sink(kind, key, value)`; not a function: nowhere.
#[wasm_bindgen(js_name = setRealmNewsSink)]
pub fn set_realm_news_sink(sink: JsValue) {
    SINK.with(|s| *s.borrow_mut() = sink.dyn_into::<Function>().ok());
}

/// News another realm told; `true` when it changed something here.
#[wasm_bindgen(js_name = hearRealmNews)]
pub fn hear_realm_news(kind: &str, key: &str, value: f64) -> bool {
    let now = JsRuntime.now();
    let unix_ms = JsRuntime.unix_time().as_secs_f64() * 1000.0;
    let heard = News::read(kind, key, value, now, unix_ms)
        .is_some_and(|news| with_realm(|realm| realm.hear(news, now, JsRuntime.random_unit())));
    tell_what_the_realm_owes();
    heard
}

/// Passes on what hearing news or a store's answer made this realm's own
/// to tell (a fleet counting itself, a member asking for the plan:
/// `quota/gather.rs`), outside the realm's borrow.
pub(super) fn tell_what_the_realm_owes() {
    for news in with_realm(|realm| realm.take_told()) {
        tell(&news);
    }
}

/// Passes this realm's news to the sink, if there is one.
pub(super) fn tell(news: &News) {
    let Some(sink) = SINK.with(|s| s.borrow().clone()) else { return };
    let unix_ms = JsRuntime.unix_time().as_secs_f64() * 1000.0;
    let value = news.value(JsRuntime.now(), unix_ms);
    // A throwing sink must not break the request.
    let _ = sink.call3(&JsValue::UNDEFINED, &news.kind().into(), &news.key_hex().into(), &value.into());
}
