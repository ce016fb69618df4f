// Typed errors of breakwater-rpc. Shared by every entry point (the build
// concatenates this file into each one). Errors carry a `kind` brand and
// a global symbol, so the is*Error guards work across package copies and
// across the wasm boundary, where `instanceof` does not.

const BRAND = Symbol.for('breakwater-rpc.error');

class BreakwaterError extends Error {
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

class ConfigError extends BreakwaterError {
  constructor(d) {
    super(d);
    this.name = 'ConfigError';
    this.field = d.field;
  }
}

class RpcError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'RpcError';
    if (d.data !== undefined) this.data = d.data;
    // The node's own JSON-RPC code (also when `code` is -32002: the relayer retried it and gave up).
    if (typeof d.rpcCode === 'number') this.rpcCode = d.rpcCode;
  }
}

class HttpError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'HttpError';
    this.status = d.status;
  }
}

class AuthError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'AuthError';
    // What the endpoint answered: an HTTP status, or a JSON-RPC error code.
    if (typeof d.status === 'number') this.status = d.status;
    if (typeof d.rpcCode === 'number') this.rpcCode = d.rpcCode;
  }
}

class TransportError extends BreakwaterError {
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

const DeadlineError = plainErrorClass('DeadlineError');
const RetryBudgetError = plainErrorClass('RetryBudgetError');
const RateLimitedError = plainErrorClass('RateLimitedError');
const OutcomeUnknownError = plainErrorClass('OutcomeUnknownError');
const ClosedError = plainErrorClass('ClosedError');
const InvalidRequestError = plainErrorClass('InvalidRequestError');
const OverloadError = plainErrorClass('OverloadError');
const NoEndpointError = plainErrorClass('NoEndpointError');

class InvalidTransactionError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'InvalidTransactionError';
    this.field = d.field;
  }
}

class FeeCeilingError extends BreakwaterError {
  constructor(d, options) {
    super(d, options);
    this.name = 'FeeCeilingError';
    this.needed = d.needed === undefined ? undefined : BigInt(d.needed);
    this.ceiling = d.ceiling === undefined ? undefined : BigInt(d.ceiling);
  }
}

const SignerError = plainErrorClass('SignerError');
const InvalidSignerError = plainErrorClass('InvalidSignerError');
const TransactionReplacedError = plainErrorClass('TransactionReplacedError');
const NonceStateError = plainErrorClass('NonceStateError');
const FeeDataError = plainErrorClass('FeeDataError');
const TransactionDroppedError = plainErrorClass('TransactionDroppedError');

const ERROR_CLASSES = {
  invalidTransaction: InvalidTransactionError,
  feeCeiling: FeeCeilingError,
  signer: SignerError,
  invalidSigner: InvalidSignerError,
  replacedByOther: TransactionReplacedError,
  nonceState: NonceStateError,
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
};

/** Turns a descriptor from the wasm core into a typed error. */
function toError(descriptor, extraCause) {
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

/** Rethrows an engine descriptor as a typed error (for `.then(undefined, rethrow)`). */
function rethrow(descriptor) {
  throw toError(descriptor);
}

/**
 * Calls into the engine: a descriptor it throws, or rejects its promise
 * with, becomes a typed error. The one place that conversion is written.
 */
function engineCall(call) {
  let out;
  try {
    out = call();
  } catch (descriptor) {
    throw toError(descriptor);
  }
  return out instanceof Promise ? out.then(undefined, rethrow) : out;
}

const isKind = (kind) => (error) => isBreakwaterError(error) && error.kind === kind;
function isBreakwaterError(error) {
  return typeof error === 'object' && error !== null && error[BRAND] === true;
}
const isConfigError = isKind('config');
const isRpcError = isKind('rpc');
const isHttpError = isKind('http');
const isTransportError = isKind('transport');
const isDeadlineError = isKind('deadline');
const isRetryBudgetError = isKind('budget');
const isRateLimitedError = isKind('rateLimited');
const isOutcomeUnknownError = isKind('outcomeUnknown');
const isClosedError = isKind('closed');
const isInvalidRequestError = isKind('invalidRequest');
const isOverloadError = isKind('overload');
const isNoEndpointError = isKind('noEndpoint');
const isAuthError = isKind('auth');
const isInvalidTransactionError = isKind('invalidTransaction');
const isFeeCeilingError = isKind('feeCeiling');
const isSignerError = isKind('signer');
const isInvalidSignerError = isKind('invalidSigner');
const isTransactionReplacedError = isKind('replacedByOther');
const isNonceStateError = isKind('nonceState');
const isFeeDataError = isKind('feeData');
const isTransactionDroppedError = isKind('dropped');
