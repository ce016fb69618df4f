//! A realm's lease on a quota group's fleet-wide bucket, kept in a store
//! that processes and machines share (Redis, through the wrapper).
//!
//! Many processes behind one API key must send, together, what one would:
//! the store holds one token bucket per group key, and each realm leases
//! compute units from it in chunks sized to its own recent rate, *ahead of
//! need* (a new chunk is asked while half the last one is left), so a
//! request spends from what its realm already holds and never waits on a
//! store round trip while the store keeps up. The store being slow, down or
//! empty never fails a request: an ask unanswered for one lease period
//! counts as a failure, and a realm whose store failed spends from its own
//! bucket (the group's local policies, as if alone) until an ask succeeds
//! again.
//!
//! ```text
//!            charge/check with no ask out, past any backoff:
//!            held < half a chunk (or expired) ──► ask(chunk)   (one out at a time)
//!
//!   Local ──ask answered──► Leased ──ask failed, or unanswered one period──► Local
//!     ▲  (own bucket)         │ spend held CU; held expires two periods      │
//!     │                       │ after its grant (no hoard for later bursts)  │
//!     └── ask failed ─────────┴──────────────────────────────────────────────┘
//!         (next ask after period × 2^(failures−1), at most 8 periods)
//!
//!   Leased, held < cost:  an ask out ─► wait for its answer (≤ one period)
//!                         the store had too little ─► wait until it said
//! ```
//!
//! Pure: time is an argument. The unknown plan (no rate to enforce yet) is
//! never waited on: its asks only tell the store what the realm sends, so
//! that the first 429 can teach every member the fleet's rate, not its own.

use std::time::Duration;

use crate::time::Instant;

/// How long an ask may stay unanswered, and a chunk's worth of sending.
pub const DEFAULT_PERIOD: Duration = Duration::from_secs(1);

/// The most asks a realm has out for one group: one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeaseAsk {
    /// Compute units wanted.
    pub want: f64,
    /// The fleet's allowed rate as this realm knows it (CU/s); zero for an
    /// unknown plan (the store grants all and only counts).
    pub rate: f64,
    /// The bucket's burst (CU).
    pub burst: f64,
}

/// The store's answer to an ask.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeaseGrant {
    /// Compute units granted (≤ wanted; zero when the bucket was empty).
    pub granted: f64,
    /// When less than wanted was granted: how long until the bucket holds the rest.
    pub short_for: Duration,
    /// What the whole fleet took from this bucket lately (CU/s).
    pub fleet_rate: f64,
}

impl LeaseGrant {
    /// An answer read from the store (through the host), or `None` for one
    /// that cannot be trusted (not numbers, negative, more than `want`):
    /// a broken or hostile store counts as a failed ask, never as quota.
    pub fn read(want: f64, granted: f64, short_for_ms: f64, fleet_rate: f64) -> Option<LeaseGrant> {
        let sane = |x: f64| x.is_finite() && x >= 0.0;
        // The store prints numbers to 17 significant digits; one that rounds up past
        // `want` by a hair is `want`, more is a broken answer.
        if !(sane(granted) && sane(short_for_ms) && sane(fleet_rate)) || granted > want * (1.0 + 1e-9) {
            return None;
        }
        let granted = granted.min(want);
        let short_for = Duration::from_secs_f64(short_for_ms.min(3_600_000.0) / 1000.0);
        Some(LeaseGrant { granted, short_for, fleet_rate })
    }
}

/// One realm's lease on one group's fleet bucket (see the module doc).
#[derive(Clone, Debug)]
pub struct Lease {
    period: Duration,
    up: bool,
    held: f64,
    expires: Instant,
    /// The ask out, since when.
    out: Option<Instant>,
    retry_at: Instant,
    failures: u32,
    short_until: Instant,
    fleet_rate: f64,
    /// The largest single charge seen: a chunk always covers a few.
    largest: f64,
}

impl Lease {
    /// A lease not yet granted (the realm spends from its own bucket).
    pub fn new(period: Duration) -> Self {
        Lease {
            period,
            up: false,
            held: 0.0,
            expires: Instant::ZERO,
            out: None,
            retry_at: Instant::ZERO,
            failures: 0,
            short_until: Instant::ZERO,
            fleet_rate: 0.0,
            largest: 1.0,
        }
    }

    /// Whether spending goes through the lease (the store answered and has
    /// not failed since); otherwise the group's own bucket governs.
    pub fn up(&mut self, now: Instant) -> bool {
        self.expire_ask(now);
        self.up
    }

