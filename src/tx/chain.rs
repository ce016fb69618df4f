//! Which chain a signature is bound to, decided before anything is signed.
//!
//! Why: a signature for the wrong chain is at best refused and at worst a
//! replayable transaction on a chain the caller never meant. The rules:
//!
//! ```text
//!   relayer chainId option set        → that chain
//!   otherwise                         → the chain every answering endpoint reports
//!                                       (asked once, before the first signature);
//!                                       endpoints that disagree → an error naming them
//!   tx.chainId given, different        → refused (field chainId)
//!   signer knows its chain, different  → refused (the signer)
//! ```

use thiserror::Error;

/// Why no chain can be signed for.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ChainError {
    /// Endpoints answered with different chain ids: which one is meant is
    /// the caller's choice (the relayer's `chainId` option), not a guess.
    #[error("the endpoints serve different chains ({}); set the relayer's `chainId` option to the one you mean", describe(.0))]
    Disagree(Vec<(String, u64)>),
    /// The signer is bound to another chain than the relayer's.
    #[error("the signer is connected to chain {signer}, but the relayer serves chain {relayer}; nothing was signed")]
    Signer {
        /// The signer's chain.
        signer: u64,
        /// The relayer's chain.
        relayer: u64,
    },
}

fn describe(seen: &[(String, u64)]) -> String {
    seen.iter().map(|(label, id)| format!("{label}: {id}")).collect::<Vec<_>>().join(", ")
}

/// The one chain the answering endpoints agree on; `None` when none answered.
pub fn agreed(seen: &[(String, u64)]) -> Result<Option<u64>, ChainError> {
    let Some(&(_, first)) = seen.first() else { return Ok(None) };
    if seen.iter().all(|(_, id)| *id == first) {
        Ok(Some(first))
    } else {
        Err(ChainError::Disagree(seen.to_vec()))
    }
}

/// A signer that knows its chain must be on the relayer's.
pub fn check_signer(signer: Option<u64>, relayer: u64) -> Result<(), ChainError> {
    match signer {
        Some(signer) if signer != relayer => Err(ChainError::Signer { signer, relayer }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(list: &[(&str, u64)]) -> Vec<(String, u64)> {
        list.iter().map(|(l, id)| (l.to_string(), *id)).collect()
    }

    #[test]
    fn endpoints_that_agree_give_their_chain_and_disagreeing_ones_are_named() {
        assert_eq!(agreed(&[]), Ok(None));
        assert_eq!(agreed(&seen(&[("a", 1), ("b", 1)])), Ok(Some(1)));
        let err = agreed(&seen(&[("a", 1), ("b", 31337)])).unwrap_err();
        assert_eq!(err.to_string().split(" (").nth(1).unwrap().split(')').next().unwrap(), "a: 1, b: 31337");
    }

    #[test]
    fn a_signer_on_another_chain_is_refused() {
        assert_eq!(check_signer(None, 1), Ok(()));
        assert_eq!(check_signer(Some(1), 1), Ok(()));
        assert_eq!(check_signer(Some(5), 1), Err(ChainError::Signer { signer: 5, relayer: 1 }));
    }
}
