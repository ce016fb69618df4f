// FaultTolerantRelayer: the public class. A thin shell over the wasm
// engine (`WasmRelayer`), which owns every policy decision. This file
// validates arguments, turns descriptors into typed errors and dispatches
// events; it never decides whether or when to retry.

const KNOWN_EVENTS = new Set(['retry', 'failover', 'breaker', 'rateLimited', 'chainMismatch', 'overload']);

function invalid(message, field) {
  return new InvalidRequestError({ kind: 'invalidRequest', code: -32602, message, field });
}

/** Reads `{ signal }` from per-call options; throws InvalidRequestError on anything else. */
function callSignal(options) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object') throw invalid('call options must be an object', 'options');
  const { signal } = options;
  if (signal === undefined) return undefined;
  if (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean'
    || typeof signal.addEventListener !== 'function') {
    throw invalid('`signal` must be an AbortSignal', 'signal');
  }
  return signal;
}

/**
 * Settles with `promise`, or rejects with `signal.reason` as soon as the
 * signal aborts (the platform's convention, as fetch does). The engine
 * sees the same signal and stops at its next step, sending nothing more.
 */
function abortable(promise, signal) {
  if (!signal) return promise;
  // Once the caller has aborted, the engine's own later rejection is expected: do not let it go unhandled.
  promise.catch(() => {});
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function createRelayerClass(wasm) {
  class FaultTolerantRelayer {
    #engine;
    #listeners = new Map();
    #closed = false;

    /**
     * @param {string[]} rpcUrls upstream JSON-RPC URLs, in priority order
     * @param {object} [options] see RelayerOptions in index.d.ts
     */
    constructor(rpcUrls, options) {
      // Every option (and unknown keys) is checked by the engine, which names the field.
      try {
        this.#engine = new wasm.WasmRelayer(rpcUrls, options, (event) => this.#dispatch(event));
      } catch (descriptor) {
        throw toError(descriptor);
      }
    }

    /** EIP-1193: one JSON-RPC request under every retry policy; `options.signal` cancels it. */
    async request(args, options) {
      if (args === null || typeof args !== 'object') throw invalid('request() takes { method, params }');
      const { method, params } = args;
      if (typeof method !== 'string' || method.length === 0) throw invalid('`method` must be a non-empty string', 'method');
      if (params !== undefined && (params === null || typeof params !== 'object')) {
        throw invalid('`params` must be an array or an object', 'params');
      }
      const signal = callSignal(options);
      try {
        return await abortable(this.#engine.request(method, params, signal), signal);
      } catch (descriptor) {
        if (signal && signal.aborted && descriptor === signal.reason) throw descriptor;
        throw toError(descriptor);
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
      const engine = this.#engine;
      const labels = engine.endpoints();
      const attempt = (index, attemptNumber, timeoutMs) => runAttempt(engine, op, labels[index], index, attemptNumber, timeoutMs, signal);
      try {
        return await abortable(engine.execute(attempt, signal), signal);
      } catch (descriptor) {
        if (signal && signal.aborted && descriptor === signal.reason) throw descriptor;
        const original = descriptor && descriptor.operationError;
        // A failure that must not be retried is the operation's own error: rethrow it as is.
        if (descriptor && descriptor.reason === 'notRetryable' && original !== undefined) throw original;
        throw toError(descriptor, original);
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
        if (signal && signal.aborted && descriptor === signal.reason) throw descriptor;
        throw toError(descriptor);
      }
      return settled.map((item) => (item.status === 'fulfilled'
        ? { status: 'fulfilled', value: item.value }
        : { status: 'rejected', reason: toError(item.reason) }));
    }

    /** Subscribes to an event (see RelayerEventMap); returns a disposer. */
    on(event, listener) {
      if (!KNOWN_EVENTS.has(event)) throw invalid(`unknown event \`${String(event)}\`; known: ${[...KNOWN_EVENTS].join(', ')}`, 'event');
      if (typeof listener !== 'function') throw invalid('listener must be a function', 'listener');
      if (!this.#listeners.has(event)) this.#listeners.set(event, new Set());
      this.#listeners.get(event).add(listener);
      return () => this.removeListener(event, listener);
    }

    /** EIP-1193 style unsubscription. */
    removeListener(event, listener) {
      const set = this.#listeners.get(event);
      if (set) set.delete(listener);
      return this;
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
      this.#closed = true;
      this.#engine.close();
      this.#listeners.clear();
    }

    #dispatch(event) {
      const set = this.#listeners.get(event && event.type);
      if (!set) return;
      for (const listener of [...set]) {
        try {
          listener(event);
        } catch {
          // A listener's bug must not break a request.
        }
      }
    }
  }
  return FaultTolerantRelayer;
}

/**
 * One attempt of an executeRpcWithRetry operation, reported to the engine
 * as `{ ok, value }` or `{ ok: false, error, observation }`. It never
 * rejects. The attempt's own timeout is enforced here: past it, the
 * attempt counts as timed out and its signal aborts.
 */
async function runAttempt(engine, op, endpoint, index, attemptNumber, timeoutMs, outer) {
  const controller = new AbortController();
  const forward = () => controller.abort(outer.reason);
  if (outer) outer.addEventListener('abort', forward, { once: true });
  let timer;
  const timedOut = new Promise((resolve) => {
    timer = setTimeout(() => {
      const error = new TransportError({ kind: 'transport', code: -32002, transport: 'timeout', endpoint,
        message: `operation timed out after ${timeoutMs} ms on ${endpoint}` });
      controller.abort(error);
      resolve({ ok: false, error, observation: { transport: 'timeout' } });
    }, timeoutMs);
  });
  const provider = {
    endpoint,
    request: async (args) => {
      if (args === null || typeof args !== 'object' || typeof args.method !== 'string') {
        throw invalid('request() takes { method, params }');
      }
      try {
        return await abortable(engine.attemptOnce(index, args.method, args.params, controller.signal), controller.signal);
      } catch (descriptor) {
        throw toError(descriptor);
      }
    },
  };
  const run = (async () => {
    try {
      return { ok: true, value: await op(provider, { endpoint, attempt: attemptNumber, signal: controller.signal, timeoutMs }) };
    } catch (error) {
      return { ok: false, error, observation: observe(error) };
    }
  })();
  try {
    return await Promise.race([run, timedOut]);
  } finally {
    clearTimeout(timer);
    if (outer) outer.removeEventListener('abort', forward);
  }
}

function createApi(wasm) {
  return {
    FaultTolerantRelayer: createRelayerClass(wasm),
    BreakwaterError, ConfigError, RpcError, HttpError, TransportError, DeadlineError, RetryBudgetError,
    RateLimitedError, OutcomeUnknownError, ClosedError, InvalidRequestError, OverloadError, NoEndpointError,
    isBreakwaterError, isConfigError, isRpcError, isHttpError, isTransportError, isDeadlineError,
    isRetryBudgetError, isRateLimitedError, isOutcomeUnknownError, isClosedError, isInvalidRequestError,
    isOverloadError, isNoEndpointError,
  };
}
