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

mod asking;
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
    /// What the other members' lines cost, as the store last said (`LeaseGrant::others_line`).
    others_line: Option<f64>,
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
    /// Whether the store's last answer kept the ask's one-second window
    /// (`LeaseGrant::windowed`): only then is its bucket asked to refill at
    /// the whole plan.
    windowed: bool,
    /// Back on the store after spending alone, the share it had before,
    /// kept as a bound until when (`granted`).
    rejoined: Option<(f64, Instant)>,
    /// How long the last answer took (zero before the first).
    round_trip: Duration,
}

/// How long a realm back on its store keeps to the share it had before.
/// A restarted store knows only the members that asked since: the first
/// back was told the whole burst as its share, took it, and the others
/// were granted nothing for half a second (a new user's four workers at
/// 75 % of a key, Redis restarted empty: 4–8 reads served in the second
/// of the rejoin, 20–24 with this).
pub const REJOIN_SHARE: Duration = Duration::from_secs(3);

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
            others_line: None,
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
            windowed: false,
            rejoined: None,
            round_trip: Duration::ZERO,
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

    /// How long the store's last answer took: what news through it takes
    /// too, about (`quota/gather.rs` waits for the fleet's word by it).
    pub fn round_trip(&self) -> Duration {
        self.round_trip
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

    /// The store answered the ask out.
    pub fn granted(&mut self, now: Instant, want: f64, grant: LeaseGrant) {
        let Some(since) = self.out.take() else {
            return; // an answer after its ask was given up: the failure stands
        };
        if !self.up && self.share.is_finite() && self.answered_since.is_some() {
            self.rejoined = Some((self.share, now + REJOIN_SHARE));
        }
        self.overdue = false;
        self.answered_since.get_or_insert(now);
        let timely = store_speed::timely(self.period, self.share, self.burst, self.largest.large(), self.demand);
        let took = now.saturating_since(since);
        self.round_trip = took;
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
        let said = if grant.share > 0.0 { grant.share } else { f64::INFINITY };
        self.share = match self.rejoined {
            Some((before, until)) if now < until => said.min(before),
            _ => said,
        };
        self.others_demand = grant.others_demand;
        self.others_line = grant.others_line;
        self.windowed = grant.windowed;
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

    /// The host saw the store go down (its connection closed, an error):
    /// a lease that was up falls now, not at the next charge, so an idle
    /// realm's `stats()` tells it spends alone (a new user's health check
    /// read 'leased' for 6 s after Redis died). An ask out fails through
    /// the host as before.
    pub fn store_down(&mut self, now: Instant) {
        if self.up {
            self.fall(now);
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
