// FaultTolerantRelayer: the public class. A thin shell over the wasm
// engine (`WasmRelayer`), which owns every policy decision. This file
// validates arguments, turns descriptors into typed errors and dispatches
// events; it never decides whether or when to retry.

const KNOWN_OPTIONS = new Set([
  'maxRetries', 'baseDelayMs', 'maxDelayMs', 'backoff', 'attemptTimeoutMs', 'deadlineMs',
  'retryBudget', 'maxRetryAfterMs', 'maxResponseBytes', 'classify',
]);
const KNOWN_EVENTS = new Set(['retry', 'failover', 'rateLimited']);

function invalid(message, field) {
  return new InvalidRequestError({ kind: 'invalidRequest', code: -32602, message, field });
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
      if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
        throw new ConfigError({ kind: 'config', code: -32602, field: 'options', message: 'invalid option `options`: must be an object' });
      }
      for (const key of Object.keys(options || {})) {
        if (!KNOWN_OPTIONS.has(key)) {
          throw new ConfigError({ kind: 'config', code: -32602, field: key, message: `invalid option \`${key}\`: unknown option` });
        }
      }
      try {
        this.#engine = new wasm.WasmRelayer(rpcUrls, options, (event) => this.#dispatch(event));
      } catch (descriptor) {
        throw toError(descriptor);
      }
    }

    /** EIP-1193: one JSON-RPC request under every retry policy. */
    async request(args) {
      if (args === null || typeof args !== 'object') throw invalid('request() takes { method, params }');
      const { method, params } = args;
      if (typeof method !== 'string' || method.length === 0) throw invalid('`method` must be a non-empty string', 'method');
      if (params !== undefined && (params === null || typeof params !== 'object')) {
        throw invalid('`params` must be an array or an object', 'params');
      }
      try {
        return await this.#engine.request(method, params);
      } catch (descriptor) {
        throw toError(descriptor);
      }
    }

    /**
     * Runs `op(provider)` with an EIP-1193 provider bound to one endpoint,
     * retrying it on other endpoints under the same policies as request().
     */
    async executeRpcWithRetry(op) {
      if (typeof op !== 'function') throw invalid('executeRpcWithRetry() takes a function', 'op');
      const engine = this.#engine;
      const labels = engine.endpoints();
      const attempt = async (index, attemptNumber) => {
        const provider = {
          endpoint: labels[index],
          request: async (args) => {
            if (args === null || typeof args !== 'object' || typeof args.method !== 'string') {
              throw invalid('request() takes { method, params }');
            }
            try {
              return await engine.attemptOnce(index, args.method, args.params);
            } catch (descriptor) {
              throw toError(descriptor);
            }
          },
        };
        try {
          return { ok: true, value: await op(provider, { endpoint: labels[index], attempt: attemptNumber }) };
        } catch (error) {
          return { ok: false, error, observation: observe(error) };
        }
      };
      try {
        return await engine.execute(attempt);
      } catch (descriptor) {
        const original = descriptor && descriptor.operationError;
        // A failure that must not be retried is the operation's own error: rethrow it as is.
        if (descriptor && descriptor.reason === 'notRetryable' && original !== undefined) throw original;
        throw toError(descriptor, original);
      }
    }

    /** Subscribes to `retry`, `failover` or `rateLimited`; returns a disposer. */
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

function createApi(wasm) {
  return {
    FaultTolerantRelayer: createRelayerClass(wasm),
    BreakwaterError, ConfigError, RpcError, HttpError, TransportError, DeadlineError, RetryBudgetError,
    RateLimitedError, OutcomeUnknownError, ClosedError, InvalidRequestError,
    isBreakwaterError, isConfigError, isRpcError, isHttpError, isTransportError, isDeadlineError,
    isRetryBudgetError, isRateLimitedError, isOutcomeUnknownError, isClosedError, isInvalidRequestError,
  };
}
