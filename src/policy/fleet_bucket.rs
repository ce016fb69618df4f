//! The store's side of a lease (`policy::lease`): one fleet bucket, as
//! the wrapper's Redis script keeps it (`pkg-template/src/fleet-store.js`;
//! the contract is in docs/coordination.md). Here for the simulated store
//! and as the contract's reference.
//!
//! ```text
//!   ask(member, want, rate, burst, held, hold, least) at now:
//!     holds past their end are forgotten; the asker's own is replaced by `held`
//!     others  = Σ what the other members hold
//!     tokens  = min(max(burst, least) − others − held, tokens + elapsed × rate)   (a new bucket starts full)
//!               − alone (what the asker spent alone in the last second; may go below 0)
//!     share   = burst / (members holding, the asker included)
//!     granted = min(want, tokens, max(share, least) − held)     (never below 0)
//!     the asker now holds held + granted, until now + hold
//!   every ask and report says the asker's demand (CU/s) and line (CU waiting);
//!     the answer sums the other members' of each (those holding or
//!     reporting), unknown when one said none
//!   a report (hold 0: spent alone, the store slow): taken from the tokens in
//!     full (even below 0); the asker holds 0 for REPORT_PRESENCE (still a member)
//!   a plan kept per second (window > 0): what each member spent since its
//!     last ask (its hold, less what it holds now and gives back), a hold
//!     that ended, a report and `alone` count in the last second's spend
//!     (`window.rs`), and a grant also keeps
//!       spent in the last second + others + held + granted ≤ window
//!   a shortage queues: tokens are kept for the short members ahead of the
//!   asker: of two granted alike lately (`SERVED_ALIKE`) that both said how
//!   long their oldest read has waited (`LeaseAsk::waited`), the older;
//!   else those granted less in the last second or so (of two alike, the
//!   one queued first), so
//!     granted = min(that, tokens − claims ahead)
//!     missing = what it still wanted: its claim
//!     short   = (claims ahead + missing − tokens left) / rate   (+ 250 ms, then the claim lapses)
//! ```
//! The queue makes a contended bucket fair: a member that asks the moment it
//! needs (the leader tab answers its own asks with no round trip; a process
//! beside Redis) cannot take every refill from members farther away; each
//! gets its turn. The order is by each member's oldest waiting read and
//! what it was granted lately, not by arrival: a member a round trip away
//! is not queued between its grant and its next ask, and by arrival the
//! one beside the store, short again at once, kept the head of the queue. A member not short takes only what nobody queued for, so
//! a light member's spare rate still goes to a busy one.
//! So `tokens + everything held ≤ max(burst, the asker's largest charge)` (one relayer's bucket never holds
//! more either), and no member hoards the burst the others need. `rate` 0:
//! the plan is unknown, everything is granted and only counted. The fleet
//! rate is what was granted, decayed over 10 s.

use std::time::Duration;

use super::lease::{LeaseAsk, LeaseGrant};
use crate::time::Instant;

mod window;
pub use window::SpentWindow;

/// One member's hold: what it may still spend, until when.
#[derive(Clone, Copy, Debug)]
struct Hold {
    member: u64,
    amount: f64,
    until: Instant,
    /// What the member was granted lately (decayed over [`FAIRNESS_TAU`]), as of `asked`.
    served: f64,
    asked: Instant,
    /// What the member would spend now (CU/s), as it last said; NaN: unsaid.
    demand: f64,
    /// What its charges waiting for the plan cost (CU), as it last said; NaN: unsaid.
    line: f64,
}

impl Hold {
    fn served(&self, now: Instant) -> f64 {
        self.served * (-now.saturating_since(self.asked).as_secs_f64() / FAIRNESS_TAU.as_secs_f64()).exp()
    }
}

/// A member short of what it asked: tokens kept for it, in the order it queued.
#[derive(Clone, Copy, Debug)]
struct Claim {
    member: u64,
    amount: f64,
    until: Instant,
    /// Since when the member's oldest charge has waited (`LeaseAsk::waited`); `None`: unsaid.
    since: Option<Instant>,
}

/// How long a member that reported what it spent (its store slow) still
/// counts among the members: two periods of its reports.
pub const REPORT_PRESENCE: Duration = Duration::from_secs(2);

/// The grain of `LeaseAsk::alone_ages`.
const AGE_TENTH: Duration = Duration::from_millis(100);

