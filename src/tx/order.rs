//! Nonces in call order: every send takes a ticket the moment it is called
//! (before anything awaits), and an account's nonces go out in ticket order.
//!
//! Why: a bot that fires dependent sends together relies on the first call
//! getting the lower nonce. Sends still estimate gas and fees concurrently
//! (those answers come back in any order); only allocation → signature →
//! first broadcast is serialised per account, and in ticket order.
//!
//! ```text
//!   SendOrder::ticket()  → Unbound(seq)        synchronous, at the call
//!   Ticket::bind(queue)  → Queued(seq)         once the account is known
//!   Ticket::turn().await → ready when seq is its account's lowest queued
//!                          ticket and no older ticket is still unbound
//!                          (that one may be for the same account)
//!   drop                 → leaves the unbound set or the queue; waiters recheck
//! ```
//! A ticket is released by dropping it (a send that fails validation, a
//! signer that throws, a caller that goes away): nobody can forget to give
//! a turn back. Each change wakes the sends waiting for a turn to recheck;
//! only sends that finished their estimates wait, so that set is small.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::Poll;

use crate::wait_map::{wake_all, WaitMap, Waiting};

/// The relayer-wide ticket counter and the tickets not yet bound to an account.
#[derive(Default)]
pub struct SendOrder {
    next: Cell<u64>,
    /// Tickets not yet dropped, bound or not.
    live: Cell<usize>,
    unbound: RefCell<BTreeSet<u64>>,
    /// The tickets waiting for their turn (the relayer's one waiter map type, `wait_map`).
    waiters: RefCell<WaitMap>,
}

/// The tickets queued for one account, oldest first.
#[derive(Default)]
pub struct AccountQueue {
    queued: RefCell<BTreeSet<u64>>,
}

/// One send's place in line (see the module docs).
pub struct Ticket {
    order: Rc<SendOrder>,
    seq: u64,
    queue: Option<Rc<AccountQueue>>,
}

impl SendOrder {
    /// A ticket behind every ticket taken before it.
    pub fn ticket(self: &Rc<Self>) -> Ticket {
        let seq = self.next.get();
        self.next.set(seq + 1);
        self.unbound.borrow_mut().insert(seq);
        self.live.set(self.live.get() + 1);
        Ticket { order: self.clone(), seq, queue: None }
    }

    fn changed(&self) {
        let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
        wake_all(waiters);
    }

    /// Tickets alive now, bound or not (for tests: none may leak).
    pub fn outstanding(&self) -> usize {
        self.live.get()
    }
}

impl Ticket {
    /// Its position: lower goes first.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Joins the account's queue (once; later calls do nothing).
    pub fn bind(&mut self, queue: Rc<AccountQueue>) {
        if self.queue.is_some() {
            return;
        }
        self.order.unbound.borrow_mut().remove(&self.seq);
        queue.queued.borrow_mut().insert(self.seq);
        self.queue = Some(queue);
        self.order.changed();
    }

    fn ready(&self) -> bool {
        let Some(queue) = &self.queue else { return false };
        let first = queue.queued.borrow().first().copied();
        let older_unbound = self.order.unbound.borrow().first().is_some_and(|&u| u < self.seq);
        first == Some(self.seq) && !older_unbound
    }

