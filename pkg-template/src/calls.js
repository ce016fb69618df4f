// Per-call arguments and cancellation, shared by the relayer's methods and
// the provider an executeRpcWithRetry operation is bound to: the error for
// a bad argument, the `{ signal }` option, and a call that ends as soon as
// its signal aborts.

import { onAbort } from './abort-watch.js';
import { InvalidRequestError } from './errors.js';

/** An InvalidRequestError for a bad argument (`field` names it). */
export function invalid(message, field) {
  return new InvalidRequestError({ kind: 'invalidRequest', code: -32602, message, field });
}

/** Reads `{ signal }` from per-call options; throws InvalidRequestError on anything else. */
export function callSignal(options) {
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
export function abortable(promise, signal) {
  if (!signal) return promise;
  // Once the caller has aborted, the engine's own later rejection is expected: do not let it go unhandled.
  promise.catch(() => {});
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const unwatch = onAbort(signal, () => reject(signal.reason));
    promise.then(resolve, reject).finally(unwatch);
  });
}
