//! What a failed `eth_sendRawTransaction` means for its nonce, read from
//! the pipeline's whole attempt history.
//!
//! The question is never "did this attempt fail?" but "could any attempt
//! have been accepted?". An attempt is *certain* when its answer proves the
//! node did not take the bytes (a refusal from the node, a rate limit, a
//! refused key, or nothing delivered at all); a timeout or a broken
//! connection is not. Only when every attempt is certain may the nonce be
//! treated as unused; otherwise the outcome is unknown and the same bytes
//! are re-broadcast, never re-signed under a new nonce.
//!
//! ```text
//!   cancelled by the caller                         → Unknown
//!   last: nonce too low                             → NonceTooLow { certain: earlier all certain }
//!   last: replacement underpriced, earlier certain  → Underpriced
//!   all certain, the node names a fee floor         → FeeTooLow  (a speed-up cures it)
//!   all certain                                     → Rejected   (nonce released)
//!   anything else                                   → Unknown
//! ```

use super::engine::SendOutcome;
use crate::error::{AttemptRecord, Failure, FailureDetail};
use crate::policy::classify::TransportFailure;
use crate::policy::ErrorClass;

/// Whether an attempt's answer proves the node did not take the bytes.
fn certain(record: &AttemptRecord) -> bool {
    matches!(
        record.verdict.class,
        ErrorClass::Fatal
            | ErrorClass::NonceTooLow
            | ErrorClass::ReplacementUnderpriced
            | ErrorClass::RateLimited
            | ErrorClass::Capability
            | ErrorClass::Unauthorized
    ) || record.verdict.undelivered
}

/// Refusals that a higher fee cures (anvil/geth/reth "max fee per gas less
/// than block base fee", geth "transaction underpriced" and "gas price below
/// minimum", Besu "below configured minimum" / "below current base fee",
/// Erigon "fee too low", Nethermind "FeeTooLow"): a speed-up, not a drop.
fn fee_too_low<P>(f: &Failure<P>) -> bool {
    let Some(FailureDetail::Rpc(info, _)) = &f.last else { return false };
    let message = info.message.to_ascii_lowercase();
    [
        "less than block base fee",
        "underpriced",
        "gas price below",
        "below current base fee",
        "below configured minimum",
        "fee too low",
        "feetoolow",
        "fee cap less than",
    ]
    .iter()
    .any(|fragment| crate::text::contains(&message, fragment))
}

/// Reads a failed broadcast: did any attempt possibly land? `error` is the
/// failure as the caller reports it, carried in the outcome.
pub fn classify_send<P, E>(f: &Failure<P>, error: E) -> SendOutcome<E> {
    let Some((last, earlier)) = f.attempts.split_last() else { return SendOutcome::Unknown(error) };
    let earlier_certain = earlier.iter().all(certain);
    if matches!(f.last, Some(FailureDetail::Transport(TransportFailure::Aborted))) {
        return SendOutcome::Unknown(error);
    }
    match last.verdict.class {
        ErrorClass::NonceTooLow => SendOutcome::NonceTooLow { certain: earlier_certain, error },
        ErrorClass::ReplacementUnderpriced if earlier_certain => SendOutcome::Underpriced(error),
        _ if earlier_certain && certain(last) && fee_too_low(f) => SendOutcome::FeeTooLow(error),
        _ if earlier_certain && certain(last) => SendOutcome::Rejected(error),
        _ => SendOutcome::Unknown(error),
    }
}

#[cfg(test)]
mod tests;
