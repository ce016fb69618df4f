//! The transaction layer: nonces, fees, submission whose outcome may be
//! unknown, speed-up and cancel as one state machine per nonce, and
//! receipt waiting — all on the provider pool.
//!
//! Pure parts ([`fees`], [`nonce`], [`slot`], [`receipt`], [`request`])
//! take every input as an argument; [`engine`] is the async shell that
//! drives them through a [`engine::TxNode`] (the pool) and a
//! [`engine::TxSigner`] (the caller's signer: keys never enter here).
//!
//! The rule everything else follows: once bytes may have reached a node,
//! their nonce is never handed out again and the same bytes are
//! re-broadcast instead of re-signed. A new signature for a nonce happens
//! only to speed up or cancel, and every hash ever sent stays watched.

use std::time::Duration;

use alloy_primitives::{Address, U256};

pub mod chain;
pub mod engine;
pub mod engine_fleet;
pub mod engine_journal;
mod engine_lookup;
pub mod engine_raw;
mod engine_replace;
mod engine_results;
mod engine_seams;
mod engine_send;
pub mod fees;
pub mod fleet_nonce;
pub mod journal_record;
pub mod nonce;
pub mod option_fields;
pub mod order;
pub mod receipt;
pub mod request;
pub mod send_outcome;
pub mod slot;

use fees::Fees;

/// A transaction ready to sign: every field decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsignedTx {
    /// Chain the signature is bound to.
    pub chain_id: u64,
    /// The sender.
    pub from: Address,
    /// The nonce from the account's book.
    pub nonce: u64,
    /// Recipient (`None` creates a contract).
    pub to: Option<Address>,
    /// Wei sent.
    pub value: U256,
    /// Calldata.
    pub data: Vec<u8>,
    /// Gas limit.
    pub gas: u64,
    /// What it pays per gas.
    pub fees: Fees,
}

impl UnsignedTx {
    /// The cancel for this nonce: a 0-value self-transfer with `fees`.
    pub fn cancel(&self, fees: Fees) -> UnsignedTx {
        UnsignedTx {
            chain_id: self.chain_id,
            from: self.from,
            nonce: self.nonce,
            to: Some(self.from),
            value: U256::ZERO,
            data: Vec::new(),
            gas: 21_000,
            fees,
        }
    }
}

/// Transaction-layer settings (relayer option `transactions`, overridable per call).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TxOptions {
    /// Blocks without inclusion before a speed-up (`maxWaitBlockCount`).
    pub max_wait_blocks: u64,
    /// Mean interval between receipt polls (each one jittered ±50 %).
    pub poll_interval: Duration,
    /// Fee increase of each replacement, in percent (at least 10; the
    /// result is always strictly above +10 %).
    pub bump_percent: u32,
    /// Highest `maxFeePerGas` (or `gasPrice`) any transaction may pay.
    pub fee_ceiling: Option<u128>,
    /// Blocks on top of the receipt's block (its own included) before done.
    pub confirmations: u64,
    /// Re-broadcast the pending bytes every this many polls.
    pub rebroadcast_every: u32,
    /// Fill nonce gaps below our transactions with 0-value self-transfers.
    pub repair_gaps: bool,
    /// At the fee ceiling, keep watching (re-broadcast, receipts, a bump
    /// once fees fall under the ceiling) instead of failing: how a nonce is
    /// kept after its caller got `FeeCeilingError` (`TxEngine::keep`).
    pub hold_at_ceiling: bool,
}

impl Default for TxOptions {
    fn default() -> Self {
        TxOptions {
            max_wait_blocks: 3,
            poll_interval: Duration::from_millis(4000),
            bump_percent: 12,
            fee_ceiling: None,
            confirmations: 1,
            rebroadcast_every: 3,
            repair_gaps: true,
            hold_at_ceiling: false,
        }
    }
}

#[cfg(test)]
mod tests;