    /// Compute units held and still valid at `now`.
    pub fn held(&self, now: Instant) -> f64 {
        if now < self.expires {
            self.held
        } else {
            0.0
        }
    }

    /// What the fleet took lately, as the store last said (CU/s).
    pub fn fleet_rate(&self) -> f64 {
        self.fleet_rate
    }

    /// Whether `cost` can be spent now under the lease, or how long until
    /// it could (an ask's answer, or the store's refill). Always yes while
    /// the lease is not up or the plan is unknown (`limited` false).
    pub fn check(&mut self, now: Instant, cost: f64, limited: bool) -> Result<(), Duration> {
        self.largest = self.largest.max(cost);
        if !self.up(now) || !limited || self.held(now) >= cost {
            return Ok(());
        }
        if now < self.short_until {
            return Err(self.short_until.saturating_since(now));
        }
        // An ask out is answered (wakes the realm) or times out within a period.
        Err(self.out.map_or(Duration::from_millis(1), |since| (since + self.period).saturating_since(now)))
    }

    /// Spends `cost` (after a `check` that said yes).
    pub fn spend(&mut self, now: Instant, cost: f64, limited: bool) {
        if self.up(now) && limited {
            self.held = (self.held(now) - cost).max(0.0);
        }
    }

    /// The ask to send now, if one is due: none is out, no backoff or
    /// shortage is running, and less than half a chunk is held. A chunk is
    /// one period of `recent_rate` (the realm's CU/s), at least a few of
    /// the largest charges.
    pub fn ask(&mut self, now: Instant, recent_rate: f64, rate: f64, burst: f64) -> Option<LeaseAsk> {
        self.expire_ask(now);
        if self.out.is_some() || now < self.retry_at || now < self.short_until {
            return None;
        }
        let chunk = (recent_rate * self.period.as_secs_f64()).max(4.0 * self.largest);
        let chunk = if rate.is_finite() && rate > 0.0 { chunk.min(burst.max(self.largest)) } else { chunk };
        if self.up && self.held(now) >= chunk / 2.0 {
            return None;
        }
        self.out = Some(now);
        Some(LeaseAsk { want: chunk, rate: if rate.is_finite() { rate } else { 0.0 }, burst })
    }

    /// The store answered the ask out.
    pub fn granted(&mut self, now: Instant, want: f64, grant: LeaseGrant) {
        if self.out.take().is_none() {
            return; // an answer after its ask was given up: the failure stands
        }
        self.held = self.held(now) + grant.granted.max(0.0);
        self.expires = now + self.period * 2;
        self.up = true;
        self.failures = 0;
        self.fleet_rate = grant.fleet_rate.max(0.0);
        if grant.granted < want {
            self.short_until = now + grant.short_for.min(self.period);
        }
    }

    /// The ask out failed (the store is down, refused, or broke the script).
    pub fn failed(&mut self, now: Instant) {
        if self.out.take().is_some() {
            self.fail(now);
        }
    }

    /// The store is reachable again (the host saw its connection come
    /// back): the next charge asks at once instead of after its backoff.
    pub fn store_back(&mut self) {
        self.retry_at = Instant::ZERO;
        self.failures = 0;
    }

    /// An ask unanswered for one period is a failure.
    fn expire_ask(&mut self, now: Instant) {
        if self.out.is_some_and(|since| now.saturating_since(since) >= self.period) {
            self.out = None;
            self.fail(now);
        }
    }

    fn fail(&mut self, now: Instant) {
        self.up = false;
        self.held = 0.0;
        self.failures = self.failures.saturating_add(1);
        self.retry_at = now + self.period * (1u32 << (self.failures - 1).min(3));
    }
}

/// The store's side of a lease: one fleet bucket, as the wrapper's Redis
/// script keeps it (`pkg-template/src/fleet-store.js`; the contract is in
/// docs/coordination.md). Here for the simulated store and as the
/// contract's reference: refill at the asker's `rate` up to `burst` (a new
/// bucket starts full), grant what is there up to `want`, and count what the
/// fleet takes (decayed over 10 s). `rate` 0: the plan is unknown, grant all.
#[derive(Clone, Copy, Debug, Default)]
pub struct FleetBucket {
    tokens: Option<f64>,
    at: Option<Instant>,
    spent: f64,
}

