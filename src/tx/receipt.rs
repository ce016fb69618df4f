//! Receipt waiting: confirmations counted from what polls saw, reorgs
//! noticed, and a poll interval that is never the same twice.
//!
//! ```text
//!   Waiting ──receipt (block b)──▶ Included: confirmations = head − b + 1
//!   Included ──confirmations ≥ wanted──▶ Confirmed
//!   Included ──receipt gone, or now in another block──▶ Reorged (event), then
//!             Waiting or Included in the new block; the wait goes on
//! ```
//! Why jitter: a thousand wallets that all poll every 4 s in phase hit the
//! node as one burst; drawing each delay from [0.5, 1.5) × interval spreads
//! them while keeping the mean.

use std::time::Duration;

use alloy_primitives::B256;

/// The parts of a receipt the wait needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiptInfo {
    /// The transaction hash.
    pub hash: B256,
    /// The block it is in.
    pub block_number: u64,
    /// That block's hash.
    pub block_hash: B256,
}

/// What one observation means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiptEvent {
    /// Nothing mined yet.
    Waiting,
    /// Mined, not yet deep enough.
    Included {
        /// Blocks on top, including its own.
        confirmations: u64,
    },
    /// Deep enough: done.
    Confirmed {
        /// Blocks on top, including its own.
        confirmations: u64,
    },
    /// A receipt seen before is gone or moved: the chain reorganised.
    Reorged {
        /// What was seen before.
        previous: ReceiptInfo,
    },
}

/// Tracks the receipt of one nonce's transactions across polls.
#[derive(Clone, Debug)]
pub struct ReceiptWatch {
    wanted: u64,
    seen: Option<ReceiptInfo>,
}

impl ReceiptWatch {
    /// Waits for `confirmations` blocks (at least 1).
    pub fn new(confirmations: u64) -> Self {
        ReceiptWatch { wanted: confirmations.max(1), seen: None }
    }

    /// The receipt currently believed in.
    pub fn seen(&self) -> Option<ReceiptInfo> {
        self.seen
    }

    /// Feeds one poll: the receipt found for any of the hashes (or none)
    /// and the head block number.
    pub fn observe(&mut self, found: Option<ReceiptInfo>, head: u64) -> ReceiptEvent {
        let previous = self.seen;
        self.seen = found;
        if let Some(previous) = previous {
            let moved = found.is_none_or(|f| f.hash != previous.hash || f.block_hash != previous.block_hash);
            if moved {
                return ReceiptEvent::Reorged { previous };
            }
        }
        match found {
            None => ReceiptEvent::Waiting,
            Some(r) => {
                let confirmations = head.saturating_add(1).saturating_sub(r.block_number).max(1);
                if confirmations >= self.wanted {
                    ReceiptEvent::Confirmed { confirmations }
                } else {
                    ReceiptEvent::Included { confirmations }
                }
            }
        }
    }
}

/// The next poll delay: `interval × [0.5, 1.5)`, from a uniform draw.
pub fn poll_delay(interval: Duration, unit: f64) -> Duration {
    let factor = 0.5 + if unit.is_finite() { crate::policy::bound(unit, 0.0, 0.999_999) } else { 0.5 };
    interval.mul_f64(factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(hash: u8, block: u64, block_hash: u8) -> ReceiptInfo {
        ReceiptInfo { hash: B256::repeat_byte(hash), block_number: block, block_hash: B256::repeat_byte(block_hash) }
    }

    #[test]
    fn confirmations_count_the_receipt_block_itself() {
        let mut watch = ReceiptWatch::new(3);
        assert_eq!(watch.observe(None, 9), ReceiptEvent::Waiting);
        assert_eq!(watch.observe(Some(at(1, 10, 1)), 10), ReceiptEvent::Included { confirmations: 1 });
        assert_eq!(watch.observe(Some(at(1, 10, 1)), 11), ReceiptEvent::Included { confirmations: 2 });
        assert_eq!(watch.observe(Some(at(1, 10, 1)), 12), ReceiptEvent::Confirmed { confirmations: 3 });
        assert_eq!(ReceiptWatch::new(0).observe(Some(at(1, 10, 1)), 5), ReceiptEvent::Confirmed { confirmations: 1 });
    }

    #[test]
    fn a_receipt_that_vanishes_or_moves_is_a_reorg_and_the_wait_goes_on() {
        let mut watch = ReceiptWatch::new(2);
        watch.observe(Some(at(1, 10, 1)), 10);
        assert_eq!(watch.observe(None, 10), ReceiptEvent::Reorged { previous: at(1, 10, 1) });
        assert_eq!(watch.observe(None, 11), ReceiptEvent::Waiting);
        watch.observe(Some(at(1, 11, 2)), 11);
        assert_eq!(watch.observe(Some(at(1, 11, 3)), 12), ReceiptEvent::Reorged { previous: at(1, 11, 2) });
        assert_eq!(watch.observe(Some(at(1, 11, 3)), 12), ReceiptEvent::Confirmed { confirmations: 2 });
    }

    #[test]
    fn poll_delays_spread_around_the_interval() {
        let base = Duration::from_millis(1000);
        assert_eq!(poll_delay(base, 0.0), Duration::from_millis(500));
        assert!(poll_delay(base, 0.999_999_9) < Duration::from_millis(1500));
        assert_eq!(poll_delay(base, f64::NAN), Duration::from_millis(1000));
    }

    #[test]
    fn the_watch_remembers_the_receipt_it_believes_in() {
        let mut watch = ReceiptWatch::new(2);
        assert_eq!(watch.seen(), None);
        watch.observe(Some(at(1, 10, 1)), 10);
        assert_eq!(watch.seen(), Some(at(1, 10, 1)));
        watch.observe(None, 11);
        assert_eq!(watch.seen(), None, "gone in a reorg");
    }
}
