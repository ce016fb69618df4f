//! What one realm tells the other realms of its origin (browser tabs and
//! workers over a `BroadcastChannel`, worker threads in Node): the things
//! one member learned that would cost every other realm requests to learn
//! again.
//!
//! ```text
//!   a member of this realm                    every other realm
//!   hears a 429 (cooldown until t) ─ Cooldown ─► the same quota group cools until t
//!   opens a breaker (open until t) ─ BreakerOpen ► the same breaker opens until t
//!   finds a node back (a probe got ─ BreakerBack ► the same breaker, if open,
//!   through, at t)                                 probes it now
//!   sends a probe (verdict by t) ─── Probing ───► the same breaker sends none
//!                                                  of its own until then
//!   ends that probe (any verdict) ─ ProbeEnded ─► its own probes may go
//!   lowers a learned rate to r ──────── Plan ──► the same group lowers to r
//!   steps a learned plan up to r ────── Raised ─► the same group at its
//!   (a probe: `quota/fleet_raise.rs`)               ceiling steps up to r
//!   counts what it got through ──── Measured ──► a group still to learn its plan
//!   (a plan still to learn: r CU/s)               adds it (`quota/gather.rs`)
//!   joins a fleet, plan to learn ── PlanAsked ──► a group that learned it tells
//!                                                 it (`Plan`)
//!   checks a chain id ──────────────── Chain ──► the endpoint's record has it
//!   trusts an endpoint's slow end ───── Tail ───► the endpoint's record uses it
//!   (or it moved by a quarter)                      until it has its own
//!   ends a head-poll round ─ Head (each endpoint's) ─► kept until the round's
//!                          ─ HeadRound (its rounds) ─► the same rounds take the
//!                                                      heads in and put their
//!                                                      own next round off
//! ```
//!
//! Gossip, not a lease: a message lost or late costs what sharing saves,
//! never correctness (a realm that missed a cooldown learns it from its own
//! 429, as a relayer alone would). Keys are the realm keys (`key.rs`):
//! hashes, never a secret. Times travel as Unix milliseconds (realms do not
//! share a monotonic clock) and are bounded on arrival, so a peer's clock
//! skew or a hostile message cannot hold a group or breaker for long.
//! Heard news is applied, never retold (no echo between realms).

use std::time::Duration;

use crate::policy::quota::QuotaGroup;
use crate::time::Instant;

/// The longest a heard cooldown or breaker opening is honoured.
pub const MAX_HEARD: Duration = Duration::from_secs(120);
/// How old (or, by a peer's clock skew, how far ahead) heard word of a node
/// being back may be: older news says nothing of the node now.
pub const MAX_BACK_AGE: Duration = Duration::from_secs(10);

