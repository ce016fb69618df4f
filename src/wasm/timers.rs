//! Every sleep of the instance on one host timer. Each read arms a hedge
//! timer that almost never fires (the answer comes first); a `setTimeout`
//! per sleep cost a wasm closure, a finalizer registration and two calls
//! into the host per request. Here a sleep is an entry in a min-heap; one
//! `setTimeout` is armed for the earliest live deadline and re-armed only
//! when an earlier one arrives or it fires. When no sleep is left the host
//! timer is cleared, so nothing keeps a Node process alive after `close()`.
//!
//! ```text
//!   Sleep polled, not due ── register (deadline, id, waker); arm if earlier
//!   timer fires ──────────── wake every entry due; re-arm for the earliest
//!                            live one (a host timer firing early re-arms)
//!   Sleep dropped ────────── forget its waker; none left → clear the timer
//! ```
//! Dropped sleeps leave their heap entry behind; it is skipped when it
//! reaches the top (the heap holds at most rate × longest sleep entries).

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use gloo_timers::callback::Timeout;

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The host's monotonic clock in milliseconds: the runtime's `now()`
    /// and the timer heap's keys read the same clock.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub(super) fn performance_now() -> f64;
}

/// Microseconds on the `performance.now()` clock (integer keys for the heap).
fn now_us() -> u64 {
    (performance_now() * 1000.0).max(0.0) as u64
}

#[derive(Default)]
struct Wheel {
    due: BinaryHeap<Reverse<(u64, u64)>>,
    waiting: HashMap<u64, Waker>,
    /// The host timer and the deadline it is armed for (dropping it clears it).
    armed: Option<(u64, Timeout)>,
    next_id: u64,
}

thread_local! {
    static WHEEL: RefCell<Wheel> = RefCell::new(Wheel::default());
}

impl Wheel {
    /// Arms the host timer for the earliest live deadline, unless it is
    /// already armed for that time or earlier; clears it when none is left.
    fn arm(&mut self, now: u64) {
        while let Some(Reverse((_, id))) = self.due.peek() {
            if self.waiting.contains_key(id) {
                break;
            }
            self.due.pop();
        }
        let Some(&Reverse((deadline, _))) = self.due.peek() else {
            self.armed = None;
            return;
        };
        if self.armed.as_ref().is_some_and(|(at, _)| *at <= deadline) {
            return;
        }
        let ms = crate::policy::bound((deadline.saturating_sub(now) as f64 / 1000.0).ceil(), 1.0, i32::MAX as f64);
        self.armed = Some((deadline, Timeout::new(ms as u32, fire)));
    }
}

/// The host timer fired: wake what is due, re-arm for the rest.
fn fire() {
    let woken = WHEEL.with(|wheel| {
        let mut w = wheel.borrow_mut();
        // This timer's own closure is running: wasm-bindgen frees it once the call returns.
        w.armed = None;
        let now = now_us();
        let mut woken = Vec::new();
        while let Some(&Reverse((deadline, id))) = w.due.peek() {
            if deadline > now {
                break;
            }
            w.due.pop();
            if let Some(waker) = w.waiting.remove(&id) {
                woken.push(waker);
            }
        }
        w.arm(now);
        woken
    });
    // Outside the borrow: a woken task may register a new sleep.
    for waker in woken {
        waker.wake();
    }
}

/// A sleep until `deadline` (µs on the `performance.now()` clock).
pub struct Sleep {
    deadline: u64,
    id: Option<u64>,
}

/// Sleeps for `millis` milliseconds.
pub fn sleep_millis(millis: f64) -> Sleep {
    let ms = if millis.is_finite() { millis.max(0.0) } else { 2_147_483_647.0 };
    Sleep { deadline: now_us().saturating_add((ms * 1000.0) as u64), id: None }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let now = now_us();
        if now >= self.deadline {
            if let Some(id) = self.id.take() {
                let _waker = WHEEL.with(|w| w.borrow_mut().waiting.remove(&id));
            }
            return Poll::Ready(());
        }
        let deadline = self.deadline;
        let id = WHEEL.with(|wheel| {
            let mut w = wheel.borrow_mut();
            let id = match self.id {
                Some(id) if w.waiting.contains_key(&id) => id,
                _ => {
                    // First poll, or woken by a host timer that fired early.
                    let id = w.next_id;
                    w.next_id += 1;
                    w.due.push(Reverse((deadline, id)));
                    id
                }
            };
            let replaced = w.waiting.insert(id, cx.waker().clone());
            w.arm(now);
            (id, replaced)
        });
        // Wakers are dropped outside the borrow (dropping one may drop a task).
        let (id, _replaced) = id;
        self.id = Some(id);
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        // `try_with`: a sleep dropped while the thread-local is torn down has nothing to clean.
        let _waker = WHEEL.try_with(|wheel| {
            let mut w = wheel.borrow_mut();
            let waker = w.waiting.remove(&id);
            if w.waiting.is_empty() {
                w.due.clear();
                w.armed = None;
            }
            waker
        });
    }
}
