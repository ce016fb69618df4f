//! What the transaction engine needs from outside (`tx::engine`): a node
//! to read and broadcast through (the relayer's pool, or a simulated chain
//! in tests) and a signer per account. Traits, so the engine stays pure of
//! the wasm host.

use std::future::Future;

use alloy_primitives::{Address, B256};

use super::fees::FeeSample;
use super::receipt::ReceiptInfo;
use super::UnsignedTx;

/// What a broadcast through the pool ended in.
#[derive(Clone, Debug, PartialEq)]
pub enum SendOutcome<E> {
    /// A node took it (or already had these exact bytes).
    Accepted,
    /// No answer that settles it: it may or may not have reached a node.
    Unknown(E),
    /// The nonce is used on chain. `certain`: no earlier attempt of this
    /// broadcast could have been accepted (so it was not ours).
    NonceTooLow {
        /// No earlier attempt was ambiguous.
        certain: bool,
        /// The node's error.
        error: E,
    },
    /// A transaction with this nonce is pooled and pays as much or more.
    Underpriced(E),
    /// Refused for its fees (below the base fee or the node's floor): a
    /// higher-priced replacement would be taken, so this is no drop.
    FeeTooLow(E),
    /// Refused for certain (funds, gas, fee cap…): nothing was accepted.
    Rejected(E),
}

/// The node calls the transaction layer makes, over the provider pool.
pub trait TxNode {
    /// A receipt as the node returned it (handed back untouched).
    type Receipt: Clone;
    /// A failure as the pool reports it.
    type Error: Clone;
    /// `eth_blockNumber`.
    fn block_number(&self) -> impl Future<Output = Result<u64, Self::Error>>;
    /// `eth_getTransactionCount(address, pending ? "pending" : "latest")`.
    fn transaction_count(&self, address: Address, pending: bool) -> impl Future<Output = Result<u64, Self::Error>>;
    /// Fee data; each part may be missing.
    fn fee_sample(&self) -> impl Future<Output = FeeSample>;
    /// `eth_estimateGas` for `tx` (its gas field is ignored).
    fn estimate_gas(&self, tx: &UnsignedTx) -> impl Future<Output = Result<u64, Self::Error>>;
    /// `eth_sendRawTransaction` through the pool's retry policies.
    fn send_raw(&self, raw: &[u8]) -> impl Future<Output = SendOutcome<Self::Error>>;
    /// The same bytes to every usable endpoint, best effort.
    fn rebroadcast(&self, raw: &[u8]) -> impl Future<Output = ()>;
    /// `eth_getTransactionReceipt`.
    fn receipt(&self, hash: B256) -> impl Future<Output = Result<Option<(ReceiptInfo, Self::Receipt)>, Self::Error>>;
    /// Whether any endpoint (several are asked) knows the hash, pending or mined.
    fn known(&self, hash: B256) -> impl Future<Output = bool>;
    /// Completes when the relayer closes.
    fn closing(&self) -> impl Future<Output = ()>;
    /// Whether the relayer is closed.
    fn is_closed(&self) -> bool;
}

/// What a signer produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signed {
    /// Signed bytes for us to broadcast.
    Raw(Vec<u8>),
    /// A wallet (EIP-1193 `eth_sendTransaction`) signed and sent it itself.
    SentByWallet(B256),
}

/// The caller's signer. Keys never cross this trait.
pub trait TxSigner<E> {
    /// The account it signs for.
    fn address(&self) -> Address;
    /// Signs (or, for a wallet, signs and sends) `tx`.
    fn sign(&self, tx: &UnsignedTx) -> impl Future<Output = Result<Signed, E>>;
    /// Whether a signature stays here until we broadcast it (a key in
    /// process); a wallet that sends what it signs answers `false`.
    fn signs_locally(&self) -> bool {
        true
    }
}
