//! The requests waiting for a quota group's compute units, in turn.
//!
//! A plan's refill goes to the request that has waited longest for it
//! (by when it began: a retry keeps its request's place), and a request
//! behind others takes none while they wait. Without a turn, each waiter
//! woke on its own timer and the first to look took the refill: a large
//! charge never saw enough CU gather while 1 CU reads kept taking it, and
//! reads of a fleet beside a slow store were overtaken twenty times in a
//! run, some failing with `RateLimitedError` after 9.9 s of a 10 s deadline
//! that the line's length had promised to meet.
//!
//! ```text
//!   join(place)   a request starts waiting (place: its start in ms, then an order: `line_place`)
//!   head          the lowest place: the only one the group's CU may go to
//!   leave(place)  served, gone, or held by something else now; when the head
//!                 leaves, the next one is woken (`wait_turn` left its waker)
//! ```
//! Every operation is O(log n) in the waiters: thousands waiting cost each
//! other nothing but their turn.

use std::task::Waker;
use std::time::Duration;

use super::QuotaDenied;
use crate::time::Instant;
use crate::wait_map::{WaitMap, Waiting};

/// Bits of a place for the order of joining within one millisecond.
const ORDER_BITS: u32 = 20;

/// The place of a request that began at `since`, `order` telling apart
/// those of one millisecond (its low bits only): its start in ms, then the
/// order, so places sort by start and the line knows each one's wait.
pub fn line_place(since: Instant, order: u64) -> u64 {
    let ms = u64::try_from(since.since_epoch().as_millis()).unwrap_or(u64::MAX);
    (ms.min((1 << (64 - ORDER_BITS)) - 1) << ORDER_BITS) | (order & ((1 << ORDER_BITS) - 1))
}

/// How long a request costing `cost` would wait behind a line whose
/// requests cost `own` CU, paid at `rate` CU/s; or, when the fleet's store
/// said it (`fleet`: the other members' lines in CU and the fleet's rate in
/// CU/s), behind the fleet's whole line at the fleet's rate, so every
/// member reckons alike. `None` when there is no rate to wait on. Pure, so
/// the shedding at arrival (`PlanLine::wait_for`) and the simulations of
/// it (`overload_split_sim_tests.rs`) reckon one way.
pub fn line_wait(own: f64, cost: f64, rate: f64, fleet: Option<(f64, f64)>) -> Option<Duration> {
    let span = |cu: f64, rate: f64| Duration::from_secs_f64((cu.max(0.0) / rate).min(86_400.0));
    match fleet {
        Some((others, fleet_rate)) if fleet_rate > 0.0 && (own + others + cost).is_finite() => {
            Some(span(own + others + cost, fleet_rate))
        }
        _ => (rate.is_finite() && rate > 0.0 && (own + cost).is_finite()).then(|| span(own + cost, rate)),
    }
}

/// The waiting requests of one group, by place.
#[derive(Debug, Default)]
pub struct QuotaLine {
    /// Each place, its request's cost (CU, the weight) and its waker while it waits for its turn.
    places: WaitMap,
    /// What the waiting requests cost together (CU).
    cu: f64,
}

impl QuotaLine {
    /// A request of `cost` CU takes `place` (unique among the waiters: `pool::router::backlog`).
    pub fn join(&mut self, place: u64, cost: f64) {
        let cost = if cost.is_finite() { cost.max(0.0) } else { 0.0 };
        if self.places.insert(place, Waiting { weight: cost, waker: None }).is_none() {
            self.cu += cost;
        }
    }

    /// A request leaves `place`; the new head, if the head left, is woken.
    pub fn leave(&mut self, place: u64) {
        let was_head = self.head() == Some(place);
        if let Some(left) = self.places.remove(&place) {
            self.cu = if self.places.is_empty() { 0.0 } else { (self.cu - left.weight).max(0.0) };
        }
        if was_head {
            if let Some(waker) = self.places.values_mut().next().and_then(|w| w.waker.take()) {
                waker.wake();
            }
        }
    }

    /// The place whose turn it is.
    pub fn head(&self) -> Option<u64> {
        self.places.keys().next().copied()
    }