/// One piece of news, as this realm's core produces it (times as instants
/// of this realm; the host converts them to Unix time to send).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum News {
    /// A quota group (by realm key) is cooling down until then.
    Cooldown {
        /// The group's realm key.
        group: u64,
        /// Until when.
        until: Instant,
    },
    /// A breaker (by realm key) opened until then.
    BreakerOpen {
        /// The breaker's realm key.
        breaker: u64,
        /// Until when.
        until: Instant,
    },
    /// A breaker's (by realm key) probe got through then: the node is back.
    /// Every realm whose breaker for it is still open probes it at once
    /// instead of at its own next early probe, seconds later (a fleet on
    /// Redis answered half its reads after a 5 s outage: each process
    /// waited out its own doubled probe spacing).
    BreakerBack {
        /// The breaker's realm key.
        breaker: u64,
        /// When its probe got through.
        at: Instant,
    },
    /// A member sent a probe (half-open or early) to the node of a breaker
    /// (by realm key), its verdict due by then: other realms send no probe
    /// of their own to it meanwhile (`policy/breaker/fleet_probe.rs`).
    Probing {
        /// The breaker's realm key.
        breaker: u64,
        /// The probe's deadline.
        until: Instant,
    },
    /// That probe ended (its verdict, whatever it was, is told apart:
    /// `BreakerBack`, `BreakerOpen`, or nothing for a failed early probe).
    ProbeEnded {
        /// The breaker's realm key.
        breaker: u64,
    },
    /// A quota group (by realm key) was limited and lowered its rate to
    /// this (CU/s): every member sends under the one learned plan.
    Plan {
        /// The group's realm key.
        group: u64,
        /// The allowed rate.
        rate: f64,
    },
    /// A quota group (by realm key) took a probe step of the fleet's
    /// learned plan up to this ceiling (CU/s): every member at its ceiling
    /// takes the same step (`policy/quota/fleet_raise.rs`).
    Raised {
        /// The group's realm key.
        group: u64,
        /// The raised ceiling.
        rate: f64,
    },
    /// A member of a fleet still learning its plan got this through (CU/s)
    /// when the key first refused: the fleet's plan is the sum of them
    /// (`policy/quota/gather.rs`).
    Measured {
        /// The group's realm key.
        group: u64,
        /// What the member got through, CU/s.
        rate: f64,
    },
    /// A member with a plan still to learn joined its fleet's store: a
    /// member that learned it tells it (`Plan`), so the newcomer does not
    /// learn it from a 429 that halves everyone (`policy/quota/gather.rs`).
    PlanAsked {
        /// The group's realm key.
        group: u64,
    },
    /// The slow end of an endpoint's (by realm key) latency for a method
    /// class, as a realm measured it (ms): fresh realms hedge on it.
    Tail {
        /// The endpoint's realm key.
        endpoint: u64,
        /// The method class (`MethodClass as u8`).
        class: u8,
        /// The slow end, ms.
        ms: f64,
    },
    /// An endpoint (by realm key) answered a head-poll round with this
    /// block number; the round's `HeadRound` follows its heads.
    Head {
        /// The endpoint's realm key.
        endpoint: u64,
        /// Its head.
        block: u64,
    },
    /// A head-poll round (by its rounds' realm key, `key::head_rounds_key`)
    /// ended then: the heads told just before are its heads, and realms
    /// polling the same endpoints at the same interval need not poll them
    /// again for an interval (`head_rounds.rs`).
    HeadRound {
        /// The rounds' realm key.
        rounds: u64,
        /// When it ended.
        at: Instant,
    },
    /// An endpoint (by realm key) reported this chain id.
    Chain {
        /// The endpoint's realm key.
        endpoint: u64,
        /// Its chain id.
        chain_id: u64,
    },
}

