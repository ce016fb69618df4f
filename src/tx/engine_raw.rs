//! Low-level calls for callers who sign and track on their own: broadcast
//! signed bytes with the outcome-unknown rules, and wait for one receipt.

use std::time::Duration;

use alloy_primitives::B256;

use super::engine::{tx_hash, SendOutcome, TxEngine, TxEvent, TxNode};
use super::receipt::{poll_delay, ReceiptEvent, ReceiptWatch};
use super::TxOptions;
use crate::pool::notify::either;
use crate::runtime::Runtime;

/// Where a raw broadcast stands.
#[derive(Clone, Debug, PartialEq)]
pub enum RawStatus<E> {
    /// A node took the bytes (or already had them).
    Accepted,
    /// No settling answer; the bytes were looked up and re-broadcast.
    /// The hash is what to watch.
    Unknown,
    /// "nonce too low", and this very hash is already mined.
    Mined,
    /// Refused: the node's error.
    Refused(E),
    /// The relayer is closed: nothing was sent.
    Closed,
}

/// How a receipt wait ended without a receipt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitEnd {
    /// The caller's time limit passed.
    TimedOut,
    /// The relayer closed.
    Closed,
}

impl<N: TxNode> TxEngine<N> {
    /// Broadcasts signed bytes. A timeout or a lost answer is not an
    /// error: the hash is looked up on several endpoints and the same
    /// bytes re-broadcast everywhere, and the status says "unknown".
    pub async fn submit_raw(&self, raw: &[u8]) -> (B256, RawStatus<N::Error>) {
        let hash = tx_hash(raw);
        if self.node.is_closed() {
            return (hash, RawStatus::Closed);
        }
        let status = match self.node.send_raw(raw).await {
            SendOutcome::Accepted => RawStatus::Accepted,
            SendOutcome::Unknown(_) | SendOutcome::NonceTooLow { certain: false, .. } => {
                if matches!(self.node.receipt(hash).await, Ok(Some(_))) {
                    RawStatus::Mined
                } else {
                    if !self.node.known(hash).await {
                        self.node.rebroadcast(raw).await;
                    }
                    RawStatus::Unknown
                }
            }
            SendOutcome::NonceTooLow { error, .. } => match self.node.receipt(hash).await {
                Ok(Some(_)) => RawStatus::Mined,
                _ => RawStatus::Refused(error),
            },
            SendOutcome::Underpriced(error) | SendOutcome::Rejected(error) | SendOutcome::FeeTooLow(error) => {
                RawStatus::Refused(error)
            }
        };
        (hash, status)
    }

    /// Polls (jittered) for `hash`'s receipt until it has
    /// `options.confirmations`; a receipt that vanishes is reported as a
    /// reorg and the wait goes on.
    pub async fn wait_for_receipt<R: Runtime>(
        &self,
        runtime: &R,
        hash: B256,
        options: TxOptions,
        timeout: Option<Duration>,
        emit: &dyn Fn(TxEvent),
    ) -> Result<N::Receipt, WaitEnd> {
        let started = runtime.now();
        let mut watch = ReceiptWatch::new(options.confirmations);
        let mut head = 0u64;
        loop {
            if self.node.is_closed() {
                return Err(WaitEnd::Closed);
            }
            if let Ok(h) = self.node.block_number().await {
                head = head.max(h);
            }
            let found = self.node.receipt(hash).await.ok().flatten();
            match watch.observe(found.as_ref().map(|(i, _)| *i), head) {
                ReceiptEvent::Confirmed { .. } => {
                    if let Some((_, receipt)) = found {
                        return Ok(receipt);
                    }
                }
                ReceiptEvent::Reorged { previous } => {
                    emit(TxEvent::Reorg { nonce: None, hash: previous.hash });
                    watch = ReceiptWatch::new(options.confirmations);
                    continue;
                }
                ReceiptEvent::Included { confirmations } => {
                    emit(TxEvent::Included { nonce: None, hash, confirmations });
                }
                ReceiptEvent::Waiting => {}
            }
            let delay = poll_delay(options.poll_interval, runtime.random_unit());
            if let Some(limit) = timeout {
                let elapsed = runtime.now().saturating_since(started);
                if elapsed + delay > limit {
                    return Err(WaitEnd::TimedOut);
                }
            }
            either(runtime.sleep(delay), self.node.closing()).await;
        }
    }
}
