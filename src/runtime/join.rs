//! Future combinators that need no runtime: used by the product (joins of
//! concurrent attempts, head polls) and by the simulated runtime's tests.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// Runs several futures concurrently and returns their outputs in order
/// (a minimal `join_all` without a dependency).
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

/// Like [`join_all`], but each future has a waker of its own, so a wake-up
/// polls only the future it concerns (O(1), not O(n)): what a test of
/// 100,000 concurrent requests needs to measure the code under test and not
/// the harness.
pub async fn join_many<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    struct Shared {
        ready: Mutex<Vec<usize>>,
        parent: Mutex<Option<Waker>>,
    }
    struct Child {
        index: usize,
        shared: Arc<Shared>,
    }
    impl std::task::Wake for Child {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            if let Ok(mut ready) = self.shared.ready.lock() {
                ready.push(self.index);
            }
            if let Some(parent) = self.shared.parent.lock().ok().and_then(|p| p.clone()) {
                parent.wake();
            }
        }
    }
    let n = futures.len();
    let shared = Arc::new(Shared { ready: Mutex::new((0..n).collect()), parent: Mutex::new(None) });
    let wakers: Vec<Waker> =
        (0..n).map(|index| Waker::from(Arc::new(Child { index, shared: shared.clone() }))).collect();
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = (0..n).map(|_| None).collect();
    let mut remaining = n;
    std::future::poll_fn(move |cx| {
        if let Ok(mut parent) = shared.parent.lock() {
            *parent = Some(cx.waker().clone());
        }
        loop {
            let batch = shared.ready.lock().map(|mut r| std::mem::take(&mut *r)).unwrap_or_default();
            if batch.is_empty() {
                break;
            }
            for i in batch {
                if outputs[i].is_some() {
                    continue;
                }
                if let Poll::Ready(v) = futures[i].as_mut().poll(&mut Context::from_waker(&wakers[i])) {
                    outputs[i] = Some(v);
                    remaining -= 1;
                }
            }
        }
        if remaining == 0 {
            Poll::Ready(outputs.iter_mut().filter_map(Option::take).collect())
        } else {
            Poll::Pending
        }
    })
    .await
}
