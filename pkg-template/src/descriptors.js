// Engine descriptors → typed errors. The wasm core fails with plain
// objects (`{ kind, code, message, … }`, src/wasm/descriptors.rs); this
// module is the one place that turns them into the classes of errors.js
// and throws them. Internal: not part of the public API.

import {
  AuthError, BreakwaterError, ClosedError, ConfigError, DeadlineError, FeeCeilingError, FeeDataError, HttpError,
  InvalidRequestError, InvalidSignerError, InvalidTransactionError, NoEndpointError, NonceStateError, CoordinationError,
  OutcomeUnknownError, OverloadError, RateLimitedError, RetryBudgetError, RpcError, SignerError,
  TransactionDroppedError, TransactionReplacedError, TransportError, isBreakwaterError,
} from './errors.js';

/**
 * The class of every error kind the core can produce (the core's own list:
 * `errorKinds()` in src/wasm/contract.rs; js-tests/contract.test.mjs keeps
 * the two equal). A kind without a class of its own maps to BreakwaterError.
 */
export const ERROR_CLASSES = {
  invalidTransaction: InvalidTransactionError,
  feeCeiling: FeeCeilingError,
  signer: SignerError,
  invalidSigner: InvalidSignerError,
  replacedByOther: TransactionReplacedError,
  nonceState: NonceStateError,
  coordination: CoordinationError,
  feeData: FeeDataError,
  dropped: TransactionDroppedError,
  config: ConfigError,
  rpc: RpcError,
  http: HttpError,
  transport: TransportError,
  deadline: DeadlineError,
  budget: RetryBudgetError,
  rateLimited: RateLimitedError,
  outcomeUnknown: OutcomeUnknownError,
  closed: ClosedError,
  invalidRequest: InvalidRequestError,
  overload: OverloadError,
  noEndpoint: NoEndpointError,
  auth: AuthError,
  // A node's reply without the chain id or quantity a transaction needed: no class of its own.
  invalidResponse: BreakwaterError,
};

/** Turns a descriptor from the wasm core into a typed error (`extraCause`: the error to hang under it). */
export function toError(descriptor, extraCause) {
  if (descriptor instanceof Error && !isBreakwaterError(descriptor)) {
    // Not one of ours (a wasm trap, say): keep it, wrapped with a kind.
    return new BreakwaterError({ kind: 'internal', message: String(descriptor.message || descriptor) }, { cause: descriptor });
  }
  if (isBreakwaterError(descriptor)) return descriptor;
  const d = descriptor || {};
  const Class = ERROR_CLASSES[d.kind] || BreakwaterError;
  // A wrapped provider's own error is the cause of the innermost of ours.
  let cause = extraCause === undefined && d.upstreamError !== undefined ? d.upstreamError : extraCause;
  // A foreign error (a signer's own, say) stays itself as the cause.
  if (d.cause) cause = d.cause instanceof Error && !isBreakwaterError(d.cause) ? d.cause : toError(d.cause, cause);
  return cause === undefined ? new Class(d) : new Class(d, { cause });
}

/**
 * Throws what an engine call failed with, as its caller must see it; the
 * one place every method's failure is thrown from.
 * - `signal`: the call's AbortSignal. When it aborted and the failure is
 *   its reason, the reason is thrown as it is (the platform's convention,
 *   as fetch does).
 * - `operation: true` (executeRpcWithRetry): the descriptor carries the
 *   operation's own last error (`operationError`). A failure that must not
 *   be retried is that error, thrown as it is; any other failure keeps it
 *   as the `cause` of the typed error.
 * Otherwise the descriptor is thrown as a typed error (toError).
 * @param {any} descriptor
 * @param {{ signal?: AbortSignal, operation?: boolean }} [options]
 * @returns {never}
 */
export function raise(descriptor, { signal, operation = false } = {}) {
  if (signal && signal.aborted && descriptor === signal.reason) throw descriptor;
  const original = operation ? descriptor && descriptor.operationError : undefined;
  if (original !== undefined && descriptor && descriptor.reason === 'notRetryable') throw original;
  throw toError(descriptor, original);
}

/**
 * Calls into the engine: a descriptor it throws, or rejects its promise
 * with, is thrown as a typed error (raise).
 */
export function engineCall(call) {
  let out;
  try {
    out = call();
  } catch (descriptor) {
    raise(descriptor);
  }
  return out instanceof Promise ? out.then(undefined, raise) : out;
}
