//! Total outages: the pool-wide early-probe schedule while every endpoint
//! is Open, and the pacing of the whole pool once the fleet is back.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use crate::policy::slow_start::RateMeter;
use crate::policy::token_bucket::TokenBucket;
use crate::time::Instant;
use crate::wait_map::WaitMap;

mod probes;
pub use probes::OutageProbes;

/// Pacing of the whole pool after a total outage: every client held
/// requests while the fleet was down, and releasing them at once would
/// knock it over again. For a while the pool's attempts are capped at 1.3×
/// its own arrival rate before the outage (at least `RECOVERY_MIN_RPS`);
/// the cap goes once nothing was held back by it for two seconds. Because
/// every client caps itself relative to its own demand, a fleet of clients
/// together stays within 1.5× of the fleet's demand.
#[derive(Clone, Debug)]
pub struct Recovery {
    bucket: TokenBucket,
    started: Instant,
    denied_at: Option<Instant>,
    /// Logical requests that arrived since it started (`keep_up`).
    arrived: u32,
}

/// A pool's demand and its pacing after a total outage, together: in a
/// realm, members of the same fleet of endpoints hold one (their requests
/// come back from an outage together, so one pacer at 1.2× their summed
/// demand keeps the herd down however many members there are).
///
/// While it paces, the requests it holds go oldest first (`held`): the
/// backlog of an outage has the least of its deadlines left, and requests
/// arriving meanwhile have all of theirs. Taking turns at random instead,
/// the pacer's room (0.2× the demand beyond the new arrivals) drained the
/// backlog so slowly that a third of the reads held through a 5 s outage
/// passed 10 s deadlines ("100 in 4 processes: all down 5 s").
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Logical requests per second, counted as they arrive (a held
    /// request is not counted again).
    pub arrivals: RateMeter,
    /// The pacing in force, if any.
    pub recovery: Option<Recovery>,
    /// Every endpoint is open (as a selection last saw).
    pub outage: bool,
    /// The demand when a request was last served outside an outage: the
    /// outage's own slow arrivals are not in it (windows that closed while
    /// the pool was failing, before a selection saw every endpoint open,
    /// were: each outage then cut the demand a little more).
    served_demand: f64,
    /// The highest served demand lately (halving every five minutes), and
    /// when it was last updated: see `end_outage`.
    peak_demand: (f64, Instant),
    /// The demand when the outage began (what `end_outage` weighs the
    /// outage's own arrivals against).
    before_outage: f64,
    /// The requests it holds now, by when they began (ns since the epoch;
    /// the weight: how many began then). The relayer's one waiter map type
    /// (`wait_map`).
    held: WaitMap,
}

impl Pacer {
    /// A pacer with no demand measured yet.
    pub fn new(now: Instant) -> Self {
        Pacer {
            arrivals: RateMeter::new(now),
            recovery: None,
            outage: false,
            served_demand: 0.0,
            peak_demand: (0.0, now),
            before_outage: 0.0,
            held: WaitMap::new(),
        }
    }

    /// Every endpoint is down (a selection saw them all open): pacing left
    /// from an earlier outage ends (the one after this outage starts afresh)
    /// and the demand so far is remembered.
    pub fn begin_outage(&mut self) {
        if !std::mem::replace(&mut self.outage, true) {
            self.recovery = None;
            self.before_outage = self.served_demand;
        }
    }

    /// A request was served: outside an outage, the demand now is the
    /// demand before any outage that may come. (While pacing too: a bot
    /// that sends as it is answered then sends at the pace, 1.3× its rate
    /// before, and the pacing after its next outage starts from there, so
    /// a rate measured low once is not kept for good.)
    pub fn served(&mut self, now: Instant) {
        // The rate moves once per window: most successes change nothing.
        if !self.outage && self.arrivals.rate() != self.served_demand {
            self.served_demand = self.arrivals.rate();
            let (peak, at) = self.peak_demand;
            let halvings = now.saturating_since(at).as_secs_f64() / PEAK_HALF_LIFE.as_secs_f64();
            self.peak_demand = ((peak * 0.5f64.powf(halvings)).max(self.served_demand), now);
        }
    }

