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
  /** Tokens refilled per second regardless of traffic. @default 0.5 */
  minPerSecond?: number;
  /** Largest (and initial) balance. @default 5 */
  burst?: number;
}

/** An ethers v6 provider (JsonRpcProvider, BrowserProvider…): anything with `send(method, params)`. */
export interface SendProvider {
  send(method: string, params: unknown[] | Record<string, unknown>): Promise<unknown>;
}
/** A provider wrapped as an upstream: its calls get the same retry, breaker, quota and routing as a URL. */
export type UpstreamProvider = Eip1193Provider | SendProvider;

/** One upstream as an object (a plain URL string is the same with every default). Give `url` or `provider`. */
export interface EndpointConfig {
  /** The http(s) JSON-RPC URL. API keys in it are redacted everywhere. */
  url?: string;
  /** Instead of a URL: an existing provider to wrap (label defaults to `provider<index>`). */
  provider?: UpstreamProvider;
  /** A label for events and stats (secrets in it are masked too). @default the redacted URL */
  label?: string;
  /** Extra HTTP headers; their values are treated as secrets. */
  headers?: Record<string, string>;
  /** Name of a quota group under `options.quota` that this endpoint's API key shares. */
  quotaGroup?: string;
  /** Weight for the `weighted` strategy. @default 1 */
  weight?: number;
  /** Priority for `priority` and `sticky` (lower first). @default its index in the list */
  priority?: number;
  /** Methods this endpoint may serve (`allow`) or must not (`deny`). */
  methods?: { allow?: string[]; deny?: string[] };
  /** Compute-unit costs per method, overriding the built-in table. */
  costs?: Record<string, number>;
  /** Attempts in flight at once (scaled down during slow start). @default 64 */
  maxConcurrency?: number;
  /** Per-attempt timeout for this endpoint. @default options.attemptTimeoutMs */
  timeoutMs?: number;
}

/** Routing strategy. */
export type Strategy = 'roundRobin' | 'priority' | 'weighted' | 'latency' | 'sticky';

/** Circuit breaker per endpoint. */
export interface BreakerOptions {
  /** Consecutive infrastructure failures that open it. @default 3 */
  consecutiveFailures?: number;
  /** Failure rate over the window that opens it. @default 0.25 */
  failureRate?: number;
  /** Sliding window for the failure rate. @default 30000 */
  windowMs?: number;
  /** Samples needed in the window. @default 6 */
  minSamples?: number;
  /** Open time after the first ejection (doubles per ejection). @default 30000 */
  openMs?: number;
  /** Longest open time. @default 300000 */
  openMaxMs?: number;
  /** Relative jitter of the open time. @default 0.2 */
  jitter?: number;
  /** Probes at once in half-open. @default 1 */
  probePermits?: number;
  /** Probe successes that close it. @default 3 */
  closeAfter?: number;
  /** Least time half-open before closing. @default 1000 */
  observeMs?: number;
  /** First early-probe spacing when every endpoint is open. @default 500 */
  earlyProbeMs?: number;
  /** Healthy time after which the ejection count resets. @default 600000 */
  resetAfterMs?: number;
}

/** Slow start after recovery. */
export interface SlowStartOptions {
  /** Time to reach full share and rate. @default 30000 */
  warmupMs?: number;
  /** Share at the start. @default 0.1 */
  floor?: number;
  /** Requests/s always allowed to a warming endpoint. @default 1 */
  minRps?: number;
}

/** A quota group: endpoints sharing one API key / plan. */
export interface QuotaGroupOptions {
  /** The plan in compute units per second (`Infinity`: unknown, learned from 429s). */
  cuPerSecond: number;
  /** Burst in compute units. @default cuPerSecond */
  burst?: number;
  /** This process's share of the plan. @default 1 */
  share?: number;
  /** Multiplicative decrease on a limit signal. @default 0.5 */
  decrease?: number;
  /** Additive increase per stable window, as a fraction of the plan. @default 0.05 */
  increase?: number;
  /** Limit-free time before growing again (jittered). @default 10000 */
  stableWindowMs?: number;
  /** Lowest allowed rate as a fraction of the plan. @default 0.05 */
  minFraction?: number;
  /** Cooldown without Retry-After (doubles, jittered). @default 1000 */
  cooldownMs?: number;
  /** Longest cooldown and cap on Retry-After. @default 60000 */
  cooldownMaxMs?: number;
  /** Ejection after a daily/monthly limit. @default 3600000 */
  longEjectionMs?: number;
}

