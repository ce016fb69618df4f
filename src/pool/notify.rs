//! A single-threaded "something changed" signal: requests waiting for a
//! free endpoint sleep until their recheck time *or* until an attempt
//! completes and frees a slot, whichever comes first.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Wakes every waiter on `notify_all`.
#[derive(Default)]
pub struct Notify {
    epoch: Cell<u64>,
    waiters: RefCell<Vec<Waker>>,
}

impl Notify {
    /// Wakes everyone waiting now.
    pub fn notify_all(&self) {
        self.epoch.set(self.epoch.get().wrapping_add(1));
        let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
        waiters.into_iter().for_each(Waker::wake);
    }

    /// Completes at the next `notify_all`.
    pub fn notified(&self) -> Notified<'_> {
        Notified { notify: self, epoch: self.epoch.get() }
    }
}

/// The future of [`Notify::notified`].
pub struct Notified<'a> {
    notify: &'a Notify,
    epoch: u64,
}

impl Future for Notified<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.notify.epoch.get() != self.epoch {
            return Poll::Ready(());
        }
        self.notify.waiters.borrow_mut().push(cx.waker().clone());
        Poll::Pending
    }
}

/// Completes when either future completes (the other is dropped).
pub async fn either<A: Future<Output = ()>, B: Future<Output = ()>>(a: A, b: B) {
    let mut a = std::pin::pin!(a);
    let mut b = std::pin::pin!(b);
    std::future::poll_fn(|cx| {
        if a.as_mut().poll(cx).is_ready() || b.as_mut().poll(cx).is_ready() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await
}
