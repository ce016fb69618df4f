// Compiled with `tsc --strict --noEmit` by js-tests/types.test.mjs: uses
// every public API so a missing or loose type breaks the build.
import {
  FaultTolerantRelayer, ready, type RelayerOptions, type RetryEvent, type FailoverEvent, type RateLimitedEvent,
  type BoundProvider, type OperationContext, type RelayerStats, type AttemptInfo, type Eip1193Provider,
  type EndpointConfig, type BreakerEvent, type ChainMismatchEvent, type OverloadEvent, type EndpointStats,
  type QuotaGroupStats, OverloadError, NoEndpointError, isOverloadError, isNoEndpointError, AuthError, isAuthError,
  BreakwaterError, ConfigError, RpcError, HttpError, TransportError, DeadlineError, RetryBudgetError,
  RateLimitedError, OutcomeUnknownError, ClosedError, InvalidRequestError,
  isBreakwaterError, isConfigError, isRpcError, isHttpError, isTransportError, isDeadlineError,
  isRetryBudgetError, isRateLimitedError, isOutcomeUnknownError, isClosedError, isInvalidRequestError,
  type TransactionRequest, type TxOutcome, type RawSubmission, type PendingTransaction, type RpcReceipt,
  type ReplacementEvent, type TxSubmittedEvent, type ReorgEvent, type NonceGapEvent, type TransactionSigner,
  InvalidTransactionError, FeeCeilingError, SignerError, InvalidSignerError, TransactionReplacedError, NonceStateError,
  FeeDataError, isInvalidTransactionError, isFeeCeilingError, isSignerError, isInvalidSignerError,
  isTransactionReplacedError, isNonceStateError, isFeeDataError, TransactionDroppedError, isTransactionDroppedError, CoordinationError, isCoordinationError,
} from 'breakwater-rpc';

const options: RelayerOptions = {
  maxRetries: 4, baseDelayMs: 1000, maxDelayMs: 15000, backoff: 'decorrelatedJitter', attemptTimeoutMs: 5000,
  deadlineMs: 20000, budget: { ratio: 0.1, minPerSecond: 2, burst: 5 }, maxRetryAfterMs: 10000,
  maxResponseBytes: 1 << 20, classify: [{ code: -32099, class: 'fatal' }, { message: 'busy', method: 'eth_call', class: 'transient' }],
  strategy: 'latency', breaker: { consecutiveFailures: 5, openMs: 10000, probePermits: 2 }, slowStart: { warmupMs: 5000, floor: 0.2, minRps: 2 },
  quota: { alchemy: { cuPerSecond: 330, share: 0.5 } }, chainId: '0x1', checkChainId: true, chainRecheckMs: 60000, maxLagBlocks: 3, headPollMs: 12000, maxQueue: 50,
  dedup: true, cache: { latestTtlMs: 500, immutableTtlMs: 60000, maxEntries: 100 },
  transactions: { pollIntervalMs: 3000, bumpPercent: 15, feeCeiling: '200000000000', confirmations: 2, rebroadcastEveryPolls: 4, repairGaps: true },
};
// `null` leaves an option at its default (the README); an unset environment variable is `undefined`.
declare const REDIS_URL: string | undefined;
const defaults: RelayerOptions = { batch: null, fleet: { redis: REDIS_URL } };
void defaults;
const endpoint: EndpointConfig = {
  url: 'https://eth-mainnet.g.alchemy.com/v2/key', label: 'alchemy', headers: { 'x-api-key': 'k' }, quotaGroup: 'alchemy',
  weight: 2, priority: 0, methods: { allow: ['eth_call'], deny: ['eth_getLogs'] }, costs: { eth_call: 26 }, maxConcurrency: 8, timeoutMs: 2000,
};