/** Response cache. */
export interface CacheOptions {
  /** Lifetime of `latest`-dependent results. @default 1000 */
  latestTtlMs?: number;
  /** Lifetime of results that cannot change. @default 300000 */
  immutableTtlMs?: number;
  /** Entry limit. @default 1000 */
  maxEntries?: number;
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
  /** How eligible endpoints are chosen. @default 'priority' */
  strategy?: Strategy;
  /** Circuit breaker per endpoint. */
  breaker?: BreakerOptions;
  /** Slow start after recovery. */
  slowStart?: SlowStartOptions;
  /** Quota groups by name. @default {} */
  quota?: Record<string, QuotaGroupOptions>;
  /** The chain to serve (number or hex). @default the first chain id seen */
  chainId?: number | string;
  /** Check each endpoint's eth_chainId before its first request. @default true */
  checkChainId?: boolean;
  /** Check it again this long after the last check (0: never); a disabled node gets another chance too. @default 300000 */
  chainRecheckMs?: number;
  /** Endpoints this many blocks behind are skipped for `latest`. @default 5 */
  maxLagBlocks?: number;
  /** Requests that may wait for an endpoint; beyond, OverloadError. @default 1000 */
  maxQueue?: number;
  /** Share identical in-flight reads. @default true */
  dedup?: boolean;
  /** Response cache (`false` disables). @default enabled */
  cache?: boolean | CacheOptions;
  /**
   * Adaptive attempt timeouts: `multiplier` × each endpoint's slow-end latency (per method class, after 10
   * successes), at least `floorMs`, at most the configured timeout; `false` for fixed timeouts.
   * @default { multiplier: 5, floorMs: 2000 }
   */
  adaptiveTimeout?: boolean | { multiplier?: number; floorMs?: number };
  /**
   * Hedged reads: a known read-only method (not a send, not an unknown method, not a heavy query like
   * eth_getLogs) whose attempt runs longer than its endpoint's usual slow end gets a second attempt on
   * another endpoint; the first success wins and the other is aborted. Paid from the retry budget.
   * The delay is the endpoint's slow-end latency (or, without history of its own, the slowest other
   * endpoint's; with none anywhere, `initialDelayMs`), at least `minDelayMs`. Never under
   * `strategy: 'sticky'` (a hedge would move the session to another node). `false` never hedges.
   * @default { initialDelayMs: 1000, minDelayMs: 50 }
   */
  hedge?: boolean | { initialDelayMs?: number; minDelayMs?: number };
  /** Defaults of the transaction layer (each call may override them). */
  transactions?: TransactionOptions;
  /**
   * Where events are logged, one line each (console works). Silent by default.
   * Levels: retry, hedge, txRebroadcast, txIncluded → debug; failover, rateLimited, breaker closing, tx outcomes → info;
   * breaker opening, overload, reorg, nonce gaps, disconnect → warn; chainMismatch → error.
   */
  logger?: Logger;
}

/** A console-like logger; any subset of the levels. */
export interface Logger {
  debug?(message: string, event: object): void;
  info?(message: string, event: object): void;
  warn?(message: string, event: object): void;
  error?(message: string, event: object): void;
}

/** A wei amount or count: bigint, safe integer, or a 0x-hex / decimal string. Never a fractional number. */
export type Quantity = bigint | number | string;

/** Options of the transaction layer. Unknown keys are rejected. */
export interface TransactionOptions {
  /** Mean interval between receipt polls; each delay is drawn from [0.5, 1.5) × this. @default 4000 */
  pollIntervalMs?: number;
  /** Fee increase of each replacement in percent (≥ 10; results are always strictly above +10 %). @default 12 */
  bumpPercent?: number;
  /** Highest maxFeePerGas (or gasPrice) in wei any transaction may pay; replacements stop there. @default none */
  feeCeiling?: Quantity;
  /** Blocks (the receipt's own included) before a transaction counts as done. @default 1 */
  confirmations?: number;
  /** Re-broadcast the pending bytes to every endpoint every this many polls. @default 3 */
  rebroadcastEveryPolls?: number;
  /** Fill nonce gaps below our transactions with 0-value self-transfers. @default true */
  repairGaps?: boolean;
}

/** A transaction request. The nonce is always the relayer's; unknown fields are rejected. */
export interface TransactionRequest {
  to?: string | null;
  from?: string;
  value?: Quantity;
  data?: string;
  input?: string;
  /** Gas limit; estimated when absent. */
  gas?: Quantity;
  gasLimit?: Quantity;
  /** EIP-1559 fees; estimated (eth_feeHistory / eth_maxPriorityFeePerGas) when absent. */
  maxFeePerGas?: Quantity;
  maxPriorityFeePerGas?: Quantity;
  /** A legacy (type 0) transaction. */
  gasPrice?: Quantity;
  /** Required unless the relayer has a `chainId` option. */
  chainId?: Quantity;
  type?: 0 | 2 | number | string;
}