impl News {
    /// The kind's name on the wire.
    pub const fn kind(&self) -> &'static str {
        match self {
            News::Cooldown { .. } => "cooldown",
            News::BreakerOpen { .. } => "breakerOpen",
            News::BreakerBack { .. } => "breakerBack",
            News::Probing { .. } => "probing",
            News::ProbeEnded { .. } => "probeEnded",
            News::Plan { .. } => "plan",
            News::Raised { .. } => "raised",
            News::Measured { .. } => "measured",
            News::PlanAsked { .. } => "planAsked",
            News::Chain { .. } => "chain",
            News::Head { .. } => "head",
            News::HeadRound { .. } => "headRound",
            News::Tail { class, .. } => match *class {
                0 => TAIL_KINDS[0],
                1 => TAIL_KINDS[1],
                2 => TAIL_KINDS[2],
                _ => TAIL_KINDS[3],
            },
        }
    }

    /// What the quota group under `group` has to tell the others, taken
    /// from it (once): a plan it lowered or told back, a probe step of the
    /// fleet's plan, its measure while the fleet counts, its ask for the
    /// plan when it joined (`quota/gather.rs`).
    /// The one place a group's news is drained, whoever drains it (the
    /// router after an attempt, the realm after hearing news or a store's answer).
    pub fn told_by_group(group: u64, quota: &mut QuotaGroup) -> impl Iterator<Item = News> {
        let plan = quota.take_decrease().map(|rate| News::Plan { group, rate });
        let raised = quota.take_raise().map(|rate| News::Raised { group, rate });
        let measured = quota.take_measure().map(|rate| News::Measured { group, rate });
        let asked = quota.take_plan_ask().then_some(News::PlanAsked { group });
        plan.into_iter().chain(raised).chain(measured).chain(asked)
    }

    /// The key, as 16 hex digits.
    pub fn key_hex(&self) -> String {
        let key = match *self {
            News::Cooldown { group, .. } => group,
            News::BreakerOpen { breaker, .. }
            | News::BreakerBack { breaker, .. }
            | News::Probing { breaker, .. }
            | News::ProbeEnded { breaker } => breaker,
            News::Plan { group, .. }
            | News::Raised { group, .. }
            | News::Measured { group, .. }
            | News::PlanAsked { group } => group,
            News::Chain { endpoint, .. } | News::Tail { endpoint, .. } | News::Head { endpoint, .. } => endpoint,
            News::HeadRound { rounds, .. } => rounds,
        };
        format!("{key:016x}")
    }

    /// Its value on the wire: a Unix time in ms for the timed kinds
    /// (`unix_now_ms` being `now`), the rate for `Plan`, `Raised` and `Measured`, the chain id for `Chain`.
    pub fn value(&self, now: Instant, unix_now_ms: f64) -> f64 {
        match *self {
            News::Cooldown { until, .. } | News::BreakerOpen { until, .. } | News::Probing { until, .. } => {
                unix_now_ms + until.saturating_since(now).as_secs_f64() * 1000.0
            }
            News::BreakerBack { at, .. } | News::HeadRound { at, .. } => {
                unix_now_ms - now.saturating_since(at).as_secs_f64() * 1000.0
            }
            News::Plan { rate, .. } | News::Raised { rate, .. } | News::Measured { rate, .. } => rate,
            News::Chain { chain_id, .. } => chain_id as f64,
            News::Head { block, .. } => block as f64,
            News::ProbeEnded { .. } | News::PlanAsked { .. } => 1.0,
            News::Tail { ms, .. } => ms,
        }
    }

    /// News read from the wire, or `None` for what this version does not
    /// know or cannot trust (an unknown kind, a bad key, a time in the past
    /// or not a number; word of a node back older than [`MAX_BACK_AGE`], or
    /// as far ahead). Times beyond [`MAX_HEARD`] from now are cut to it.
    pub fn read(kind: &str, key: &str, value: f64, now: Instant, unix_now_ms: f64) -> Option<News> {
        if !value.is_finite() {
            return None;
        }
        let key = read_key(key)?;
        let until = || {
            let ahead = value - unix_now_ms;
            (ahead > 0.0).then(|| now + Duration::from_secs_f64(ahead / 1000.0).min(MAX_HEARD))
        };
        // A recent time (no older than MAX_BACK_AGE, nor as far ahead), as an instant of this realm.
        let recent = || {
            let age = (unix_now_ms - value) / 1000.0;
            let bound = MAX_BACK_AGE.as_secs_f64();
            (-bound..=bound)
                .contains(&age)
                .then(|| Instant::from_epoch(now.since_epoch().saturating_sub(Duration::from_secs_f64(age.max(0.0)))))
        };
        let whole = (0.0..=9_007_199_254_740_991.0).contains(&value) && value.fract() == 0.0;
        match kind {
            "cooldown" => Some(News::Cooldown { group: key, until: until()? }),
            "breakerOpen" => Some(News::BreakerOpen { breaker: key, until: until()? }),
            "breakerBack" => Some(News::BreakerBack { breaker: key, at: recent()? }),
            "probing" => Some(News::Probing { breaker: key, until: until()? }),
            "probeEnded" => Some(News::ProbeEnded { breaker: key }),
            "headRound" => Some(News::HeadRound { rounds: key, at: recent()? }),
            "head" if whole => Some(News::Head { endpoint: key, block: value as u64 }),
            "plan" if value > 0.0 => Some(News::Plan { group: key, rate: value }),
            "raised" if value > 0.0 => Some(News::Raised { group: key, rate: value }),
            "measured" if value >= 0.0 => Some(News::Measured { group: key, rate: value }),
            "planAsked" => Some(News::PlanAsked { group: key }),
            "chain" if whole && value >= 1.0 => Some(News::Chain { endpoint: key, chain_id: value as u64 }),
            _ => TAIL_KINDS
                .iter()
                .position(|k| *k == kind)
                .and_then(|class| (value > 0.0).then_some(News::Tail { endpoint: key, class: class as u8, ms: value })),
        }
    }
}

/// The wire kinds of `Tail`, one per method class (in `MethodClass` order).
const TAIL_KINDS: [&str; crate::rpc::methods::CLASSES] = ["tailCheap", "tailCall", "tailHeavy", "tailSend"];

