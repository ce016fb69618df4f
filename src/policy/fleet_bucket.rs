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
//!     share   = burst / (members holding, the asker included)
//!     granted = min(want, tokens, max(share, least) − held)     (never below 0)
//!     the asker now holds held + granted, until now + hold
//!   a shortage queues: tokens are kept for the short members ahead of the
//!   asker: those granted less in the last second or so (of two alike, the
//!   one queued first), so
//!     granted = min(that, tokens − claims ahead)
//!     missing = what it still wanted: its claim
//!     short   = (claims ahead + missing − tokens left) / rate   (+ 250 ms, then the claim lapses)
//! ```
//! The queue makes a contended bucket fair: a member that asks the moment it
//! needs (the leader tab answers its own asks with no round trip; a process
//! beside Redis) cannot take every refill from members farther away; each
//! gets its turn. The order is by what each was granted lately, not by
//! arrival: a member a round trip away is not queued between its grant and
//! its next ask, and by arrival the one beside the store, short again at
//! once, kept the head of the queue. A member not short takes only what nobody queued for, so
//! a light member's spare rate still goes to a busy one.
//! So `tokens + everything held ≤ max(burst, the asker's largest charge)` (one relayer's bucket never holds
//! more either), and no member hoards the burst the others need. `rate` 0:
//! the plan is unknown, everything is granted and only counted. The fleet
//! rate is what was granted, decayed over 10 s.

use std::time::Duration;

use super::lease::{LeaseAsk, LeaseGrant};
use crate::time::Instant;

/// One member's hold: what it may still spend, until when.
#[derive(Clone, Copy, Debug)]
struct Hold {
    member: u64,
    amount: f64,
    until: Instant,
    /// What the member was granted lately (decayed over [`FAIRNESS_TAU`]), as of `asked`.
    served: f64,
    asked: Instant,
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
}

/// How long a claim outlives its wait (a member that never comes back).
const CLAIM_GRACE: Duration = Duration::from_millis(250);

/// Over how long what a member was served counts for its place in the queue.
pub const FAIRNESS_TAU: Duration = Duration::from_secs(1);

/// One fleet bucket (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct FleetBucket {
    tokens: Option<f64>,
    at: Option<Instant>,
    spent: f64,
    holds: Vec<Hold>,
    /// Oldest first.
    claims: Vec<Claim>,
}

