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
//! again. Its answer is still awaited for [`GIVE_UP_PERIODS`] (no other
//! ask goes out meanwhile): one that comes is taken, as a slow answer.
//!
//! ```text
//!            charge/check with no ask out, past any backoff:
//!            held < half a chunk (or expired) ──► ask(chunk)   (one out at a time)
//!
//!   Local ──ask answered──► Leased ──ask failed, or unanswered one period──► Local
//!     ▲  (own bucket)         │ spend held CU; held expires two periods      │
//!     │                       │ after its grant (no hoard for later bursts)  │
//!     └── ask failed ─────────┴──────────────────────────────────────────────┘
//!         (next ask after period × 2^(failures−1), at most 8 periods;
//!          an ask unanswered one period is awaited up to four: answered, Leased again)
//!
//!   Leased, held < cost:  an ask out ─► wait for its answer (≤ one period)
//!                         the store had too little ─► wait until it said
//! ```
//!
//! A store that answers, but slowly (later than half of what a realm may
//! hold lasts at its demand, at most a quarter period, [`SLOW_STREAK`]
//! times in a row: `store_speed`), cannot pay requests: what a realm may
//! hold is its share of the fleet's burst, so a fleet's rate through the
//! store is at most that burst per round trip (a new user's four processes,
//! Redis 300–600 ms away, got 26 % of their plan and failed 52 % of their
//! reads). Such a store counts as failed for spending: the realm spends
//! from its own bucket at its share (`quota::alone`: its rate over the
//! fleet's, kept up to date while the store still answers), and its asks
//! become reports of what it spent alone since the last (`want` that
//! much, held for no time), so the store's bucket and fleet rate still
//! count every member, until one is answered within a quarter period.
//!
//! Held compute units are part of the fleet's burst. Units a realm holds
//! were taken from the bucket ahead of need; if the bucket refilled to its
//! whole burst meanwhile, a fleet going from calm to busy (or starting)
//! could send its burst twice over. So each ask tells the store what the
//! realm still holds, the store keeps `tokens + everything held ≤ burst`
//! and hands each member at most its share of the burst (the burst over
//! the members holding), and the realm sizes its chunks to that share. A
//! fleet then sends, in any interval T, at most burst + rate × T, what one
//! relayer's own bucket allows (`FleetBucket` is the store's side).
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

mod charge_sizes;
mod messages;
mod said;
mod spent_alone;
mod store_speed;
use charge_sizes::ChargeSizes;
pub use messages::{LeaseAsk, LeaseGrant};
use spent_alone::SpentAlone;
use store_speed::StoreSpeed;
pub use store_speed::{BACK_STREAK, SLOW_STREAK};

/// How long an ask may stay unanswered, and a chunk's worth of sending.
pub const DEFAULT_PERIOD: Duration = Duration::from_secs(1);

/// How long after the store's first answer a realm's own pay is too short
/// a record to tell its part of the fleet's rate (`QuotaGroup::serving_rate`).
pub const YOUNG: Duration = Duration::from_secs(5);

