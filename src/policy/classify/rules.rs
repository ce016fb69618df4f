//! The built-in classification table. One row per known signal, each with
//! the source it was seen in (see `shared/reference/rpc-errors.md`).
//!
//! Message needles are lower-case substrings that must start at a word
//! boundary (so `known transaction` does not match `unknown transaction`).
//! Rows are checked top to bottom: send-specific rows first (so a
//! "nonce too low" is never retried), then quota, revert, freshness,
//! capability, fatal, and finally a fallback by code alone.

use super::{ErrorClass, TransportFailure, Verdict};
use crate::text;
use ErrorClass::*;

/// Methods that submit a transaction.
pub fn is_send(method: &str) -> bool {
    matches!(method, "eth_sendRawTransaction" | "eth_sendTransaction" | "eth_sendRawTransactionSync")
}

/// Whether re-sending after an unknown outcome is harmless: signed raw
/// bytes are idempotent by hash; `eth_sendTransaction` (node-side signing)
/// is not, and neither are methods with side effects we do not know.
pub fn replay_safe_on_unknown(method: &str) -> bool {
    method != "eth_sendTransaction"
}

/// Where a row applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    Any,
    Send,
}

/// One row of the table.
struct Row {
    id: &'static str,
    scope: Scope,
    /// Any of these codes (empty: any code).
    codes: &'static [i64],
    /// Any of these needles (empty: any message).
    needles: &'static [&'static str],
    class: ErrorClass,
    health_failure: bool,
}

const fn row(
    id: &'static str,
    scope: Scope,
    codes: &'static [i64],
    needles: &'static [&'static str],
    class: ErrorClass,
    health_failure: bool,
) -> Row {
    Row { id, scope, codes, needles, class, health_failure }
}

/// Message fragments that mean the quota will not return within minutes.
const LONG_HORIZON: &[&str] = &["daily", "monthly", "payment required", "credit limit", "plan limit"];

