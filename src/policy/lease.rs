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
//! Held compute units are part of the fleet's burst. Units a realm holds
//! were taken from the bucket ahead of need; if the bucket refilled to its
//! whole burst meanwhile, a fleet going from calm to busy (or starting)
//! could send its burst twice over. So each ask tells the store what the
//! realm still holds, the store keeps `tokens + everything held ≤ burst`
//! and hands each member at most its share of the burst (the burst over
//! the members holding), and the realm sizes its chunks to that share. A
//! fleet then sends, in any interval T, at most burst + rate × T, what one
//! relayer's own bucket allows ([`FleetBucket`] is the store's side).
//!
//! A realm holding part of a charge it cannot pay gives it back: `tokens + held ≤ burst` means a fleet whose members
//! each hold a part of a charge larger than its share of the burst (20
//! processes on a 1,200 CU/s plan: 12 CU of a 240 CU burst each, and a
//! 19 CU read) would wait for ever, every ask answered with nothing (found
//! by a simulated fleet: no charge paid after its fourth second). The store
//! hands out whole charges only (`FleetBucket`), and a realm holding a part
//! that cannot pay the charge waiting (what is left of a grant after
//! smaller charges) gives it back with its next ask (`released`) when its
//! charges are larger than its share of the burst: the store puts it back
//! into its tokens, and its queue of claims hands whole charges out in
//! order. (Charges within the share always fit beside the others' parts.)
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
    /// What the realm still holds of earlier grants (CU): the store counts
    /// it as part of the burst in use.
    pub held: f64,
    /// How long granted units stay spendable (the store forgets the hold then).
    pub hold: Duration,
    /// The realm's largest single charge (CU): a share below it would never
    /// pay for one, so the store lets a member hold at least that much.
    pub least: f64,
    /// What the realm gives back of its hold (CU): part of a charge that
    /// cannot pay the charge waiting. The store puts it back into its
    /// tokens (at most what it counts as this member's hold).
    pub released: f64,
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
    /// The most one member may hold now (CU): the burst over the members
    /// holding. Infinite when the store sets no such bound (an unknown plan).
    pub share: f64,
}

