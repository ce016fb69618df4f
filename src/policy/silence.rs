//! When a node's silence is evidence: an attempt that timed out says the
//! node is unwell only if the node had time to answer. A request near its
//! deadline gives its last attempt what is left, often a few milliseconds;
//! that attempt timing out proves nothing about the node, yet counted as a
//! failure it kept breakers open through a recovered fleet: a bot of 64
//! readers with 1 s deadlines handed each early probe to the request that
//! woke with 2 ms left, every probe "failed", and the fleet stayed dark for
//! minutes after it came back (a new user's report).
//!
//! The same measure says which request may carry a breaker's probe: one
//! that can stay silent that long before its own deadline.

use std::time::Duration;

/// The least silence that counts, however fast the node usually is.
pub const MIN_PROOF: Duration = Duration::from_millis(50);
/// The silence that counts for a node whose slow end nobody has measured.
pub const UNMEASURED_PROOF: Duration = Duration::from_millis(250);
/// How many times its slow-end latency a node must stay silent.
pub const TAIL_MULTIPLE: f64 = 3.0;

/// How long a node must stay silent for a timeout to count against it:
/// `TAIL_MULTIPLE` × its slow-end latency `tail_ms` (at least `MIN_PROOF`;
/// `UNMEASURED_PROOF` without one), never more than the attempt timeout it
/// would normally get (`normal`), since a full timeout always counts.
pub fn proof_time(normal: Duration, tail_ms: Option<f64>) -> Duration {
    let wanted = match tail_ms {
        Some(ms) if ms.is_finite() && ms >= 0.0 => {
            crate::time::duration_from_millis_f64(ms * TAIL_MULTIPLE).max(MIN_PROOF)
        }
        _ => UNMEASURED_PROOF,
    };
    wanted.min(normal)
}

/// How early a host's timer may fire against the clock the silence is
/// measured on: Node's 200 ms attempt timeout was measured at 199.x ms on
/// `performance.now()` now and then, so a full timeout did not count and a
/// breaker set to open at its second failure opened one call late (the
/// `upstreams.test` flake, under load).
pub const TIMER_GRAIN: Duration = Duration::from_millis(2);

/// Whether a timeout after `silent_for` counts against the node (see
/// [`proof_time`] for `proof`), within a timer's grain.
pub fn silence_is_evidence(silent_for: Duration, proof: Duration) -> bool {
    silent_for + TIMER_GRAIN >= proof
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_node_must_stay_silent_three_times_its_slow_end() {
        assert_eq!(proof_time(ms(2000), Some(40.0)), ms(120));
        assert_eq!(proof_time(ms(2000), Some(1.0)), MIN_PROOF, "a fast node still gets 50 ms");
        assert_eq!(proof_time(ms(2000), None), UNMEASURED_PROOF);
        assert_eq!(proof_time(ms(2000), Some(f64::NAN)), UNMEASURED_PROOF, "a broken estimate is no estimate");
    }

    #[test]
    fn a_full_attempt_timeout_always_counts() {
        assert_eq!(proof_time(ms(100), Some(400.0)), ms(100));
        assert_eq!(proof_time(ms(30), None), ms(30));
        assert!(silence_is_evidence(ms(100), proof_time(ms(100), Some(400.0))));
        let early = Duration::from_micros(199_400); // a host timer of 200 ms, measured on another clock
        assert!(silence_is_evidence(early, proof_time(ms(200), None)), "within a timer's grain");
    }

    #[test]
    fn a_timeout_cut_short_by_the_deadline_is_no_evidence() {
        let proof = proof_time(ms(2000), Some(30.0));
        assert!(!silence_is_evidence(ms(2), proof), "2 ms left of a 1 s deadline");
        assert!(!silence_is_evidence(ms(87), proof));
        assert!(silence_is_evidence(ms(88), proof), "within a timer's grain of 90 ms");
        assert!(silence_is_evidence(ms(950), proof));
    }
}
