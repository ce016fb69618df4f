// Types of breakwater-rpc: the typed errors, their kinds and type guards.

import type { ErrorClassName } from './options.js';

/** One attempt in an error's history. */
export interface AttemptInfo {
  endpoint: string;
  endpointIndex: number;
  class: ErrorClassName;
  rule: string;
  startedAfterMs: number;
  elapsedMs: number;
}

/**
 * Kinds of breakwater errors. `invalidResponse` (a node's reply without the chain id or quantity a transaction
 * needed) has no class of its own: it is a plain BreakwaterError.
 */
export type ErrorKind =
  | 'config' | 'rpc' | 'http' | 'transport' | 'deadline' | 'budget' | 'rateLimited'
  | 'outcomeUnknown' | 'closed' | 'invalidRequest' | 'overload' | 'noEndpoint' | 'auth' | 'internal' | 'unknown'
  | 'invalidTransaction' | 'feeCeiling' | 'signer' | 'invalidSigner' | 'replacedByOther' | 'nonceState' | 'coordination' | 'feeData'
  | 'dropped' | 'invalidResponse';

/** Base of every error this library throws. */
export declare class BreakwaterError extends Error {
  /** What went wrong. */
  readonly kind: ErrorKind;
  /** The node's JSON-RPC code for `rpc` errors; an EIP-1193/EIP-1474 code for our own. */
  readonly code: number;
  /** The message without the attempt count. */
  readonly shortMessage: string;
  /**
   * How the retry loop ended: notRetryable, attemptsExhausted, deadline, budget, rateLimited, overload,
   * noEndpoint, closed. (Not `reason`, which ethers uses for a revert's reason string.)
   */
  readonly stopReason?: string;
  /** Classification of the last attempt. */
  readonly class?: ErrorClassName;
  /** Classification rule that matched. */
  readonly rule?: string;
  /** Redacted label of the last endpoint tried. */
  readonly endpoint?: string;
  /** Attempts made. */
  readonly attempts: number;
  /** Every attempt. */
  readonly history: AttemptInfo[];
  /** Server-requested wait, if any. */
  readonly retryAfterMs?: number;
  /**
   * `DeadlineError` that stopped before its deadline rather than wait it out: how soon an attempt could
   * next have started (after a retry's backoff, or once an endpoint came free; either past the deadline).
   * `RateLimitedError` told at once: how soon the key is usable again (a 429's cooldown), or how long
   * the requests already waiting for its plan would take (a read shed past half its deadline).
   */
  readonly nextChanceMs?: number;
  /** Transaction errors: the nonce concerned. */
  readonly nonce?: number;
  /** Transaction errors after a broadcast: every hash sent (they may still be mined). */
  readonly hashes?: string[];
  /** The transaction hash concerned (waitForReceipt timeouts, unknown hashes). */
  readonly hash?: string;
}
export declare class ConfigError extends BreakwaterError { readonly kind: 'config'; readonly field: string; }
/**
 * A node's JSON-RPC error. `code` is the node's, except when the relayer retried it, gave up, and the code is one a
 * wrapper would retry (-32603, -32005, unknown codes): then -32002 (viem and ethers do not retry it) and
 * `stopReason: 'attemptsExhausted'`. `rpcCode` is always the node's; `status`, the HTTP error status it came with
 * (absent for the usual 200).
 */
export declare class RpcError extends BreakwaterError { readonly kind: 'rpc'; readonly data?: unknown; readonly rpcCode?: number; readonly status?: number; }
export declare class HttpError extends BreakwaterError { readonly kind: 'http'; readonly status: number; }
export declare class TransportError extends BreakwaterError {
  readonly kind: 'transport';
  readonly transport: 'timeout' | 'refused' | 'reset' | 'dns' | 'aborted' | 'network';
}
export declare class DeadlineError extends BreakwaterError { readonly kind: 'deadline'; }
export declare class RetryBudgetError extends BreakwaterError { readonly kind: 'budget'; }
export declare class RateLimitedError extends BreakwaterError { readonly kind: 'rateLimited'; }
export declare class OutcomeUnknownError extends BreakwaterError { readonly kind: 'outcomeUnknown'; }
export declare class ClosedError extends BreakwaterError { readonly kind: 'closed'; }
export declare class InvalidRequestError extends BreakwaterError { readonly kind: 'invalidRequest'; }
export declare class OverloadError extends BreakwaterError { readonly kind: 'overload'; }
/**
 * No endpoint can serve the request: a method no endpoint allows, or every endpoint on another chain
 * (then `expectedChainId` and `chains` say what was expected and what each serves). Also thrown before
 * signing when no `chainId` is set and the endpoints disagree on the chain (`chains`, no `expectedChainId`).
 */