/// How many periods an ask's answer is awaited before it is forgotten
/// (the lease falls after one: `expire_ask`). An answer that comes in that
/// time counts as a slow one: a new user's Redis 600–1,200 ms away answered
/// half of its asks after the period, and with those answers thrown away
/// (and each failure restarting a grace before slow answers counted) the store was never found
/// slow, members flipped between the lease and spending alone, reports
/// were counted twice, and the fleet served 44–55 % of its plan.
pub const GIVE_UP_PERIODS: u32 = 4;

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
    /// What the other members would spend, as the store last said.
    others_demand: Option<f64>,
    /// What this realm would spend (CU/s), as its group last said (`demand`).
    demand: f64,
    /// The charge the lease is sized for (`charge_sizes`): a chunk always covers a few.
    largest: ChargeSizes,
    /// The largest charge refused since the last grant (0: none).
    need: f64,
    /// The fleet bucket's burst, as last asked.
    burst: f64,
    /// Whether the store's last answer granted less than asked (its bucket
    /// was empty: the fleet takes all of its rate).
    short: bool,
    /// Whether the store answers fast enough to lease from (`store_speed`).
    speed: StoreSpeed,
    /// When the store first answered (`young`).
    answered_since: Option<Instant>,
    /// Whether the ask out has gone unanswered for a period (the lease fell;
    /// its answer is still awaited until [`GIVE_UP_PERIODS`]).
    overdue: bool,
    /// Whether the store answered in time once. Until then a late answer
    /// does not put the lease up: leasing from a store that may be slow
    /// pays one share of the burst per round trip (a new user's fleet,
    /// Redis 300–600 ms away each way, was paid 11–16 of its 22 requests a
    /// second while its first answers were judged); the realm keeps
    /// spending alone (its group's cold share) until the verdict. Only for
    /// a known plan, as `slow`.
    proven: bool,
    /// CU spent alone (the store slow) since the last report.
    unreported: f64,
    /// The ask out is such a report of this many CU (its grant is spent
    /// already; counted again if the ask fails).
    reporting: Option<f64>,
    /// Charges paid alone lately (the lease not up), for the next ask.
    alone: SpentAlone,
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
            others_demand: None,
            demand: 0.0,
            largest: ChargeSizes::new(1.0),
            need: 0.0,
            burst: f64::INFINITY,
            short: false,
            speed: StoreSpeed::default(),
            answered_since: None,
            overdue: false,
            proven: false,
            unreported: 0.0,
            reporting: None,
            alone: SpentAlone::default(),
        }
    }

    /// Whether the store answers, but too slowly to spend from (see the
    /// module doc): the realm spends alone, and asks only to report what it
    /// spent. Only for a known plan: an unknown one's asks are never waited
    /// on (they only count), so a slow store costs it nothing.
    pub fn slow(&self) -> bool {
        self.speed.slow() && self.burst.is_finite()
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

    /// Whether `cost` can be spent now under the lease, or how long until
    /// it could (an ask's answer, or the store's refill). Always yes while
    /// the lease is not up or the plan is unknown (`limited` false).
    pub fn check(&mut self, now: Instant, cost: f64, limited: bool) -> Result<(), Duration> {
        self.check_as(now, cost, limited, true)
    }

    /// As [`Lease::check`], for a charge that would not wait as it is: a
    /// dearer way to the same plan than one the caller also checks (an
    /// endpoint of the group whose chain check is due), so it sizes no ask.
    pub fn check_quietly(&mut self, now: Instant, cost: f64, limited: bool) -> Result<(), Duration> {
        self.check_as(now, cost, limited, false)
    }

    fn check_as(&mut self, now: Instant, cost: f64, limited: bool, waits: bool) -> Result<(), Duration> {
        if waits {
            self.largest.checked(cost);
        }
        if !self.up(now) || !limited || self.held(now) >= cost {
            return Ok(());
        }
        if waits {
            self.need = self.need.max(cost);
        }
        if now < self.short_until {
            return Err(self.short_until.saturating_since(now));
        }
        // An ask out is answered (wakes the realm) or times out within a period.
        Err(self.out.map_or(Duration::from_millis(1), |since| (since + self.period).saturating_since(now)))
    }

    /// Spends `cost` (after a `check` that said yes).
    pub fn spend(&mut self, now: Instant, cost: f64, limited: bool) {
        // Counted once per charge paid (a charge is checked again at every wake while it waits).
        self.largest.see(cost);
        if self.up(now) && limited {
            self.held = (self.held(now) - cost).max(0.0);
        } else if self.slow() {
            self.unreported += cost; // the store counts it with the next ask
        } else if limited {
            self.alone.paid(now, cost); // told with the first ask back (`LeaseAsk::alone`)
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
        let largest = self.largest.large();
        let chunk = (recent_rate * self.period.as_secs_f64()).max(4.0 * largest);
        let chunk = if rate.is_finite() && rate > 0.0 { chunk.min(burst.min(self.share).max(largest)) } else { chunk };
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
        let released = if blocking && self.up && held > 0.0 && held < self.need.max(largest) { held } else { 0.0 };
        if released > 0.0 {
            self.held = 0.0;
        }
        let held = held - released;
        self.out = Some(now);
        let rate = if rate.is_finite() { rate } else { 0.0 };
        if self.slow() {
            // A report of what was spent alone, taken from the bucket and held for no time.
            let want = std::mem::take(&mut self.unreported);
            self.reporting = Some(want);
            return Some(LeaseAsk {
                want,
                rate,
                burst,
                held: 0.0,
                hold: Duration::ZERO,
                least: want,
                released: 0.0,
                demand: self.demand,
                alone: 0.0,
            });
        }
        self.reporting = None;
        Some(LeaseAsk {
            want: chunk,
            rate,
            burst,
            held,
            hold: self.hold(),
            least: largest,
            released,
            demand: self.demand,
            alone: self.alone.take(now),
        })
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
        let largest = self.largest.large();
        self.burst.is_finite() && (largest > self.share || largest * 2.0 > self.burst)
    }

    /// The store answered the ask out.
    pub fn granted(&mut self, now: Instant, want: f64, grant: LeaseGrant) {
        let Some(since) = self.out.take() else {
            return; // an answer after its ask was given up: the failure stands
        };
        self.overdue = false;
        self.answered_since.get_or_insert(now);
        let timely = store_speed::timely(self.period, self.share, self.burst, self.largest.large(), self.demand);
        let took = now.saturating_since(since);
        self.speed.answered(took, timely, self.period);
        self.proven |= took <= timely;
        let granted = if self.reporting.take().is_some() { 0.0 } else { grant.granted.max(0.0) };
        self.held = if self.slow() { 0.0 } else { self.held(now) + granted };
        self.need = 0.0;
        self.expires = since + self.hold();
        self.up = !self.slow() && (self.proven || !self.burst.is_finite());
        if self.up && self.burst.is_finite() {
            self.held = self.alone.pay_from(now, self.held); // `spent_alone`
        }
        self.failures = 0;
        self.retry_at = Instant::ZERO; // answered, if late: no backoff
        self.fleet_rate = grant.fleet_rate.max(0.0);
        self.share = if grant.share > 0.0 { grant.share } else { f64::INFINITY };
        self.others_demand = grant.others_demand;
        self.short = grant.granted < want;
        if self.short {
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
    /// An ask out waited for the connection (the host holds the asks made
    /// while its first connection comes up) and goes now: its round trip
    /// counts from `now`. Counted from the ask, a worker whose connection
    /// took a second to come up (four starting together on two cores) had
    /// its first answer judged a second late, the store slow.
    pub fn store_back(&mut self, now: Instant) {
        self.expire_ask(now); // one given up already is forgotten, not restarted
        self.retry_at = Instant::ZERO;
        self.failures = 0;
        if let Some(since) = self.out.as_mut() {
            *since = now;
        }
    }

    /// An ask unanswered for one period is a failure: the lease falls (no
    /// request waits longer on the store). Its answer is still taken until
    /// [`GIVE_UP_PERIODS`] (a store that answers a second late is slow, not
    /// down: see the module doc), and no other ask goes out meanwhile; then
    /// it is forgotten, and what it reported is reported again.
    fn expire_ask(&mut self, now: Instant) {
        let Some(since) = self.out else { return };
        let waited = now.saturating_since(since);
        if waited >= self.period * GIVE_UP_PERIODS {
            self.out = None;
            self.fail(now); // fell a period in already
        } else if waited >= self.period && !self.overdue {
            self.overdue = true;
            self.fall(now);
        }
    }

    /// The ask out failed: forgotten, what it reported is reported again.
    fn fail(&mut self, now: Instant) {
        self.unreported += self.reporting.take().unwrap_or(0.0);
        if !std::mem::replace(&mut self.overdue, false) {
            self.fall(now);
        }
    }

    /// Spending leaves the store (the own bucket governs); the next ask after a backoff.
    fn fall(&mut self, now: Instant) {
        self.up = false;
        self.held = 0.0;
        self.failures = self.failures.saturating_add(1);
        self.retry_at = now + self.period * (1u32 << (self.failures - 1).min(3));
    }
}

#[cfg(test)]
mod edge_tests;

#[cfg(test)]
mod tests;
