//! A deterministic simulated runtime: a virtual clock that jumps to the
//! next pending deadline, a seeded random source, and a single-threaded
//! executor that drives one root future (or several joined ones).
//!
//! How time moves: [`SimRuntime::block_on`] polls the root future; when it
//! is pending, the earliest registered sleep deadline becomes "now" and the
//! root is polled again. No real time passes, so tests assert exact
//! instants. A root that is pending with no sleep registered can never
//! finish; that is reported as a deadlock instead of hanging the test.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::{Runtime, SeededRandom};
use crate::time::Instant;

#[derive(Default)]
struct ClockState {
    now: Cell<Instant>,
    deadlines: RefCell<BinaryHeap<Reverse<Instant>>>,
}

/// Wall-clock time at simulated instant zero: 2026-01-01T00:00:00Z.
pub const SIM_UNIX_EPOCH: Duration = Duration::from_secs(1_767_225_600);

/// The simulated runtime. Cheap to clone; clones share one clock.
#[derive(Clone)]
pub struct SimRuntime {
    clock: Rc<ClockState>,
    rng: Rc<RefCell<SeededRandom>>,
}

/// Raised when the root future is pending but nothing can wake it.
#[derive(Debug, thiserror::Error)]
#[error("simulation deadlocked at {0:?}: pending with no timer registered")]
pub struct Deadlock(pub Instant);

impl SimRuntime {
    /// A runtime at time zero whose random draws follow `seed`.
    pub fn new(seed: u64) -> Self {
        SimRuntime { clock: Rc::default(), rng: Rc::new(RefCell::new(SeededRandom::new(seed))) }
    }

    /// Drives `future` to completion on virtual time.
    pub fn block_on<F: Future>(&self, future: F) -> Result<F::Output, Deadlock> {
        let mut future = std::pin::pin!(future);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return Ok(out);
            }
            let next = self.clock.deadlines.borrow_mut().pop();
            match next {
                Some(Reverse(at)) => {
                    if at > self.clock.now.get() {
                        self.clock.now.set(at);
                    }
                }
                None => return Err(Deadlock(self.clock.now.get())),
            }
        }
    }

    /// Moves the clock forward by hand (for policy tests outside `block_on`).
    pub fn advance(&self, by: Duration) {
        self.clock.now.set(self.clock.now.get() + by);
    }
}

impl Runtime for SimRuntime {
    fn now(&self) -> Instant {
        self.clock.now.get()
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> {
        SimSleep { clock: self.clock.clone(), until: self.now() + duration, registered: false }
    }

    fn random_unit(&self) -> f64 {
        self.rng.borrow_mut().next_unit()
    }

    fn unix_time(&self) -> Duration {
        SIM_UNIX_EPOCH + self.now().since_epoch()
    }
}

struct SimSleep {
    clock: Rc<ClockState>,
    until: Instant,
    registered: bool,
}

impl Future for SimSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.clock.now.get() >= self.until {
            return Poll::Ready(());
        }
        if !self.registered {
            self.registered = true;
            self.clock.deadlines.borrow_mut().push(Reverse(self.until));
        }
        Poll::Pending
    }
}

/// Runs several futures concurrently on the simulated executor and returns
/// their outputs in order (a minimal `join_all` without a dependency).
pub async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    type Slot<F> = (Pin<Box<F>>, Option<<F as Future>::Output>);
    let mut slots: Vec<Slot<F>> = futures.into_iter().map(|f| (Box::pin(f), None)).collect();
    std::future::poll_fn(move |cx| {
        let mut all_done = true;
        for (fut, out) in slots.iter_mut() {
            if out.is_none() {
                match fut.as_mut().poll(cx) {
                    Poll::Ready(v) => *out = Some(v),
                    Poll::Pending => all_done = false,
                }
            }
        }
        if all_done {
            Poll::Ready(slots.iter_mut().filter_map(|(_, o)| o.take()).collect())
        } else {
            Poll::Pending
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_jump_the_clock_exactly() {
        let rt = SimRuntime::new(1);
        let end = rt
            .block_on(async {
                rt.sleep(Duration::from_millis(250)).await;
                rt.sleep(Duration::from_secs(3600)).await;
                rt.now()
            })
            .unwrap();
        assert_eq!(end.since_epoch(), Duration::from_millis(3_600_250));
    }

    #[test]
    fn joined_tasks_interleave_on_virtual_time() {
        let rt = SimRuntime::new(1);
        let log = RefCell::new(Vec::new());
        let task = |id: u64, ms: u64| {
            let (rt, log) = (&rt, &log);
            async move {
                rt.sleep(Duration::from_millis(ms)).await;
                log.borrow_mut().push((id, rt.now().since_epoch().as_millis()));
            }
        };
        rt.block_on(join_all(vec![task(1, 30), task(2, 10), task(3, 20)])).unwrap();
        assert_eq!(*log.borrow(), vec![(2, 10), (3, 20), (1, 30)]);
    }

    #[test]
    fn a_future_nothing_can_wake_is_a_deadlock_not_a_hang() {
        let rt = SimRuntime::new(1);
        assert!(rt.block_on(std::future::pending::<()>()).is_err());
    }
}
