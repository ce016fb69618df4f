//! The store's side of a lease (`policy::lease`): one fleet bucket, as
//! the wrapper's Redis script keeps it (`pkg-template/src/fleet-store.js`;
//! the contract is in docs/coordination.md). Here for the simulated store
//! and as the contract's reference.
//!
//! ```text
//!   ask(member, want, rate, burst, held, hold, least) at now:
//!     holds past their end are forgotten; the asker's own is replaced by `held`
//!     others  = Σ what the other members hold
//!     tokens  = min(burst − others − held, tokens + elapsed × rate)   (a new bucket starts full)
//!     share   = burst / (members holding, the asker included)
//!     granted = min(want, tokens, max(share, least) − held)     (never below 0)
//!     the asker now holds held + granted, until now + hold
//!     short   = what was missing × (members that asked in the last hold/2) / rate
//! ```
//! The wait on a shortage counts the members asking: they share the
//! refill, so an ask after `short` finds about what was missing, instead of
//! every member asking again each time a sliver has refilled (the store's
//! load stays near rate / share asks per member and second).
//! So `tokens + everything held ≤ burst` (one relayer's bucket never holds
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
}

/// One fleet bucket (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct FleetBucket {
    tokens: Option<f64>,
    at: Option<Instant>,
    spent: f64,
    holds: Vec<Hold>,
}

impl FleetBucket {
    /// One ask of `member` at `now`.
    pub fn ask(&mut self, now: Instant, member: u64, ask: LeaseAsk) -> LeaseGrant {
        let dt_ms = self.at.map_or(0.0, |at| now.saturating_since(at).as_secs_f64() * 1000.0);
        self.holds.retain(|h| h.until > now && h.member != member);
        let others: f64 = self.holds.iter().map(|h| h.amount).sum();
        let held = if ask.held.is_finite() { ask.held.max(0.0) } else { 0.0 };
        let (granted, short_ms, share) = if ask.rate > 0.0 {
            let cap = (ask.burst - others - held).max(0.0);
            let tokens = (self.tokens.unwrap_or(ask.burst) + dt_ms * ask.rate / 1000.0).min(cap);
            let share = ask.burst / (self.holds.len() + 1) as f64;
            let room = (share.max(ask.least) - held).max(0.0);
            let target = ask.want.min(room);
            let granted = target.min(tokens).max(0.0);
            self.tokens = Some(tokens - granted);
            let recent = now + ask.hold / 2;
            let asking = self.holds.iter().filter(|h| h.until > recent).count() + 1;
            let missing = target - granted;
            let short = if missing > 0.0 { (missing * asking as f64 * 1000.0 / ask.rate).ceil() } else { 0.0 };
            self.holds.push(Hold { member, amount: held + granted, until: now + ask.hold });
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_epoch(Duration::from_millis(ms))
    }

    fn ask(want: f64, held: f64) -> LeaseAsk {
        LeaseAsk { want, rate: 100.0, burst: 50.0, held, hold: Duration::from_secs(2), least: 1.0 }
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
        // Member 1 spent its 40 and says so: the bucket refills again (at its rate), up to member 1's share.
        let back = bucket.ask(at(1100), 1, ask(40.0, 0.0));
        assert_eq!(back.granted, 10.0, "100 ms of refill: the 40 it spent are not handed back at once");
        let more = bucket.ask(at(2000), 1, ask(40.0, 10.0));
        assert_eq!(more.granted, 15.0, "its share (25) less the 10 it holds, though 40 were there");
        // Holds end: member 2's 10 ended at 3000, so member 1 alone again gets the whole burst.
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
    fn a_shortage_waits_for_the_refill_every_member_asking_shares() {
        let mut bucket = FleetBucket::default();
        for member in 1..=4 {
            bucket.ask(at(0), member, ask(12.5, 0.0));
        }
        let short = bucket.ask(at(10), 1, ask(12.5, 0.0));
        assert_eq!(short.granted, 1.0, "10 ms at 100/s");
        assert_eq!(short.short_for, Duration::from_millis(460), "11.5 missing, four asking: 4 × 115 ms");
        // Members that last asked over a second ago still hold, but no longer compete for the refill.
        assert_eq!(bucket.ask(at(1500), 2, ask(12.5, 0.0)).granted, 12.5);
        assert_eq!(bucket.ask(at(1510), 2, ask(12.5, 0.0)).granted, 12.5);
        let alone = bucket.ask(at(1520), 2, ask(12.5, 0.0));
        assert_eq!(alone.granted, 1.0);
        assert_eq!(alone.short_for, Duration::from_millis(115), "only member 2 asked lately: 11.5 at 100/s");
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
}
