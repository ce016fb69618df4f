//! What a transaction call answers: the outcome of a nonce, why a call
//! failed (every failure after a broadcast names the nonce and its
//! hashes, so nothing sent is lost track of), and the events the relayer's
//! listeners hear. Re-exported by `engine.rs`.

use alloy_primitives::{Address, B256};

use super::fees::{FeeError, Fees};
use super::request::TxFieldError;
use super::slot::{Resolution, TxKind};

/// The answer for one nonce.
#[derive(Clone, Debug)]
pub struct TxOutcome<R> {
    /// The mined transaction's receipt.
    pub receipt: R,
    /// The mined hash.
    pub hash: B256,
    /// Which of ours it was.
    pub resolution: Resolution,
    /// The nonce.
    pub nonce: u64,
    /// Every hash sent for the nonce, oldest first.
    pub hashes: Vec<B256>,
    /// Confirmations when resolved.
    pub confirmations: u64,
}

/// Why a transaction call failed. Every variant that follows a broadcast
/// names the nonce and the hashes, so nothing sent is ever lost track of.
#[derive(Clone, Debug)]
pub enum TxFailure<E> {
    /// A request field is invalid (nothing signed).
    Invalid(TxFieldError),
    /// A node call before signing failed (nothing signed).
    Node(E),
    /// The signer refused or threw (nothing broadcast; nonce released).
    Signer(E),
    /// Refused for certain by the node (nothing accepted; nonce released).
    Rejected(E),
    /// No fee data to price the transaction with.
    Fees(FeeError),
    /// The next replacement would pass the fee ceiling; the listed
    /// transactions are still pending and still tracked.
    FeeCeiling {
        /// The nonce.
        nonce: u64,
        /// Every hash sent, oldest first.
        hashes: Vec<B256>,
        /// What the next replacement must pay at least.
        needed: u128,
        /// The ceiling.
        ceiling: u128,
    },
    /// The fee ceiling is below what the next block needs (its base fee):
    /// refused before anything was signed.
    CeilingBelowNetwork {
        /// The next block's base fee.
        needed: u128,
        /// The ceiling.
        ceiling: u128,
    },
    /// The nonce was used by a transaction that is none of ours.
    ReplacedByOther {
        /// The nonce.
        nonce: u64,
        /// Every hash we sent for it.
        hashes: Vec<B256>,
    },
    /// A cancel or speed-up for a nonce that is already settled.
    Settled(u64),
    /// Nothing to cancel: no transaction of ours is known for this nonce.
    UnknownNonce(u64),
    /// No transaction with this hash is tracked (pending here, or among
    /// the last nonces that ended here).
    UnknownHash(B256),
    /// Another sender kept taking the nonce we signed for (each time our
    /// bytes were refused for certain, so nothing of ours is out there).
    NonceContention(u64),
    /// The fleet's shared nonce book could not answer (its store is down
    /// or refused): no nonce is guessed, nothing was broadcast.
    Coordination(String),
    /// No node has any of our transactions for the nonce and re-sending
    /// them is refused for certain (`error`): dropped. The nonce is free again.
    Dropped {
        /// The nonce.
        nonce: u64,
        /// Every hash sent, oldest first.
        hashes: Vec<B256>,
        /// Why the last re-send was refused.
        error: E,
    },
    /// The relayer closed: before anything was signed (no nonce), or
    /// while waiting (the hashes may still be mined).
    Closed {
        /// The nonce, if one was broadcast.
        nonce: Option<u64>,
        /// Every hash sent, oldest first.
        hashes: Vec<B256>,
    },
}

/// A transaction-layer event, for the relayer's listeners. Fields are
/// the nonce concerned, the transaction hash concerned (`replaces`: the
/// newest hash before a replacement) and the fees it pays.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq)]
pub enum TxEvent {
    /// Bytes were broadcast and a node took them.
    Submitted { nonce: u64, hash: B256, kind: TxKind },
    /// A journaled nonce of a relayer that stopped renewing its lease was
    /// taken over (`engine_journal.rs`); `signer`: it can be sped up here.
    Adopted { from: Address, nonce: u64, hashes: Vec<B256>, signer: bool },
    /// A broadcast ended without an answer: the outcome is unknown.
    OutcomeUnknown { nonce: u64, hash: B256 },
    /// The pending bytes were sent again.
    Rebroadcast { nonce: u64, hash: B256 },
    /// A replacement was signed and sent, decided at head `block`; `since`
    /// is the block the wait for inclusion counted from (none for a cancel
    /// sent at once).
    Replacement { nonce: u64, kind: TxKind, hash: B256, replaces: B256, fees: Fees, block: u64, since: Option<u64> },
    /// A receipt appeared.
    Included { nonce: Option<u64>, hash: B256, confirmations: u64 },
    /// A receipt seen before vanished or moved: a reorg.
    Reorg { nonce: Option<u64>, hash: B256 },
    /// The nonce resolved.
    Resolved { nonce: u64, hash: B256, resolution: Resolution },
    /// The account's nonce moved ahead of our book (someone else sent).
    NonceResync { from: u64, to: u64 },
    /// Nonces below ours are missing on the node.
    NonceGap { from: u64, to: u64, repaired: bool },
}