    /// Some endpoint serves again: the demand is what it was before the
    /// outage, unless the outage's arrivals say clearly otherwise.
    ///
    /// - Arrivals that collapsed below half say the callers send as they are
    ///   answered (a fixed number in flight): their demand is what the pool
    ///   could carry, so the highest demand served lately counts too (the
    ///   phase before the outage may have been a poor one: paced at 1.3×
    ///   the soak's key over quota with a node down, its healthy phases ran
    ///   at a quarter of the first).
    /// - Arrivals that grew by a quarter or more are new demand (callers
    ///   that keep sending, and more of them).
    /// - Anything between is the outage's noise and its stuck callers: the
    ///   demand before it stands. (Keeping what the outage taught let a bot
    ///   whose rate was already low lose a fifth of it per cycle: 5,700 →
    ///   700 answered per phase in the soak; raising it to whatever the
    ///   outage taught, the larger of two noisy estimates paced a fleet of
    ///   1,000 slow clients ~10 % above its demand.)
    pub fn end_outage(&mut self, now: Instant) {
        if !std::mem::take(&mut self.outage) {
            return;
        }
        let (during, before) = (self.arrivals.rate_so_far(now), self.before_outage);
        let demand = if during < before / 2.0 {
            before.max(self.peak_demand.0)
        } else if during >= 1.25 * before {
            during
        } else {
            before
        };
        if demand != during {
            self.arrivals.set_rate(demand);
            self.arrivals.restart(); // its window so far is the outage's too
        }
    }

    /// When the oldest request it holds began.
    pub fn oldest_held(&self) -> Option<Instant> {
        self.held.keys().next().map(|&ns| Instant::from_epoch(Duration::from_nanos(ns)))
    }

    fn hold(&mut self, since: Instant) {
        self.held.entry(held_key(since)).or_default().weight += 1.0;
    }

    fn unhold(&mut self, since: Instant) {
        let key = held_key(since);
        if let Some(held) = self.held.get_mut(&key) {
            held.weight -= 1.0;
            if held.weight < 1.0 {
                self.held.remove(&key);
            }
        }
    }
}

/// A held request's key: when it began, in ns since the epoch (584 years fit).
fn held_key(since: Instant) -> u64 {
    u64::try_from(since.since_epoch().as_nanos()).unwrap_or(u64::MAX)
}

/// A request's place in the pacer's line (it began at `since`), held while
/// the pacer is what it waits for; dropped (served, given up, aborted), the
/// place goes, so a request that left never blocks the line.
pub struct PacedTurn {
    pacer: Rc<RefCell<Pacer>>,
    since: Instant,
}

impl PacedTurn {
    /// Takes a place in `pacer`'s line for a request that began at `since`.
    pub fn take(pacer: &Rc<RefCell<Pacer>>, since: Instant) -> Self {
        pacer.borrow_mut().hold(since);
        PacedTurn { pacer: Rc::clone(pacer), since }
    }
}

impl Drop for PacedTurn {
    fn drop(&mut self) {
        if let Ok(mut pacer) = self.pacer.try_borrow_mut() {
            pacer.unhold(self.since);
        }
    }
}

/// Lowest pool rate after a total outage (a quiet wallet still gets a
/// request through every few seconds).
const RECOVERY_MIN_RPS: f64 = 0.2;
/// Pool rate after a total outage, relative to the arrival rate before it
/// (room to drain the held requests without exceeding 1.5× in total, with
/// the arrival estimate's noise).
const RECOVERY_FACTOR: f64 = 1.3;
/// How fast the highest demand served lately is forgotten (`Pacer::end_outage`).
const PEAK_HALF_LIFE: Duration = Duration::from_secs(300);
/// The recovery pacer's burst, in time at its rate.
const RECOVERY_BURST: Duration = Duration::from_millis(20);
/// Arrivals, and time, before the pace follows the demand measured while
/// pacing (`Recovery::keep_up`): a mean over less is noise.
const KEEP_UP_EVENTS: u32 = 20;
const KEEP_UP_SPAN: Duration = Duration::from_secs(2);
/// Longest recovery pacing, whatever happens.
const RECOVERY_MAX: Duration = Duration::from_secs(60);

/// What recovery pacing says about one more attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Pacing is over; drop it.
    Over,
    /// Go.
    Go,
    /// Not for this long.
    Wait(Duration),
}

impl Recovery {
    /// Starts pacing at `RECOVERY_FACTOR` × the pre-outage arrival rate.
    pub fn start(arrival_rps: f64, now: Instant) -> Self {
        Self::start_at(RECOVERY_FACTOR, arrival_rps, now)
    }

    /// Pacing at `factor` × the arrival rate (a realm's members, which
    /// all come back at once, leave less room: `router/shared.rs`).
    pub fn start_at(factor: f64, arrival_rps: f64, now: Instant) -> Self {
        let rate = (factor * arrival_rps).max(RECOVERY_MIN_RPS);
        // Room for the attempts of one timer tick: with a burst of one, a
        // pace above ~1,000/s could not be met (a request held wakes a
        // millisecond later at best and took one token): the soak, paced at
        // 1,800/s, got 670/s through.
        let burst = (rate * RECOVERY_BURST.as_secs_f64()).max(1.0);
        Recovery { bucket: TokenBucket::new(rate, burst, now, false), started: now, denied_at: None, arrived: 0 }
    }

    /// One logical request arrived while it paces.
    pub fn arrival(&mut self) {
        self.arrived = self.arrived.saturating_add(1);
    }

