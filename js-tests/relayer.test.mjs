// The relayer against loopback mock nodes that inject real-world faults.
// Assertions are on what the *servers* saw (upstream request counts) and on
// typed errors, never on wall-clock durations.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  FaultTolerantRelayer, isRpcError, isHttpError, isTransportError, isRateLimitedError, isBreakwaterError,
} from '../pkg/dist/node.mjs';
import { useMockNodes, deadUrl } from './helpers/mock-node.mjs';

const node = useMockNodes(after);

// Short delays keep the suite fast; the policies' timing is proven in Rust on a simulated clock.
const FAST = { baseDelayMs: 1, maxDelayMs: 5 };

test('a healthy node answers with one upstream request and the result untouched', async () => {
  const a = await node([{ result: { number: '0x10', nested: [1, 2, { x: null }] } }]);
  const relayer = new FaultTolerantRelayer([a.url], FAST);
  assert.deepEqual(await relayer.request({ method: 'eth_getBlockByNumber', params: ['latest', false] }),
    { number: '0x10', nested: [1, 2, { x: null }] });
  assert.equal(a.count(), 1);
  assert.equal(a.chainChecks(), 1, 'a new endpoint is checked for the chain once');
  assert.deepEqual(a.requests.find((r) => !r.chainCheck).params, ['latest', false]);
});

test('a dead primary plus a healthy secondary succeeds with at most 2 upstream attempts', async () => {
  const b = await node([{ result: '0x2' }]);
  const relayer = new FaultTolerantRelayer([await deadUrl(), b.url], { ...FAST, cache: false });
  const events = [];
  relayer.on('retry', (e) => events.push(e));
  relayer.on('failover', (e) => events.push(e));
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x2');
  assert.equal(b.count(), 1);
  assert.deepEqual(events.map((e) => e.type), ['retry', 'failover']);
  assert.equal(events[0].rule, 'transport.refused');
  // Two more failures trip the primary's breaker; after that, requests go straight to the survivor.
  const breaker = [];
  relayer.on('breaker', (e) => breaker.push(e));
  await relayer.request({ method: 'eth_blockNumber' });
  await relayer.request({ method: 'eth_blockNumber' });
  assert.deepEqual(breaker.map((e) => [e.from, e.to]), [['closed', 'open']]);
  const before = events.length;
  for (let i = 0; i < 5; i += 1) await relayer.request({ method: 'eth_blockNumber' });
  assert.equal(events.length, before, 'no more retries or failovers');
  assert.equal(b.count(), 8);
});

for (const status of [500, 502, 503, 504]) {
  test(`HTTP ${status} on the primary fails over: exactly one request each`, async () => {
    const a = await node([{ status }]);
    const b = await node([{ result: '0x3' }]);
    const relayer = new FaultTolerantRelayer([a.url, b.url], FAST);
    assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x3');
    assert.equal(a.count(), 1);
    assert.equal(b.count(), 1);
  });
}

test('429 with Retry-After rests the endpoint (capped) and then succeeds there', async () => {
  const a = await node([{ status: 429, headers: { 'retry-after': '30' } }, { result: '0x4' }]);
  const relayer = new FaultTolerantRelayer([a.url], { ...FAST, maxRetryAfterMs: 20 });
  const limited = [];
  relayer.on('rateLimited', (e) => limited.push(e));
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x4');
  assert.equal(a.count(), 2);
  assert.equal(limited.length, 1);
  assert.equal(limited[0].cooldownMs, 20, 'Retry-After: 30 s capped at maxRetryAfterMs');
});

test('a rate-limited endpoint past the deadline fails fast with a RateLimitedError', async () => {
  const a = await node([{ status: 429, headers: { 'retry-after': '600' } }]);
  const relayer = new FaultTolerantRelayer([a.url], { ...FAST, deadlineMs: 1000, maxRetryAfterMs: 600000 });
  const err = await relayer.request({ method: 'eth_blockNumber' }).catch((e) => e);
  assert.ok(isRateLimitedError(err), err);
  assert.equal(err.code, -32002, "a give-up: no wrapper retries it");
  assert.equal(err.retryAfterMs, 600000);
  assert.equal(a.count(), 1);
});

test('every attempt spent on 429s ends in a RateLimitedError, the node\'s answer as its cause', async () => {
  const a = await node([{ status: 429 }]);
  const b = await node([{ status: 429 }]);
  // Two keys (no shared cooldown): the first attempt's 429 fails over, the second's is the last.
  const relayer = new FaultTolerantRelayer([{ url: a.url, quotaGroup: 'a' }, { url: b.url, quotaGroup: 'b' }],
    { ...FAST, maxRetries: 1, quota: { a: { cuPerSecond: Infinity }, b: { cuPerSecond: Infinity } } });
  const err = await relayer.request({ method: 'eth_blockNumber' }).catch((e) => e);
  assert.ok(isRateLimitedError(err), err);
  assert.equal(err.stopReason, 'attemptsExhausted');
  assert.equal(err.attempts, 2);
  assert.equal(err.code, -32002);
  assert.ok(isHttpError(err.cause), 'the node\'s 429 is kept');
  assert.equal(err.cause.status, 429);
  assert.equal(a.count() + b.count(), 2);
});

test('a hanging node costs one attempt timeout, then the next node answers', async () => {
  const a = await node([{ hang: true }]);
  const b = await node([{ result: '0x5' }]);
  const relayer = new FaultTolerantRelayer([a.url, b.url], { ...FAST, attemptTimeoutMs: 150 });
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x5');
  assert.equal(a.count(), 1);
});

