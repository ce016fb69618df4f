//! Dedup of identical in-flight reads: the first caller (the leader) runs
//! the request, later identical callers (followers) wait for its outcome.
//! If the leader goes away without an outcome, followers are released to
//! run the request themselves, so nobody waits forever.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

struct Shared<T> {
    /// `Some(Some(v))` done, `Some(None)` leader gone, `None` running.
    outcome: RefCell<Option<Option<T>>>,
    waiters: RefCell<Vec<Waker>>,
}

/// The in-flight table.
pub struct InFlight<T> {
    running: RefCell<HashMap<String, Rc<Shared<T>>>>,
}

impl<T> Default for InFlight<T> {
    fn default() -> Self {
        InFlight { running: RefCell::new(HashMap::new()) }
    }
}

/// What a caller of [`InFlight::join`] becomes.
pub enum Joined<'a, T: Clone> {
    /// Run the request and report through the guard.
    Leader(LeaderGuard<'a, T>),
    /// Wait for the leader's outcome (`None`: the leader went away).
    Follower(Follower<T>),
}

impl<T: Clone> InFlight<T> {
    /// Joins the request keyed `key`.
    pub fn join(&self, key: &str) -> Joined<'_, T> {
        if let Some(shared) = self.running.borrow().get(key) {
            return Joined::Follower(Follower { shared: shared.clone() });
        }
        let shared = Rc::new(Shared { outcome: RefCell::new(None), waiters: RefCell::new(Vec::new()) });
        self.running.borrow_mut().insert(key.to_string(), shared.clone());
        Joined::Leader(LeaderGuard { table: self, key: key.to_string(), shared, done: false })
    }

    /// Requests currently shared.
    pub fn len(&self) -> usize {
        self.running.borrow().len()
    }

    /// Whether none is running.
    pub fn is_empty(&self) -> bool {
        self.running.borrow().is_empty()
    }
}

/// Held by the leader; publishing or dropping it releases the followers.
pub struct LeaderGuard<'a, T: Clone> {
    table: &'a InFlight<T>,
    key: String,
    shared: Rc<Shared<T>>,
    done: bool,
}

impl<T: Clone> LeaderGuard<'_, T> {
    /// Publishes the outcome to every follower.
    pub fn publish(mut self, value: &T) {
        self.finish(Some(value.clone()));
    }

    fn finish(&mut self, value: Option<T>) {
        if self.done {
            return;
        }
        self.done = true;
        self.table.running.borrow_mut().remove(&self.key);
        *self.shared.outcome.borrow_mut() = Some(value);
        let waiters = std::mem::take(&mut *self.shared.waiters.borrow_mut());
        waiters.into_iter().for_each(Waker::wake);
    }
}

impl<T: Clone> Drop for LeaderGuard<'_, T> {
    fn drop(&mut self) {
        self.finish(None);
    }
}

/// A follower's wait.
pub struct Follower<T> {
    shared: Rc<Shared<T>>,
}

impl<T: Clone> Future for Follower<T> {
    type Output = Option<T>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if let Some(outcome) = self.shared.outcome.borrow().as_ref() {
            return Poll::Ready(outcome.clone());
        }
        self.shared.waiters.borrow_mut().push(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::runtime::sim::{join_all, SimRuntime};
    use crate::runtime::Runtime;

    #[test]
    fn followers_share_the_leaders_outcome_and_a_vanished_leader_releases_them() {
        let rt = SimRuntime::new(1);
        let table: InFlight<u32> = InFlight::default();
        let runs = RefCell::new(0);
        let call = |v: u32| {
            let (rt, table, runs) = (&rt, &table, &runs);
            async move {
                match table.join("k") {
                    Joined::Leader(guard) => {
                        *runs.borrow_mut() += 1;
                        rt.sleep(Duration::from_millis(10)).await;
                        guard.publish(&v);
                        v
                    }
                    Joined::Follower(f) => f.await.unwrap_or(0),
                }
            }
        };
        let out = rt.block_on(join_all(vec![call(7), call(8), call(9)])).unwrap();
        assert_eq!((out, *runs.borrow()), (vec![7, 7, 7], 1));
        assert!(table.is_empty());
        let Joined::Leader(guard) = table.join("x") else { panic!("first joiner leads") };
        assert_eq!((table.len(), table.is_empty()), (1, false), "one request shared");
        let Joined::Follower(follower) = table.join("x") else { panic!("second follows") };
        assert_eq!(table.len(), 1, "a follower adds no request");
        drop(guard);
        assert_eq!(table.len(), 0);
        assert_eq!(rt.block_on(follower).unwrap(), None);
    }
}
