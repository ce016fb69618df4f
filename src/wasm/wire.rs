//! Auto-batching on one endpoint's wire, converted: attempts the policy
//! queues (`policy::wire_batch`, which decides when) wait here, go out
//! together as one JSON-RPC batch, and each gets its own observation back,
//! as if it had gone alone. The pipeline never knows: every request keeps
//! its own quota charge, classification, retries and failover.
//!
//! ```text
//!   exchange(call) ── Send ──► alone (a guard ends it: the queue may go)
//!                 └── Queue ─► a waiter; its observation arrives with its batch
//!   flush (an exchange ended, a full queue): a task sends the batch,
//!     a reply per item ─► its waiter (by id: a shuffled reply cannot swap answers)
//!     HTTP 413 ─► limit halved, queued again
//!     items "batch too large" or cut off ─► limit = the items answered; those queued again
//!     one item left out of a full answer ─► that item's reply is missing (retried by its pipeline)
//!     a 200 that is no array (one error, one object, no JSON) ─► no batches here: each alone
//!     anything else (429, 503, a dead socket) ─► every item sees it, as alone
//! ```
//! A batch's timeout is the longest of its items'. Each time items go
//! again the limit comes down, at worst to one (alone). A caller gone (its attempt
//! dropped: a hedge won, a deadline) leaves the queue, or its answer is
//! dropped when the batch comes back.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use js_sys::{Array, Function, JsString};
use wasm_bindgen::prelude::*;

use super::delivery::Delivery;
use super::keys::{self, Key};
use super::observation::error_info;
use super::reply::{json_parse, reply_id, summarise_value, transport_failure};
use crate::policy::classify::{Observation, Reply, TransportFailure};
use crate::policy::wire_batch::{says_batch_too_large, BatchAnswer, ItemReply, Offer, WireBatch, WireBatchConfig};
use crate::runtime::join::join_all;

/// One queued attempt.
struct Waiter {
    body: JsString,
    id: f64,
    timeout_ms: f64,
    requeues: u32,
    done: Option<Observation<JsValue>>,
    waker: Option<Waker>,
    gone: bool,
}

type Shared = Rc<RefCell<Waiter>>;

/// One endpoint's wire.
pub(super) struct Wire {
    sender: Function,
    max_bytes: u32,
    state: RefCell<(WireBatch, VecDeque<Shared>)>,
    /// Whether the gathering timer runs (`arm`).
    timer: Cell<bool>,
}

/// An exchange in flight: when it ends (or is dropped), the queue may go.
pub(super) struct InFlight(Rc<Wire>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let n = self.0.state.borrow_mut().0.ended();
        Wire::send(&self.0, n);
    }
}

/// A queued attempt's observation, once its batch is back.
struct Waiting(Shared, Rc<Wire>);

impl Future for Waiting {
    type Output = Observation<JsValue>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut w = self.0.borrow_mut();
        match w.done.take() {
            Some(observation) => Poll::Ready(observation),
            None => {
                w.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let queued = {
            let mut w = self.0.borrow_mut();
            w.gone = true;
            w.done.is_none()
        };
        if queued {
            let mut state = self.1.state.borrow_mut();
            let before = state.1.len();
            state.1.retain(|w| !Rc::ptr_eq(w, &self.0));
            let left = before - state.1.len();
            state.0.dequeued(left);
        }
    }
}

/// What the attempt does on the wire.
pub(super) enum Route {
    /// Alone, now; hold the guard while it is out.
    Alone(InFlight),
    /// Queued: await this.
    Queued(Pin<Box<dyn Future<Output = Observation<JsValue>>>>),
}

impl Wire {
    /// The wire of an endpoint reached through `sender` (the wrapper's
    /// `httpSender` for its URL).
    pub(super) fn new(sender: Function, max_bytes: u32, config: WireBatchConfig) -> Rc<Self> {
        let state = RefCell::new((WireBatch::new(config), VecDeque::new()));
        Rc::new(Wire { sender, max_bytes, state, timer: Cell::new(false) })
    }

    /// Where an attempt of `body` (JSON-RPC id `id`) goes.
    pub(super) fn route(self: &Rc<Self>, batchable: bool, body: &JsString, id: f64, timeout_ms: f64) -> Route {
        let offer = self.state.borrow_mut().0.offer(batchable);
        let Offer::Queue { flush } = offer else { return Route::Alone(InFlight(self.clone())) };
        let waiter = Rc::new(RefCell::new(Waiter {
            body: body.clone(),
            id,
            timeout_ms,
            requeues: 0,
            done: None,
            waker: None,
            gone: false,
        }));
        self.state.borrow_mut().1.push_back(waiter.clone());
        if flush {
            let n = self.state.borrow_mut().0.flush();
            Wire::send(self, n);
        } else {
            self.arm();
        }
        Route::Queued(Box::pin(Waiting(waiter, self.clone())))
    }