async function main(): Promise<void> {
  await ready;
  const relayer = new FaultTolerantRelayer(['http://127.0.0.1:8545', endpoint], options);
  // Providers as upstreams: a bare EIP-1193 object, an ethers-like `send`, and an endpoint object around one.
  const eip1193: Eip1193Provider = { request: async () => '0x1' };
  const wrapped = new FaultTolerantRelayer([eip1193, { send: async () => '0x1' }, { provider: relayer, label: 'inner', quotaGroup: 'alchemy' }], options);
  await wrapped.close();
  relayer.on('breaker', (e: BreakerEvent) => { const to: 'closed' | 'open' | 'halfOpen' = e.to; void to; });
  relayer.on('chainMismatch', (e: ChainMismatchEvent) => { const got: number = e.got; void got; });
  relayer.on('overload', (e: OverloadEvent) => { const w: number = e.waiting; void w; });
  const asProvider: Eip1193Provider = relayer;
  const block: unknown = await asProvider.request({ method: 'eth_blockNumber' });
  const params = await relayer.request({ method: 'eth_getBalance', params: ['0x0', 'latest'] });
  const n: number = await relayer.executeRpcWithRetry(async (p: BoundProvider, ctx: OperationContext) => {
    const label: string = p.endpoint + ctx.endpoint;
    const signal: AbortSignal = ctx.signal;
    void signal;
    return Number(await p.request({ method: 'eth_blockNumber' })) + label.length + ctx.attempt;
  });
  const offRetry = relayer.subscribe('retry', (e: RetryEvent) => { const d: number = e.delayMs; void d; });
  const offFailover = relayer.subscribe('failover', (e: FailoverEvent) => { const to: string = e.to; void to; });
  const self: FaultTolerantRelayer = relayer.on('breaker', (e) => { void e.to; }).once('hedge', (e) => { void e.afterMs; }).off('breaker', () => {});
  void self;
  relayer.on('accountsChanged', (accounts: string[]) => { void accounts; });
  relayer.on('message', (m: { type: string; data: unknown }) => { void m; });
  relayer.on('rateLimited', (e: RateLimitedEvent) => { const long: boolean = e.longHorizon; void long; });
  offRetry();
  offFailover();
  const controller = new AbortController();
  await relayer.request({ method: 'eth_chainId' }, { signal: controller.signal });
  const stats: RelayerStats = relayer.stats();
  const first: EndpointStats | undefined = stats.endpoints[0];
  const group: QuotaGroupStats | undefined = stats.quotaGroups[0];
  void first; void group;
  const labels: string[] = relayer.endpoints;
  try {
    await relayer.request({ method: 'eth_call', params: [{}, 'latest'] });
  } catch (e: unknown) {
    if (isRpcError(e)) { const c: number = e.code; const d: unknown = e.data; const rc: number | undefined = e.rpcCode; void c; void d; void rc; }
    if (isHttpError(e)) { const s: number = e.status; void s; }
    if (isTransportError(e)) { const t: 'timeout' | 'refused' | 'reset' | 'dns' | 'aborted' | 'network' = e.transport; void t; }
    if (isConfigError(e)) { const f: string = e.field; void f; }
    if (isBreakwaterError(e)) { const h: AttemptInfo[] = e.history; const k: string = e.kind; void h; void k; }
    const guards = [isDeadlineError, isRetryBudgetError, isRateLimitedError, isOutcomeUnknownError, isClosedError, isInvalidRequestError,
      isOverloadError, isNoEndpointError];
    if (isAuthError(e)) { const s: number | undefined = e.status; const c: 4100 | number = e.code; void s; void c; }
    void guards.map((g) => g(e));
  }
  // Transactions: an ethers-like signer, a viem-like account and an EIP-1193 wallet all type-check.
  const ethersSigner: TransactionSigner = { getAddress: async () => '0x0', signTransaction: async () => '0x' };
  const viemAccount: TransactionSigner = { address: '0x0', type: 'local', signTransaction: async () => '0x' };
  const wallet: TransactionSigner = relayer;
  const tx: TransactionRequest = { to: '0x0', value: 1n, gas: 21000, maxFeePerGas: '0x77359400', maxPriorityFeePerGas: 10n ** 9n, chainId: 1 };
  relayer.on('connect', (e) => { const id: string = e.chainId; void id; });
  relayer.on('disconnect', (e) => { const c: 4900 = e.code; void c; });
  const logged = new FaultTolerantRelayer(['http://127.0.0.1:8545'], { logger: console });
  await logged.close();
  relayer.on('txSubmitted', (e: TxSubmittedEvent) => { const k: 'original' | 'speedUp' | 'cancel' = e.kind; void k; });
  relayer.on('speedUp', (e: ReplacementEvent) => { const r: string = e.replaces; void r; });
  relayer.on('reorg', (e: ReorgEvent) => { const h: string = e.hash; void h; });
  relayer.on('nonceGap', (e: NonceGapEvent) => { const r: boolean = e.repaired; void r; });
  try {
    const outcome: TxOutcome = await relayer.sendTransactionWithSpeedup(ethersSigner, tx, 3, { feeCeiling: 10n ** 11n, confirmations: 2 });
    const replaced: boolean = outcome.replaced; const hashes: string[] = outcome.hashes; const r: RpcReceipt = outcome.receipt;
    void replaced; void hashes; void r;
    const cancelled: TxOutcome = await relayer.cancelTransaction(viemAccount, { nonce: outcome.nonce });
    void cancelled;
    await relayer.cancelTransaction(wallet, { hash: outcome.hash, chainId: 1 }, { bumpPercent: 20 });
    const sub: RawSubmission = await relayer.submitRaw('0x02');
    const receipt: RpcReceipt = await relayer.waitForReceipt(sub.hash, { confirmations: 3, timeoutMs: 60000 });
    const pending: PendingTransaction[] = relayer.pendingTransactions(1, '0x0');
    void receipt; void pending;
    const resumed = await relayer.resumeTransactions(ethersSigner, { maxWaitBlockCount: 5, pollIntervalMs: 2000 });
    for (const t of resumed.adopted) { const o: TxOutcome = await t.outcome; const n: number = t.nonce; void o; void n; }
    const watched = await relayer.resumeTransactions('0x0000000000000000000000000000000000000001', { chainId: 1 });
    const why: string[] = watched.unreadable.map((u) => u.reason);
    const byHash: TxOutcome = await relayer.waitForTransaction({ hash: outcome.hash });
    const byNonce: TxOutcome = await relayer.waitForTransaction({ nonce: 3, from: '0x0', chainId: 1 });
    void why; void byHash; void byNonce;
  } catch (e: unknown) {
    if (isFeeCeilingError(e)) { const c: bigint = e.ceiling; const h: string[] = e.hashes ?? []; void c; void h; }
    if (isInvalidTransactionError(e)) { const f: string = e.field; void f; }
    if (isTransactionReplacedError(e)) { const n: number = e.nonce; void n; }
    const txGuards = [isSignerError, isInvalidSignerError, isNonceStateError, isFeeDataError, isTransactionDroppedError, isCoordinationError];
    void txGuards.map((g) => g(e));
  }
  void [InvalidTransactionError, FeeCeilingError, SignerError, InvalidSignerError, TransactionReplacedError, NonceStateError, FeeDataError, TransactionDroppedError, CoordinationError];
  const classes = [BreakwaterError, ConfigError, RpcError, HttpError, TransportError, DeadlineError, RetryBudgetError,
    RateLimitedError, OutcomeUnknownError, ClosedError, InvalidRequestError, OverloadError, NoEndpointError, AuthError];
  void classes;
  void block; void params; void n; void stats; void labels;
  await relayer.close();
}
// Fleet stores: a URL, createClient options, or a node-redis-shaped client (type-checked, never run).
function fleetTypes(client: { eval<T>(script: string, options?: { keys?: string[]; arguments?: string[] }): Promise<T>; duplicate(): unknown; isOpen: boolean }): void {
  const a = new FaultTolerantRelayer(['http://127.0.0.1:8545'], { fleet: { redis: 'redis://127.0.0.1:6379', prefix: 'bots:' } });
  const b = new FaultTolerantRelayer(['http://127.0.0.1:8545'], { fleet: { redis: { url: 'rediss://h:6380', password: 'p', socket: { tls: true } } } });
  const c = new FaultTolerantRelayer(['http://127.0.0.1:8545'], { fleet: { redis: client, budget: false } });
  const state: 'leased' | 'shares' | 'local' | undefined = a.stats().quotaGroups[0]?.fleet;
  void state; void b; void c;
}
void fleetTypes;
void main();