    /// Whether someone waits ahead of `place` (`None`: a request not in the
    /// line, behind everyone in it).
    pub fn ahead_of(&self, place: Option<u64>) -> bool {
        match (self.head(), place) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(head), Some(place)) => head < place,
        }
    }

    /// `waker` is woken when `place` becomes the head.
    pub fn wait_turn(&mut self, place: u64, waker: &Waker) {
        if let Some(waiting) = self.places.get_mut(&place) {
            waiting.refresh(waker);
        }
    }

    /// How long the head (the oldest waiting) has waited at `now`; `None`
    /// when none waits.
    pub fn oldest_wait(&self, now: Instant) -> Option<Duration> {
        let start_ms = self.head()? >> ORDER_BITS;
        let now_ms = u64::try_from(now.since_epoch().as_millis()).unwrap_or(u64::MAX);
        Some(Duration::from_millis(now_ms.saturating_sub(start_ms)))
    }

    /// How many wait.
    pub fn waiting(&self) -> u32 {
        u32::try_from(self.places.len()).unwrap_or(u32::MAX)
    }

    /// What the waiting requests cost together (CU): the line's length in
    /// the plan's terms (a 20 CU call behind 35 reads of 1 CU waits for 35
    /// CU, not for 35 calls like itself).
    pub fn cu(&self) -> f64 {
        self.cu
    }
}

/// A quota group's line, as the router and the pipeline see it (`pool::router::backlog`).
impl super::QuotaGroup {
    /// A request of `cost` CU starts waiting for this group's CU, at `place` (its turn).
    pub fn join_line(&mut self, place: u64, cost: f64) {
        self.line.join(place, cost);
    }

    /// A request stops waiting for this group's CU (served, gone, or held
    /// by something else): the next one's turn, if it was the head.
    pub fn leave_line(&mut self, place: u64) {
        self.line.leave(place);
    }

    /// Requests waiting for this group's CU now, from every relayer sharing it.
    pub fn line(&self) -> u32 {
        self.line.waiting()
    }

    /// What those requests cost together (CU).
    pub fn line_cu(&self) -> f64 {
        self.line.cu()
    }

    /// Whether a request at `place` (`None`: not waiting) has others ahead
    /// of it in this group's line: then the CU the group has are theirs.
    pub fn line_ahead_of(&self, place: Option<u64>) -> bool {
        self.line.ahead_of(place)
    }

    /// [`check`](super::QuotaGroup::check) for a request at `place` in this
    /// group's line (`None`: not in it, so behind all of it). The CU the
    /// group has are for the requests waiting, oldest first: one with
    /// others ahead is told to wait a refill of its `cost`, and is woken
    /// when its turn comes (`router::backlog::InLine::turn`). A plain
    /// `check` is out of turn: for probes, which go before the line on
    /// purpose (an outage's early probe, a capacity probe).
    pub fn check_in_turn(&mut self, now: Instant, cost: f64, place: Option<u64>) -> Result<(), QuotaDenied> {
        self.check(now, cost)?;
        self.turn(now, cost, place)
    }

    /// [`check_quietly`](super::QuotaGroup::check_quietly), in turn as
    /// [`check_in_turn`](super::QuotaGroup::check_in_turn).
    pub fn check_quietly_in_turn(&mut self, now: Instant, cost: f64, place: Option<u64>) -> Result<(), QuotaDenied> {
        self.check_quietly(now, cost)?;
        self.turn(now, cost, place)
    }

    fn turn(&mut self, now: Instant, cost: f64, place: Option<u64>) -> Result<(), QuotaDenied> {
        if !self.line.ahead_of(place) {
            return Ok(());
        }
        let rate = self.serving_rate(now);
        let refill = if rate.is_finite() && rate > 0.0 { crate::policy::bound(cost / rate, 0.001, 1.0) } else { 0.1 };
        Err(QuotaDenied::Exhausted(std::time::Duration::from_secs_f64(refill)))
    }

    /// Whether `place` is this group's head (its turn to take the CU).
    pub fn line_head_is(&self, place: u64) -> bool {
        self.line.head() == Some(place)
    }