/** An ethers v6 Signer (e.g. `Wallet`): keys stay in it. */
export interface EthersLikeSigner {
  getAddress(): Promise<string>;
  signTransaction(tx: object): Promise<string>;
}
/** A viem local account (`privateKeyToAccount`, `mnemonicToAccount`…). */
export interface ViemLikeAccount {
  address: string;
  type: 'local';
  /** Called with a complete EIP-1559 or legacy transaction (bigint fields). */
  signTransaction(tx: never): Promise<string>;
}
/** Anything the transaction calls accept as a signer; an EIP-1193 wallet sends with `eth_sendTransaction`. */
export type TransactionSigner = EthersLikeSigner | ViemLikeAccount | Eip1193Provider;

/** A JSON-RPC transaction receipt, as the node returned it (hex quantities). */
export interface RpcReceipt {
  transactionHash: string;
  blockHash: string;
  blockNumber: string;
  status?: string;
  from: string;
  to: string | null;
  gasUsed: string;
  effectiveGasPrice?: string;
  contractAddress?: string | null;
  logs: unknown[];
  [field: string]: unknown;
}

/** The receipt of whichever transaction took the nonce, plus what happened. */
export interface TxOutcome extends RpcReceipt {
  /** The receipt alone. */
  receipt: RpcReceipt;
  /** The mined hash. */
  hash: string;
  nonce: number;
  /** Every hash sent for the nonce, oldest first. */
  hashes: string[];
  /** mined: the original; replaced: a speed-up; cancelled: the cancel. */
  outcome: 'mined' | 'replaced' | 'cancelled';
  /** The mined transaction is not the original. */
  replaced: boolean;
  cancelled: boolean;
  confirmations: number;
}

/** Per-call transaction options. */
export interface SendOptions extends TransactionOptions {}

/** What `submitRaw` found. `unknown`: no settling answer; looked up and re-broadcast, watch the hash. */
export interface RawSubmission {
  hash: string;
  status: 'accepted' | 'unknown' | 'mined';
}

/** A nonce still watched, with every hash sent for it. */
export interface PendingTransaction {
  nonce: number;
  hashes: string[];
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
  /** Backoff before it. */
  delayMs: number;
  /** The endpoint that failed. */
  from: string;
  class: ErrorClassName;
  rule: string;
}
/** A circuit breaker changed state. */
export interface BreakerEvent {
  type: 'breaker';
  endpoint: string;
  from: 'closed' | 'open' | 'halfOpen';
  to: 'closed' | 'open' | 'halfOpen';
}
/** An endpoint reported another chain and was disabled. */
export interface ChainMismatchEvent {
  type: 'chainMismatch';
  endpoint: string;
  expected: number;
  got: number;
}
/** A request was refused because the wait queue was full. */
export interface OverloadEvent {
  type: 'overload';
  method: string;
  waiting: number;
}
/** The next attempt goes to another endpoint. */
export interface FailoverEvent {
  type: 'failover';
  method: string;
  from: string;
  to: string;
}
/** A slow read got a second attempt on another endpoint; the first success wins. */
export interface HedgeEvent {
  type: 'hedge';
  method: string;
  from: string;
  to: string;
  /** How long the first attempt had run. */
  afterMs: number;
}
/** An endpoint's quota group was rate limited and rests. */
export interface RateLimitedEvent {
  type: 'rateLimited';
  method: string;
  endpoint: string;
  /** The named quota group, if the endpoint has one. */
  quotaGroup?: string;
  cooldownMs: number;
  longHorizon: boolean;
}
/** A transaction was broadcast and a node took it. */
export interface TxSubmittedEvent { type: 'txSubmitted'; nonce: number; hash: string; kind: 'original' | 'speedUp' | 'cancel'; }
/** A broadcast got no settling answer: the outcome is unknown (the same bytes will be re-broadcast). */
export interface TxUnknownEvent { type: 'txUnknown'; nonce: number; hash: string; }
/** The pending bytes were sent again to every endpoint. */
export interface TxRebroadcastEvent { type: 'txRebroadcast'; nonce: number; hash: string; }
/** A replacement was signed and sent (fees in wei, decimal strings). */
export interface ReplacementEvent {
  type: 'speedUp' | 'cancel';
  nonce: number;
  hash: string;
  /** The newest hash before this one. */
  replaces: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  gasPrice?: string;
}
/** A receipt appeared (not yet final). */
export interface TxIncludedEvent { type: 'txIncluded'; nonce?: number; hash: string; confirmations: number; }
/** A receipt seen before vanished or moved: a reorg. The wait goes on. */
export interface ReorgEvent { type: 'reorg'; nonce?: number; hash: string; }
/** The nonce resolved: `txMined` for the original, `replaced` for a speed-up or cancel. */
export interface TxResolvedEvent { type: 'txMined' | 'replaced'; nonce: number; hash: string; outcome: 'mined' | 'replaced' | 'cancelled'; }
/** The account's nonce was ahead of the relayer's book (another sender). */
export interface NonceResyncEvent { type: 'nonceResync'; from: number; to: number; }
/** Nonces [from, to) are missing on the node below ours; `repaired`: filled with 0-value self-transfers. */
export interface NonceGapEvent { type: 'nonceGap'; from: number; to: number; repaired: boolean; }

