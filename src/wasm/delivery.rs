//! How an HTTP exchange's result gets back into wasm without a closure.
//! Awaiting the sender's promise (`JsFuture`) made two wasm closures per
//! attempt, each with a finalizer registration the garbage collector then
//! has to process; on a busy Node process that showed up as throughput.
//! Instead each exchange takes a numbered slot, the wrapper's sender calls
//! the exported `deliverHttp(slot, result)` when it is done, and the future
//! waiting on the slot wakes.
//!
//! ```text
//!   Delivery::new      slot registered (no result, no waker)
//!   polled             result there → Ready; else keep the waker
//!   deliverHttp(id)    slot still registered → store, wake; else ignored
//!                      (an abandoned exchange, or a stale id)
//!   dropped unfinished slot removed; the exchange's controller aborted
//! ```
//! Ids are never reused (a counter up to 2^53), so a late delivery for an
//! abandoned exchange can never land in another one's slot.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[derive(Default)]
struct Slot {
    waker: Option<Waker>,
    result: Option<JsValue>,
}

thread_local! {
    static SLOTS: RefCell<HashMap<u64, Slot>> = RefCell::new(HashMap::new());
    static NEXT: Cell<u64> = const { Cell::new(1) };
}

/// Called by the wrapper's HTTP sender with an exchange's result.
#[wasm_bindgen(js_name = deliverHttp)]
pub fn deliver_http(slot: f64, result: JsValue) {
    let waker = SLOTS.with(|slots| {
        let mut slots = slots.borrow_mut();
        let entry = slots.get_mut(&(slot as u64))?;
        entry.result = Some(result);
        entry.waker.take()
    });
    // Outside the borrow: waking may run code that registers a new slot.
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// The result of one exchange, once delivered.
pub struct Delivery {
    id: u64,
    /// What `abort()` is called on if the delivery is dropped unfinished.
    abort: Option<JsValue>,
}

impl Delivery {
    /// Registers a fresh slot; its id goes to the sender.
    pub fn new() -> Self {
        let id = NEXT.with(|n| {
            let id = n.get();
            n.set(if id >= (1 << 53) { 1 } else { id + 1 });
            id
        });
        SLOTS.with(|slots| slots.borrow_mut().insert(id, Slot::default()));
        Delivery { id, abort: None }
    }

    /// The slot id, as a JS number.
    pub fn id(&self) -> f64 {
        self.id as f64
    }

    /// The object whose `abort()` cancels the exchange (the sender's
    /// `AbortController`), called if this is dropped before the result.
    pub fn abort_with(&mut self, controller: JsValue) {
        self.abort = Some(controller);
    }
}

impl Future for Delivery {
    type Output = JsValue;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<JsValue> {
        let id = self.id;
        let (ready, _old_waker) = SLOTS.with(|slots| {
            let mut slots = slots.borrow_mut();
            match slots.get_mut(&id) {
                Some(slot) if slot.result.is_some() => (slots.remove(&id).and_then(|s| s.result), None),
                Some(slot) => (None, slot.waker.replace(cx.waker().clone())),
                None => (Some(JsValue::UNDEFINED), None),
            }
        });
        match ready {
            Some(result) => {
                self.abort = None;
                Poll::Ready(result)
            }
            None => Poll::Pending,
        }
    }
}

impl Drop for Delivery {
    fn drop(&mut self) {
        let id = self.id;
        let _slot = SLOTS.try_with(|slots| slots.borrow_mut().remove(&id));
        if let Some(controller) = self.abort.take() {
            if let Ok(abort) =
                Reflect::get(&controller, &JsValue::from_str("abort")).and_then(|f| f.dyn_into::<Function>())
            {
                let _ = abort.call0(&controller);
            }
        }
    }
}
