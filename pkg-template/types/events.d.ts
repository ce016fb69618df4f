// Types of breakwater-rpc: events and the stats snapshot.

import type { ErrorClassName } from './options.js';
import type { ClosedError } from './errors.js';

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
/** A dead relayer's journaled nonce was taken over (fleet store); `signer`: it can be sped up here, else watched only. */
export interface TxAdoptedEvent { type: 'txAdopted'; from: string; nonce: number; hashes: string[]; signer: boolean; }
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
  /** The head when the replacement was decided. */
  block: number;
  /** The block the wait for inclusion counted from (the head at broadcast, or at the last replacement); absent when nothing was counted yet (a cancel right after the send). */
  waitedSince?: number;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  gasPrice?: string;
}
/** A receipt appeared but is not final yet (so never with `confirmations: 1`, where the first receipt is final). */
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
/**
 * A Redis fleet store's connection went down (a wrong password, Redis unreachable, killed) or came
 * up. No request fails or waits for it: relayers spend from their own buckets meanwhile, so this
 * event (and `stats().quotaGroups[i].fleet`) is how a misconfigured store shows. `reason` has no
 * password or URL credentials.
 */
export interface FleetStoreEvent { type: 'fleetStore'; state: 'up' | 'down'; reason?: string; }
/** EIP-1193 `chainChanged`: never emitted (the relayer serves one chain); accepted for compatibility. */
export interface ChainChangedEvent { type: 'chainChanged'; chainId: string; }

export interface RelayerEventMap {
  /** Forwarded from EIP-1193 upstreams that emit it (a wallet): the accounts, as the wallet sent them. */
  accountsChanged: string[];
  /** Forwarded from EIP-1193 upstreams that emit it: `{ type, data }`, as the wallet sent it. */
  message: { type: string; data: unknown };
  connect: ConnectEvent;
  disconnect: DisconnectEvent;
  chainChanged: ChainChangedEvent;
  fleetStore: FleetStoreEvent;
  retry: RetryEvent;
  failover: FailoverEvent;
  hedge: HedgeEvent;
  breaker: BreakerEvent;
  rateLimited: RateLimitedEvent;
  chainMismatch: ChainMismatchEvent;
  overload: OverloadEvent;
  txSubmitted: TxSubmittedEvent;
  txAdopted: TxAdoptedEvent;
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
  /** The breaker's state; `refused` while the endpoint is out of service for refusing the credentials. */
  state: 'closed' | 'open' | 'halfOpen' | 'refused';
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
  /**
   * The rate AIMD allows now, CU/s. `Number.MAX_VALUE` (not `Infinity`, so `stats()` survives
   * `JSON.stringify`) while no plan is configured and none is learned yet.
   */
  allowedCuPerSecond: number;
  cuCharged: number;
  rateLimited: number;
  cooldownMs: number;
  /**
   * With a fleet store (`fleet.redis`): `'leased'` while this group spends from its lease on the fleet's
   * bucket; `'shares'` while the store answers too slowly to lease from (it spends its share of the fleet,
   * coordinated by what every member reports); `'local'` while it spends alone (the store not yet answered,
   * down or unreachable).
   */
  fleet?: 'leased' | 'shares' | 'local';
  /**
   * What this process (JS realm) may spend of the plan now, CU/s: `allowedCuPerSecond` alone; a quarter of it
   * before the fleet's store first answers in time (or is found slow); its share while it spends alone after
   * losing the fleet's store; its part of the fleet's rate while leased (what it took lately plus what the
   * fleet leaves unused). A line of requests waiting for CU drains at about this rate. `Number.MAX_VALUE`
   * while unlimited.
   */
  spendingCuPerSecond: number;
  /** Requests waiting for this group's CU now, from every relayer of the realm that shares it. */
  waitingForCu: number;
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
  /**
   * After a total outage, attempts are paced for a while at a little above the demand before it (so
   * the backlog does not knock the endpoints over again): the pace and the demand, per second.
   * Absent when not pacing.
   */
  recoveryPacing?: { attemptsPerSecond: number; demandPerSecond: number };
  /** Size of the WebAssembly instance's memory, in bytes (it grows, never shrinks). */
  wasmMemoryBytes: number;
}
