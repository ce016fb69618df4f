//! An endpoint reservation held by one attempt, in the manner of tower's
//! `ConcurrencyLimit` permit: the router's slot, breaker probe permit and
//! outage-probe flag are given back exactly once, either with the attempt's
//! verdict ([`Permit::complete`]: breaker, quota and latency learn from it)
//! or, when the attempt never ran or was dropped unfinished (the relayer
//! closed, a hedge was not needed, a chain check voided it), on drop, with
//! nothing learned. No path can leak a slot or forget to wake a waiter.
//!
//! ```text
//!   Router::select ── Reserved(r) ──► Permit::new
//!   Permit::complete(verdict) ──────► Router::complete, events, wake a waiter
//!   dropped uncompleted ────────────► Router::release, wake a waiter
//! ```

use std::time::Duration;

use super::context::RequestContext;
use super::Pipeline;
use crate::policy::Verdict;
use crate::pool::events::PipelineEvent;
use crate::pool::router::{Reservation, RouterEvent};
use crate::runtime::Runtime;
use crate::time::Instant;

/// A reservation that gives itself back.
pub(super) struct Permit<'p> {
    pipeline: &'p Pipeline,
    reservation: Option<Reservation>,
}

/// What an attempt needs to know of its reservation.
#[derive(Clone, Copy, Debug)]
pub(super) struct Target {
    /// The endpoint reserved.
    pub endpoint: usize,
    /// Its chain id must be checked before the request.
    pub check_chain: bool,
}

impl<'p> Permit<'p> {
    /// Takes ownership of a reservation the router made.
    pub fn new(pipeline: &'p Pipeline, reservation: Reservation) -> Self {
        Permit { pipeline, reservation: Some(reservation) }
    }

    /// The endpoint reserved.
    pub fn endpoint(&self) -> usize {
        self.target().endpoint
    }

    /// Where the attempt goes and whether its chain is checked first.
    pub fn target(&self) -> Target {
        let r = self.reservation.as_ref();
        Target { endpoint: r.map_or(usize::MAX, |r| r.endpoint), check_chain: r.is_some_and(|r| r.check_chain) }
    }

    /// Gives the reservation back with the attempt's verdict, emits what
    /// changed (breaker, quota) and wakes a waiter.
    pub fn complete<R: Runtime, F>(
        mut self,
        cx: &RequestContext<'_, R, F>,
        now: Instant,
        verdict: &Verdict,
        elapsed: Duration,
    ) {
        if let Some(r) = self.reservation.take() {
            self.pipeline.release(cx, now, &r, verdict, elapsed);
        }
    }
}

impl Pipeline {
    /// Gives a reservation back, emits what changed, wakes waiters.
    fn release<R: Runtime, F>(
        &self,
        cx: &RequestContext<'_, R, F>,
        now: Instant,
        reservation: &Reservation,
        verdict: &Verdict,
        elapsed: Duration,
    ) {
        let (info, emit) = (&cx.info, cx.emit);
        let (events, news) = {
            let mut router = self.router.borrow_mut();
            let events = router.complete(now, reservation, verdict, info.class, elapsed, cx.runtime.random_unit());
            (events, router.take_news())
        };
        for news in news {
            emit(PipelineEvent::News(news));
        }
        for event in events {
            match event {
                RouterEvent::Breaker { endpoint, transition } => {
                    emit(PipelineEvent::Breaker { endpoint, from: transition.from, to: transition.to })
                }
                RouterEvent::RateLimited { endpoint, group, until, long_horizon } => {
                    let name = self.router.borrow().groups.get(group).map(|g| g.name.clone()).filter(|n| !n.is_empty());
                    emit(PipelineEvent::RateLimited {
                        endpoint,
                        group: name,
                        until,
                        cooldown: until.saturating_since(now),
                        long_horizon,
                    })
                }
                RouterEvent::ChainMismatch { endpoint, expected, got } => {
                    emit(PipelineEvent::ChainMismatch { endpoint, expected, got })
                }
            }
        }
        self.wake_waiters(reservation.check_chain);
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if let Some(r) = self.reservation.take() {
            // Never held across a borrow of the router; if it ever were, the
            // slot is better leaked than a panic in a destructor.
            if let Ok(mut router) = self.pipeline.router.try_borrow_mut() {
                router.release(&r);
            }
            self.pipeline.wake_waiters(r.check_chain);
        }
    }
}