    /// Never paces below the demand measured while it paces: once
    /// `KEEP_UP_EVENTS` requests arrived, the pace is at least their rate
    /// since it started (it never falls). Set from a demand measured low
    /// (a meter still catching up with callers that started lately, or a
    /// few requests a second whose one-second windows are mostly noise),
    /// a pace below the arrivals let the line grow for the whole minute of
    /// pacing, and requests made seconds after the fleet was back waited
    /// out their deadlines behind it: 4 processes at 2.5 reads a second
    /// each lost 1-8 % of their reads after a 5 s outage with 10 s
    /// deadlines. At the arrivals themselves, not the start's factor × them: above
    /// them, the noise of the measure went into the peak (1.36× after a
    /// 5 s outage against a bound of 1.3×), and the line of a fleet that
    /// was measured right still drains at the pace it was given.
    pub fn keep_up(&mut self, now: Instant) {
        let secs = now.saturating_since(self.started).as_secs_f64();
        if self.arrived < KEEP_UP_EVENTS || secs < KEEP_UP_SPAN.as_secs_f64() {
            return;
        }
        let rate = f64::from(self.arrived) / secs;
        if rate.is_finite() && rate > self.bucket.rate() {
            self.bucket.set_rate(now, rate);
            self.bucket.set_burst(now, (rate * RECOVERY_BURST.as_secs_f64()).max(1.0));
        }
    }

    /// Whether one more attempt fits now (the caller takes the token on reserve).
    pub fn check(&mut self, now: Instant) -> Pace {
        let calm = self.denied_at.is_none_or(|t| now.saturating_since(t) >= Duration::from_secs(2));
        let age = now.saturating_since(self.started);
        if (calm && age >= Duration::from_secs(2)) || age >= RECOVERY_MAX {
            return Pace::Over;
        }
        match self.bucket.check(now, 1.0) {
            Ok(()) => Pace::Go,
            Err(wait) => {
                self.denied_at = Some(now);
                Pace::Wait(wait)
            }
        }
    }

    /// The pacing rate (attempts per second).
    pub fn rate(&self) -> f64 {
        self.bucket.rate()
    }

    /// The time between two attempts at the pacing rate.
    pub fn interval(&self) -> Duration {
        Duration::try_from_secs_f64(1.0 / self.bucket.rate()).unwrap_or(Duration::from_secs(5))
    }

    /// Takes the token of a reserved attempt.
    pub fn take(&mut self, now: Instant) {
        let _ = self.bucket.try_take(now, 1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::time::at;

    #[test]
    fn the_held_line_counts_requests_begun_at_one_instant_and_keeps_them_until_the_last_leaves() {
        let pacer = Rc::new(RefCell::new(Pacer::new(at(0))));
        let (first, second) = (PacedTurn::take(&pacer, at(100)), PacedTurn::take(&pacer, at(100)));
        let later = PacedTurn::take(&pacer, at(250));
        assert_eq!(pacer.borrow().oldest_held(), Some(at(100)));
        drop(first);
        assert_eq!(pacer.borrow().oldest_held(), Some(at(100)), "the other one begun then still waits");
        drop(second);
        assert_eq!(pacer.borrow().oldest_held(), Some(at(250)));
        drop(later);
        assert_eq!(pacer.borrow().oldest_held(), None);
    }

    #[test]
    fn recovery_paces_at_the_demand_and_ends_when_calm() {
        let mut r = Recovery::start(10.0, at(1000)); // 13 attempts/s
        assert!(matches!(r.check(at(1000)), Pace::Wait(_)), "the bucket starts empty");
        assert_eq!(r.check(at(1100)), Pace::Go);
        r.take(at(1100));
        assert!(matches!(r.check(at(1110)), Pace::Wait(_)), "a backlog is held back");
        // Still held back 1.9 s later: pacing goes on past 2 s.
        r.take(at(3000));
        assert!(matches!(r.check(at(3000)), Pace::Wait(_)));
        assert_eq!(r.check(at(3100)), Pace::Go);
        assert_eq!(r.check(at(5001)), Pace::Over, "two seconds without holding anything back");
        let mut r = Recovery::start(0.0, at(0));
        assert!(matches!(r.check(at(1000)), Pace::Wait(w) if w == Duration::from_secs(4)), "0.2/s for a quiet client");
        assert_eq!(Recovery::start(1.0, at(0)).check(at(61_000)), Pace::Over, "never longer than a minute");
    }

    #[test]
    fn a_fast_pace_is_met_by_requests_that_wake_a_millisecond_apart() {
        let mut r = Recovery::start(1000.0, at(0)); // 1,300 a second
        let mut gone = 0;
        for ms in 1..=100 {
            while r.check(at(ms)) == Pace::Go {
                r.take(at(ms));
                gone += 1;
            }
        }
        assert!((125..=130).contains(&gone), "{gone} in 100 ms (one a wake-up: 100)");
    }
}
