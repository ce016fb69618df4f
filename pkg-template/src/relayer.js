// FaultTolerantRelayer: the public class. A thin shell over the wasm
// engine (`WasmRelayer`), which owns every policy decision. This file
// validates arguments, turns descriptors into typed errors and dispatches
// events; it never decides whether or when to retry.

import { ClosedError, ConfigError } from './errors.js';
import { engineCall, raise, toError } from './descriptors.js';
import { abortable, callSignal, invalid } from './calls.js';
import { FORWARDED_EVENTS, KNOWN_EVENTS, LOG_LEVELS, checkLogger, describe, emittingUpstreams, firstToLog } from './events.js';
import { httpSender } from './http.js';
import { wrapUpstreams } from './upstreams.js';
import { runAttempt } from './attempt.js';
import { newsHub, realmId } from './realm-news.js';
import { fleetStores, splitFleetOptions } from './fleet-store.js';
import { tabMember } from './tab-store.js';
import { Connection, connectionRealm } from './connection.js';
import { txModuleHub } from './tx-module.js';
import { txSideFor } from './tx-calls.js';

/**
 * The origin's IndexedDB nonce book (idb-nonces.js), its code loaded by `load()` on the first
 * nonce call (a page downloads it only then); a load that fails fails that call, and the next
 * call tries again.
 */
function lazyBook(load) {
  let book = null;
  return async (...call) => {
    book ??= Promise.resolve(load()).then((m) => m.indexedDbBook());
    const ready = await book.catch((error) => { book = null; throw error; });
    return ready(...call);
  };
}

/** Checks a `wrap` option: a function from the bound EIP-1193 provider to the client `op` receives. */
function checkWrap(wrap, field) {
  if (wrap === undefined) return undefined;
  if (typeof wrap !== 'function') {
    throw new ConfigError({ kind: 'config', code: -32602, field,
      message: `${field}: must be a function (provider) => client, e.g. (p) => new ethers.BrowserProvider(p)` });
  }
  return wrap;
}

/**
 * The FaultTolerantRelayer class bound to one wasm-bindgen glue module
 * (web or nodejs target) and what its entry point gives: `sender`, the HTTP
 * exchange (`fetch`, or Node's own: node-http.js); `loadTx`, the loader of
 * the transaction module's glue (tx-module.js; `txSynchronous`: it loads at
 * once, as in Node); `installed(name)`, whether a package is there; and
 * `loadRedisStore` and `loadIdbNonces`, the loaders of redis-store.js and
 * idb-nonces.js (the module, or a promise of it). Each entry point creates
 * it once.
 */