    /// The queue's gathering time (`batch.waitMs`), when set: one timer at a
    /// time; each time it fires the queue goes (up to the limit), and it
    /// runs again while items are left.
    fn arm(self: &Rc<Self>) {
        let Some(wait) = self.state.borrow().0.wait() else { return };
        if self.timer.replace(true) {
            return;
        }
        let wire = self.clone();
        super::spawn(async move {
            loop {
                super::timers::sleep_millis(crate::time::millis_f64(wait)).await;
                let n = wire.state.borrow_mut().0.flush();
                Wire::send(&wire, n);
                if wire.state.borrow().1.is_empty() {
                    wire.timer.set(false);
                    return;
                }
            }
        });
    }

    /// Sends the first `n` queued items as one exchange, in a task of its
    /// own (no caller's future carries it: any of them may be dropped).
    fn send(wire: &Rc<Self>, n: usize) {
        if n == 0 {
            return;
        }
        let items: Vec<Shared> = {
            let mut state = wire.state.borrow_mut();
            let take = n.min(state.1.len());
            state.1.drain(..take).collect()
        };
        let guard = InFlight(wire.clone());
        if items.is_empty() {
            return; // `guard` ends the exchange the policy counted
        }
        let wire = wire.clone();
        super::spawn(async move {
            let batches = wire.state.borrow().0.batches();
            if items.len() == 1 || !batches {
                join_all(items.iter().map(|item| wire.alone(item)).collect()).await;
            } else {
                wire.together(items).await;
            }
            drop(guard);
        });
    }

    /// One item alone (a batch of one, or after the endpoint refused batches).
    async fn alone(&self, item: &Shared) {
        let (body, id, timeout) = {
            let w = item.borrow();
            (w.body.clone(), w.id, w.timeout_ms)
        };
        let observation = match self.exchange(&body, timeout).await {
            Ok((status, retry_after, Ok(text))) => {
                let reply = match json_parse(&text) {
                    Ok(value) => summarise_value(&value, id),
                    Err(_) => Reply::NotJson,
                };
                Observation::Http { status, retry_after, reply }
            }
            Ok((status, retry_after, Err(reply))) => Observation::Http { status, retry_after, reply },
            Err(failure) => Observation::Transport(failure),
        };
        finish(item, observation);
    }

    /// Items as one JSON-RPC batch.
    async fn together(self: &Rc<Self>, items: Vec<Shared>) {
        let mut body = JsString::from("[");
        let mut timeout: f64 = 0.0;
        for (n, item) in items.iter().enumerate() {
            let w = item.borrow();
            if n > 0 {
                body = body.concat(&",".into());
            }
            body = body.concat(&w.body);
            timeout = timeout.max(w.timeout_ms);
        }
        let body = body.concat(&"]".into());
        let size = items.len();
        let (status, retry_after, text) = match self.exchange(&body, timeout).await {
            Err(failure) => return every(&items, &Observation::Transport(failure)),
            Ok(out) => out,
        };
        let value = match &text {
            Ok(text) => json_parse(text).ok(),
            Err(_) => None,
        };
        let array = value.as_ref().is_some_and(Array::is_array);
        let error = value
            .as_ref()
            .filter(|_| !array)
            .map(|v| keys::get(v, Key::Error))
            .filter(JsValue::is_object)
            .map(|error| error_info(&error).message);
        let answer = self.state.borrow_mut().0.answered(size, status, array, error.as_deref());
        match (answer, text, value) {
            (BatchAnswer::Again, _, _) => self.again(items),
            (_, Err(reply), _) => every(&items, &Observation::Http { status, retry_after, reply }),
            (_, Ok(_), None) => every(&items, &Observation::Http { status, retry_after, reply: Reply::NotJson }),
            (BatchAnswer::Every, Ok(_), Some(value)) => {
                // A whole-batch status (429, 503, …): every item sees it, read as its own reply.
                for item in &items {
                    let reply = summarise_value(&value, item.borrow().id);
                    finish(item, Observation::Http { status, retry_after: retry_after.clone(), reply });
                }
            }
            (BatchAnswer::PerItem, Ok(_), Some(value)) if Array::is_array(&value) => {
                self.per_item(items, status, &value)
            }
            (BatchAnswer::PerItem, Ok(_), Some(_)) => {
                every(&items, &Observation::Http { status, retry_after, reply: Reply::Malformed })
            }
        }
    }