/// A realm key from its 16 hex digits (as `News::key_hex` writes it).
pub fn read_key(hex: &str) -> Option<u64> {
    (hex.len() == 16).then(|| u64::from_str_radix(hex, 16).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_travels_in_unix_time_and_comes_back_bounded() {
        let now = Instant::from_millis_f64(5_000.0);
        let unix = 1_700_000_000_000.0;
        let cool = News::Cooldown { group: 0xabc, until: Instant::from_millis_f64(7_500.0) };
        assert_eq!(
            (cool.kind(), cool.key_hex(), cool.value(now, unix)),
            ("cooldown", "0000000000000abc".into(), unix + 2500.0)
        );
        // Heard by another realm whose clock reads 100 ms later and whose instants differ.
        let there = Instant::from_millis_f64(90_000.0);
        let heard = News::read("cooldown", "0000000000000abc", unix + 2500.0, there, unix + 100.0);
        assert_eq!(heard, Some(News::Cooldown { group: 0xabc, until: Instant::from_millis_f64(92_400.0) }));
        let far = News::read("breakerOpen", "0000000000000001", unix + 1e9, there, unix);
        assert_eq!(far, Some(News::BreakerOpen { breaker: 1, until: there + MAX_HEARD }), "a far future is cut short");
        assert_eq!(News::read("cooldown", "0000000000000abc", unix - 1.0, there, unix), None, "already over");
        assert_eq!(News::read("cooldown", "abc", unix + 10.0, there, unix), None, "a short key");
        assert_eq!(News::read("cooldown", "000000000000zzzz", unix + 10.0, there, unix), None);
        assert_eq!(News::read("cooldown", "0000000000000abc", f64::NAN, there, unix), None);
        assert_eq!(
            News::read("lease", "0000000000000abc", unix + 10.0, there, unix),
            None,
            "a kind from a newer version"
        );
        let chain = News::Chain { endpoint: 2, chain_id: 137 };
        assert_eq!(chain.value(now, unix), 137.0);
        assert_eq!(News::read("chain", &chain.key_hex(), 137.0, there, unix), Some(chain));
        assert_eq!(News::read("chain", &chain.key_hex(), 1.5, there, unix), None);
        assert_eq!(News::read("chain", &chain.key_hex(), 0.0, there, unix), None);
        let plan = News::Plan { group: 3, rate: 450.0 };
        assert_eq!((plan.kind(), plan.value(now, unix)), ("plan", 450.0));
        assert_eq!(News::read("plan", &plan.key_hex(), 450.0, there, unix), Some(plan));
        assert_eq!(News::read("plan", &plan.key_hex(), 0.0, there, unix), None, "no rate is no plan");
        assert_eq!(News::read("plan", &plan.key_hex(), f64::INFINITY, there, unix), None);
        let raised = News::Raised { group: 3, rate: 31.5 };
        assert_eq!((raised.kind(), raised.value(now, unix)), ("raised", 31.5));
        assert_eq!(News::read("raised", &raised.key_hex(), 31.5, there, unix), Some(raised));
        assert_eq!(News::read("raised", &raised.key_hex(), 0.0, there, unix), None, "no rate is no step");
        let measured = News::Measured { group: 3, rate: 12.5 };
        assert_eq!((measured.kind(), measured.value(now, unix)), ("measured", 12.5));
        assert_eq!(News::read("measured", &measured.key_hex(), 12.5, there, unix), Some(measured));
        let idle = Some(News::Measured { group: 3, rate: 0.0 });
        assert_eq!(News::read("measured", &measured.key_hex(), 0.0, there, unix), idle, "an idle member got nothing");
        assert_eq!(News::read("measured", &measured.key_hex(), -1.0, there, unix), None);
        let asked = News::PlanAsked { group: 3 };
        assert_eq!((asked.kind(), asked.value(now, unix)), ("planAsked", 1.0));
        assert_eq!(News::read("planAsked", &asked.key_hex(), 1.0, there, unix), Some(asked));
    }

    #[test]
    fn word_of_a_node_back_travels_as_when_and_is_dropped_once_stale() {
        let now = Instant::from_millis_f64(5_000.0);
        let unix = 1_700_000_000_000.0;
        let back = News::BreakerBack { breaker: 7, at: Instant::from_millis_f64(4_000.0) };
        assert_eq!((back.kind(), back.value(now, unix)), ("breakerBack", unix - 1000.0));
        let there = Instant::from_millis_f64(90_000.0);
        let heard = News::read("breakerBack", &back.key_hex(), unix - 1000.0, there, unix + 500.0);
        assert_eq!(heard, Some(News::BreakerBack { breaker: 7, at: Instant::from_millis_f64(88_500.0) }));
        assert_eq!(News::read("breakerBack", &back.key_hex(), unix - 10_001.0, there, unix), None, "stale");
        assert_eq!(News::read("breakerBack", &back.key_hex(), unix + 10_001.0, there, unix), None, "far ahead");
        assert!(News::read("breakerBack", &back.key_hex(), unix + 2_000.0, there, unix).is_some(), "a little skew");
    }

    #[test]
    fn a_rounds_heads_travel_as_block_numbers_and_its_end_as_a_recent_time() {
        let now = Instant::from_millis_f64(5_000.0);
        let unix = 1_700_000_000_000.0;
        let head = News::Head { endpoint: 4, block: 21_000_123 };
        assert_eq!((head.kind(), head.value(now, unix)), ("head", 21_000_123.0));
        assert_eq!(News::read("head", &head.key_hex(), 21_000_123.0, now, unix), Some(head));
        assert_eq!(News::read("head", &head.key_hex(), 0.0, now, unix), Some(News::Head { endpoint: 4, block: 0 }));
        for bad in [-1.0, 1.5, 1e16, f64::NAN] {
            assert_eq!(News::read("head", &head.key_hex(), bad, now, unix), None, "{bad} is no block number");
        }
        let round = News::HeadRound { rounds: 5, at: Instant::from_millis_f64(4_900.0) };
        assert_eq!((round.kind(), round.value(now, unix)), ("headRound", unix - 100.0));
        let there = Instant::from_millis_f64(70_000.0);
        let heard = News::read("headRound", &round.key_hex(), unix - 100.0, there, unix + 50.0);
        assert_eq!(heard, Some(News::HeadRound { rounds: 5, at: Instant::from_millis_f64(69_850.0) }));
        assert_eq!(News::read("headRound", &round.key_hex(), unix - 10_001.0, there, unix), None, "stale");
    }

    #[test]
    fn a_probe_in_flight_travels_as_its_deadline_and_its_end_as_a_word() {
        let now = Instant::from_millis_f64(5_000.0);
        let unix = 1_700_000_000_000.0;
        let probing = News::Probing { breaker: 6, until: Instant::from_millis_f64(15_000.0) };
        assert_eq!((probing.kind(), probing.value(now, unix)), ("probing", unix + 10_000.0));
        let there = Instant::from_millis_f64(1_000.0);
        let heard = News::read("probing", &probing.key_hex(), unix + 10_000.0, there, unix);
        assert_eq!(heard, Some(News::Probing { breaker: 6, until: Instant::from_millis_f64(11_000.0) }));
        let far = News::read("probing", &probing.key_hex(), unix + 1e9, there, unix);
        assert_eq!(far, Some(News::Probing { breaker: 6, until: there + MAX_HEARD }), "cut to MAX_HEARD");
        assert_eq!(News::read("probing", &probing.key_hex(), unix - 1.0, there, unix), None, "over already");
        let ended = News::ProbeEnded { breaker: 6 };
        assert_eq!((ended.kind(), ended.value(now, unix)), ("probeEnded", 1.0));
        assert_eq!(News::read("probeEnded", &ended.key_hex(), 1.0, there, unix), Some(ended));
    }

    #[test]
    fn a_slow_end_travels_per_method_class() {
        let tail = News::Tail { endpoint: 9, class: 2, ms: 340.5 };
        assert_eq!((tail.kind(), tail.value(Instant::ZERO, 0.0)), ("tailHeavy", 340.5));
        assert_eq!(News::read("tailHeavy", &tail.key_hex(), 340.5, Instant::ZERO, 0.0), Some(tail));
        assert_eq!(News::read("tailCheap", &tail.key_hex(), 0.0, Instant::ZERO, 0.0), None, "no latency");
        assert_eq!(News::read("tail", &tail.key_hex(), 10.0, Instant::ZERO, 0.0), None, "no class");
    }
}