export function createRelayerClass(wasm, { sender = httpSender, loadTx, txSynchronous = false, installed, loadRedisStore, loadIdbNonces }) {
  // The HTTP exchange of URL endpoints, delivering results to this wasm instance.
  const senderFor = (url, headers, maxBytes) => sender(url, headers, maxBytes, wasm.deliverHttp);
  const news = newsHub(wasm);
  const txModule = txModuleHub(loadTx, txSynchronous);
  const stores = fleetStores(wasm, news, txModule, installed, loadRedisStore);
  let idbBook = null; // the origin's IndexedDB book, attached once the first relayer asks for it
  let idbRelayers = 0;
  const connections = connectionRealm(); // EIP-1193 connection news across shared breakers

  class FaultTolerantRelayer {
    #engine;
    #tx; // the transaction engine (tx-module.js), made on the first transaction call
    #listeners = new Map();
    #closed = false;
    #logger;
    #wrap;
    #connection;
    #leaveRealm; // leaves `connections` on close()
    #emitters = [];
    #closer = new AbortController(); // aborts executeRpcWithRetry attempts in flight on close()
    #forwarding = new Map(); // event → [emitter, handler][]
    #releaseStore = null; // leaves the realm's fleet store (fleet.redis) on close()

    /**
     * @param {string[]} rpcUrls upstream JSON-RPC URLs, in priority order
     * @param {object} [options] see RelayerOptions in index.d.ts
     */
    constructor(rpcUrls, options) {
      // Every option (and unknown keys) is checked by the engine, which names the field;
      // `logger` is the wrapper's own.
      let engineOptions = options;
      if (options !== null && typeof options === 'object' && ('logger' in options || 'wrap' in options)) {
        this.#logger = checkLogger(options.logger);
        this.#wrap = checkWrap(options.wrap, 'wrap');
        const { logger, wrap, ...rest } = options;
        engineOptions = rest;
      }
      // The engine holds its listener until close(); through a weak reference, so a relayer
      // dropped without close() is still collected (the engine is freed with it).
      // A store across processes (fleet.redis, fleet.prefix) or across the origin's tabs
      // (fleet.tabs) is the wrapper's to carry; it is attached before the engine is built, so
      // this relayer's quota groups lease from it.
      const split = splitFleetOptions(engineOptions && engineOptions.fleet);
      if (engineOptions && typeof engineOptions.fleet === 'object' && engineOptions.fleet !== null) {
        engineOptions = { ...engineOptions, fleet: split.fleet };
      }
      const self = new WeakRef(this);
      const listener = (event) => self.deref()?.#dispatch(event);
      news.open();
      const release = split.store ? stores.use(split.store, split.named, (event) => self.deref()?.#emit(event)) : null;
      try {
        this.#engine = engineCall(() => new wasm.WasmRelayer(wrapUpstreams(rpcUrls), engineOptions, listener, senderFor));
      } catch (error) {
        release?.();
        throw error;
      }
      this.#releaseStore = release;
      // Made outside this scope: a closure here holding the engine would be kept by the engine's
      // own listener (which shares this scope), and a dropped relayer's wasm never freed.
      this.#tx = txSideFor(txModule, this.#engine, listener, engineOptions);
      // A Redis store this relayer named keeps its accounts' nonces too (docs/transactions.md),
      // under a random name of this relayer's own (realmId() draws a new one each call).
      if (split.named && split.store && !split.store.tabs) this.#tx.shareNonces(realmId());
      // Or the origin's IndexedDB (fleet.indexedDB): its tabs share nonces and a reloaded page
      // finishes what it left pending, under a name the tab keeps across reloads.
      if (split.indexedDB) {
        if (!idbBook) {
          idbBook = lazyBook(loadIdbNonces);
          txModule.attachBook(idbBook);
        }
        this.#tx.shareNonces(tabMember(idbRelayers++, realmId));
      }
      this.#emitters = emittingUpstreams(rpcUrls);
      // Through `self` too, never `this`: these closures share the constructor's scope with the
      // engine's listener, and one capturing `this` would keep a dropped relayer alive through it.
      this.#connection = new Connection((event) => self.deref()?.#emit(event),
        () => self.deref()?.#engine.endpoints().length ?? 0,
        () => self.deref()?.#engine.stats().endpoints.map((e) => e.state) ?? []);
      this.#leaveRealm = connections.join(this.#connection);
    }

    /**
     * EIP-1193: one JSON-RPC request under every retry policy; `options.signal` cancels it.
     * Not an `async` function: the hot path adds no promise hop of its own
     * (bad arguments still reject, never throw).
     */
    request(args, options) {
      let signal;
      try {
        if (args === null || typeof args !== 'object') throw invalid('request() takes { method, params }');
        const { method, params } = args;
        if (typeof method !== 'string' || method.length === 0) throw invalid('`method` must be a non-empty string', 'method');
        if (params !== undefined && (params === null || typeof params !== 'object')) {
          throw invalid('`params` must be an array or an object', 'params');
        }
        signal = callSignal(options);
        return abortable(this.#engine.request(method, params, signal), signal)
          .then(undefined, (descriptor) => raise(descriptor, { signal }));
      } catch (error) {
        return Promise.reject(error);
      }
    }

    /**
     * Runs `op(provider, context)` with an EIP-1193 provider bound to one
     * endpoint, retrying it on other endpoints under the same policies as
     * request().
     *
     * Replay safety: `op` may run more than once (on different endpoints),
     * so it must be safe to repeat. `context.signal` aborts when the attempt
     * times out or the caller aborts; the bound provider honours it.
     */
    async executeRpcWithRetry(op, options) {
      if (typeof op !== 'function') throw invalid('executeRpcWithRetry() takes a function', 'op');
      const signal = callSignal(options);
      const wrap = options && options.wrap !== undefined ? checkWrap(options.wrap, 'options.wrap') : this.#wrap;
      const engine = this.#engine;
      const labels = engine.endpoints();
      const closer = this.#closer.signal;
      const attempt = (index, attemptNumber, timeoutMs) => runAttempt(engine, op, labels[index], index, attemptNumber, timeoutMs, signal, wrap, closer);
      try {
        return await abortable(engine.execute(attempt, signal), signal);
      } catch (descriptor) {
        // A failure that must not be retried is the operation's own error, rethrown as it is.
        raise(descriptor, { signal, operation: true });
      }
    }

    /**
     * A JSON-RPC batch: one HTTP request for many calls (costs summed).
     * Resolves to one `{ status: 'fulfilled', value }` or
     * `{ status: 'rejected', reason }` per call, in order, like
     * Promise.allSettled; items that failed for a retryable reason are
     * re-sent in a smaller batch within the same limits.
     */
    async batch(calls, options) {
      if (!Array.isArray(calls)) throw invalid('batch() takes an array of { method, params }', 'calls');
      const signal = callSignal(options);
      let settled;
      try {
        settled = await abortable(this.#engine.batch(calls, signal), signal);
      } catch (descriptor) {
        raise(descriptor, { signal });
      }
      return settled.map((item) => (item.status === 'fulfilled'
        ? { status: 'fulfilled', value: item.value }
        : { status: 'rejected', reason: toError(item.reason) }));
    }

    /**
     * Sends `tx` from `signer` (ethers Signer, viem local account or
     * EIP-1193 wallet) with a relayer-managed nonce, re-broadcasting the
     * same bytes when the outcome is unknown and speeding it up after
     * `maxWaitBlockCount` blocks without inclusion. Resolves to the receipt
     * of whichever transaction for the nonce was mined, plus
     * `{ hash, hashes, nonce, outcome, replaced, cancelled, confirmations }`.
     */
    sendTransactionWithSpeedup(signer, tx, maxWaitBlockCount = 3, options) {
      return this.#tx.send(signer, tx, maxWaitBlockCount, options);
    }

    /**
     * Cancels a pending transaction sent through this relayer: a 0-value
     * self-transfer with the same nonce and higher fees. `target` is
     * `{ nonce }` or `{ hash }` (any hash sent for the nonce), optionally
     * with `chainId`. If a speed-up is in flight, the cancel goes right
     * after it and wins; both calls resolve to the same outcome.
     */
    cancelTransaction(signer, target, options) {
      return this.#tx.cancel(signer, target, options);
    }

    /**
     * Broadcasts already-signed bytes. A lost answer is not a failure:
     * resolves to `{ hash, status: 'accepted' | 'unknown' | 'mined' }`
     * (unknown: looked up and re-broadcast; watch the hash).
     */
    submitRaw(raw) {
      return this.#tx.submitRaw(raw);
    }

    /**
     * Waits for a receipt with `confirmations` (default 1), polling with
     * jitter; a reorg that drops it emits `reorg` and the wait goes on.
     * `timeoutMs` bounds the wait (DeadlineError naming the hash).
     */
    waitForReceipt(hash, options) {
      return this.#tx.waitForReceipt(hash, options);
    }

    /**
     * Takes over the journaled transactions of an account whose worker died
     * (killed, restarted: its lease on them ran out) from the fleet store
     * (`fleet: { redis }`, or `{ indexedDB: true }` in pages, where a
     * reloaded tab gets its own back at once), and finishes them: every hash watched, the same
     * bytes re-broadcast, sped up with `account` when it is a signer (an
     * address string: watched only). Resolves to `{ adopted: [{ nonce,
     * hashes, outcome }], unreadable: [{ nonce, reason }] }`; each `outcome`
     * settles as sendTransactionWithSpeedup would. `options`: `chainId`
     * (default: the relayer's), `maxWaitBlockCount` (3), transaction options.
     */
    resumeTransactions(account, options) {
      return this.#tx.resume(account, options);
    }

    /** The outcome of a tracked nonce, by `{ nonce, from, chainId? }` or `{ hash }` (sent here or resumed). */
    waitForTransaction(target) {
      return this.#tx.waitForTransaction(target);
    }

    /** Pending nonces and their hashes for an account (what the relayer still watches). */
    pendingTransactions(chainId, address) {
      return this.#tx.pending(chainId, address);
    }

    /** Subscribes to an event (see RelayerEventMap); returns the relayer (EIP-1193, Node EventEmitter). */
    on(event, listener) {
      if (!KNOWN_EVENTS.has(event)) throw invalid(`unknown event \`${String(event)}\`; known: ${[...KNOWN_EVENTS].join(', ')}`, 'event');
      if (typeof listener !== 'function') throw invalid('listener must be a function', 'listener');
      if (!this.#listeners.has(event)) this.#listeners.set(event, new Set());
      this.#listeners.get(event).add(listener);
      if (event === 'connect') this.#probeConnect();
      if (FORWARDED_EVENTS.has(event)) this.#forward(event);
      return this;
    }

    /** Like `on`, but returns a function that unsubscribes. */
    subscribe(event, listener) {
      this.on(event, listener);
      return () => this.removeListener(event, listener);
    }

    /** Subscribes for the next event only. */
    once(event, listener) {
      if (typeof listener !== 'function') throw invalid('listener must be a function', 'listener');
      const one = (e) => {
        this.removeListener(event, one);
        listener(e);
      };
      return this.on(event, one);
    }

    /** EIP-1193 style unsubscription. */
    removeListener(event, listener) {
      const set = this.#listeners.get(event);
      if (set) set.delete(listener);
      return this;
    }

    /** Node EventEmitter's name for `removeListener`. */
    off(event, listener) {
      return this.removeListener(event, listener);
    }

    /** Starts forwarding a wallet-only event from the upstreams that emit it (once per event). */
    #forward(event) {
      if (this.#forwarding.has(event) || this.#closed) return;
      const handlers = this.#emitters.map((emitter) => {
        const handler = (payload) => this.#deliver(event, payload);
        try {
          emitter.on(event, handler);
        } catch {
          // An emitter that refuses the event simply never forwards it.
        }
        return [emitter, handler];
      });
      this.#forwarding.set(event, handlers);
    }

    /** Redacted labels of the upstream endpoints, in order. */
    get endpoints() {
      return this.#engine.endpoints();
    }

    /** A snapshot of the relayer's state. */
    stats() {
      return this.#engine.stats();
    }

    /** Stops accepting requests; later calls fail with a ClosedError. */
    async close() {
      if (this.#closed) return;
      this.#connection.close();
      this.#closed = true;
      this.#leaveRealm();
      this.#engine.close();
      this.#releaseStore?.();
      this.#closer.abort(new ClosedError({ kind: 'closed', code: 4900, message: 'the relayer is closed' }));
      this.#listeners.clear();
      for (const [event, handlers] of this.#forwarding) {
        for (const [emitter, handler] of handlers) {
          const remove = emitter.removeListener || emitter.off;
          try {
            if (typeof remove === 'function') remove.call(emitter, event, handler);
          } catch {
            // Nothing more to do for an emitter that cannot unsubscribe.
          }
        }
      }
      this.#forwarding.clear();
    }

    /**
     * Learns the chain id once (in the background) so `connect` can fire. A turn later: an app that
     * subscribes and then reads in the same turn gets its read out first, in one batch with the
     * node's chain check (asked at once, this lone check went first and the read waited for it:
     * two round trips to a new user's first answer).
     */
    #probeConnect() {
      if (this.#connection.connected || this.#closed) return;
      setTimeout(() => {
        if (this.#connection.connected || this.#closed) return;
        this.request({ method: 'eth_chainId' }).then((id) => this.#connection.markConnected(id), () => {});
      }, 0);
    }

    #dispatch(event) {
      if (!event || typeof event.type !== 'string') return;
      this.#emit(event);
      if (event.type === 'breaker') {
        this.#connection.onBreaker(event);
        connections.changed(this.#connection);
      }
    }

    #emit(event) {
      const level = this.#logger && (event.type === 'breaker' ? (event.to === 'open' ? 'warn' : 'info')
        : event.type === 'fleetStore' ? (event.state === 'down' ? 'warn' : 'info') : LOG_LEVELS[event.type]);
      if (level && (event.type !== 'fleetStore' || firstToLog(event, this.#logger))) {
        const write = this.#logger[level] || this.#logger.info || this.#logger.warn || this.#logger.error || this.#logger.debug;
        try {
          // One line: console prints a second argument over several lines.
          write.call(this.#logger, describe(event), event);
        } catch {
          // A logger's bug must not break a request.
        }
      }
      this.#deliver(event.type, event);
    }

    #deliver(type, payload) {
      const set = this.#listeners.get(type);
      if (!set) return;
      for (const listener of [...set]) {
        try {
          listener(payload);
        } catch {
          // A listener's bug must not break a request.
        }
      }
    }
  }
  return FaultTolerantRelayer;
}