#[rustfmt::skip]
const TABLE: &[Row] = &[
    // --- eth_sendRawTransaction outcomes (§4) ---
    // geth/reth/Nethermind "already known"; Besu/EDR "Known transaction"; Anvil "transaction already imported";
    // Erigon "ALREADY_EXISTS"; old Nethermind "AlreadyKnown"; Parity "already imported".
    row("send.already_known", Scope::Send, &[], &["already known", "known transaction", "transaction already imported",
        "alreadyknown", "already imported", "already_exists", "already in the system"], AlreadyKnown, false),
    // geth/reth/Anvil/Erigon "nonce too low"; Besu "Nonce too low"; EDR "Transaction nonce too low"; old Nethermind "OldNonce".
    row("send.nonce_too_low", Scope::Send, &[], &["nonce too low", "oldnonce"], NonceTooLow, false),
    // geth/reth/Besu/Anvil "replacement transaction underpriced"; Erigon "could not replace existing tx"; old Nethermind.
    row("send.replacement_underpriced", Scope::Send, &[], &["replacement transaction underpriced",
        "could not replace existing tx", "replacementnotallowed"], ReplacementUnderpriced, false),
    // geth/reth "txpool is full", geth "account limit exceeded": node-local pressure, another node may take it.
    row("send.pool_pressure", Scope::Send, &[], &["txpool is full", "transaction pool is full",
        "account limit exceeded", "in-flight transaction limit"], Transient, false),
    // Besu -32001 is "Nonce too low" on sends; -32004 "Upfront cost exceeds account balance"; -32003 tx rejected.
    row("send.rejected_codes", Scope::Send, &[-32003, -32004, -32006, -32009], &[], Fatal, false),

    // --- quota (§3.1): cool down the quota group, never a health failure ---
    // Alchemy "compute units per second"; Infura "project ID request rate exceeded", "daily request count exceeded";
    // QuickNode "request limit reached", "credits limited"; alloy's generic rate-limit words.
    row("quota.text", Scope::Any, &[], &["rate limit", "rate exceeded", "too many requests", "credits limited",
        "request limit", "compute units per second", "compute unit", "capacity limit", "throughput limit",
        "maximum number of concurrent requests", "daily request count exceeded", "try again in", "quota exceeded",
        "exceeded the quota", "exceeded your", "payment required", "daily credit limit"], RateLimited, false),
    // 429 in the body (Alchemy, QuickNode); -32007 QuickNode; -32012 QuickNode credits; -32029 TheRPC; -32055 Cloudflare.
    row("quota.codes", Scope::Any, &[429, -32007, -32012, -32029, -32055], &[], RateLimited, false),

    // --- reverts (§3.4): the request is wrong, never retry ---
    // geth/reth/Anvil/Besu code 3; geth -32000 "execution reverted"/"gas required exceeds allowance";
    // EDR "reverted with reason string", "VM Exception"; Parity/Nethermind -32015 "Reverted 0x…".
    row("revert.code", Scope::Any, &[3, -32015], &[], Fatal, false),
    row("revert.text", Scope::Any, &[], &["execution reverted", "reverted with", "vm exception", "transaction reverted",
        "gas required exceeds allowance", "revert"], Fatal, false),

    // --- freshness (§3.3): this node is behind; another may have the block ---
    // geth "header not found", "unknown block"; reth "block not found"; geth/reth "beyond current head block",
    // "request beyond head block"; geth "transaction indexing is in progress"; Besu/Nethermind -39001.
    row("lag.text", Scope::Any, &[], &["header not found", "unknown block", "block not found", "beyond current head",
        "beyond head block", "transaction indexing is in progress"], Transient, false),
    row("lag.code", Scope::Any, &[-39001], &[], Transient, false),

    // --- capability (§3.2): this endpoint cannot do it; not a health failure ---
    // -32601 method not found everywhere; Besu -32604 "Method not enabled"; EIP-1193 4200; 4444 pruned history.
    row("capability.codes", Scope::Any, &[-32601, -32604, 4200, 4444], &[], Capability, false),
    // geth "does not exist/is not available"; EDR "Method not supported"; getLogs range/size limits (reth, geth,
    // Nethermind, Besu, Infura, Alchemy, Ankr, ponder's list); pruned state (geth, Nethermind, Besu, reth);
    // geth "execution aborted (timeout", "batch too large", "response too large".
    row("capability.text", Scope::Any, &[], &["does not exist", "method not found", "not supported", "not enabled",
        "max block range", "block range", "range exceeds", "range is too", "range too large",
        "too many logs", "query returned more than", "max results", "response size", "too large", "limited to",
        "maximum allowed number of requested blocks", "missing trie node", "historical state", "is pruned",
        "pruned history", "no state available", "world state unavailable", "execution aborted (timeout",
        "batch too large"], Capability, false),

    // --- credentials (§3.5): the endpoint refused the key; never retried there ---
    // Infura "invalid project id"; Alchemy "Must be authenticated!", "Unspecified origin not on whitelist";
    // QuickNode/Ankr "Unauthorized", "invalid API key"; Besu -40100 "Unauthorized" (permissioning).
    row("auth.text", Scope::Any, &[], &["invalid api key", "invalid project id", "must be authenticated",
        "authentication failed", "authentication required", "unauthorized", "api key is invalid",
        "api key not found", "invalid key", "not on whitelist", "origin not allowed"], Unauthorized, false),
    row("auth.codes", Scope::Any, &[-40100], &[], Unauthorized, false),

    // --- execution-apis (eth_simulateV1, tracing): the input is wrong, another node says the same ---
    // geth internal/ethapi/errors.go, Nethermind ErrorCodes.cs: -38010…-38025 nonce, fees, gas, sender,
    // init code, block number and timestamp order of the simulated blocks.
    row("simulate.input", Scope::Any, &[-38010, -38011, -38012, -38013, -38014, -38015, -38016, -38017, -38018,
        -38019, -38020, -38021, -38022, -38023, -38024, -38025], &[], Fatal, false),
    // -38026 "too many blocks/calls": this client's limit; another may allow more.
    row("simulate.limit", Scope::Any, &[-38026], &[], Capability, false),
    // geth simulate "is not a precompile" (MovePrecompileTo), tracers "genesis is not traceable",
    // eth_call/simulate "nonce has max value" (-32603 in the fixtures).
    row("fatal.deterministic", Scope::Any, &[], &["is not a precompile", "genesis is not traceable",
        "nonce has max value", "already overridden", "cannot move precompile"], Fatal, false),

    // --- fatal (§3.4, §4): malformed or impossible requests ---
    row("fatal.text", Scope::Any, &[], &["insufficient funds", "intrinsic gas too low", "invalid sender",
        "invalid signature", "exceeds block gas limit", "gas limit reached", "exceeds the configured cap",
        "fee cap exceeded", "nonce too high", "transaction underpriced", "gas price below", "fee too low",
        "max fee per gas less than block base fee", "max priority fee per gas higher than max fee per gas",
        "only replay-protected", "wrong chainid", "invalid chain id", "invalid argument", "invalid params",
        "hex string without 0x prefix", "user rejected", "user denied", "upfront cost exceeds"], Fatal, false),
    // JSON-RPC invalid params/request/parse; EIP-1193 user rejected/unauthorized; EIP-1474 version.
    row("fatal.codes", Scope::Any, &[-32602, -32600, -32700, -32006, 4001, 4100], &[], Fatal, false),

    // --- fallback by code (§3.5) ---
    // -32005 without recognisable text: alloy and viem treat it as a limit signal.
    row("fallback.limit", Scope::Any, &[-32005], &[], RateLimited, false),
    // Server-side trouble by code: -32002 (geth "request timed out"), Nethermind -32016/-32017 timeouts,
    // EIP-1193 disconnected 4900/4901: retry elsewhere, count against health.
    row("fallback.server", Scope::Any, &[-32002, -32016, -32017, 4900, 4901], &[], Transient, true),
    // …or by words, whatever the code (-32603 "internal error", -32000 "request timed out").
    row("fallback.server_text", Scope::Any, &[], &["internal error", "timeout", "timed out", "temporarily",
        "unavailable", "try again", "overloaded", "busy", "connection", "upstream", "gateway"],
        Transient, true),
    // Anything else, from a node that answers: maybe deterministic in words we do not know. One retry on
    // another endpoint; none when it says the same (the pipeline compares code and message).
    // The node answered: not an infrastructure failure (breakers count those only).
    row("fallback.unknown", Scope::Any, &[], &[], Transient, false),
];

