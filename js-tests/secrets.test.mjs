// No API key ever leaves the relayer: keys in URL paths, query strings,
// user:pass@ and headers, with nodes that echo them back in errors. Every
// event of every kind, every error (message, stack, cause chain, history,
// observation), stats, endpoint labels, batch results, bound providers'
// labels and logger lines are walked recursively.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { FaultTolerantRelayer } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const SECRETS = {
  path: '9aa3d95b3bc440fa88ea12eaa4456161',
  query: 'q7Yx2LmN4pQr8StUv0WzAbCdEfGh',
  password: 'hunter2-pa55word-xyz',
  header: 'sk_live_0123456789abcdefXYZ',
};
const EVENTS = ['retry', 'failover', 'breaker', 'rateLimited', 'chainMismatch', 'overload', 'connect', 'disconnect',
  'txSubmitted', 'txUnknown', 'txRebroadcast', 'speedUp', 'cancel', 'txIncluded', 'reorg', 'txMined', 'replaced',
  'nonceResync', 'nonceGap'];

/** Every string reachable from `value` (own properties, enumerable or not, and error fields). */
function strings(value, out = [], seen = new Set()) {
  if (typeof value === 'string') { out.push(value); return out; }
  if (typeof value === 'bigint' || typeof value === 'number') { out.push(String(value)); return out; }
  if (value === null || typeof value !== 'object' || seen.has(value)) return out;
  seen.add(value);
  if (value instanceof Error) out.push(String(value), value.stack || '', value.message);
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key === 'symbol') continue;
    out.push(key);
    strings(value[key], out, seen);
  }
  return out;
}

function assertClean(label, value) {
  for (const text of strings(value)) {
    for (const [where, secret] of Object.entries(SECRETS)) {
      assert.ok(!text.includes(secret), `${label}: the ${where} secret leaked in ${JSON.stringify(text.slice(0, 300))}`);
    }
  }
}

test('keys in paths, queries, userinfo and headers never appear anywhere, even when nodes echo them', async () => {
  const echo = (url) => `upstream ${url} failed; auth Bearer ${SECRETS.header} key=${SECRETS.query} ${SECRETS.path} ${SECRETS.password}`;
  const a = await node([{ status: 503 }]);
  const b = await node([{ status: 429, headers: { 'retry-after': '0' } }]);
  const c = await node([{ error: { code: -32603, message: 'x', data: { hint: 'y' } } }], { chainId: '0x1' });
  const d = await node([{ result: '0x1' }], { chainId: '0x2' }); // another chain: chainMismatch names it
  const keyedA = `http://user:${SECRETS.password}@${a.url.slice(7)}/v3/${SECRETS.path}`;
  const keyedB = `${b.url}/rpc?apikey=${SECRETS.query}`;
  c.setScript([{ error: { code: -32603, message: echo(keyedA), data: { echoed: echo(keyedB) } } }]);
  const lines = [];
  const logger = { debug: (m, e) => lines.push([m, e]), info: (m, e) => lines.push([m, e]), warn: (m, e) => lines.push([m, e]), error: (m, e) => lines.push([m, e]) };
  const relayer = new FaultTolerantRelayer([
    keyedA,
    keyedB,
    { url: c.url, headers: { authorization: `Bearer ${SECRETS.header}` } },
    `${d.url}/v3/${SECRETS.path}`,
  ], { baseDelayMs: 1, maxDelayMs: 2, maxRetries: 6, deadlineMs: 500, attemptTimeoutMs: 300, cache: false, chainId: 1, logger, breaker: { consecutiveFailures: 1 }, maxQueue: 1 });
  const events = [];
  for (const name of EVENTS) relayer.on(name, (e) => events.push(e));
  const errors = [];
  for (let i = 0; i < 3; i += 1) errors.push(await relayer.request({ method: 'eth_blockNumber' }).catch((e) => e));
  errors.push(await relayer.batch([{ method: 'eth_blockNumber' }, { method: 'eth_chainId' }]).catch((e) => e));
  errors.push(await relayer.executeRpcWithRetry(async (p, ctx) => {
    events.push({ bound: p.endpoint, ctx: { endpoint: ctx.endpoint } });
    return p.request({ method: 'eth_blockNumber' });
  }).catch((e) => e));
  errors.push(await relayer.submitRaw('0x02f8').catch((e) => e));
  // Concurrent requests against a one-slot wait queue (some end in OverloadError).
  const many = await Promise.allSettled(Array.from({ length: 5 }, () => relayer.request({ method: 'eth_getBalance', params: ['0x0', 'latest'] })));
  assert.ok(events.some((e) => e.type === 'retry'));
  assert.ok(events.some((e) => e.type === 'breaker'));
  assert.ok(events.some((e) => e.type === 'chainMismatch'), JSON.stringify(events.map((e) => e.type)));
  assert.ok(lines.length > 0);
  await relayer.close();
  assertClean('events', events);
  assertClean('errors', errors);
  assertClean('settled', many);
  assertClean('stats', relayer.stats());
  assertClean('endpoints', relayer.endpoints);
  assertClean('logger', lines);
  assertClean('pending', relayer.pendingTransactions(1, '0x0000000000000000000000000000000000000001'));
  assert.ok(relayer.endpoints.some((label) => label.includes('***')), relayer.endpoints.join(' '));
});
