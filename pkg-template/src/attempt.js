// One attempt of an executeRpcWithRetry operation: the caller's function
// run against the endpoint the engine chose, under the attempt's timeout,
// the caller's signal and close().

import { TransportError } from './errors.js';
import { engineCall } from './descriptors.js';
import { abortable, invalid } from './calls.js';
import { observe } from './observe.js';
import { onAbort } from './abort-watch.js';

// close() reaches every attempt in flight through one listener on the relayer's signal, and the
// caller's signal likewise (`onAbort`): Node warns of a possible leak past ten listeners on one signal.

/**
 * One attempt of an executeRpcWithRetry operation, reported to the engine
 * as `{ ok, value }` or `{ ok: false, error, observation }`. It never
 * rejects. The attempt's own timeout is enforced here: past it, the
 * attempt counts as timed out and its signal aborts.
 */
export async function runAttempt(engine, op, endpoint, index, attemptNumber, timeoutMs, outer, wrap, closer) {
  const controller = new AbortController();
  const forward = () => controller.abort(outer.reason);
  const unforward = outer ? onAbort(outer, forward) : () => {};
  let timer;
  let unwatch = () => {};
  const timedOut = new Promise((resolve) => {
    // close(): the operation's signal aborts and the attempt ends now (no timer left behind).
    const onClose = () => {
      controller.abort(closer.reason);
      resolve({ ok: false, error: closer.reason, observation: { transport: 'aborted' } });
    };
    if (closer.aborted) onClose();
    else unwatch = onAbort(closer, onClose);
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
      return engineCall(() => abortable(engine.attemptOnce(index, args.method, args.params, controller.signal), controller.signal));
    },
  };
  const run = (async () => {
    try {
      const client = wrap ? wrap(provider) : provider;
      return { ok: true, value: await op(client, { endpoint, attempt: attemptNumber, signal: controller.signal, timeoutMs, provider }) };
    } catch (error) {
      return { ok: false, error, observation: observe(error) };
    }
  })();
  try {
    return await Promise.race([run, timedOut]);
  } finally {
    clearTimeout(timer);
    unforward();
    unwatch();
  }
}