/// How long a claim outlives its wait (a member that never comes back).
const CLAIM_GRACE: Duration = Duration::from_millis(250);

/// Over how long what a member was served counts for its place in the queue.
pub const FAIRNESS_TAU: Duration = Duration::from_secs(1);

/// How far apart what two short members were granted lately may be for
/// their oldest reads to decide their turn ([`served_alike`]).
pub const SERVED_ALIKE: f64 = 1.25;

/// Whether two members were granted alike lately (within [`SERVED_ALIKE`]
/// of each other): then the one whose oldest read has waited longer goes
/// first; else the one granted less. By the oldest read alone, nothing
/// pulls the members' parts of a plan they cannot all have back together:
/// each sheds what its own part cannot serve in time, and a new user's
/// four workers at 120 % of their key failed in streaks of ~70 reads, one
/// worker at a time (docs/coordination.md).
fn served_alike(a: f64, b: f64) -> bool {
    a <= b * SERVED_ALIKE && b <= a * SERVED_ALIKE
}

/// Over how long the fleet's rate is counted (what was granted, decayed).
pub const RATE_TAU: Duration = Duration::from_secs(10);

/// The fleet's rate (CU/s) from what was granted decayed over [`RATE_TAU`]
/// (`spent`), for a bucket `age` old. A rate `g` kept for `age` decays to
/// `g × τ × (1 − e^(−age/τ))`, so dividing by that (never by less than one
/// second) reads `g` from the start, not `g × 0.1` after one second. Read as
/// `spent / τ`, a fleet's rate 12 s after a start or a store restart was
/// 0.7 of the truth: members spending alone at their share of it (own rate
/// over the fleet's) took 1.4× their part, and four of them 151 % of a
/// new user's plan while Redis was down.
pub fn fleet_rate(spent: f64, age: Duration) -> f64 {
    let tau = RATE_TAU.as_secs_f64();
    let weight = tau * (1.0 - (-age.as_secs_f64() / tau).exp());
    spent / weight.max(1.0)
}

/// One fleet bucket (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct FleetBucket {
    tokens: Option<f64>,
    at: Option<Instant>,
    /// The first ask (the rate's age: `fleet_rate`).
    born: Option<Instant>,
    spent: f64,
    holds: Vec<Hold>,
    /// Oldest first.
    claims: Vec<Claim>,
    /// What the members spent in the last second, as far as it learned (`window.rs`).
    spent_lately: SpentWindow,
}