/** EIP-1193 `connect`: a node answered; `chainId` is hex. */
export interface ConnectEvent { type: 'connect'; chainId: string; }
/** EIP-1193 `disconnect`: every endpoint's breaker is open, or the relayer closed (code 4900). */
export interface DisconnectEvent { type: 'disconnect'; code: 4900; message: string; error: ClosedError; }
/** EIP-1193 `chainChanged`: never emitted (the relayer serves one chain); accepted for compatibility. */
export interface ChainChangedEvent { type: 'chainChanged'; chainId: string; }

export interface RelayerEventMap {
  connect: ConnectEvent;
  disconnect: DisconnectEvent;
  chainChanged: ChainChangedEvent;
  retry: RetryEvent;
  failover: FailoverEvent;
  hedge: HedgeEvent;
  breaker: BreakerEvent;
  rateLimited: RateLimitedEvent;
  chainMismatch: ChainMismatchEvent;
  overload: OverloadEvent;
  txSubmitted: TxSubmittedEvent;
  txUnknown: TxUnknownEvent;
  txRebroadcast: TxRebroadcastEvent;
  speedUp: ReplacementEvent;
  cancel: ReplacementEvent;
  txIncluded: TxIncludedEvent;
  reorg: ReorgEvent;
  txMined: TxResolvedEvent;
  replaced: TxResolvedEvent;
  nonceResync: NonceResyncEvent;
  nonceGap: NonceGapEvent;
}
export type RelayerEvent = keyof RelayerEventMap;