export declare class NoEndpointError extends BreakwaterError {
  readonly kind: 'noEndpoint';
  readonly expectedChainId?: number;
  readonly chains?: { endpoint: string; chainId: number }[];
}
/**
 * An endpoint refused the credentials (HTTP 401/403, or a body such as "invalid API key", "invalid project id",
 * "Must be authenticated!"). Never retried there: the endpoint stays out of service for 10 minutes and other
 * endpoints take the requests; thrown when no endpoint is left. `code` is 4100 (EIP-1193 unauthorized); `status`
 * or `rpcCode` says what the endpoint answered.
 */
export declare class AuthError extends BreakwaterError {
  readonly kind: 'auth';
  readonly status?: number;
  readonly rpcCode?: number;
}
/** A transaction request field is wrong; nothing was signed or sent. */
export declare class InvalidTransactionError extends BreakwaterError { readonly kind: 'invalidTransaction'; readonly field: string; }
/**
 * The next replacement would pass the fee ceiling (`nonce` and `hashes`: still pending, still tracked); or,
 * on a first send, the ceiling is below the next block's base fee (no `nonce`: nothing was signed).
 */
export declare class FeeCeilingError extends BreakwaterError {
  readonly kind: 'feeCeiling';
  readonly nonce?: number;
  readonly hashes?: string[];
  readonly needed: bigint;
  readonly ceiling: bigint;
}
/** The signer refused or threw (its error is `cause`); nothing was broadcast and the nonce was released. */
export declare class SignerError extends BreakwaterError { readonly kind: 'signer'; }
/**
 * Not an ethers Signer, viem local account, viem WalletClient with an account or EIP-1193 wallet; or a
 * signer bound to another chain than the relayer's (an ethers signer's provider, a viem client's `chain`).
 */
export declare class InvalidSignerError extends BreakwaterError { readonly kind: 'invalidSigner'; }

/** The nonce was used by a transaction that is not one of ours. */
export declare class TransactionReplacedError extends BreakwaterError { readonly kind: 'replacedByOther'; readonly nonce: number; readonly hashes: string[]; }
/** Nothing to cancel or wait for: the nonce is settled, or no such transaction is tracked by this relayer; or another sender keeps taking nonces. */
export declare class NonceStateError extends BreakwaterError { readonly kind: 'nonceState'; }
/** The fleet's store (Redis: shared nonce book, journal) could not answer: no nonce was guessed, nothing was broadcast. */
export declare class CoordinationError extends BreakwaterError { readonly kind: 'coordination'; }
/** No node has the transaction any more and re-sending it is refused (`cause`); its nonce is free again. */
export declare class TransactionDroppedError extends BreakwaterError { readonly kind: 'dropped'; readonly nonce: number; readonly hashes: string[]; }
/** No fee data could be read from the network. */
export declare class FeeDataError extends BreakwaterError { readonly kind: 'feeData'; }

export declare function isBreakwaterError(e: unknown): e is BreakwaterError;
export declare function isConfigError(e: unknown): e is ConfigError;
export declare function isRpcError(e: unknown): e is RpcError;
export declare function isHttpError(e: unknown): e is HttpError;
export declare function isTransportError(e: unknown): e is TransportError;
export declare function isDeadlineError(e: unknown): e is DeadlineError;
export declare function isRetryBudgetError(e: unknown): e is RetryBudgetError;
export declare function isRateLimitedError(e: unknown): e is RateLimitedError;
export declare function isOutcomeUnknownError(e: unknown): e is OutcomeUnknownError;
export declare function isClosedError(e: unknown): e is ClosedError;
export declare function isInvalidRequestError(e: unknown): e is InvalidRequestError;
export declare function isOverloadError(e: unknown): e is OverloadError;
export declare function isNoEndpointError(e: unknown): e is NoEndpointError;
export declare function isAuthError(e: unknown): e is AuthError;
export declare function isInvalidTransactionError(e: unknown): e is InvalidTransactionError;
export declare function isFeeCeilingError(e: unknown): e is FeeCeilingError;
export declare function isSignerError(e: unknown): e is SignerError;
export declare function isInvalidSignerError(e: unknown): e is InvalidSignerError;
export declare function isTransactionReplacedError(e: unknown): e is TransactionReplacedError;
export declare function isNonceStateError(e: unknown): e is NonceStateError;
export declare function isCoordinationError(e: unknown): e is CoordinationError;
export declare function isFeeDataError(e: unknown): e is FeeDataError;
export declare function isTransactionDroppedError(e: unknown): e is TransactionDroppedError;