/// Classifies a JSON-RPC error object.
pub fn rpc_error(code: Option<i64>, message: &str, send: bool) -> Verdict {
    let lower = message.to_ascii_lowercase();
    for r in TABLE {
        if r.scope == Scope::Send && !send {
            continue;
        }
        let code_ok = r.codes.is_empty() || code.is_some_and(|c| r.codes.contains(&c));
        let text_ok = r.needles.is_empty() || r.needles.iter().any(|n| contains_word(&lower, n));
        if code_ok && text_ok {
            let mut v = Verdict::new(r.class, r.id, r.health_failure);
            v.long_horizon = r.class == RateLimited && LONG_HORIZON.iter().any(|n| text::contains(&lower, n));
            v.once_elsewhere = r.id == "fallback.unknown";
            return v;
        }
    }
    unreachable_fallback()
}

fn unreachable_fallback() -> Verdict {
    // The last row matches everything; kept as a value, not a panic.
    Verdict { once_elsewhere: true, ..Verdict::new(Transient, "fallback.unknown", false) }
}

/// Classifies a non-2xx HTTP status (`None` for 2xx/3xx, which the body decides).
pub fn status(status: u16) -> Option<Verdict> {
    let v = match status {
        429 => Verdict::new(RateLimited, "http.429", false),
        402 => {
            // Infura: daily credit exhausted (until 00:00 UTC).
            let mut v = Verdict::new(RateLimited, "http.402", false);
            v.long_horizon = true;
            v
        }
        408 => Verdict::new(Transient, "http.408", true),
        413 => Verdict::new(Capability, "http.413", false),
        // The key was refused: this endpoint stays out; another may work.
        401 | 403 => Verdict::new(Unauthorized, "http.auth", false),
        // Wrong URL, disabled endpoint: this endpoint is unusable, another may work.
        404 => Verdict::new(Transient, "http.endpoint_config", true),
        // A redirect the sender did not follow (301/302/303: a POST is never re-sent as
        // a GET; too many hops; https down to http): the URL is out of date. Like a 404,
        // this endpoint is unusable and another may work.
        300..=399 => Verdict::new(Transient, "http.redirect", true),
        400..=499 => Verdict::new(Fatal, "http.4xx", false),
        500..=599 => Verdict::new(Transient, "http.5xx", true),
        _ => return None,
    };
    Some(v)
}

/// A chain check answered with a reply that is no chain id ("banana",
/// "0x", a decimal "1"): the node is broken or hostile, and its reply is
/// never an answer (a new user saw `eth_getBalance` resolve to "banana":
/// the check's reply stood for the request's attempt, as a success). Safe
/// to try elsewhere: the request itself was never sent.
pub fn not_a_chain_id() -> Verdict {
    Verdict { undelivered: true, ..Verdict::new(Transient, "chain.not_a_chain_id", true) }
}

/// Classifies a transport failure. `replay_safe` says whether the request
/// may be sent again when it is unknown whether the node received it.
pub fn transport(failure: &TransportFailure, replay_safe: bool) -> Verdict {
    let maybe_delivered = |id: &'static str| {
        if replay_safe {
            Verdict::new(Transient, id, true)
        } else {
            Verdict::new(OutcomeUnknown, id, true)
        }
    };
    match failure {
        TransportFailure::Timeout => maybe_delivered("transport.timeout"),
        TransportFailure::ConnectionReset => maybe_delivered("transport.reset"),
        TransportFailure::Network(_) => maybe_delivered("transport.network"),
        // Nothing reached the node: always safe to try elsewhere.
        TransportFailure::ConnectionRefused => {
            Verdict { undelivered: true, ..Verdict::new(Transient, "transport.refused", true) }
        }
        TransportFailure::Dns => Verdict { undelivered: true, ..Verdict::new(Transient, "transport.dns", true) },
        TransportFailure::Aborted => Verdict::new(Fatal, "transport.aborted", false),
    }
}

/// `needle` occurs in `haystack` starting at a word boundary.
fn contains_word(haystack: &str, needle: &str) -> bool {
    let bytes = haystack.as_bytes();
    // The byte before a match: an ASCII letter or digit joins the word (UTF-8 continuation bytes never are).
    text::match_starts(haystack, needle).any(|at| at == 0 || !bytes[at - 1].is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_boundary_matching() {
        assert!(contains_word("known transaction: 0xab", "known transaction"));
        assert!(!contains_word("unknown transaction", "known transaction"));
        assert!(contains_word("err: nonce too low", "nonce too low"));
        assert!(contains_word("a unknown b known transaction", "known transaction"));
    }

    #[test]
    fn every_row_has_a_unique_id() {
        let mut ids: Vec<_> = TABLE.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), TABLE.len());
        assert!(
            TABLE.last().is_some_and(|r| r.codes.is_empty() && r.needles.is_empty()),
            "last row must be a catch-all"
        );
    }
}