/** One endpoint in `stats()`. */
export interface EndpointStats {
  endpoint: string;
  state: 'closed' | 'open' | 'halfOpen';
  inFlight: number;
  /** EWMA latency per method class, once observed. */
  latencyMs: { cheap?: number; call?: number; heavy?: number; send?: number };
  successes: number;
  failures: number;
  breakerFlips: number;
  /** 'unknown' | 'verified' | 'mismatch:<id>' */
  chain: string;
  head?: number;
  /** Slow-start share (1 when warm). */
  share: number;
  quotaGroup: string;
}
/** One quota group in `stats()`. */
export interface QuotaGroupStats {
  name: string;
  cuLastSecond: number;
  allowedCuPerSecond: number;
  cuCharged: number;
  rateLimited: number;
  cooldownMs: number;
}
/** A snapshot of the relayer. */
export interface RelayerStats {
  endpoints: EndpointStats[];
  quotaGroups: QuotaGroupStats[];
  retryBudget: number;
  waiting: number;
  cacheEntries: number;
  cacheHits: number;
  closed: boolean;
  /** Size of the WebAssembly instance's memory, in bytes (it grows, never shrinks). */
  wasmMemoryBytes: number;
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

/** One settled call of a batch. */
export type BatchResult =
  | { status: 'fulfilled'; value: unknown }
  | { status: 'rejected'; reason: BreakwaterError };

/** Per-call options. */
export interface CallOptions {
  /** Cancels the call: it rejects with `signal.reason` and no further attempt is sent. */
  signal?: AbortSignal;
}

/** Kinds of breakwater errors. */
export type ErrorKind =
  | 'config' | 'rpc' | 'http' | 'transport' | 'deadline' | 'budget' | 'rateLimited'
  | 'outcomeUnknown' | 'closed' | 'invalidRequest' | 'overload' | 'noEndpoint' | 'internal' | 'unknown'
  | 'invalidTransaction' | 'feeCeiling' | 'signer' | 'invalidSigner' | 'replacedByOther' | 'nonceState' | 'feeData'
  | 'dropped';

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
  /** Transaction errors: the nonce concerned. */
  readonly nonce?: number;
  /** Transaction errors after a broadcast: every hash sent (they may still be mined). */
  readonly hashes?: string[];
  /** The transaction hash concerned (waitForReceipt timeouts, unknown hashes). */
  readonly hash?: string;
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
export declare class OverloadError extends BreakwaterError { readonly kind: 'overload'; }
export declare class NoEndpointError extends BreakwaterError { readonly kind: 'noEndpoint'; }
/** A transaction request field is wrong; nothing was signed or sent. */
export declare class InvalidTransactionError extends BreakwaterError { readonly kind: 'invalidTransaction'; readonly field: string; }
/** The next replacement would pass the fee ceiling; `hashes` are still pending and still tracked. */
export declare class FeeCeilingError extends BreakwaterError {
  readonly kind: 'feeCeiling';
  readonly nonce: number;
  readonly hashes: string[];
  readonly needed: bigint;
  readonly ceiling: bigint;
}
/** The signer refused or threw (its error is `cause`); nothing was broadcast and the nonce was released. */
export declare class SignerError extends BreakwaterError { readonly kind: 'signer'; }
/** Not an ethers Signer, viem local account or EIP-1193 wallet. */
export declare class InvalidSignerError extends BreakwaterError { readonly kind: 'invalidSigner'; }
/** The nonce was used by a transaction that is not one of ours. */
export declare class TransactionReplacedError extends BreakwaterError { readonly kind: 'replacedByOther'; readonly nonce: number; readonly hashes: string[]; }
/** Nothing to cancel: the nonce is settled, or not tracked by this relayer. */
export declare class NonceStateError extends BreakwaterError { readonly kind: 'nonceState'; }
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
export declare function isInvalidTransactionError(e: unknown): e is InvalidTransactionError;
export declare function isFeeCeilingError(e: unknown): e is FeeCeilingError;
export declare function isSignerError(e: unknown): e is SignerError;
export declare function isInvalidSignerError(e: unknown): e is InvalidSignerError;
export declare function isTransactionReplacedError(e: unknown): e is TransactionReplacedError;
export declare function isNonceStateError(e: unknown): e is NonceStateError;
export declare function isFeeDataError(e: unknown): e is FeeDataError;
export declare function isTransactionDroppedError(e: unknown): e is TransactionDroppedError;

/** A fault-tolerant JSON-RPC client that is also an EIP-1193 provider. */
export declare class FaultTolerantRelayer implements Eip1193Provider {
  /** @throws ConfigError naming the bad option, e.g. an empty list or a non-URL. */
  constructor(upstreams: readonly (string | EndpointConfig | UpstreamProvider)[], options?: RelayerOptions);
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
  /**
   * A JSON-RPC batch (at most 1000 calls): one HTTP request, costs summed, each call settled on its own,
   * in order (like Promise.allSettled). Retryable item failures are re-sent in a smaller batch.
   */
  batch(calls: readonly RequestArguments[], options?: CallOptions): Promise<BatchResult[]>;
  /**
   * Sends `tx` with a relayer-managed nonce; a lost answer re-broadcasts the same bytes (never a new nonce);
   * after `maxWaitBlockCount` blocks without inclusion the lowest pending nonce is sped up (both fees
   * raised > 10 %, never above `feeCeiling`). Resolves to the receipt of whichever transaction was mined.
   * @throws InvalidTransactionError, InvalidSignerError, SignerError, FeeCeilingError, TransactionReplacedError, RpcError
   */
  sendTransactionWithSpeedup(
    signer: TransactionSigner,
    tx: TransactionRequest,
    maxWaitBlockCount?: number,
    options?: SendOptions,
  ): Promise<TxOutcome>;
  /**
   * Cancels a pending transaction sent through this relayer (0-value self-transfer, same nonce, higher fees).
   * A speed-up in flight is dropped unsent and the cancel goes next; every caller for the nonce gets one outcome.
   */
  cancelTransaction(
    signer: TransactionSigner,
    target: { nonce: number; chainId?: number } | { hash: string; chainId?: number },
    options?: SendOptions,
  ): Promise<TxOutcome>;
  /** Broadcasts signed bytes; a lost answer is `status: 'unknown'` (looked up, re-broadcast), not an error. */
  submitRaw(raw: string): Promise<RawSubmission>;
  /** Waits for a receipt with jittered polling; a reorg emits `reorg` and the wait goes on. */
  waitForReceipt(hash: string, options?: TransactionOptions & { timeoutMs?: number }): Promise<RpcReceipt>;
  /** Nonces (and their hashes) still watched for an account. */
  pendingTransactions(chainId: number, address: string): PendingTransaction[];
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
