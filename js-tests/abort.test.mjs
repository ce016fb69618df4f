// Cancellation and per-attempt timeouts of operations.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { FaultTolerantRelayer, isInvalidRequestError, isTransportError } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);

test('an aborted request rejects with the signal reason and sends nothing more', async () => {
  const a = await node([{ hang: true }]);
  const relayer = new FaultTolerantRelayer([a.url], { baseDelayMs: 1, maxDelayMs: 2, attemptTimeoutMs: 60000 });
  const controller = new AbortController();
  const pending = relayer.request({ method: 'eth_blockNumber' }, { signal: controller.signal });
  while (a.count() === 0) await new Promise((r) => setImmediate(r));
  const reason = new Error('user navigated away');
  controller.abort(reason);
  await assert.rejects(pending, (e) => e === reason);
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(a.count(), 1, 'no retry after the abort');
});

test('an already-aborted signal sends nothing', async () => {
  const a = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([a.url]);
  await assert.rejects(relayer.request({ method: 'eth_blockNumber' }, { signal: AbortSignal.abort() }), (e) => e.name === 'AbortError');
  assert.equal(a.count(), 0);
  await assert.rejects(relayer.request({ method: 'eth_blockNumber' }, { signal: 'nope' }), (e) => isInvalidRequestError(e));
});

test('an operation that outlives its attempt timeout is abandoned, signalled, and retried elsewhere', async () => {
  const a = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([`${a.url}/0`, `${a.url}/1`], { baseDelayMs: 1, maxDelayMs: 2, attemptTimeoutMs: 50 });
  const signals = [];
  const value = await relayer.executeRpcWithRetry(async (provider, ctx) => {
    signals.push(ctx.signal);
    assert.equal(ctx.timeoutMs, 50);
    if (ctx.attempt === 0) await new Promise(() => {}); // stuck forever
    return provider.request({ method: 'eth_blockNumber' });
  });
  assert.equal(value, '0x1');
  assert.equal(signals.length, 2);
  assert.ok(signals[0].aborted, 'the abandoned attempt was told');
  assert.ok(isTransportError(signals[0].reason) && signals[0].reason.transport === 'timeout');
  assert.ok(!signals[1].aborted);
});

test('aborting the first of two identical reads does not fail the second', async () => {
  const a = await node([{ delayMs: 80, then: { result: '0x2a' } }]);
  const relayer = new FaultTolerantRelayer([a.url], { baseDelayMs: 1, maxDelayMs: 2 });
  const controller = new AbortController();
  const params = ['0x0000000000000000000000000000000000000042', 'latest'];
  const first = relayer.request({ method: 'eth_getBalance', params }, { signal: controller.signal });
  const second = relayer.request({ method: 'eth_getBalance', params });
  controller.abort(new Error('first caller left'));
  await assert.rejects(first, /first caller left/);
  assert.equal(await second, '0x2a');
});

test('fifty calls in flight on one signal add one listener to it, and one abort ends them all', async () => {
  // Node warns of a possible leak past ten listeners on one signal: a new user saw the warning from
  // six concurrent calls sharing a page's signal (each call and each HTTP exchange added one).
  const a = await node([{ hang: true }]);
  const relayer = new FaultTolerantRelayer([a.url], { attemptTimeoutMs: 60000, batch: false });
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    const controller = new AbortController();
    const calls = Array.from({ length: 50 }, (_, i) =>
      relayer.request({ method: 'eth_getBalance', params: [`0x${String(i).padStart(40, '0')}`, 'latest'] }, { signal: controller.signal }));
    while (a.count() < 1) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 50)); // the others in flight or queued
    const listeners = (await import('node:events')).getEventListeners(controller.signal, 'abort');
    assert.equal(listeners.length, 1, `one listener on the caller's signal: ${listeners.length}`);
    const reason = new Error('page left');
    controller.abort(reason);
    const settled = await Promise.allSettled(calls);
    assert.ok(settled.every((s) => s.status === 'rejected' && s.reason === reason), 'every call ends with the reason');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message), []);
  } finally {
    process.off('warning', onWarning);
    relayer.close();
  }
});