test('every node hanging ends in a TransportError (timeout) bounded by the deadline', async () => {
  const a = await node([{ hang: true }]);
  // A budget that cannot run out first: six 50 ms attempts fit in 400 ms, and the default burst
  // of 5 retries ended a loaded run in a RetryBudgetError instead (that end has its own test).
  const relayer = new FaultTolerantRelayer([a.url],
    { ...FAST, attemptTimeoutMs: 50, deadlineMs: 400, maxRetries: 100, budget: { burst: 50 } });
  const err = await relayer.request({ method: 'eth_blockNumber' }).catch((e) => e);
  assert.ok(isBreakwaterError(err));
  assert.equal(err.kind, 'deadline');
  assert.ok(isTransportError(err.cause));
  assert.equal(err.cause.transport, 'timeout');
  assert.ok(a.count() >= 2 && a.count() <= 8, `attempts ${a.count()}`);
});

test('connection refused everywhere uses exactly maxRetries + 1 attempts', async () => {
  const relayer = new FaultTolerantRelayer([await deadUrl(), await deadUrl()], { ...FAST, maxRetries: 3 });
  const err = await relayer.request({ method: 'eth_blockNumber' }).catch((e) => e);
  assert.ok(isTransportError(err), err);
  assert.equal(err.transport, 'refused');
  assert.equal(err.attempts, 4);
  assert.equal(err.stopReason, 'attemptsExhausted');
  assert.equal(err.reason, undefined, 'reason is ethers\' revert reason, never ours');
  assert.equal(err.history.length, 4);
  assert.deepEqual(err.history.map((h) => h.endpointIndex), [0, 1, 0, 1]);
});

test('an HTML error page and a wrong id are infrastructure failures: fail over', async () => {
  // A gateway's page for everything: the chain check gets it too.
  const html = await node([{ html: true, chainCheckToo: true }]);
  const wrong = await node([{ wrongId: true }]);
  const good = await node([{ result: '0x6' }]);
  const relayer = new FaultTolerantRelayer([html.url, wrong.url, good.url], FAST);
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x6');
  assert.deepEqual([html.count(), wrong.count(), good.count()], [1, 1, 1]);
  const onlyHtml = new FaultTolerantRelayer([html.url], { ...FAST, maxRetries: 1 });
  const err = await onlyHtml.request({ method: 'eth_blockNumber' }).catch((e) => e);
  assert.ok(isHttpError(err), err);
  assert.equal(err.status, 200);
  assert.match(err.message, /notJson/);
});

test('a revert costs exactly one upstream request in the whole fleet and keeps code and data', async () => {
  const a = await node([{ error: { code: 3, message: 'execution reverted: Ownable: caller is not the owner', data: '0x08c379a0' } }]);
  const b = await node([{ result: '0x' }]);
  const relayer = new FaultTolerantRelayer([a.url, b.url], FAST);
  const err = await relayer.request({ method: 'eth_call', params: [{ to: '0x0000000000000000000000000000000000000001' }, 'latest'] }).catch((e) => e);
  assert.ok(isRpcError(err), err);
  assert.equal(err.code, 3);
  assert.equal(err.data, '0x08c379a0');
  assert.equal(err.class, 'fatal');
  assert.equal(err.stopReason, 'notRetryable');
  assert.equal(a.count() + b.count(), 1);
});

test('invalid params and insufficient funds are never retried', async () => {
  const a = await node([{ error: { code: -32602, message: 'invalid argument 0: hex string without 0x prefix' } }]);
  const b = await node([{ error: { code: -32000, message: 'insufficient funds for gas * price + value' } }]);
  for (const n of [a, b]) {
    const relayer = new FaultTolerantRelayer([`${n.url}/0`, `${n.url}/1`], FAST);
    const err = await relayer.request({ method: 'eth_estimateGas', params: [{}] }).catch((e) => e);
    assert.ok(isRpcError(err));
    assert.equal(n.count(), 1);
  }
});

test('"already known" on a raw transaction resolves to the locally computed hash', async () => {
  const a = await node([{ error: { code: -32000, message: 'already known' } }]);
  const relayer = new FaultTolerantRelayer([a.url], FAST);
  // keccak256(0x01) — what the node would have returned for a first broadcast.
  const hash = await relayer.request({ method: 'eth_sendRawTransaction', params: ['0x01'] });
  assert.equal(hash, '0x5fe7f977e71dba2ea1a68e21057beebb9be2ac30c6410aa38d4f3fbe41dcffd2');
  assert.equal(a.count(), 1);
});

test('user classification rules come before the built-in table', async () => {
  const a = await node([{ error: { code: -32099, message: 'custom provider hiccup' } }, { result: '0x7' }]);
  const relayer = new FaultTolerantRelayer([a.url], { ...FAST, classify: [{ code: -32099, class: 'fatal' }] });
  const err = await relayer.request({ method: 'eth_blockNumber' }).catch((e) => e);
  assert.equal(err.rule, 'user[0]');
  assert.equal(a.count(), 1);
});

test('method names are sent as exact JSON strings, odd characters included', async () => {
  const a = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([a.url], { ...FAST, cache: false });
  for (const method of ['eth_blockNumber', 'odd"method\\with\nescapes', 'ünïcode_方法']) {
    await relayer.request({ method });
    assert.equal(a.requests.filter((r) => !r.chainCheck).at(-1).method, method);
  }
});
