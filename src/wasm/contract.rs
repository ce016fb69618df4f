//! The names the JS side reads from the core, declared once: the `kind` of
//! every error descriptor and the `type` of every event. The descriptors
//! (descriptors.rs, tx.rs, batch.rs, core.rs, tx_node.rs) and the events
//! (descriptors.rs, tx_events.rs) use these constants, and the two
//! functions below export the lists, so js-tests/contract.test.mjs can
//! check the wrapper's error classes, its event list and the .d.ts against
//! what the core can produce.

use js_sys::Array;
use wasm_bindgen::prelude::*;

/// Declares names as string constants together with the list of all of
/// them, so no name can be used without being listed.
macro_rules! names {
    ($(#[$list_doc:meta])* $list:ident: $($(#[$doc:meta])* $name:ident = $value:literal,)+) => {
        $($(#[$doc])* pub const $name: &str = $value;)+
        $(#[$list_doc])*
        pub const $list: &[&str] = &[$($name),+];
    };
}

/// The `kind` of every error descriptor the core makes; the JS wrapper
/// gives each its error class (pkg-template/src/descriptors.js).
pub mod kind {
    names! {
        /// Every kind, for the JS contract.
        ALL:
        /// An option is wrong (ConfigError).
        CONFIG = "config",
        /// A call's arguments are wrong (InvalidRequestError).
        INVALID_REQUEST = "invalidRequest",
        /// The relayer is closed (ClosedError).
        CLOSED = "closed",
        /// A node's JSON-RPC error (RpcError).
        RPC = "rpc",
        /// An HTTP status or body that is no answer (HttpError).
        HTTP = "http",
        /// No answer came back (TransportError).
        TRANSPORT = "transport",
        /// An endpoint refused the credentials (AuthError).
        AUTH = "auth",
        /// A write may or may not have happened (OutcomeUnknownError).
        OUTCOME_UNKNOWN = "outcomeUnknown",
        /// The deadline passed (DeadlineError).
        DEADLINE = "deadline",
        /// The retry budget is spent (RetryBudgetError).
        BUDGET = "budget",
        /// Every endpoint is rate limited past the deadline (RateLimitedError).
        RATE_LIMITED = "rateLimited",
        /// Too many requests are waiting (OverloadError).
        OVERLOAD = "overload",
        /// No endpoint can serve the request (NoEndpointError).
        NO_ENDPOINT = "noEndpoint",
        /// A node's reply lacks what a transaction needs (no class of its own).
        INVALID_RESPONSE = "invalidResponse",
        /// A transaction request field is wrong (InvalidTransactionError).
        INVALID_TRANSACTION = "invalidTransaction",
        /// The signer is of no known kind, or on another chain (InvalidSignerError).
        INVALID_SIGNER = "invalidSigner",
        /// The signer refused or threw (SignerError).
        SIGNER = "signer",
        /// No fee data could be read (FeeDataError).
        FEE_DATA = "feeData",
        /// A replacement would pass the fee ceiling (FeeCeilingError).
        FEE_CEILING = "feeCeiling",
        /// A transaction not ours took the nonce (TransactionReplacedError).
        REPLACED_BY_OTHER = "replacedByOther",
        /// Nothing to cancel or wait for, or another sender keeps taking nonces (NonceStateError).
        NONCE_STATE = "nonceState",
        /// No node has the transaction and re-sending is refused (TransactionDroppedError).
        DROPPED = "dropped",
        /// The fleet's store (nonce book, journal) could not answer (CoordinationError).
        COORDINATION = "coordination",
    }
}

/// The `type` of every event the core emits: the pipeline's
/// (descriptors::event), then the transactions' (tx_events::event_js).
pub mod event_type {
    names! {
        /// Every event type, for the JS contract.
        ALL:
        /// A retry is scheduled.
        RETRY = "retry",
        /// The next attempt goes to another endpoint.
        FAILOVER = "failover",
        /// A slow read got a second attempt elsewhere.
        HEDGE = "hedge",
        /// A circuit breaker changed state.
        BREAKER = "breaker",
        /// A quota group was rate limited and rests.
        RATE_LIMITED = "rateLimited",
        /// An endpoint serves another chain and was disabled.
        CHAIN_MISMATCH = "chainMismatch",
        /// A request was refused: the wait queue is full.
        OVERLOAD = "overload",
        /// A node took a transaction.
        TX_SUBMITTED = "txSubmitted",
        /// A dead relayer's journaled nonce was taken over.
        TX_ADOPTED = "txAdopted",
        /// A broadcast got no settling answer.
        TX_UNKNOWN = "txUnknown",
        /// The pending bytes were sent again.
        TX_REBROADCAST = "txRebroadcast",
        /// A speed-up was signed and sent.
        SPEED_UP = "speedUp",
        /// A cancel was signed and sent.
        CANCEL = "cancel",
        /// A receipt appeared but is not final yet.
        TX_INCLUDED = "txIncluded",
        /// A receipt seen before vanished or moved.
        REORG = "reorg",
        /// The original transaction of a nonce was mined.
        TX_MINED = "txMined",
        /// A speed-up or cancel of a nonce was mined.
        REPLACED = "replaced",
        /// The account's nonce was ahead of the relayer's book.
        NONCE_RESYNC = "nonceResync",
        /// Nonces are missing on the node below ours.
        NONCE_GAP = "nonceGap",
    }
}

fn js_list(names: &[&str]) -> Array {
    names.iter().map(|&name| JsValue::from_str(name)).collect()
}

/// Every `kind` an error descriptor from the core can carry (read by the
/// contract test; the wrapper does not need it at run time).
#[wasm_bindgen(js_name = errorKinds)]
pub fn error_kinds() -> Array {
    js_list(kind::ALL)
}

/// Every event `type` the core can emit (read by the contract test; the
/// wrapper does not need it at run time).
#[wasm_bindgen(js_name = eventTypes)]
pub fn event_types() -> Array {
    js_list(event_type::ALL)
}
