// Types of breakwater-rpc: construction — upstreams, endpoints and every relayer option (each documents its default).

import type { TransactionOptions } from './transactions.js';

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

/** Classes the classifier assigns; user rules may assign the first five. */
export type ErrorClassName =
  | 'transient' | 'rateLimited' | 'capability' | 'fatal' | 'unauthorized'
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
  class: 'transient' | 'rateLimited' | 'capability' | 'fatal' | 'unauthorized';
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
  /**
   * Compute-unit costs per method, overriding the built-in table; `'*'` prices every method not listed (the
   * relayer's own head poll and chain check included): `{ '*': 1 }` for a provider that counts requests.
   */
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
  /**
   * Burst in compute units. Absent: `cuPerSecond`, and no one-second span carries more than the
   * plan. Given: token-bucket terms (up to `burst` + `cuPerSecond` × T in any T).
   */
  burst?: number;
  /** This process's share of the plan. @default 1 */
  share?: number;
  /** Multiplicative decrease on a repeated limit signal (a configured plan's first in a minute only cools). @default 0.5 */
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
  /**
   * The chain to serve: a number, a bigint (ethers' `network.chainId`), or a decimal or 0x hex string.
   * Without it, reads use the first chain id seen, and transactions are signed for the chain every answering
   * endpoint reports (asked once, before the first signature; endpoints that disagree: NoEndpointError).
   */
  chainId?: number | bigint | string;
  /** Check each endpoint's eth_chainId before its first request. @default true */
  checkChainId?: boolean;
  /** Check it again this long after the last check (0: never); a disabled node gets another chance too. @default 300000 */
  chainRecheckMs?: number;
  /** Endpoints this many blocks behind are skipped for `latest`. @default 5 */
  maxLagBlocks?: number;
  /**
   * While reads that want `latest` flow, ask every endpoint for its head (`eth_blockNumber`) this often, in the
   * background (no read waits for it), so `maxLagBlocks` can skip a lagging node even if the app never asks for
   * the block number. One round per interval, the first one interval after construction; each poll is charged
   * to its quota group (the endpoint's `costs` apply); endpoints whose breaker is not closed, and pools of one,
   * are not polled. 0 turns it off; otherwise at least 100. @default 12000
   */
  headPollMs?: number;
  /**
   * Requests that may wait for an endpoint; beyond, OverloadError at once. A pending request costs ~3.7 KB of
   * wasm memory (which never shrinks) and O(log n) time; 10,000 reads fired at once are all answered
   * (benches/QUEUE.md). @default 10000
   */
  maxQueue?: number;
  /** Share identical in-flight reads. @default true */
  dedup?: boolean;
  /**
   * Auto-batching on the wire: while 4 HTTP requests are out to a node, further reads to it queue and go
   * together as one JSON-RPC batch (at most `maxSize` items) when one comes back, so a lone read never waits.
   * Each read keeps its own answer, error and retries; a node's batch limit is learned from 413 / "batch too
   * large", and a node that does not answer batches with an array gets each read alone from then on. Sends,
   * unknown methods and calls with an AbortSignal never ride in a batch. `waitMs` > 0: every batchable read
   * waits up to that long to gather more (viem's `wait`). `false`: every read alone.
   * @default { maxSize: 100, waitMs: 0 }
   */
  batch?: boolean | null | { maxSize?: number; waitMs?: number };
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
   * endpoint's; with none anywhere, `initialDelayMs`), at least `minDelayMs`, and never before a hedge
   * could win (the endpoint's typical latency plus the fastest peer's). Never under
   * `strategy: 'sticky'` (a hedge would move the session to another node). `false` never hedges.
   * @default { initialDelayMs: 1000, minDelayMs: 50 }
   */
  hedge?: boolean | { initialDelayMs?: number; minDelayMs?: number };
  /**
   * Share what this relayer learns with the other relayers of this JS realm (process, page or worker) that
   * use the same endpoint URLs and headers: one quota bucket per key, one chain check and one breaker per
   * node, one head poll per node, one recovery pace after an outage, and one realm-wide budget that every
   * member's retries and hedges draw on besides their own; tabs and workers of the origin hear of 429 cooldowns, breaker
   * openings and chain ids (docs/coordination.md). `false`: this relayer learns alone.
   * `budget`: the realm's retry budget's tuning (`false`: none, only each relayer's own).
   * `redis`: a store shared by processes and machines (Node): a `redis://` / `rediss://` URL, node-redis
   * `createClient` options (AUTH, TLS and socket settings pass through), or a node-redis client of yours.
   * Quota groups then lease from one bucket per key in Redis, and news travels over its pub/sub; the store
   * down, slow or restarted never fails a request (each relayer falls back to its own buckets within a
   * second). Needs the `redis` package (an optional peer dependency). One store per realm.
   * `prefix`: the Redis keys' and channel's prefix.
   * `tabs`: where Web Locks exist (browsers, their workers) and no Redis store is named, quota groups lease
   * from one bucket per key that the origin's leader tab keeps, so a dapp open in several tabs sends what one
   * tab would; `false` (on every relayer of the page or worker) keeps its buckets its own.
   * `indexedDB`: (browsers; not with `redis`) the origin's tabs and workers share their accounts' nonces,
   * and every pending transaction's signed bytes are journaled in IndexedDB before they leave, so a page
   * reloaded mid-send gets its nonces back with `resumeTransactions` and finishes them.
   * @default true (budget: { ratio: 0.1, minPerSecond: 2, burst: 20 }, prefix: 'breakwater:', tabs: true, indexedDB: false)
   */
  fleet?: boolean | { budget?: boolean | RetryBudgetOptions; redis?: string | RedisStoreOptions | RedisClientLike | undefined; prefix?: string; tabs?: boolean; indexedDB?: boolean };
  /** Defaults of the transaction layer (each call may override them). */
  transactions?: TransactionOptions;
  /**
   * Where events are logged, one line each (console works). Silent by default.
   * Levels: retry, hedge, txRebroadcast, txIncluded → debug; failover, rateLimited, breaker closing, tx outcomes → info;
   * breaker opening, overload, reorg, nonce gaps, disconnect → warn; chainMismatch → error.
   */
  logger?: Logger;
  /**
   * What `executeRpcWithRetry` operations receive instead of the bound EIP-1193 provider, e.g.
   * `(p) => new ethers.BrowserProvider(p, chainId)` (the seed's operations, unchanged) or
   * `(p) => createPublicClient({ transport: custom(p, { retryCount: 0 }) })`. Called once per attempt.
   * @default none (the bound provider itself)
   */
  wrap?: (provider: BoundProvider) => unknown;
}

/** A console-like logger; any subset of the levels. */
export interface Logger {
  debug?(message: string, event: object): void;
  info?(message: string, event: object): void;
  warn?(message: string, event: object): void;
  error?(message: string, event: object): void;
}

/**
 * node-redis `createClient` options (`url`, `username`, `password`, `socket: { tls, … }`, …), passed through
 * as they are (node-redis checks them). They must say where to connect (`url` or `socket`): options without
 * either are a `ConfigError` rather than node-redis's default `localhost:6379`.
 */
export type RedisStoreOptions = { url?: string; [option: string]: unknown };
/**
 * A node-redis client of yours (v5 or later): connected by the relayer if it is not yet, never closed by it
 * (a duplicate it makes for pub/sub is).
 */
export interface RedisClientLike {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  eval(...args: any[]): unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  duplicate(...args: any[]): unknown;
}
