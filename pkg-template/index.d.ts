// Types of breakwater-rpc. Every option documents its default; the parts
// live in types/ (options, transactions, events, errors) and are all
// re-exported here.

export * from './types/options.js';
export * from './types/transactions.js';
export * from './types/events.js';
export * from './types/errors.js';
import type { BoundProvider, Eip1193Provider, EndpointConfig, RelayerOptions, RequestArguments, UpstreamProvider } from './types/options.js';
import type { PendingTransaction, RawSubmission, ResumeOptions, ResumedTransactions, RpcReceipt, SendOptions, TransactionOptions, TransactionRequest, TransactionSigner, TxOutcome } from './types/transactions.js';
import type { RelayerEvent, RelayerEventMap, RelayerStats } from './types/events.js';
import type { BreakwaterError } from './types/errors.js';

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
  /** The bound EIP-1193 provider itself (what `wrap` was given). */
  provider: BoundProvider;
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

/** Options of one `executeRpcWithRetry` call. */
export interface ExecuteOptions<C> extends CallOptions {
  /** What the operation receives instead of the bound provider (overrides the relayer's `wrap`). */
  wrap?: (provider: BoundProvider) => C;
}

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
   * The same, with `op` given what `wrap` (this call's, else the relayer's) makes of the bound provider: an
   * ethers or viem client bound to the endpoint. Annotate `op`'s first parameter with the client's type.
   */
  executeRpcWithRetry<T, C>(op: (client: C, context: OperationContext) => Promise<T>, options?: ExecuteOptions<C>): Promise<T>;
  /**
   * A JSON-RPC batch (at most 1000 calls): one HTTP request, costs summed, each call settled on its own,
   * in order (like Promise.allSettled). Retryable item failures are re-sent in a smaller batch.
   */
  batch(calls: readonly RequestArguments[], options?: CallOptions): Promise<BatchResult[]>;
  /**
   * Sends `tx` with a relayer-managed nonce; a lost answer re-broadcasts the same bytes (never a new nonce);
   * after `maxWaitBlockCount` blocks without inclusion the lowest pending nonce is sped up (both fees
   * raised > 10 %, never above `feeCeiling`). Resolves to the receipt of whichever transaction was mined.
   * Nonces follow the order of the calls. Without a `chainId` anywhere, the chain is the one the endpoints serve.
   * @throws InvalidTransactionError, InvalidSignerError, SignerError, FeeCeilingError, TransactionReplacedError,
   * NoEndpointError (endpoints on different chains), ClosedError, RpcError
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
  /**
   * Takes over the journaled transactions of an account whose worker died (its lease on them ran out) from
   * the fleet store (`fleet: { redis }`) and finishes them: every hash watched, the same bytes re-broadcast,
   * sped up with `account` when it is a signer (an address: watched only).
   * @throws InvalidRequestError (this relayer keeps no journal: no `fleet.redis` / `fleet.indexedDB`),
   * CoordinationError (the store cannot answer), InvalidSignerError
   */
  resumeTransactions(account: TransactionSigner | string, options?: ResumeOptions): Promise<ResumedTransactions>;
  /**
   * The outcome of a nonce this relayer tracks (sent here or resumed; pending, or among the last 256 that
   * ended here), by nonce or by any of its hashes.
   * @throws NonceStateError (no such transaction tracked), InvalidTransactionError (a malformed hash, nonce or from)
   */
  waitForTransaction(target: { nonce: number; from: string; chainId?: number } | { hash: string }): Promise<TxOutcome>;
  /** Subscribes to an event; returns the relayer (EIP-1193 and Node EventEmitter semantics). */
  on<E extends RelayerEvent>(event: E, listener: (event: RelayerEventMap[E]) => void): this;
  /** Subscribes for the next event only; returns the relayer. */
  once<E extends RelayerEvent>(event: E, listener: (event: RelayerEventMap[E]) => void): this;
  /** Subscribes to an event; returns a function that unsubscribes. */
  subscribe<E extends RelayerEvent>(event: E, listener: (event: RelayerEventMap[E]) => void): () => void;
  /** Removes a listener. */
  removeListener<E extends RelayerEvent>(event: E, listener: (event: RelayerEventMap[E]) => void): this;
  /** Node EventEmitter's name for `removeListener`. */
  off<E extends RelayerEvent>(event: E, listener: (event: RelayerEventMap[E]) => void): this;
  /** Redacted endpoint labels. */
  readonly endpoints: string[];
  /** A snapshot of the relayer's state. */
  stats(): RelayerStats;
  /** Stops accepting requests. */
  close(): Promise<void>;
}

/**
 * Resolves once the relayer's WebAssembly module is ready (already resolved in Node). The transaction engine's
 * module is loaded on a relayer's first transaction call, not by this.
 */
export declare const ready: Promise<void>;
