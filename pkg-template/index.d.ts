// Types of breakwater-rpc. Every option documents its default.

/** An EIP-1193 request. */
export interface RequestArguments {
  readonly method: string;
  readonly params?: readonly unknown[] | object;
}

/** The minimal EIP-1193 provider shape. */
export interface Eip1193Provider {
  request(args: RequestArguments): Promise<unknown>;
}

/** The provider handed to `executeRpcWithRetry` operations: bound to one endpoint, one attempt per call. */
export interface BoundProvider extends Eip1193Provider {
  /** Redacted label of the endpoint this provider talks to. */
  readonly endpoint: string;
}

/** Backoff schedule between attempts. */
export type BackoffKind = 'fullJitter' | 'equalJitter' | 'decorrelatedJitter' | 'exponential' | 'linear' | 'fixed';

/** Classes the classifier assigns; user rules may assign the first four. */
export type ErrorClassName =
  | 'transient' | 'rateLimited' | 'capability' | 'fatal'
  | 'success' | 'alreadyKnown' | 'nonceTooLow' | 'replacementUnderpriced' | 'outcomeUnknown';

/** An extra classification rule, checked before the built-in table. At least one of code, status, message. */
export interface ClassifyRule {
  /** JSON-RPC error code to match. */
  code?: number;
  /** HTTP status to match. */
  status?: number;
  /** Case-insensitive substring of the error message. */
  message?: string;
  /** Only for this JSON-RPC method. */
  method?: string;
  /** What the matching outcome is. */
  class: 'transient' | 'rateLimited' | 'capability' | 'fatal';
}

/** The shared retry budget (a token bucket). */
export interface RetryBudgetOptions {
  /** Tokens each first attempt deposits; a retry costs one. @default 0.2 */
  ratio?: number;
  /** Tokens refilled per second regardless of traffic. @default 1 */
  minPerSecond?: number;
  /** Largest (and initial) balance. @default 10 */
  burst?: number;
}

/** Options of `FaultTolerantRelayer`. Unknown keys are rejected with a ConfigError. */
export interface RelayerOptions {
  /** Retries after the first attempt (failovers included). @default 4 */
  maxRetries?: number;
  /** Backoff base in milliseconds. @default 1000 */
  baseDelayMs?: number;
  /** Backoff cap in milliseconds; must be >= baseDelayMs. @default 15000 */
  maxDelayMs?: number;
  /** Backoff schedule. @default 'fullJitter' */
  backoff?: BackoffKind;
  /** Timeout of one attempt in milliseconds. @default 10000 */
  attemptTimeoutMs?: number;
  /** Deadline of one logical request, all attempts and waits included. @default 30000 */
  deadlineMs?: number;
  /** Retry budget shared by all requests. */
  budget?: RetryBudgetOptions;
  /** Longest Retry-After the relayer honours, in milliseconds. @default 60000 */
  maxRetryAfterMs?: number;
  /** Largest response body accepted, in bytes. @default 33554432 */
  maxResponseBytes?: number;
  /** Extra classification rules, checked first. @default [] */
  classify?: ClassifyRule[];
}

/** One attempt in an error's history. */
export interface AttemptInfo {
  endpoint: string;
  endpointIndex: number;
  class: ErrorClassName;
  rule: string;
  startedAfterMs: number;
  elapsedMs: number;
}

/** A retry is scheduled. */
export interface RetryEvent {
  type: 'retry';
  method: string;
  /** The retry's number (1 = first retry). */
  attempt: number;
  delayMs: number;
  from: string;
  to: string;
  class: ErrorClassName;
  rule: string;
}
/** The next attempt goes to another endpoint. */
export interface FailoverEvent {
  type: 'failover';
  method: string;
  from: string;
  to: string;
}
/** An endpoint reported rate limiting and rests. */
export interface RateLimitedEvent {
  type: 'rateLimited';
  method: string;
  endpoint: string;
  cooldownMs: number;
  longHorizon: boolean;
}
export interface RelayerEventMap {
  retry: RetryEvent;
  failover: FailoverEvent;
  rateLimited: RateLimitedEvent;
}
export type RelayerEvent = keyof RelayerEventMap;

/** A snapshot of the relayer. */
export interface RelayerStats {
  endpoints: string[];
  retryBudget: number;
  closed: boolean;
}

/** Context of one `executeRpcWithRetry` attempt. */
export interface OperationContext {
  /** Redacted label of the endpoint this attempt uses. */
  endpoint: string;
  /** 0 for the first attempt. */
  attempt: number;
  /** Aborts when this attempt times out or the caller aborts. */
  signal: AbortSignal;
  /** This attempt's timeout. */
  timeoutMs: number;
}

/** Per-call options. */
export interface CallOptions {
  /** Cancels the call: it rejects with `signal.reason` and no further attempt is sent. */
  signal?: AbortSignal;
}

/** Kinds of breakwater errors. */
export type ErrorKind =
  | 'config' | 'rpc' | 'http' | 'transport' | 'deadline' | 'budget' | 'rateLimited'
  | 'outcomeUnknown' | 'closed' | 'invalidRequest' | 'internal' | 'unknown';

/** Base of every error this library throws. */
export declare class BreakwaterError extends Error {
  /** What went wrong. */
  readonly kind: ErrorKind;
  /** The node's JSON-RPC code for `rpc` errors; an EIP-1193/EIP-1474 code for our own. */
  readonly code: number;
  /** The message without the attempt count. */
  readonly shortMessage: string;
  /** How the retry loop ended: notRetryable, attemptsExhausted, deadline, budget, rateLimited. */
  readonly reason?: string;
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
}
export declare class ConfigError extends BreakwaterError { readonly kind: 'config'; readonly field: string; }
export declare class RpcError extends BreakwaterError { readonly kind: 'rpc'; readonly data?: unknown; }
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

/** A fault-tolerant JSON-RPC client that is also an EIP-1193 provider. */
export declare class FaultTolerantRelayer implements Eip1193Provider {
  /** @throws ConfigError naming the bad option, e.g. an empty list or a non-URL. */
  constructor(rpcUrls: readonly string[], options?: RelayerOptions);
  /** One request under every policy; resolves to the node's `result` untouched. */
  request(args: RequestArguments, options?: CallOptions): Promise<unknown>;
  /**
   * Runs `op` with a provider bound to one endpoint, retried on others under the same policies.
   * `op` may run more than once, so it must be safe to repeat.
   */
  executeRpcWithRetry<T>(
    op: (provider: BoundProvider, context: OperationContext) => Promise<T>,
    options?: CallOptions,
  ): Promise<T>;
  /** Subscribes to an event; returns a disposer. */
  on<E extends RelayerEvent>(event: E, listener: (event: RelayerEventMap[E]) => void): () => void;
  /** Removes a listener. */
  removeListener<E extends RelayerEvent>(event: E, listener: (event: RelayerEventMap[E]) => void): this;
  /** Redacted endpoint labels. */
  readonly endpoints: string[];
  /** A snapshot of the relayer's state. */
  stats(): RelayerStats;
  /** Stops accepting requests. */
  close(): Promise<void>;
}

/** Resolves once the WebAssembly module is ready (already resolved in Node). */
export declare const ready: Promise<void>;