    /// A batch's array of replies, each to its item by id.
    fn per_item(self: &Rc<Self>, items: Vec<Shared>, status: u16, value: &JsValue) {
        let size = items.len();
        let replies = Array::from(value);
        let mut by_id: Vec<(f64, JsValue)> = Vec::with_capacity(replies.length() as usize);
        for reply in replies.iter() {
            if let Some(id) = reply_id(&keys::get(&reply, Key::Id)) {
                by_id.push((id, reply));
            }
        }
        let mut outcomes = Vec::with_capacity(size);
        let mut found = Vec::with_capacity(size);
        for item in &items {
            let (id, times) = {
                let w = item.borrow();
                (w.id, w.requeues)
            };
            let reply = by_id.iter().position(|(k, _)| *k == id).map(|i| summarise_value(&by_id.swap_remove(i).1, id));
            let said = match &reply {
                None => ItemReply::Missing,
                Some(Reply::Error(e)) if says_batch_too_large(&e.message) => ItemReply::TooLarge,
                Some(_) => ItemReply::Answered,
            };
            outcomes.push((said, times));
            found.push(reply);
        }
        let goes_again = self.state.borrow_mut().0.items_answered(size, replies.length() as usize, &outcomes);
        let mut again = Vec::new();
        for ((item, reply), go) in items.into_iter().zip(found).zip(goes_again) {
            if go {
                again.push(item);
            } else {
                let reply = reply.unwrap_or(Reply::WrongId);
                finish(&item, Observation::Http { status, retry_after: None, reply });
            }
        }
        if !again.is_empty() {
            self.again(again);
        }
    }

    /// Items back at the front of the queue (still wanted ones), to go with
    /// the next flush; one goes now if nothing else would send them.
    fn again(self: &Rc<Self>, items: Vec<Shared>) {
        let mut state = self.state.borrow_mut();
        let mut n = 0;
        for item in items.into_iter().rev() {
            let mut w = item.borrow_mut();
            if w.gone {
                continue;
            }
            w.requeues += 1;
            drop(w);
            state.1.push_front(item);
            n += 1;
        }
        state.0.requeue(n);
        let go = state.0.flush();
        drop(state);
        Wire::send(self, go);
        self.arm(); // with a wait set, what is left goes on the timer
    }

    /// One HTTP exchange of `body`: (status, Retry-After, the text or what
    /// stands for it), or why none came.
    async fn exchange(
        &self,
        body: &JsString,
        timeout_ms: f64,
    ) -> Result<(u16, Option<String>, Result<JsString, Reply<JsValue>>), TransportFailure> {
        let mut delivery = Delivery::new();
        let controller = self
            .sender
            .call4(&JsValue::UNDEFINED, body, &timeout_ms.max(1.0).into(), &JsValue::UNDEFINED, &delivery.id().into())
            .map_err(|e| transport_failure(&e, false))?;
        delivery.abort_with(controller);
        let out = delivery.await;
        let Some(status) = keys::get(&out, Key::Status).as_f64() else {
            let timed_out = keys::get(&out, Key::TimedOut).as_bool() == Some(true);
            return Err(transport_failure(&keys::get(&out, Key::Error), timed_out));
        };
        let retry_after = keys::get(&out, Key::RetryAfter).as_string();
        let text = match keys::get(&out, Key::Text).dyn_into::<JsString>() {
            Ok(text) if text.length() <= self.max_bytes => Ok(text),
            _ if keys::get(&out, Key::Inexact).as_bool() == Some(true) => Err(Reply::InexactNumber),
            _ => Err(Reply::TooLarge),
        };
        Ok((status as u16, retry_after, text))
    }
}

/// Gives an item its observation and wakes its caller (if still there).
fn finish(item: &Shared, observation: Observation<JsValue>) {
    let waker = {
        let mut w = item.borrow_mut();
        if w.gone {
            return;
        }
        w.done = Some(observation);
        w.waker.take()
    };
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// Every item sees the same observation.
fn every(items: &[Shared], observation: &Observation<JsValue>) {
    for item in items {
        finish(item, observation.clone());
    }
}