impl FleetBucket {
    /// One ask of `member` at `now`.
    pub fn ask(&mut self, now: Instant, member: u64, ask: LeaseAsk) -> LeaseGrant {
        let dt_ms = self.at.map_or(0.0, |at| now.saturating_since(at).as_secs_f64() * 1000.0);
        self.holds.retain(|h| h.until > now);
        let served = |holds: &[Hold], m: u64| holds.iter().find(|h| h.member == m).map_or(0.0, |h| h.served(now));
        let mine = served(&self.holds, member);
        // What the asker gives back returns to the tokens, up to what its hold counts.
        let its_hold = self.holds.iter().find(|h| h.member == member).map_or(0.0, |h| h.amount);
        let released = if ask.released.is_finite() { ask.released.clamp(0.0, its_hold) } else { 0.0 };
        self.holds.retain(|h| h.member != member);
        let others: f64 = self.holds.iter().map(|h| h.amount).sum();
        let held = if ask.held.is_finite() { ask.held.max(0.0) } else { 0.0 };
        let (granted, short_ms, share) = if ask.rate > 0.0 {
            // A charge above the burst is paid from a full bucket, as a token bucket does: a cap below
            // the asker's largest charge would never let it hold one (it waited for its deadline).
            let cap = (ask.burst.max(ask.least) - others - held).max(0.0);
            let uncapped = self.tokens.unwrap_or(ask.burst) + dt_ms * ask.rate / 1000.0 + released;
            let tokens = uncapped.min(cap);
            let share = ask.burst / (self.holds.len() + 1) as f64;
            let room = (share.max(ask.least) - held).max(0.0);
            let target = ask.want.min(room);
            self.claims.retain(|c| c.until > now);
            let place = self.claims.iter().position(|c| c.member == member);
            // Ahead: the claims of members served less lately (of those served alike, the older).
            // A member a round trip from the store is away between its grant and its next ask;
            // by arrival alone, one beside the store took those refills (4 members: 110 CU
            // against 55 each in `fairness_tests`).
            let ahead: f64 = (self.claims.iter().enumerate())
                .filter(|&(i, c)| {
                    let theirs = served(&self.holds, c.member);
                    c.member != member && (theirs < mine || (theirs == mine && i < place.unwrap_or(usize::MAX)))
                })
                .map(|(_, c)| c.amount)
                .sum();
            // Whole charges only: a part of the asker's largest charge pays nothing and, held,
            // keeps the rest of the fleet from a whole one (see `Lease`'s doc).
            // A full bucket waits for nobody: held back for claims whose members are not here yet,
            // its refill would be lost (six processes on a 100 CU/s plan were granted 52 CU/s of
            // 74, the line's turns promised to members that came back later than the bucket filled).
            let ahead = if uncapped >= cap && tokens >= target && target > 0.0 { 0.0 } else { ahead };
            let room = tokens - ahead;
            let granted = if room >= target || held + room >= ask.least { target.min(room).max(0.0) } else { 0.0 };
            let left = tokens - granted;
            self.tokens = Some(left);
            let missing = target - granted;
            let short =
                if missing > 0.0 { ((ahead + missing - left).max(0.0) * 1000.0 / ask.rate).ceil() } else { 0.0 };
            let until = now + Duration::from_secs_f64(short / 1000.0) + CLAIM_GRACE;
            match (place, missing > 0.0) {
                (Some(i), true) => self.claims[i] = Claim { member, amount: missing, until },
                (Some(i), false) => drop(self.claims.remove(i)),
                (None, true) => self.claims.push(Claim { member, amount: missing, until }),
                (None, false) => {}
            }
            self.holds.push(Hold {
                member,
                amount: held + granted,
                until: now + ask.hold,
                served: mine + granted,
                asked: now,
            });
            (granted, short, share)
        } else {
            self.tokens = Some(ask.burst);
            (ask.want, 0.0, 0.0)
        };
        self.spent = self.spent * (-dt_ms / 10_000.0).exp() + granted;
        self.at = Some(now);
        LeaseGrant {
            granted,
            short_for: Duration::from_secs_f64(short_ms / 1000.0),
            fleet_rate: self.spent / 10.0,
            share: if share > 0.0 { share } else { f64::INFINITY },
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
mod tests {
    use super::*;

    use crate::time::at;

    fn ask(want: f64, held: f64) -> LeaseAsk {
        LeaseAsk { want, rate: 100.0, burst: 50.0, held, hold: Duration::from_secs(2), least: 1.0, released: 0.0 }
    }

    #[test]
    fn the_fleet_bucket_refills_at_the_asked_rate_and_counts_the_fleet() {
        let mut bucket = FleetBucket::default();
        assert_eq!(bucket.ask(at(0), 1, ask(30.0, 0.0)).granted, 30.0, "a new bucket starts full");
        let short = bucket.ask(at(0), 1, ask(30.0, 0.0));
        assert_eq!((short.granted, short.short_for), (20.0, Duration::from_millis(100)), "the rest in 100 ms");
        assert_eq!(bucket.ask(at(100), 1, ask(30.0, 0.0)).granted, 10.0, "100 ms at 100/s");
        assert_eq!(bucket.ask(at(10_000), 1, ask(80.0, 0.0)).granted, 50.0, "never past the burst");
        let unknown = bucket.ask(at(10_000), 1, LeaseAsk { want: 500.0, rate: 0.0, burst: 1.0, ..ask(0.0, 0.0) });
        assert_eq!((unknown.granted, unknown.share), (500.0, f64::INFINITY), "an unknown plan is only counted");
        assert!((unknown.fleet_rate - 55.0).abs() < 3.0, "what the fleet took, decayed: {}", unknown.fleet_rate);
    }

    #[test]
    fn what_members_hold_is_part_of_the_burst_so_a_fleet_never_has_more_than_one_burst() {
        let mut bucket = FleetBucket::default();
        // Member 1 alone: its share is the whole burst; it takes 40 ahead of need.
        let one = bucket.ask(at(0), 1, ask(40.0, 0.0));
        assert_eq!((one.granted, one.share), (40.0, 50.0));
        // A second later the bucket would be full again; 40 are still held, so only 10 are there.
        let two = bucket.ask(at(1000), 2, ask(40.0, 0.0));
        assert_eq!(two.share, 25.0, "two members hold: half the burst each");
        assert_eq!(two.granted, 10.0, "tokens + held stay within the burst");
        assert!(bucket.held(at(1000)) <= 50.0);
        // Member 1 spent its 40 and says so; what refilled is kept for member 2, short and queued first.
        let queued = bucket.ask(at(1100), 1, ask(40.0, 0.0));
        assert_eq!(queued.granted, 0.0, "10 refilled, 15 queued for member 2 before it");
        let turn = bucket.ask(at(1150), 2, ask(40.0, 10.0));
        assert_eq!(turn.granted, 15.0, "member 2's turn: its share (25) less the 10 it holds");
        let lapsed = bucket.ask(at(2000), 1, ask(40.0, 0.0));
        assert_eq!(lapsed.granted, 25.0, "its share; its own claim had lapsed, nobody else queued");
        // Holds end: member 2's 25 ended at 3150, so member 1 alone again gets the whole burst.
        let alone = bucket.ask(at(4000), 1, ask(50.0, 0.0));
        assert_eq!((alone.share, alone.granted), (50.0, 50.0));
    }

    #[test]
    fn a_share_below_one_charge_still_lets_a_member_hold_one() {
        let mut bucket = FleetBucket::default();
        for member in 0..10 {
            bucket.ask(at(0), member, LeaseAsk { least: 0.0, ..ask(1.0, 0.0) });
        }
        let big = bucket.ask(at(1000), 99, LeaseAsk { least: 26.0, ..ask(26.0, 0.0) });
        assert!(big.share < 26.0);
        assert_eq!(big.granted, 26.0, "a member with a 26-CU call may hold 26");
        assert!(bucket.held(at(1000)) <= 50.0, "and the burst still bounds the fleet");
    }

    #[test]
    fn a_shortage_queues_so_the_refill_goes_to_who_was_short_first() {
        let mut bucket = FleetBucket::default();
        let ask = |want| LeaseAsk { burst: 30.0, ..ask(want, 0.0) };
        assert_eq!(bucket.ask(at(0), 1, ask(30.0)).granted, 30.0, "member 1 takes the burst");
        // Member 2, then 3, are short: they queue, each waiting for the refill of those ahead too.
        let two = bucket.ask(at(0), 2, ask(5.0));
        assert_eq!((two.granted, two.short_for), (0.0, Duration::from_millis(50)));
        let three = bucket.ask(at(0), 3, ask(5.0));
        assert_eq!((three.granted, three.short_for), (0.0, Duration::from_millis(100)), "behind member 2's 5");
        // Member 1 spent its 30 and asks the moment it can (no round trip): the refill is kept for 2 and 3.
        let eager = bucket.ask(at(30), 1, ask(5.0));
        assert_eq!(eager.granted, 0.0, "3 CU refilled, 10 queued before it");
        assert_eq!(eager.short_for, Duration::from_millis(120), "behind 10 queued, 5 missing, 3 there");
        assert_eq!(bucket.ask(at(50), 2, ask(5.0)).granted, 5.0, "member 2's turn: first in the queue");
        assert_eq!(bucket.ask(at(100), 3, ask(5.0)).granted, 5.0, "then member 3's");
        assert_eq!(bucket.ask(at(150), 1, ask(5.0)).granted, 5.0, "then member 1's");
        // A claim whose member never comes back lapses 250 ms after its wait.
        let mut fresh = FleetBucket::default();
        let brief = |want| LeaseAsk { hold: Duration::from_millis(100), ..ask(want) };
        fresh.ask(at(0), 1, brief(30.0));
        assert_eq!(fresh.ask(at(0), 4, brief(5.0)).short_for, Duration::from_millis(50), "member 4 queues");
        assert_eq!(fresh.ask(at(200), 5, brief(30.0)).granted, 15.0, "20 refilled, 5 kept for member 4");
        let mut again = FleetBucket::default();
        again.ask(at(0), 1, brief(30.0));
        again.ask(at(0), 4, brief(5.0));
        assert_eq!(again.ask(at(1000), 5, brief(30.0)).granted, 30.0, "member 4 never came back: its claim lapsed");
    }

    #[test]
    fn tokens_and_everything_held_never_exceed_the_burst_whatever_members_ask() {
        let mut bucket = FleetBucket::default();
        let mut x: u64 = 7;
        let mut draw = |n: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let mut holding = [0.0f64; 5];
        let mut now = 0;
        for _ in 0..2000 {
            now += draw(80);
            let member = draw(5) as usize;
            // A member reports what it still holds (it may have spent some), asks for up to 30.
            let held = holding[member] * draw(3) as f64 / 2.0;
            let want = 1.0 + draw(30) as f64;
            let least = 1.0 + draw(10) as f64;
            let g = bucket.ask(at(now), member as u64, LeaseAsk { least, ..ask(want, held.min(holding[member])) });
            holding[member] = held.min(holding[member]) + g.granted;
            let total = bucket.tokens.unwrap_or(0.0) + bucket.held(at(now));
            assert!(total <= 50.0 + 1e-9, "tokens + held = {total} at {now} ms");
        }
    }

    #[test]
    fn buckets_in_memory_are_kept_per_key_and_dropped_after_a_minute_unused() {
        let mut buckets = FleetBuckets::default();
        assert_eq!(buckets.ask(at(0), "a", "tab-1", ask(40.0, 0.0)).granted, 40.0);
        let second = buckets.ask(at(500), "a", "tab-2", ask(40.0, 0.0));
        assert_eq!(second.granted, 10.0, "the same bucket: tab-1 holds 40 of the burst");
        assert_eq!(buckets.ask(at(500), "b", "tab-2", ask(40.0, 0.0)).granted, 40.0, "another key, another bucket");
        assert_eq!(buckets.len(), 2);
        buckets.ask(at(60_400), "b", "tab-2", ask(1.0, 0.0));
        assert_eq!(buckets.len(), 2, "a unused for 59.9 s: kept");
        buckets.ask(at(60_600), "b", "tab-2", ask(1.0, 0.0));
        assert_eq!(buckets.len(), 1, "a unused for a minute: dropped");
        assert_ne!(member_id("tab-1"), member_id("tab-2"));
    }

    #[test]
    fn a_hold_counts_until_its_end_and_not_at_it() {
        let mut bucket = FleetBucket::default();
        bucket.ask(at(0), 1, ask(40.0, 0.0));
        assert_eq!((bucket.held(at(0)), bucket.held(at(1999)), bucket.held(at(2000))), (40.0, 40.0, 0.0));
        // At 2000 member 1's hold has ended: member 2 alone has the whole burst and share.
        let two = bucket.ask(at(2000), 2, ask(50.0, 0.0));
        assert_eq!((two.granted, two.share), (50.0, 50.0));
    }

    #[test]
    fn a_claim_lapses_at_the_end_of_its_grace() {
        let mut bucket = FleetBucket::default();
        let brief = |want| LeaseAsk { burst: 30.0, hold: Duration::from_millis(100), ..ask(want, 0.0) };
        bucket.ask(at(0), 1, brief(30.0));
        assert_eq!(bucket.ask(at(0), 4, brief(5.0)).short_for, Duration::from_millis(50), "claim until 50 + 250 ms");
        assert_eq!(bucket.ask(at(300), 5, brief(30.0)).granted, 30.0, "at 300 ms nothing is kept for member 4");
    }

    #[test]
    fn the_fleet_rate_is_what_was_granted_decayed_over_ten_seconds() {
        let mut bucket = FleetBucket::default();
        assert_eq!(bucket.ask(at(0), 1, ask(30.0, 0.0)).fleet_rate, 3.0);
        let later = bucket.ask(at(10_000), 1, LeaseAsk { rate: 0.0, ..ask(0.0, 0.0) });
        assert!((later.fleet_rate - 3.0 * (-1.0f64).exp()).abs() < 1e-9, "{}", later.fleet_rate);
    }

    #[test]
    fn a_bucket_unused_for_exactly_a_minute_is_dropped() {
        let mut buckets = FleetBuckets::default();
        assert!(buckets.is_empty());
        buckets.ask(at(0), "a", "tab-1", ask(1.0, 0.0));
        assert!(!buckets.is_empty());
        buckets.ask(at(60_000), "b", "tab-1", ask(1.0, 0.0));
        assert_eq!(buckets.len(), 1);
    }

    #[test]
    fn member_ids_are_fnv_1a() {
        assert_eq!(member_id(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(member_id("a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn a_charge_above_the_burst_can_still_be_held_once_the_bucket_is_full() {
        let mut bucket = FleetBucket::default();
        // A 10-CU burst and eth_getBalance at 19 CU: the member gets its 19 from a full bucket.
        let big = LeaseAsk { want: 19.0, rate: 20.0, burst: 10.0, least: 19.0, ..ask(19.0, 0.0) };
        let first = bucket.ask(at(0), 1, big);
        assert_eq!(first.granted, 0.0, "a new bucket holds its burst, 10: a part of the charge, which pays nothing");
        assert_eq!(first.short_for, Duration::from_millis(450), "told when the whole charge is there");
        let whole = bucket.ask(at(450), 1, big);
        assert_eq!(whole.granted, 19.0, "refilled up to one charge, never above it");
        assert_eq!(bucket.ask(at(1000), 2, LeaseAsk { held: 0.0, ..big }).granted, 0.0, "while member 1 holds it");
        assert_eq!(
            bucket.ask(at(2450), 2, LeaseAsk { held: 0.0, ..big }).granted,
            19.0,
            "its hold over, member 2's turn"
        );
    }

    /// Four members of a 100 CU/s plan with a 20 CU burst (a per-second
    /// plan's fleet terms), each holding part of a 26 CU charge: with parts
    /// handed out, the holds filled the burst and no ask was granted again.
    #[test]
    fn only_whole_charges_are_handed_out_so_parts_never_fill_the_burst() {
        let mut bucket = FleetBucket::default();
        let call = LeaseAsk { want: 26.0, rate: 80.0, burst: 20.0, least: 26.0, ..ask(26.0, 0.0) };
        let mut paid = 0;
        let mut held = [0.0; 4];
        for ms in (0..10_000).step_by(10) {
            for (m, h) in held.iter_mut().enumerate() {
                let grant = bucket.ask(at(ms), m as u64, LeaseAsk { held: *h, ..call });
                *h += grant.granted;
                assert!(*h == 0.0 || *h >= 26.0, "member {m} holds part of a charge: {h}");
                if *h >= 26.0 {
                    *h -= 26.0; // spent at once
                    paid += 1;
                }
            }
        }
        assert!(paid >= 28, "about 80 CU/s in whole charges for 10 s: {paid}");
    }

    #[test]
    fn what_a_member_gives_back_returns_to_the_tokens_up_to_its_hold() {
        let mut bucket = FleetBucket::default();
        let call = LeaseAsk { want: 26.0, rate: 80.0, burst: 30.0, least: 26.0, ..ask(26.0, 0.0) };
        assert_eq!(bucket.ask(at(0), 1, LeaseAsk { want: 20.0, least: 1.0, ..call }).granted, 20.0);
        assert_eq!(bucket.ask(at(0), 2, call).granted, 0.0, "10 left: no part of 26");
        // Member 1 spent 1 and gives its 19 back: member 2's whole charge is there (10 + 19 ≥ 26).
        let back = bucket.ask(at(0), 1, LeaseAsk { want: 1.0, least: 1.0, released: 19.0, ..call });
        assert_eq!(back.granted, 1.0, "member 2's claim of 26 comes first; 1 of the 29 is beyond it");
        assert_eq!(bucket.ask(at(0), 2, call).granted, 26.0);
        // Nobody gives back more than its hold says, nor a hold the store forgot.
        let mut fresh = FleetBucket::default();
        fresh.ask(at(0), 1, LeaseAsk { want: 30.0, least: 1.0, ..call });
        let inflated = fresh.ask(at(0), 2, LeaseAsk { released: 1_000.0, ..call });
        assert_eq!(inflated.granted, 0.0, "member 2 held nothing: nothing to give back");
        let forgot = fresh.ask(at(5_000), 1, LeaseAsk { want: 1.0, least: 1.0, released: 30.0, ..call });
        assert!(forgot.granted <= 1.0);
        assert!(fresh.held(at(5_000)) <= 30.0);
    }

    #[test]
    fn what_a_member_holds_counts_against_its_share() {
        let mut bucket = FleetBucket::default();
        bucket.ask(at(0), 1, ask(5.0, 0.0));
        assert_eq!(bucket.ask(at(0), 2, ask(10.0, 0.0)).granted, 10.0);
        // 35 tokens are there, but member 2's share is 25 and it holds 10.
        let more = bucket.ask(at(0), 2, ask(40.0, 10.0));
        assert_eq!((more.share, more.granted), (25.0, 15.0));
    }
}

#[cfg(test)]
#[path = "fleet_bucket/fairness_tests.rs"]
mod fairness_tests;
