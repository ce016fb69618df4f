//! A deterministic simulated runtime: a virtual clock, a seeded random
//! source, and a single-threaded executor that wakes exactly the tasks
//! whose timers fired — so thousands of simulated clients run in seconds.
//!
//! How time moves: [`SimRuntime::block_on`] polls every ready task; when
//! none is ready, the clock jumps to the earliest registered timer and the
//! tasks sleeping until then are woken. No real time passes, so tests
//! assert exact instants. A root that is pending with no timer and no ready
//! task can never finish; that is reported as a deadlock, not a hang.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use super::{Runtime, SeededRandom};
use crate::time::Instant;

/// Wall-clock time at simulated instant zero: 2026-01-01T00:00:00Z.
pub const SIM_UNIX_EPOCH: Duration = Duration::from_secs(1_767_225_600);

type Task = Pin<Box<dyn Future<Output = ()>>>;

/// Wakes a task by queueing its id.
struct TaskWaker {
    id: usize,
    ready: Arc<Mutex<VecDeque<usize>>>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        if let Ok(mut q) = self.ready.lock() {
            q.push_back(self.id);
        }
    }
}

struct Timer {
    at: Instant,
    seq: u64,
    waker: Waker,
}

impl PartialEq for Timer {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Timer {}
impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timer {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[derive(Default)]
struct State {
    now: Cell<Instant>,
    timers: RefCell<BinaryHeap<Reverse<Timer>>>,
    seq: Cell<u64>,
    tasks: RefCell<Vec<Option<Task>>>,
    ready: Arc<Mutex<VecDeque<usize>>>,
}

/// The simulated runtime. Cheap to clone; clones share one clock and executor.
#[derive(Clone)]
pub struct SimRuntime {
    state: Rc<State>,
    rng: Rc<RefCell<SeededRandom>>,
}

/// Raised when the root future is pending but nothing can wake it.
#[derive(Debug, thiserror::Error)]
#[error("simulation deadlocked at {0:?}: pending with no timer registered")]
pub struct Deadlock(pub Instant);

/// The output of a spawned task, awaitable.
pub struct JoinHandle<T> {
    slot: Rc<RefCell<(Option<T>, Option<Waker>)>>,
}

impl<T> Future for JoinHandle<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut slot = self.slot.borrow_mut();
        match slot.0.take() {
            Some(v) => Poll::Ready(v),
            None => {
                slot.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl SimRuntime {
    /// A runtime at time zero whose random draws follow `seed`.
    pub fn new(seed: u64) -> Self {
        SimRuntime { state: Rc::default(), rng: Rc::new(RefCell::new(SeededRandom::new(seed))) }
    }

    /// Starts `future` as an independent task; it runs while `block_on` drives.
    pub fn spawn<T: 'static>(&self, future: impl Future<Output = T> + 'static) -> JoinHandle<T> {
        let slot: Rc<RefCell<(Option<T>, Option<Waker>)>> = Rc::new(RefCell::new((None, None)));
        let out = slot.clone();
        let task: Task = Box::pin(async move {
            let value = future.await;
            let waker = {
                let mut s = out.borrow_mut();
                s.0 = Some(value);
                s.1.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        });
        let id = {
            let mut tasks = self.state.tasks.borrow_mut();
            tasks.push(Some(task));
            tasks.len() - 1
        };
        if let Ok(mut q) = self.state.ready.lock() {
            q.push_back(id);
        }
        JoinHandle { slot }
    }

    /// Drives `future` (and every spawned task) to completion on virtual time.
    pub fn block_on<F: Future>(&self, future: F) -> Result<F::Output, Deadlock> {
        let mut root = std::pin::pin!(future);
        let root_ready = Arc::new(Mutex::new(VecDeque::from([usize::MAX])));
        let root_waker = Waker::from(Arc::new(TaskWaker { id: usize::MAX, ready: root_ready.clone() }));
        loop {
            let root_woken = root_ready.lock().map(|mut q| q.drain(..).count() > 0).unwrap_or(false);
            if root_woken {
                if let Poll::Ready(out) = root.as_mut().poll(&mut Context::from_waker(&root_waker)) {
                    return Ok(out);
                }
            }
            let next = self.state.ready.lock().ok().and_then(|mut q| q.pop_front());
            if let Some(id) = next {
                self.poll_task(id);
                continue;
            }
            if root_ready.lock().map(|q| !q.is_empty()).unwrap_or(false) {
                continue;
            }
            if !self.fire_next_timers() {
                return Err(Deadlock(self.now()));
            }
        }
    }

    fn poll_task(&self, id: usize) {
        let task = self.state.tasks.borrow_mut().get_mut(id).and_then(Option::take);
        let Some(mut task) = task else { return };
        let waker = Waker::from(Arc::new(TaskWaker { id, ready: self.state.ready.clone() }));
        if task.as_mut().poll(&mut Context::from_waker(&waker)).is_pending() {
            if let Some(slot) = self.state.tasks.borrow_mut().get_mut(id) {
                *slot = Some(task);
            }
        }
    }

    /// Advances the clock to the earliest timer and wakes every timer due
    /// then. `false` if no timer is registered.
    fn fire_next_timers(&self) -> bool {
        let mut timers = self.state.timers.borrow_mut();
        let Some(Reverse(first)) = timers.pop() else { return false };
        if first.at > self.state.now.get() {
            self.state.now.set(first.at);
        }
        let now = self.state.now.get();
        let mut due = vec![first.waker];
        while timers.peek().is_some_and(|Reverse(t)| t.at <= now) {
            if let Some(Reverse(t)) = timers.pop() {
                due.push(t.waker);
            }
        }
        drop(timers);
        due.into_iter().for_each(Waker::wake);
        true
    }

    /// The host was busy for `duration`: the clock moves on and timers due
    /// meanwhile fire late, all at once, as a blocked JS event loop does.
    pub fn stall(&self, duration: Duration) {
        self.state.now.set(self.state.now.get() + duration);
    }

    fn register_timer(&self, at: Instant, waker: Waker) {
        let seq = self.state.seq.get();
        self.state.seq.set(seq + 1);
        self.state.timers.borrow_mut().push(Reverse(Timer { at, seq, waker }));
    }
}

impl Runtime for SimRuntime {
    fn now(&self) -> Instant {
        self.state.now.get()
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> {
        SimSleep { runtime: self.clone(), until: self.now() + duration, registered: false }
    }

    fn random_unit(&self) -> f64 {
        self.rng.borrow_mut().next_unit()
    }

    fn unix_time(&self) -> Duration {
        SIM_UNIX_EPOCH + self.now().since_epoch()
    }
}

struct SimSleep {
    runtime: SimRuntime,
    until: Instant,
    registered: bool,
}

impl Future for SimSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.runtime.now() >= self.until {
            return Poll::Ready(());
        }
        if !self.registered {
            self.registered = true;
            self.runtime.register_timer(self.until, cx.waker().clone());
        }
        Poll::Pending
    }
}

pub use super::join::{join_all, join_many};

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
    fn spawned_tasks_run_independently_and_can_be_awaited() {
        let rt = SimRuntime::new(1);
        let handles: Vec<_> = (0..1000u64)
            .map(|i| {
                let rt2 = rt.clone();
                rt.spawn(async move {
                    rt2.sleep(Duration::from_millis(i % 7)).await;
                    rt2.now().since_epoch().as_millis() as u64
                })
            })
            .collect();
        let ends = rt.block_on(join_all(handles)).unwrap();
        assert!(ends.iter().enumerate().all(|(i, &t)| t == i as u64 % 7));
        assert_eq!(rt.now().since_epoch(), Duration::from_millis(6));
    }

    #[test]
    fn a_future_nothing_can_wake_is_a_deadlock_not_a_hang() {
        let rt = SimRuntime::new(1);
        assert!(rt.block_on(std::future::pending::<()>()).is_err());
    }
}
