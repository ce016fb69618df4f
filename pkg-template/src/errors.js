// Typed errors of breakwater-rpc and their guards: everything this module
// exports is public API (every entry re-exports it whole; what turns an
// engine descriptor into one of these lives in descriptors.js). Errors
// carry a `kind` brand and a global symbol, so the is*Error guards work
// across package copies and across the wasm boundary, where `instanceof`
// does not.

const BRAND = Symbol.for('breakwater-rpc.error');

export class BreakwaterError extends Error {
  constructor(descriptor, options) {
    const d = descriptor || {};
    const short = d.message || 'breakwater-rpc error';
    super(short, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'BreakwaterError';
    this.kind = d.kind || 'unknown';
    this.code = typeof d.code === 'number' ? d.code : -32603;
    this.shortMessage = short;
    // How the retry loop ended. Not `reason`: ethers' errors use that for a revert's reason string.
    this.stopReason = d.reason;
    this.class = d.class;
    this.rule = d.rule;
    this.endpoint = d.endpoint;
    this.attempts = typeof d.attempts === 'number' ? d.attempts : 0;
    this.history = Array.isArray(d.history) ? d.history : [];
    if (d.retryAfterMs !== undefined) this.retryAfterMs = d.retryAfterMs;
    // A deadline stop before the deadline: how soon an endpoint could have taken the request.
    if (d.nextChanceMs !== undefined) this.nextChanceMs = d.nextChanceMs;
    // Transaction context: which nonce, which hashes are still out there.
    if (d.nonce !== undefined) this.nonce = d.nonce;
    if (Array.isArray(d.hashes)) this.hashes = d.hashes;
    if (d.hash !== undefined) this.hash = d.hash;
    // Chain context: which chain was expected, what each endpoint serves.
    if (d.expectedChainId !== undefined) this.expectedChainId = d.expectedChainId;
    if (Array.isArray(d.chains)) this.chains = d.chains;
    Object.defineProperty(this, BRAND, { value: true });
    if (d.observation) Object.defineProperty(this, 'observation', { value: d.observation });
    if (this.attempts > 1 && !/\battempt/.test(short)) this.message = `${short} (after ${this.attempts} attempts)`;
  }
}

export class ConfigError extends BreakwaterError {
  constructor(d) {
    super(d);
    this.name = 'ConfigError';
    this.field = d.field;
  }
}

export class RpcError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'RpcError';
    if (d.data !== undefined) this.data = d.data;
    // The node's own JSON-RPC code (also when `code` is -32002: the relayer retried it and gave up).
    if (typeof d.rpcCode === 'number') this.rpcCode = d.rpcCode;
  }
}

export class HttpError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'HttpError';
    this.status = d.status;
  }
}

export class AuthError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'AuthError';
    // What the endpoint answered: an HTTP status, or a JSON-RPC error code.
    if (typeof d.status === 'number') this.status = d.status;
    if (typeof d.rpcCode === 'number') this.rpcCode = d.rpcCode;
  }
}

export class TransportError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'TransportError';
    this.transport = d.transport;
  }
}

/** A BreakwaterError subclass that only adds its name. */
function plainErrorClass(name) {
  const Class = class extends BreakwaterError {
    constructor(d, options) {
      super(d, options);
      this.name = name;
    }
  };
  Object.defineProperty(Class, 'name', { value: name });
  return Class;
}

export const DeadlineError = plainErrorClass('DeadlineError');
export const RetryBudgetError = plainErrorClass('RetryBudgetError');
export const RateLimitedError = plainErrorClass('RateLimitedError');
export const OutcomeUnknownError = plainErrorClass('OutcomeUnknownError');
export const ClosedError = plainErrorClass('ClosedError');
export const InvalidRequestError = plainErrorClass('InvalidRequestError');
export const OverloadError = plainErrorClass('OverloadError');
export const NoEndpointError = plainErrorClass('NoEndpointError');

export class InvalidTransactionError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'InvalidTransactionError';
    this.field = d.field;
  }
}

export class FeeCeilingError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'FeeCeilingError';
    this.needed = d.needed === undefined ? undefined : BigInt(d.needed);
    this.ceiling = d.ceiling === undefined ? undefined : BigInt(d.ceiling);
  }
}

export const SignerError = plainErrorClass('SignerError');
export const InvalidSignerError = plainErrorClass('InvalidSignerError');
export const TransactionReplacedError = plainErrorClass('TransactionReplacedError');
export const NonceStateError = plainErrorClass('NonceStateError');
export const FeeDataError = plainErrorClass('FeeDataError');
export const TransactionDroppedError = plainErrorClass('TransactionDroppedError');
export const CoordinationError = plainErrorClass('CoordinationError');

const isKind = (kind) => (error) => isBreakwaterError(error) && error.kind === kind;
export function isBreakwaterError(error) {
  return typeof error === 'object' && error !== null && error[BRAND] === true;
}
export const isConfigError = isKind('config');
export const isRpcError = isKind('rpc');
export const isHttpError = isKind('http');
export const isTransportError = isKind('transport');
export const isDeadlineError = isKind('deadline');
export const isRetryBudgetError = isKind('budget');
export const isRateLimitedError = isKind('rateLimited');
export const isOutcomeUnknownError = isKind('outcomeUnknown');
export const isClosedError = isKind('closed');
export const isInvalidRequestError = isKind('invalidRequest');
export const isOverloadError = isKind('overload');
export const isNoEndpointError = isKind('noEndpoint');
export const isAuthError = isKind('auth');
export const isInvalidTransactionError = isKind('invalidTransaction');
export const isFeeCeilingError = isKind('feeCeiling');
export const isSignerError = isKind('signer');
export const isInvalidSignerError = isKind('invalidSigner');
export const isTransactionReplacedError = isKind('replacedByOther');
export const isNonceStateError = isKind('nonceState');
export const isFeeDataError = isKind('feeData');
export const isTransactionDroppedError = isKind('dropped');
export const isCoordinationError = isKind('coordination');