    /// `waker` is woken when `place` becomes the head.
    pub fn wait_turn(&mut self, place: u64, waker: &std::task::Waker) {
        self.line.wait_turn(place, waker);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_wait_is_the_fleets_whole_line_at_its_rate_when_the_store_said_it_else_the_own_line_at_the_own_rate() {
        use super::line_wait;
        use std::time::Duration;
        let ms = |ms: u64| Some(Duration::from_millis(ms));
        assert_eq!(line_wait(9.0, 1.0, 20.0, None), ms(500), "10 CU at 20 CU/s");
        assert_eq!(line_wait(9.0, 1.0, 20.0, Some((30.0, 80.0))), ms(500), "40 CU at the fleet's 80 CU/s");
        assert_eq!(line_wait(9.0, 1.0, 20.0, Some((30.0, 0.0))), ms(500), "no fleet rate: its own line");
        assert_eq!(line_wait(9.0, 1.0, f64::INFINITY, None), None, "no rate to wait on");
        assert_eq!(line_wait(9.0, 1.0, 0.0, None), None);
        assert_eq!(line_wait(9.0, f64::NAN, 20.0, Some((30.0, 80.0))), None, "nonsense waits on nothing");
        assert_eq!(line_wait(1e12, 1.0, 1.0, None), Some(Duration::from_secs(86_400)), "at most a day");
    }

    #[test]
    fn a_check_in_turn_leaves_the_groups_cu_to_the_requests_ahead() {
        use crate::policy::quota::{QuotaConfig, QuotaGroup};
        use crate::time::at;
        let plan = QuotaConfig { cu_per_second: 10.0, ..QuotaConfig::default() };
        let mut g = QuotaGroup::new(plan, at(0));
        assert_eq!(g.check_in_turn(at(0), 1.0, None), Ok(()), "nobody waiting: as a plain check");
        g.join_line(10, 1.0);
        g.join_line(20, 1.0);
        assert_eq!(g.check_in_turn(at(0), 1.0, Some(10)), Ok(()), "the head's turn");
        let behind = g.check_in_turn(at(0), 2.0, Some(20));
        assert!(
            matches!(behind, Err(QuotaDenied::Exhausted(wait)) if wait.as_millis() == 200),
            "a refill of its cost: {behind:?}"
        );
        assert!(g.check_quietly_in_turn(at(0), 1.0, None).is_err(), "not in the line: behind all of it");
        assert_eq!(g.check(at(0), 1.0), Ok(()), "a probe checks out of turn");
        g.leave_line(10);
        g.leave_line(20);
        assert_eq!(g.check_in_turn(at(0), 1.0, None), Ok(()));
    }

    #[test]
    fn the_oldest_place_is_served_first_and_the_next_is_woken_when_it_leaves() {
        let mut line = QuotaLine::default();
        assert!(!line.ahead_of(None), "an empty line holds nobody");
        line.join(30, 1.0);
        line.join(10, 20.0);
        line.join(20, 1.0);
        assert_eq!(line.cu(), 22.0);
        assert_eq!(line.head(), Some(10), "by place, not by who joined first");
        assert!(line.ahead_of(None), "a newcomer is behind everyone");
        assert!(line.ahead_of(Some(20)));
        assert!(!line.ahead_of(Some(10)));
        assert!(!line.ahead_of(Some(5)), "an older request (a retry) goes first");
        let (second, third) = (Arc::new(Count(AtomicUsize::new(0))), Arc::new(Count(AtomicUsize::new(0))));
        line.wait_turn(20, &Waker::from(second.clone()));
        line.wait_turn(30, &Waker::from(third.clone()));
        line.leave(30);
        assert_eq!(second.0.load(Ordering::SeqCst), 0, "one behind the head left: nobody's turn came");
        line.leave(10);
        assert_eq!(second.0.load(Ordering::SeqCst), 1, "the head left: the next one's turn");
        assert_eq!(third.0.load(Ordering::SeqCst), 0);
        assert_eq!((line.head(), line.waiting(), line.cu()), (Some(20), 1, 1.0));
        line.leave(20);
        assert_eq!(line.waiting(), 0);
    }
}