impl FleetBucket {
    /// One ask of `member` at `now`.
    pub fn ask(&mut self, now: Instant, member: u64, ask: LeaseAsk) -> LeaseGrant {
        let dt_ms = self.at.map_or(0.0, |at| now.saturating_since(at).as_secs_f64() * 1000.0);
        // A hold that ended unasked may have been spent to its end: counted so.
        for h in self.holds.iter().filter(|h| h.until <= now) {
            self.spent_lately.add(h.until, h.amount);
        }
        self.holds.retain(|h| h.until > now);
        let served = |holds: &[Hold], m: u64| holds.iter().find(|h| h.member == m).map_or(0.0, |h| h.served(now));
        let mine = served(&self.holds, member);
        // What the asker gives back returns to the tokens, up to what its hold counts.
        let its_hold = self.holds.iter().find(|h| h.member == member).map_or(0.0, |h| h.amount);
        // `max`/`min`, not `clamp`: its panic message formats floats, 17 KB of wasm (`f64::clamp`).
        let released = if ask.released.is_finite() { ask.released.max(0.0).min(its_hold) } else { 0.0 };
        self.holds.retain(|h| h.member != member);
        let others: f64 = self.holds.iter().map(|h| h.amount).sum();
        // The others' demands, summed only when every one said its own (a member of an older
        // version says none: the asker then shares by the fleet's rate, as before).
        let others_demand = self.holds.iter().map(|h| h.demand).sum::<f64>();
        let others_demand = others_demand.is_finite().then_some(others_demand);
        let demand = if ask.demand.is_finite() && ask.demand >= 0.0 { ask.demand } else { f64::NAN };
        // The others' lines, summed only when every one said its own (`LeaseGrant::others_line`).
        let others_line = self.holds.iter().map(|h| h.line).sum::<f64>();
        let others_line = others_line.is_finite().then_some(others_line);
        let line = if ask.line.is_finite() && ask.line >= 0.0 { ask.line } else { f64::NAN };
        let held = if ask.held.is_finite() { ask.held.max(0.0) } else { 0.0 };
        // A plan kept per second (`window.rs`), for a plan's grants (not a report, not an unknown plan).
        let windowed = ask.window.is_finite() && ask.window > 0.0 && ask.rate > 0.0;
        // What the asker spent since its last ask: its hold, less what it holds and gives back.
        self.spent_lately.add(now, its_hold - held - released);
        // What the asker spent alone in the last second: still in the provider's window.
        let alone =
            if ask.alone.is_finite() && !ask.hold.is_zero() && ask.rate > 0.0 { ask.alone.max(0.0) } else { 0.0 };
        let (granted, short_ms, share) = if ask.hold.is_zero() {
            // A report of what a member spent alone (its store too slow to spend from,
            // `policy::lease`): counted in full, taken from the tokens even below zero, so members
            // still leasing wait for what it spent, and the fleet's rate counts it.
            let tokens = self.tokens.unwrap_or(ask.burst) + dt_ms * ask.rate / 1000.0;
            self.tokens = Some(tokens.min((ask.burst - others).max(0.0)) - ask.want.max(0.0));
            self.spent_lately.add(now, ask.want);
            let share = ask.burst / (self.holds.len() + 1) as f64;
            // It holds nothing, but it is a member: counted among the members for
            // REPORT_PRESENCE, so each one's share says how many spend (`Lease::members`).
            let served = mine + ask.want.max(0.0);
            let until = now + REPORT_PRESENCE;
            self.holds.push(Hold { member, amount: 0.0, until, served, asked: now, demand, line });
            (ask.want.max(0.0), 0.0, share)
        } else if ask.rate > 0.0 {
            // A charge above the burst is paid from a full bucket, as a token bucket does: a cap below
            // the asker's largest charge would never let it hold one (it waited for its deadline).
            let cap = (ask.burst.max(ask.least) - others - held).max(0.0);
            let uncapped = self.tokens.unwrap_or(ask.burst) + dt_ms * ask.rate / 1000.0 + released;
            // A plan kept per second: room within the window too (`window.rs`), which counts what
            // the asker spent alone where it fell (by age, when told).
            let told: f64 = ask.alone_ages.iter().filter(|a| a.is_finite() && **a > 0.0).sum();
            if windowed && told > 0.0 {
                for (i, &cu) in ask.alone_ages.iter().enumerate() {
                    self.spent_lately
                        .add(Instant::from_epoch(now.since_epoch().saturating_sub(AGE_TENTH * i as u32)), cu);
                }
            }
            self.spent_lately.add(now, if windowed { (alone - told).max(0.0) } else { alone });
            // Otherwise taken from the tokens whatever they are (even below zero, as a report): a
            // bucket that starts full would pay its burst on top of what the members spent alone.
            // (With the window, that is counted there; taken again here, a fleet rejoining a
            // restarted store stood still for up to a second.)
            let tokens = uncapped.min(cap) - if windowed { 0.0 } else { alone };
            let recent = self.spent_lately.total(now);
            let within = if windowed { ask.window - recent - others - held } else { f64::INFINITY };
            let avail = tokens.min(within);
            let share = ask.burst / (self.holds.len() + 1) as f64;
            let room = (share.max(ask.least) - held).max(0.0);
            let target = ask.want.min(room);
            self.claims.retain(|c| c.until > now);
            let place = self.claims.iter().position(|c| c.member == member);
            // Ahead: the claims of members served less lately (of those served alike, the older).
            // A member a round trip from the store is away between its grant and its next ask;
            // by arrival alone, one beside the store took those refills (4 members: 110 CU
            // against 55 each in `fairness_tests`).
            // First, though, of members granted alike, the claims of those whose oldest charge has
            // waited longer, when both said (one line for the fleet): served alike, equal members'
            // lines drift with their arrivals, and four at 98 % of a plan waited 1.1 s and 6.6 s at
            // the median.
            let since = ask.waited.map(|w| Instant::from_epoch(now.since_epoch().saturating_sub(w)));
            let ahead: f64 = (self.claims.iter().enumerate())
                .filter(|&(i, c)| {
                    let theirs = served(&self.holds, c.member);
                    c.member != member
                        && match (c.since, since) {
                            (Some(a), Some(b)) if a != b && served_alike(theirs, mine) => a < b,
                            _ => theirs < mine || (theirs == mine && i < place.unwrap_or(usize::MAX)),
                        }
                })
                .map(|(_, c)| c.amount)
                .sum();
            // Whole charges only: a part of the asker's largest charge pays nothing and, held,
            // keeps the rest of the fleet from a whole one (see `Lease`'s doc).
            // A full bucket waits for nobody: held back for claims whose members are not here yet,
            // its refill would be lost (six processes on a 100 CU/s plan were granted 52 CU/s of
            // 74, the line's turns promised to members that came back later than the bucket filled).
            // (The window's room is not a refill that would be lost: it waits for the queue.)
            let full = uncapped >= cap && tokens <= within;
            let ahead = if full && avail >= target && target > 0.0 { 0.0 } else { ahead };
            let room = avail - ahead;
            let granted = if room >= target || held + room >= ask.least { target.min(room).max(0.0) } else { 0.0 };
            let left = tokens - granted;
            self.tokens = Some(left);
            let missing = target - granted;
            let short = if missing > 0.0 {
                let refill = ((ahead + missing - left).max(0.0) * 1000.0 / ask.rate).ceil();
                let frees =
                    if windowed { self.spent_lately.frees_in(now, ahead + missing - (within - granted)) } else { 0.0 };
                refill.max(frees)
            } else {
                0.0
            };
            let until = now + Duration::from_secs_f64(short / 1000.0) + CLAIM_GRACE;
            match (place, missing > 0.0) {
                (Some(i), true) => self.claims[i] = Claim { member, amount: missing, until, since },
                (Some(i), false) => drop(self.claims.remove(i)),
                (None, true) => self.claims.push(Claim { member, amount: missing, until, since }),
                (None, false) => {}
            }
            self.holds.push(Hold {
                member,
                amount: held + granted,
                until: now + ask.hold,
                served: mine + granted,
                asked: now,
                demand,
                line,
            });
            (granted, short, share)
        } else {
            self.tokens = Some(ask.burst);
            (ask.want, 0.0, 0.0)
        };
        self.spent = self.spent * (-dt_ms / 10_000.0).exp() + granted + alone;
        self.spent_lately.total(now); // older slots dropped: it never grows past a second's
        self.at = Some(now);
        let age = now.saturating_since(*self.born.get_or_insert(now));
        LeaseGrant {
            granted,
            short_for: Duration::from_secs_f64(short_ms / 1000.0),
            fleet_rate: fleet_rate(self.spent, age),
            share: if share > 0.0 { share } else { f64::INFINITY },
            others_demand,
            others_line,
            // Said kept: the asker may refill at its plan.
            windowed,
        }
    }