impl LeaseGrant {
    /// An answer read from the store (through the host), or `None` for one
    /// that cannot be trusted (not numbers, negative, more than `want`):
    /// a broken or hostile store counts as a failed ask, never as quota.
    /// `share` 0 means "no bound" (the store's text for infinity).
    pub fn read(want: f64, granted: f64, short_for_ms: f64, fleet_rate: f64, share: f64) -> Option<LeaseGrant> {
        let sane = |x: f64| x.is_finite() && x >= 0.0;
        // The store prints numbers to 17 significant digits; one that rounds up past
        // `want` by a hair is `want`, more is a broken answer.
        if !(sane(granted) && sane(short_for_ms) && sane(fleet_rate) && sane(share)) || granted > want * (1.0 + 1e-9) {
            return None;
        }
        let granted = granted.min(want);
        let short_for = Duration::from_secs_f64(short_for_ms.min(3_600_000.0) / 1000.0);
        let share = if share > 0.0 { share } else { f64::INFINITY };
        Some(LeaseGrant { granted, short_for, fleet_rate, share })
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
    /// The most the store lets this realm hold, as it last said.
    share: f64,
    /// The largest single charge seen: a chunk always covers a few.
    largest: f64,
    /// The largest charge refused since the last grant (0: none).
    need: f64,
    /// The fleet bucket's burst, as last asked.
    burst: f64,
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
            share: f64::INFINITY,
            largest: 1.0,
            need: 0.0,
            burst: f64::INFINITY,
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

    /// The most the store lets this realm hold, as it last said (its part
    /// of the fleet's burst; infinite: no bound said).
    pub fn share(&self) -> f64 {
        self.share
    }

    /// The largest single charge seen (CU).
    pub fn largest(&self) -> f64 {
        self.largest
    }

    /// Whether `cost` can be spent now under the lease, or how long until
    /// it could (an ask's answer, or the store's refill). Always yes while
    /// the lease is not up or the plan is unknown (`limited` false).
    pub fn check(&mut self, now: Instant, cost: f64, limited: bool) -> Result<(), Duration> {
        self.largest = self.largest.max(cost);
        if !self.up(now) || !limited || self.held(now) >= cost {
            return Ok(());
        }
        self.need = self.need.max(cost);
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
    /// the largest charges; for a known plan, at most the burst and the
    /// share the store last allowed (never below one largest charge).
    pub fn ask(&mut self, now: Instant, recent_rate: f64, rate: f64, burst: f64) -> Option<LeaseAsk> {
        self.expire_ask(now);
        if self.out.is_some() || now < self.retry_at || now < self.short_until {
            return None;
        }
        let chunk = (recent_rate * self.period.as_secs_f64()).max(4.0 * self.largest);
        let chunk =
            if rate.is_finite() && rate > 0.0 { chunk.min(burst.min(self.share).max(self.largest)) } else { chunk };
        // Enough held: half a chunk, and what a refused charge needs (it must ask, or it would
        // wait for the held units to expire).
        let held = self.held(now);
        if self.up && held >= (chunk / 2.0).max(self.need) {
            return None;
        }
        // Part of a charge that cannot pay the one waiting is given back when parts can fill the
        // fleet's burst: charges above a member's share of it (the members' parts together may
        // leave no room for a whole one), or a part above the share itself (see the module doc).
        // Charges within the share always fit beside the others' parts, and those parts are kept
        // for the store to add to: given back at every refusal, a tab a round trip from the
        // leader tab got 35 of its reads where the leader got 52 (42 against 40 kept).
        // An unknown plan's store only counts: no burst for parts to fill.
        self.burst = if rate.is_finite() && rate > 0.0 { burst } else { f64::INFINITY };
        let blocking = held > self.share || self.parts_block();
        let released = if blocking && self.up && held > 0.0 && held < self.need.max(self.largest) { held } else { 0.0 };
        if released > 0.0 {
            self.held = 0.0;
        }
        let held = held - released;
        self.out = Some(now);
        let rate = if rate.is_finite() { rate } else { 0.0 };
        Some(LeaseAsk { want: chunk, rate, burst, held, hold: self.hold(), least: self.largest, released })
    }

    /// How long granted units stay spendable, counted from the ask (the
    /// store counts from its answer, later: it never forgets a hold first).
    /// A quarter period when this realm's charges are above its share of
    /// the burst or half of it (`parts_block`): its grant is then one
    /// charge, spent at once, and a hold
    /// the store still counts after its units were spent (the realm asks
    /// again only when it needs more) kept the whole burst from the fleet:
    /// six processes on a 100 CU/s plan with 26 CU calls stood still for
    /// 2 s at a time.
    fn hold(&self) -> Duration {
        if self.parts_block() {
            self.period / 4
        } else {
            self.period * 2
        }
    }

    /// Whether parts of this realm's charges can fill the fleet's burst: a
    /// charge above this realm's share of it, or above half of it (the
    /// share moves with the members holding; the burst does not).
    fn parts_block(&self) -> bool {
        self.burst.is_finite() && (self.largest > self.share || self.largest * 2.0 > self.burst)
    }

    /// The store answered the ask out.
    pub fn granted(&mut self, now: Instant, want: f64, grant: LeaseGrant) {
        let Some(since) = self.out.take() else {
            return; // an answer after its ask was given up: the failure stands
        };
        self.held = self.held(now) + grant.granted.max(0.0);
        self.need = 0.0;
        self.expires = since + self.hold();
        self.up = true;
        self.failures = 0;
        self.fleet_rate = grant.fleet_rate.max(0.0);
        self.share = if grant.share > 0.0 { grant.share } else { f64::INFINITY };
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

#[cfg(test)]
mod edge_tests;

#[cfg(test)]
mod tests {
    use super::*;

    use crate::time::at;

    fn grant(granted: f64) -> LeaseGrant {
        LeaseGrant { granted, short_for: Duration::from_millis(250), fleet_rate: 40.0, share: f64::INFINITY }
    }

    #[test]
    fn a_lease_is_asked_ahead_of_need_and_spent_without_waiting() {
        let mut lease = Lease::new(DEFAULT_PERIOD);
        assert!(!lease.up(at(0)), "before any answer the group's own bucket governs");
        assert_eq!(lease.check(at(0), 10.0, true), Ok(()));
        let ask = lease.ask(at(0), 100.0, 500.0, 1000.0).expect("the first ask");
        let hold = Duration::from_secs(2);
        assert_eq!(
            ask,
            LeaseAsk { want: 100.0, rate: 500.0, burst: 1000.0, held: 0.0, hold, least: 10.0, released: 0.0 }
        );
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
        let read = LeaseGrant::read(10.0, 4.0, 250.0, 30.0, 12.5);
        let short_for = Duration::from_millis(250);
        assert_eq!(read, Some(LeaseGrant { granted: 4.0, short_for, fleet_rate: 30.0, share: 12.5 }));
        assert_eq!(LeaseGrant::read(10.0, 4.0, 0.0, 0.0, 0.0).unwrap().share, f64::INFINITY, "0: no bound");
        assert_eq!(LeaseGrant::read(10.0, 11.0, 0.0, 0.0, 0.0), None, "more than asked");
        let want = 8.0 / 3.0;
        assert_eq!(
            LeaseGrant::read(want, 2.6666666666667, 0.0, 0.0, 0.0).map(|g| g.granted),
            Some(want),
            "printed rounding"
        );
        assert_eq!(LeaseGrant::read(10.0, -1.0, 0.0, 0.0, 0.0), None);
        assert_eq!(LeaseGrant::read(10.0, 1.0, f64::NAN, 0.0, 0.0), None);
        assert_eq!(LeaseGrant::read(10.0, 1.0, 0.0, f64::INFINITY, 0.0), None);
        assert_eq!(LeaseGrant::read(10.0, 1.0, 0.0, 0.0, -1.0), None, "a negative share");
        assert_eq!(LeaseGrant::read(10.0, 1.0, 0.0, 0.0, f64::NAN), None);
        assert_eq!(
            LeaseGrant::read(10.0, 1.0, 1e12, 0.0, 0.0).unwrap().short_for,
            Duration::from_secs(3600),
            "bounded"
        );
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

    #[test]
    fn an_ask_says_what_is_held_and_chunks_shrink_to_the_share_the_store_allows() {
        // Less than wanted because of the share, not a shortage: no wait.
        let capped = |granted, share| LeaseGrant { short_for: Duration::ZERO, share, ..grant(granted) };
        let mut lease = Lease::new(DEFAULT_PERIOD);
        let first = lease.ask(at(0), 90.0, 90.0, 10.0).unwrap();
        assert_eq!((first.want, first.held, first.least), (10.0, 0.0, 1.0), "a chunk of the burst, nothing held yet");
        lease.granted(at(50), first.want, capped(2.5, 2.5));
        assert_eq!(lease.held(at(50)), 2.5);
        lease.spend(at(60), 1.0, true);
        assert_eq!(lease.ask(at(60), 90.0, 90.0, 10.0), None, "1.5 of a 2.5 chunk is still held");
        lease.spend(at(70), 1.0, true);
        let next = lease.ask(at(70), 90.0, 90.0, 10.0).expect("below half the share");
        assert_eq!((next.want, next.held), (2.5, 0.5), "the share, and the 0.5 still held is told");
        lease.granted(at(90), next.want, capped(0.5, 0.2));
        lease.spend(at(95), 1.0, true);
        let small = lease.ask(at(95), 90.0, 90.0, 10.0).unwrap();
        assert_eq!(small.want, 1.0, "never below one largest charge, whatever the share");
        lease.granted(at(100), small.want, capped(1.0, 0.0));
        // Its charge (1) is above the share the store said (0.2): a quarter period's hold.
        assert_eq!(lease.held(at(344)), 1.0, "spendable a quarter period from the ask (at 95), not from the answer");
        assert_eq!(lease.held(at(345)), 0.0);
    }

    #[test]
    fn a_charge_the_held_units_cannot_pay_always_asks() {
        let mut lease = Lease::new(DEFAULT_PERIOD);
        assert_eq!(lease.check(at(0), 2.0, true), Ok(()), "not up yet: the own bucket");
        let first = lease.ask(at(0), 0.0, 90.0, 10.0).unwrap();
        // The store allows a share of one charge: chunks of 2, asked below 1 held.
        lease.granted(at(5), first.want, LeaseGrant { short_for: Duration::ZERO, share: 2.0, ..grant(1.5) });
        assert!(lease.check(at(6), 2.0, true).is_err(), "1.5 held cannot pay 2");
        let next = lease.ask(at(6), 0.0, 90.0, 10.0).expect("asked although 1.5 is over half a chunk of 2");
        assert_eq!((next.want, next.held, next.released), (2.0, 1.5, 0.0), "the store may add to the 1.5");
        // A grant answers the need: 1.7 held (over half a chunk) asks again only once a charge is refused.
        lease.granted(at(8), next.want, LeaseGrant { short_for: Duration::ZERO, share: 2.0, ..grant(0.2) });
        assert_eq!(lease.ask(at(9), 0.0, 90.0, 10.0), None, "no refusal since the grant");
        assert!(lease.check(at(9), 2.0, true).is_err());
        assert_eq!(lease.ask(at(9), 0.0, 90.0, 10.0).map(|a| (a.held, a.released)), Some((1.7, 0.0)));
    }

    #[test]
    fn a_part_of_a_charge_above_the_share_is_given_back_with_the_next_ask() {
        let mut lease = Lease::new(DEFAULT_PERIOD);
        let first = lease.ask(at(0), 0.0, 100.0, 20.0).unwrap();
        assert_eq!(first.released, 0.0, "nothing held: nothing given back");
        let of_share = |granted: f64, share: f64| LeaseGrant {
            granted,
            short_for: Duration::from_millis(50),
            share,
            ..grant(granted)
        };
        lease.granted(at(1), first.want, of_share(12.0, 50.0));
        assert_eq!(lease.check(at(2), 26.0, true), Err(Duration::from_millis(1)), "12 held cannot pay 26");
        let next = lease.ask(at(2), 0.0, 100.0, 100.0).expect("the refused charge asks");
        assert_eq!(
            (next.held, next.released),
            (12.0, 0.0),
            "26 fits in a share of 50 of 100: the store adds the 14 missing"
        );
        // Four members on a 20 CU burst: a share of 5, and charges of 26.
        lease.granted(at(3), next.want, of_share(0.0, 5.0));
        assert!(lease.check(at(60), 26.0, true).is_err());
        let back = lease.ask(at(60), 0.0, 100.0, 20.0).expect("asks again after its wait");
        assert_eq!(
            (back.held, back.released, lease.held(at(60))),
            (0.0, 12.0, 0.0),
            "parts could fill the burst: the 12 go back"
        );
        lease.granted(at(61), back.want, of_share(26.0, 5.0));
        assert_eq!(lease.check(at(62), 26.0, true), Ok(()), "a whole charge");
        lease.spend(at(62), 1.0, true);
        assert!(lease.check(at(63), 26.0, true).is_err(), "25 cannot pay 26");
        assert_eq!(lease.ask(at(63), 0.0, 100.0, 20.0).map(|a| (a.held, a.released)), Some((0.0, 25.0)));
        // Small charges within the share: a part is kept whatever the store answers.
        let mut small = Lease::new(DEFAULT_PERIOD);
        let ask = small.ask(at(0), 0.0, 25.0, 5.0).unwrap();
        small.granted(at(1), ask.want, of_share(0.6, 1.67));
        assert!(small.check(at(60), 1.0, true).is_err());
        let again = small.ask(at(60), 0.0, 25.0, 5.0).unwrap();
        assert_eq!((again.held, again.released), (0.6, 0.0));
        small.granted(at(61), again.want, of_share(0.0, 1.67));
        assert!(small.check(at(120), 1.0, true).is_err());
        assert_eq!(small.ask(at(120), 0.0, 25.0, 5.0).map(|a| (a.held, a.released)), Some((0.6, 0.0)));
    }
}