impl FleetBucket {
    /// One ask at `now`.
    pub fn ask(&mut self, now: Instant, ask: LeaseAsk) -> LeaseGrant {
        let dt_ms = self.at.map_or(0.0, |at| now.saturating_since(at).as_secs_f64() * 1000.0);
        let (granted, short_ms) = if ask.rate > 0.0 {
            let tokens = (self.tokens.unwrap_or(ask.burst) + dt_ms * ask.rate / 1000.0).min(ask.burst);
            let granted = ask.want.min(tokens).max(0.0);
            self.tokens = Some(tokens - granted);
            let short = if granted < ask.want { ((ask.want - granted) * 1000.0 / ask.rate).ceil() } else { 0.0 };
            (granted, short)
        } else {
            self.tokens = Some(ask.burst);
            (ask.want, 0.0)
        };
        self.spent = self.spent * (-dt_ms / 10_000.0).exp() + granted;
        self.at = Some(now);
        LeaseGrant { granted, short_for: Duration::from_secs_f64(short_ms / 1000.0), fleet_rate: self.spent / 10.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_epoch(Duration::from_millis(ms))
    }

    fn grant(granted: f64) -> LeaseGrant {
        LeaseGrant { granted, short_for: Duration::from_millis(250), fleet_rate: 40.0 }
    }

    #[test]
    fn a_lease_is_asked_ahead_of_need_and_spent_without_waiting() {
        let mut lease = Lease::new(DEFAULT_PERIOD);
        assert!(!lease.up(at(0)), "before any answer the group's own bucket governs");
        assert_eq!(lease.check(at(0), 10.0, true), Ok(()));
        let ask = lease.ask(at(0), 100.0, 500.0, 1000.0).expect("the first ask");
        assert_eq!(ask, LeaseAsk { want: 100.0, rate: 500.0, burst: 1000.0 });
        assert_eq!(lease.ask(at(1), 100.0, 500.0, 1000.0), None, "one ask out at a time");
        lease.granted(at(20), ask.want, grant(100.0));
        assert!(lease.up(at(20)));
        assert_eq!(lease.fleet_rate(), 40.0);
        for _ in 0..5 {
            assert_eq!(lease.check(at(30), 10.0, true), Ok(()));
            lease.spend(at(30), 10.0, true);
        }
        assert_eq!(lease.ask(at(30), 100.0, 500.0, 1000.0), None, "half a chunk is still held");
        lease.spend(at(31), 10.0, true);
        let next = lease.ask(at(31), 100.0, 500.0, 1000.0).expect("below half: the next chunk is asked now");
        assert_eq!(lease.held(at(31)), 40.0, "while 40 CU are still there to spend");
        lease.granted(at(40), next.want, grant(100.0));
        assert_eq!(lease.held(at(40)), 140.0);
        assert_eq!(lease.held(at(2040)), 0.0, "held CU expire two periods after the grant");
    }

    #[test]
    fn an_empty_lease_waits_for_its_ask_or_the_stores_refill() {
        let mut lease = Lease::new(DEFAULT_PERIOD);
        let ask = lease.ask(at(0), 10.0, 50.0, 50.0).unwrap();
        assert_eq!(ask.want, 10.0);
        lease.granted(at(10), ask.want, grant(10.0));
        lease.spend(at(10), 10.0, true);
        assert_eq!(lease.check(at(10), 5.0, false), Ok(()), "an unknown plan never waits on the store");
        let again = lease.ask(at(10), 10.0, 50.0, 50.0).unwrap();
        assert_eq!(lease.check(at(110), 5.0, true), Err(Duration::from_millis(900)), "until the ask times out");
        lease.granted(at(120), again.want, grant(2.0));
        assert_eq!(lease.check(at(120), 5.0, true), Err(Duration::from_millis(250)), "the store's refill");
        assert_eq!(lease.ask(at(200), 10.0, 50.0, 50.0), None, "no ask into a known shortage");
        assert_eq!(lease.check(at(370), 2.0, true), Ok(()), "what was granted is spent");
        assert!(lease.ask(at(370), 10.0, 50.0, 50.0).is_some());
    }

    #[test]
    fn a_store_that_fails_or_stalls_hands_back_to_the_own_bucket_and_is_asked_again_later() {
        let mut lease = Lease::new(DEFAULT_PERIOD);
        let ask = lease.ask(at(0), 10.0, 50.0, 50.0).unwrap();
        lease.granted(at(5), ask.want, grant(10.0));
        lease.spend(at(5), 8.0, true);
        lease.ask(at(5), 10.0, 50.0, 50.0).unwrap();
        assert!(lease.up(at(1004)));
        assert!(!lease.up(at(1005)), "unanswered for one period: down");
        assert_eq!(lease.check(at(1005), 40.0, true), Ok(()), "down: the own bucket governs, nothing waits");
        lease.granted(at(1100), 10.0, grant(10.0));
        assert!(!lease.up(at(1100)), "a late answer to an ask given up changes nothing");
        assert_eq!(lease.ask(at(1500), 10.0, 50.0, 50.0), None, "backing off one period");
        lease.ask(at(2005), 10.0, 50.0, 50.0).unwrap();
        lease.failed(at(2010));
        assert_eq!(lease.ask(at(3000), 10.0, 50.0, 50.0), None, "two failures: two periods");
        let back = lease.ask(at(4010), 10.0, 50.0, 50.0).expect("asked again");
        lease.granted(at(4015), back.want, grant(10.0));
        assert!(lease.up(at(4015)), "the store is back: rejoined");
        for n in 0..6 {
            lease.ask(at(10_000 * (n + 1)), 10.0, 50.0, 50.0);
            lease.failed(at(10_000 * (n + 1)));
        }
        assert!(lease.ask(at(60_000 + 7_999), 10.0, 50.0, 50.0).is_none());
        assert!(lease.ask(at(60_000 + 8_000), 10.0, 50.0, 50.0).is_some(), "backoff caps at eight periods");
        lease.failed(at(68_000));
        lease.store_back();
        assert!(lease.ask(at(68_001), 10.0, 50.0, 50.0).is_some(), "the store is back: asked at once");
    }

    #[test]
    fn a_stores_answer_is_read_only_when_it_makes_sense() {
        let read = LeaseGrant::read(10.0, 4.0, 250.0, 30.0);
        assert_eq!(read, Some(LeaseGrant { granted: 4.0, short_for: Duration::from_millis(250), fleet_rate: 30.0 }));
        assert_eq!(LeaseGrant::read(10.0, 11.0, 0.0, 0.0), None, "more than asked");
        let want = 8.0 / 3.0;
        assert_eq!(
            LeaseGrant::read(want, 2.6666666666667, 0.0, 0.0).map(|g| g.granted),
            Some(want),
            "printed rounding"
        );
        assert_eq!(LeaseGrant::read(10.0, -1.0, 0.0, 0.0), None);
        assert_eq!(LeaseGrant::read(10.0, 1.0, f64::NAN, 0.0), None);
        assert_eq!(LeaseGrant::read(10.0, 1.0, 0.0, f64::INFINITY), None);
        assert_eq!(LeaseGrant::read(10.0, 1.0, 1e12, 0.0).unwrap().short_for, Duration::from_secs(3600), "bounded");
    }

    #[test]
    fn the_fleet_bucket_refills_at_the_asked_rate_and_counts_the_fleet() {
        let mut bucket = FleetBucket::default();
        let ask = |want| LeaseAsk { want, rate: 100.0, burst: 50.0 };
        assert_eq!(bucket.ask(at(0), ask(30.0)).granted, 30.0, "a new bucket starts full");
        let short = bucket.ask(at(0), ask(30.0));
        assert_eq!((short.granted, short.short_for), (20.0, Duration::from_millis(100)), "the rest in 100 ms");
        assert_eq!(bucket.ask(at(100), ask(30.0)).granted, 10.0, "100 ms at 100/s");
        assert_eq!(bucket.ask(at(10_000), ask(80.0)).granted, 50.0, "never past the burst");
        let unknown = bucket.ask(at(10_000), LeaseAsk { want: 500.0, rate: 0.0, burst: 1.0 });
        assert_eq!(unknown.granted, 500.0, "an unknown plan is only counted");
        assert!((unknown.fleet_rate - 55.0).abs() < 3.0, "what the fleet took, decayed: {}", unknown.fleet_rate);
    }

    #[test]
    fn a_chunk_covers_a_few_charges_and_never_asks_past_the_burst_of_a_known_plan() {
        let mut lease = Lease::new(DEFAULT_PERIOD);
        assert_eq!(lease.check(at(0), 26.0, true), Ok(()));
        assert_eq!(lease.ask(at(0), 0.0, 100.0, 1000.0).unwrap().want, 104.0, "a quiet realm: four of its largest");
        let mut other = Lease::new(DEFAULT_PERIOD);
        assert_eq!(other.ask(at(0), 5000.0, 100.0, 300.0).unwrap().want, 300.0, "capped at the burst");
        let mut unknown = Lease::new(DEFAULT_PERIOD);
        let ask = unknown.ask(at(0), 5000.0, f64::INFINITY, 1.0).unwrap();
        assert_eq!((ask.want, ask.rate), (5000.0, 0.0), "an unknown plan asks for its rate and sends rate 0");
    }
}