    /// What the members hold at `now`, all together (for tests and the simulation).
    pub fn held(&self, now: Instant) -> f64 {
        self.holds.iter().filter(|h| h.until > now).map(|h| h.amount).sum()
    }
}

/// A store's buckets by group key, for a store kept in memory (the tabs of
/// an origin lease from the tab that holds the leader lock): buckets
/// unused for a minute are dropped, as the Redis keys expire.
#[derive(Debug, Default)]
pub struct FleetBuckets {
    buckets: Vec<(String, FleetBucket)>,
}

/// How long a bucket nobody asks stays (Redis: the keys' expiry).
const UNUSED: Duration = Duration::from_secs(60);

impl FleetBuckets {
    /// One ask of `member` (any id: hashed) for the bucket under `key`.
    pub fn ask(&mut self, now: Instant, key: &str, member: &str, ask: LeaseAsk) -> LeaseGrant {
        self.buckets.retain(|(k, b)| k == key || b.at.is_none_or(|at| now.saturating_since(at) < UNUSED));
        let i = match self.buckets.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                self.buckets.push((key.to_owned(), FleetBucket::default()));
                self.buckets.len() - 1
            }
        };
        self.buckets[i].1.ask(now, member_id(member), ask)
    }

    /// How many buckets are kept.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }
}

/// A member's id as a number (FNV-1a): ids are random per realm, so a
/// collision only merges two members' holds (the share is then smaller).
fn member_id(member: &str) -> u64 {
    member.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
#[path = "fleet_bucket/tests.rs"]
mod tests;

#[cfg(test)]
#[path = "fleet_bucket/fairness_tests.rs"]
mod fairness_tests;