    /// Completes when this ticket's send may take a nonce (bind first).
    pub async fn turn(&self) {
        poll_fn(|cx| {
            if self.ready() {
                self.order.waiters.borrow_mut().remove(&self.seq);
                Poll::Ready(())
            } else {
                self.order.waiters.borrow_mut().insert(self.seq, Waiting::woken_by(cx.waker()));
                Poll::Pending
            }
        })
        .await
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.order.unbound.borrow_mut().remove(&self.seq);
        if let Some(queue) = &self.queue {
            queue.queued.borrow_mut().remove(&self.seq);
        }
        self.order.waiters.borrow_mut().remove(&self.seq);
        self.order.live.set(self.order.live.get() - 1);
        self.order.changed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sim::{join_all, join_many, SimRuntime};
    use crate::runtime::Runtime;
    use std::time::Duration;

    #[test]
    fn turns_follow_ticket_order_whatever_order_the_accounts_become_known() {
        let rt = SimRuntime::new(1);
        let order = Rc::new(SendOrder::default());
        let queue = Rc::new(AccountQueue::default());
        let log = RefCell::new(Vec::new());
        // Ticket 0 learns its account last (a slow signer address), ticket 2 first.
        let sends: Vec<_> = [30u64, 20, 10]
            .into_iter()
            .map(|bind_after_ms| {
                let (rt, queue, log) = (&rt, queue.clone(), &log);
                let mut ticket = order.ticket();
                async move {
                    rt.sleep(Duration::from_millis(bind_after_ms)).await;
                    ticket.bind(queue);
                    ticket.turn().await;
                    log.borrow_mut().push(ticket.seq());
                    rt.sleep(Duration::from_millis(5)).await; // holds the turn a while
                }
            })
            .collect();
        rt.block_on(join_all(sends)).unwrap();
        assert_eq!(log.into_inner(), vec![0, 1, 2]);
        assert_eq!(order.outstanding(), 0);
    }

    #[test]
    fn a_dropped_ticket_lets_the_next_go_and_other_accounts_do_not_wait_on_a_bound_one() {
        let rt = SimRuntime::new(1);
        let order = Rc::new(SendOrder::default());
        let (a, b) = (Rc::new(AccountQueue::default()), Rc::new(AccountQueue::default()));
        let log = RefCell::new(Vec::new());
        let mut first = order.ticket();
        first.bind(a.clone());
        let failing = order.ticket(); // fails validation later: dropped unbound
        let mut second = order.ticket();
        let mut other = order.ticket();
        let run = async {
            let holder = async {
                first.turn().await;
                log.borrow_mut().push("a0");
                rt.sleep(Duration::from_millis(50)).await;
                drop(first);
            };
            let fails = async {
                rt.sleep(Duration::from_millis(10)).await;
                drop(failing);
            };
            let next = async {
                second.bind(a.clone());
                second.turn().await;
                log.borrow_mut().push("a1");
                drop(second);
            };
            let elsewhere = async {
                rt.sleep(Duration::from_millis(20)).await;
                other.bind(b.clone());
                other.turn().await;
                log.borrow_mut().push("b");
                drop(other);
            };
            let tasks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>> =
                vec![Box::pin(holder), Box::pin(fails), Box::pin(next), Box::pin(elsewhere)];
            join_all(tasks).await;
        };
        rt.block_on(run).unwrap();
        assert_eq!(log.into_inner(), vec!["a0", "b", "a1"], "b never waits for account a's turn");
        assert_eq!(order.outstanding(), 0);
    }

    #[test]
    fn tickets_are_counted_until_dropped() {
        let order = Rc::new(SendOrder::default());
        let (first, mut second) = (order.ticket(), order.ticket());
        assert_eq!(order.outstanding(), 2);
        second.bind(Rc::new(AccountQueue::default()));
        assert_eq!(order.outstanding(), 2, "bound or not");
        drop(first);
        assert_eq!(order.outstanding(), 1);
        drop(second);
        assert_eq!(order.outstanding(), 0);
    }

    #[test]
    fn a_waiting_send_is_woken_by_an_older_ticket_binding_elsewhere_or_dropping() {
        // Each send polled only when its own waker fires (`join_many`): nothing
        // but the order's wake-ups can let the waiting one go.
        let rt = SimRuntime::new(1);
        let order = Rc::new(SendOrder::default());
        let (a, b) = (Rc::new(AccountQueue::default()), Rc::new(AccountQueue::default()));
        let log = RefCell::new(Vec::new());
        let (mut unbound, mut holder, mut waiter) = (order.ticket(), order.ticket(), order.ticket());
        holder.bind(a.clone());
        waiter.bind(a.clone());
        let (rt, entries) = (&rt, &log);
        let tasks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>> = vec![
            Box::pin(async move {
                rt.sleep(Duration::from_millis(10)).await;
                unbound.bind(b); // another account: it no longer holds account a's sends back
                unbound.turn().await;
                entries.borrow_mut().push(("elsewhere", rt.now().since_epoch().as_millis()));
            }),
            Box::pin(async move {
                holder.turn().await;
                rt.sleep(Duration::from_millis(20)).await;
                entries.borrow_mut().push(("holder", rt.now().since_epoch().as_millis()));
                drop(holder);
            }),
            Box::pin(async move {
                waiter.turn().await;
                entries.borrow_mut().push(("waiter", rt.now().since_epoch().as_millis()));
            }),
        ];
        rt.block_on(join_many(tasks)).unwrap();
        assert_eq!(log.into_inner(), vec![("elsewhere", 10), ("holder", 30), ("waiter", 30)]);
        // The holder waited for the older unbound ticket to bind (t = 10), held 20 ms.
    }
}
