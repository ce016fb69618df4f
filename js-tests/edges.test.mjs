// The request path at its edges, against loopback nodes: credentials in
// URLs, keys refused, answers no rule knows (tried once per endpoint at
// most), a cold start with a dead primary, and a request no node can take
// before its deadline; nodes that moved (redirects).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { FaultTolerantRelayer, isAuthError, isRpcError, isHttpError, isClosedError, isDeadlineError, isRateLimitedError } from '../pkg/dist/node.mjs';
import { deadUrl, useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

function relayerOf(upstreams, extra = {}) {
  const relayer = new FaultTolerantRelayer(upstreams, { baseDelayMs: 1, maxDelayMs: 5, cache: false, dedup: false, ...extra });
  cleanups.push(() => relayer.close());
  const events = [];
  for (const type of ['retry', 'failover', 'breaker', 'rateLimited']) relayer.on(type, (e) => events.push(e));
  return { relayer, events };
}

test('user:pass@ in a URL is sent as Basic authorization, never in the URL, and masked everywhere', async () => {
  const n = await node([{ result: '0x7' }]);
  const url = n.url.replace('http://', 'http://alice:s3cr%40tpass@');
  const { relayer, events } = relayerOf([url], { chainId: 1 });
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x7');
  const expected = `Basic ${Buffer.from('alice:s3cr@tpass').toString('base64')}`;
  assert.ok(n.requests.length >= 1);
  for (const r of n.requests) assert.equal(r.headers.authorization, expected);
  const shown = JSON.stringify([relayer.endpoints, relayer.stats(), events]);
  for (const secret of ['alice', 's3cr', Buffer.from('alice:s3cr@tpass').toString('base64')]) {
    assert.ok(!shown.includes(secret), `${secret} leaked: ${shown}`);
  }
  // The endpoint's own authorization header wins over the URL's.
  const m = await node([{ result: '0x8' }]);
  const own = relayerOf([{ url: m.url.replace('http://', 'http://bob:pw12@'), headers: { Authorization: 'Bearer tok3n' } }], { chainId: 1 }).relayer;
  assert.equal(await own.request({ method: 'eth_blockNumber' }), '0x8');
  assert.equal(m.requests[0].headers.authorization, 'Bearer tok3n');
});

test('a refused key (401) with a single endpoint rejects at once with an AuthError, then without asking', async () => {
  const n = await node([{ status: 401, body: 'invalid project id\n', headers: { 'content-type': 'text/plain' }, chainCheckToo: true }]);
  const { relayer } = relayerOf([n.url.replace('http://', 'http://user:hunter2secret@') + '/v3/9aa3d95b3bc440fa88ea12eaa4456161']);
  const first = await relayer.request({ method: 'eth_blockNumber' }).then(() => null, (e) => e);
  assert.ok(isAuthError(first), `${first && first.name}: ${first && first.message}`);
  assert.equal(first.code, 4100);
  assert.equal(first.status, 401);
  assert.equal(first.attempts, 1);
  assert.match(first.message, /refused the credentials/);
  assert.equal(n.requests.length, 1, 'one request, not four');
  const second = await relayer.request({ method: 'eth_getBalance', params: ['0x' + '0'.repeat(40), 'latest'] }).then(() => null, (e) => e);
  assert.ok(isAuthError(second), `${second && second.name}: ${second && second.message}`);
  assert.match(second.message, /every endpoint refused the credentials/);
  assert.equal(n.requests.length, 1, 'kept out: not asked again');
  const shown = JSON.stringify([first.message, second.message, first.history, relayer.endpoints]);
  assert.ok(!/hunter2secret|9aa3d95b/.test(shown), shown);
  // Alchemy's way: a 401 with a JSON-RPC error body. The error keeps both the status and the code.
  const alchemy = await node([{ status: 401, body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Must be authenticated!' } }), headers: { 'content-type': 'application/json' }, chainCheckToo: true }]);
  const { relayer: r2 } = relayerOf([alchemy.url]);
  const refused = await r2.request({ method: 'eth_blockNumber' }).then(() => null, (e) => e);
  assert.ok(isAuthError(refused), `${refused && refused.name}: ${refused && refused.message}`);
  assert.deepEqual([refused.status, refused.rpcCode], [401, -32600]);
});

test('a provider body that says the key is invalid (HTTP 200) fails over and keeps the endpoint out', async () => {
  const bad = await node([{ error: { code: -32600, message: 'Must be authenticated!' } }]);
  const good = await node([{ result: '0x9' }]);
  const { relayer, events } = relayerOf([bad.url, good.url], { chainId: 1, hedge: false });
  for (let i = 0; i < 10; i += 1) assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x9');
  assert.equal(bad.count(), 1);
  assert.deepEqual(relayer.stats().endpoints.map((e) => e.state), ['refused', 'closed']);
  const retry = events.find((e) => e.type === 'retry');
  assert.equal(retry.class, 'unauthorized');
  assert.equal(retry.delayMs, 0);
});

test('deterministic answers from the execution-apis fixtures reach the node once', async () => {
  // geth's wording, as in ethereum/execution-apis tests/eth_simulateV1 and debug_trace*.
  const cases = [
    { code: -38014, message: 'block number in sequence did not increase' },
    { code: -38021, message: 'block timestamps are not in order' },
    { code: -32000, message: 'account 0x0000000000000000000000000000000000000004 is not a precompile' },
    { code: -32000, message: 'genesis is not traceable' },
    { code: -32603, message: 'err: nonce has max value: address 0xc100000000000000000000000000000000000000, nonce: 18446744073709551615' },
  ];
  for (const error of cases) {
    const a = await node([{ error }]);
    const b = await node([{ error }]);
    const { relayer } = relayerOf([a.url, b.url], { chainId: 1 });
    const got = await relayer.request({ method: 'eth_simulateV1', params: [{ blockStateCalls: [] }, 'latest'] }).then(() => null, (e) => e);
    assert.ok(isRpcError(got), error.message);
    assert.equal(got.rpcCode, error.code);
    assert.equal(a.count() + b.count(), 1, `${error.message}: ${a.count() + b.count()} requests`);
  }
});

test('an answer no rule knows: one retry on the other endpoint, then never retried again', async () => {
  const error = { code: -32042, message: 'the frobnicator rejected this input' };
  const a = await node([{ error }]);
  const b = await node([{ error }]);
  const { relayer } = relayerOf([a.url, b.url], { chainId: 1, hedge: false });
  const first = await relayer.request({ method: 'eth_call', params: [{}, 'latest'] }).then(() => null, (e) => e);
  assert.equal(first.rpcCode, -32042);
  assert.equal(first.code, -32002, 'settled by the relayer: viem would retry an unknown code (it maps it to -1)');
  assert.deepEqual([a.count(), b.count()], [1, 1], 'one retry, on the other endpoint');
  const second = await relayer.request({ method: 'eth_call', params: [{}, 'latest'] }).then(() => null, (e) => e);
  assert.equal(second.attempts, 1, 'both endpoints said the same: deterministic');
  for (let i = 0; i < 6; i += 1) await relayer.request({ method: 'eth_call', params: [{}, 'latest'] }).catch(() => {});
  assert.deepEqual(relayer.stats().endpoints.map((e) => e.state), ['closed', 'closed'], 'answers are not infrastructure failures');
  // A lag answer keeps its retries.
  const lag = await node([{ error: { code: -32000, message: 'header not found' } }, { result: '0x1' }]);
  const solo = relayerOf([lag.url], { chainId: 1 }).relayer;
  assert.equal(await solo.request({ method: 'eth_getBalance', params: ['0x' + '0'.repeat(40), '0x10'] }), '0x1');
});

test('cold start: 60 concurrent reads with a dead primary all succeed (no budget spent on failovers)', async () => {
  const healthy = await node([{ delayMs: 5, then: { result: '0x1' } }]);
  const { relayer } = relayerOf([await deadUrl(), healthy.url], { chainId: 1 });
  const results = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => relayer.request({
    method: 'eth_getBalance', params: [`0x${i.toString(16).padStart(40, '0')}`, 'latest'],
  })));
  const failed = results.filter((r) => r.status === 'rejected').map((r) => `${r.reason.name}: ${r.reason.message}`);
  assert.deepEqual(failed, []);
});

test('numbers JavaScript cannot hold exactly are refused, never rounded; exact ones and digits in strings pass', async () => {
  for (const raw of ['12345678901234567890', '1e400', '{"balance":9007199254740993}', '[1, -9007199254740993]']) {
    const n = await node([{ rawResult: raw }]);
    const { relayer } = relayerOf([n.url], { chainId: 1 });
    const error = await relayer.request({ method: 'eth_getBalance', params: ['0x' + '0'.repeat(40), 'latest'] }).then((v) => ({ resolved: v }), (e) => e);
    assert.ok(isHttpError(error), `${raw} → ${JSON.stringify(error)}`);
    assert.match(error.message, /cannot represent exactly/);
  }
  // A second endpoint that answers in hex takes over.
  const lossy = await node([{ rawResult: '12345678901234567890' }]);
  const hex = await node([{ result: '0xab54a98ceb1f0ad2' }]);
  assert.equal(await relayerOf([lossy.url, hex.url], { chainId: 1 }).relayer.request({ method: 'eth_getBalance', params: ['0x' + '0'.repeat(40), 'latest'] }), '0xab54a98ceb1f0ad2');
  for (const [raw, value] of [
    ['9007199254740992', 9007199254740992], ['100000000000000000000', 1e20], ['1.5e300', 1.5e300],
    ['{"note":"id: 123456789012345678901234, 5e999"}', { note: 'id: 123456789012345678901234, 5e999' }],
  ]) {
    const n = await node([{ rawResult: raw }]);
    assert.deepEqual(await relayerOf([n.url], { chainId: 1 }).relayer.request({ method: 'eth_getBalance', params: ['0x' + '1'.repeat(40), 'latest'] }), value, raw);
  }
});

test('a 20 MiB request grows wasm memory by at most its size (params cross into wasm in bounded chunks)', async () => {
  const n = await node([{ result: '0x' }]);
  const { relayer } = relayerOf([n.url], { chainId: 1, maxResponseBytes: 1024 });
  await relayer.request({ method: 'eth_blockNumber' });
  const before = relayer.stats().wasmMemoryBytes;
  const calldata = `0x${'ab'.repeat(10 * 2 ** 20 - 1)}`; // 20 MiB of hex
  for (const method of ['eth_call', 'eth_estimateGas']) { // a cached/deduped read and an uncached one
    assert.equal(await relayer.request({ method, params: [{ to: `0x${'1'.repeat(40)}`, data: calldata }, 'latest'] }), '0x');
  }
  const grown = relayer.stats().wasmMemoryBytes - before;
  assert.ok(grown <= 20 * 2 ** 20, `wasm memory grew ${(grown / 2 ** 20).toFixed(1)} MiB for a 20 MiB request`);
  assert.equal(n.requests.at(-1).params[0].data.length, calldata.length, 'the node got the params whole');
});

test('close() rejects requests stuck on a hung node within one event-loop turn and aborts their fetches', async () => {
  // Its first request answers (its chain check rides with it); then it hangs.
  const hung = await node([{ result: '0x' }, { hang: true }]);
  const { relayer } = relayerOf([hung.url], { chainId: 1, hedge: false, attemptTimeoutMs: 10_000 });
  await relayer.request({ method: 'eth_getCode', params: ['0x' + '0'.repeat(40), 'latest'] });
  const pending = [
    relayer.request({ method: 'eth_blockNumber' }),
    relayer.request({ method: 'eth_getBalance', params: ['0x' + '0'.repeat(40), 'latest'] }),
    relayer.batch([{ method: 'eth_gasPrice' }, { method: 'eth_chainId' }]),
  ].map((p) => p.then(() => 'resolved', (e) => e));
  for (let i = 0; i < 200 && hung.count() < 4; i += 1) await new Promise((r) => setTimeout(r, 5));
  assert.equal(hung.count(), 4, 'all three reached the node and hang there');
  const closing = relayer.close();
  const turn = new Promise((r) => setImmediate(() => r('still pending after one turn')));
  const outcomes = await Promise.race([Promise.all(pending), turn]);
  assert.ok(Array.isArray(outcomes), outcomes);
  assert.ok(isClosedError(outcomes[0]) && isClosedError(outcomes[1]), outcomes.map(String).join('; '));
  assert.ok(isClosedError(outcomes[2]), `batch: ${outcomes[2]}`);
  await closing;
  for (let i = 0; i < 100 && hung.aborts() < 3; i += 1) await new Promise((r) => setTimeout(r, 5));
  assert.equal(hung.aborts(), 3, 'every fetch in flight was aborted');
});

test('close() ends an executeRpcWithRetry operation in flight: its signal aborts, no timer is left', async () => {
  const n = await node([{ result: '0x1' }]);
  const { relayer } = relayerOf([n.url], { chainId: 1, attemptTimeoutMs: 60_000 });
  let seen;
  const started = new Promise((resolve) => {
    seen = relayer.executeRpcWithRetry((provider, { signal }) => {
      resolve();
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    }).then(() => 'resolved', (e) => e);
  });
  await started;
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  await relayer.close();
  const outcome = await Promise.race([seen, new Promise((r) => setImmediate(() => r('still pending')))]);
  assert.ok(isClosedError(outcome), String(outcome));
  assert.ok(timers() < before, 'the 60 s attempt timer was cleared');
});

test('many executeRpcWithRetry operations at once: no leak warning, and close() still ends every one', async () => {
  const n = await node([{ result: '0x1' }]);
  const { relayer } = relayerOf([n.url], { chainId: 1, attemptTimeoutMs: 60_000 });
  const warnings = [];
  const onWarning = (w) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    let started = 0;
    const all = Array.from({ length: 25 }, () => relayer.executeRpcWithRetry((provider, { signal }) => {
      started += 1;
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    }).then(() => 'resolved', (e) => e));
    for (let i = 0; i < 100 && started < 25; i += 1) await new Promise((r) => setTimeout(r, 5));
    assert.equal(started, 25);
    await relayer.close();
    const outcomes = await Promise.race([Promise.all(all), new Promise((r) => setImmediate(() => r('still pending')))]);
    assert.ok(Array.isArray(outcomes) && outcomes.every(isClosedError), String(outcomes));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(warnings.filter((w) => w === 'MaxListenersExceededWarning'), [], 'one close listener, not one per attempt');
  } finally {
    process.off('warning', onWarning);
  }
});

test('a request no endpoint can take before its deadline fails at once and says how soon one could', async () => {
  const n = await node([{ status: 503 }]);
  const { relayer } = relayerOf([n.url], { deadlineMs: 1000, maxRetries: 0, breaker: { consecutiveFailures: 1 } });
  // The breaker opens on the first 503; early probes then come at doubling spacings (0.5, 1, 2 s…)
  // until the next is due past a 1 s deadline.
  let fast;
  for (let i = 0; i < 8 && !fast; i += 1) {
    const e = await relayer.request({ method: 'eth_blockNumber' }).then(() => null, (err) => err);
    assert.ok(e, 'the node only fails');
    if (e.nextChanceMs !== undefined) fast = e;
  }
  assert.ok(fast, 'one request failed at once');
  assert.ok(isDeadlineError(fast), fast);
  assert.equal(fast.attempts, 0);
  assert.match(fast.message, /before its deadline: the next chance .* is past it \(`nextChanceMs` says how far\); stopped before the deadline after 0 attempt/);
  // Past the 1 s deadline, counted from the moment it failed (right after it began).
  assert.ok(fast.nextChanceMs >= 500 && Number.isFinite(fast.nextChanceMs), `nextChanceMs ${fast.nextChanceMs}`);
});

test('a request that a 429\'s cooldown holds past its deadline fails at once and says when the key is usable again', async () => {
  const n = await node([{ status: 429, headers: { 'retry-after': '30' } }]);
  const { relayer } = relayerOf([n.url], { deadlineMs: 1000, maxRetryAfterMs: 60000 });
  const first = await relayer.request({ method: 'eth_blockNumber' }).then(() => null, (err) => err);
  assert.ok(isRateLimitedError(first), String(first));
  const second = await relayer.request({ method: 'eth_blockNumber' }).then(() => null, (err) => err);
  assert.ok(isRateLimitedError(second) && second.attempts === 0, String(second));
  assert.ok(second.nextChanceMs > 28000 && second.nextChanceMs <= 30000, `nextChanceMs ${second.nextChanceMs}`);
});

/** A node that moves: `/old…` answers with a redirect (`status`, Location from `to(path)`), the rest
 * is a JSON-RPC node answering every item '0x1'. Records each request's path, headers and body. */
async function movedNode(status, to) {
  const seen = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      seen.push({ path: req.url, headers: req.headers, body: text });
      if (req.url.startsWith('/old')) {
        res.writeHead(status, { location: to(req.url), 'content-type': 'text/html' });
        return res.end('<html>moved</html>');
      }
      const body = JSON.parse(text);
      const answer = (item) => ({ jsonrpc: '2.0', id: item.id, result: '0x1' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  cleanups.push(() => new Promise((r) => server.close(r)));
  return { url, seen };
}

test('307 and 308 are followed with the same POST, the key kept on its origin and never sent to another', async () => {
  // Same origin: /old -> /new, the endpoint's header goes along.
  const same = await movedNode(307, () => '/new');
  const { relayer } = relayerOf([{ url: `${same.url}/old`, headers: { 'x-api-key': 'k3y-same' } }], { batch: false });
  assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x0000000000000000000000000000000000000001', 'latest'] }), '0x1');
  const moved = same.seen.filter((r) => r.path === '/new');
  assert.ok(moved.length >= 1 && moved.every((r) => r.headers['x-api-key'] === 'k3y-same'), JSON.stringify(same.seen.map((r) => r.path)));
  assert.ok(moved.some((r) => [].concat(JSON.parse(r.body)).some((item) => item.method === 'eth_getBalance')), 'the same body, still a POST');
  // Another origin (another port): the read is answered there, without the key.
  const there = await movedNode(200, () => '/');
  const away = await movedNode(308, () => `${there.url}/v2`);
  const { relayer: r2 } = relayerOf([{ url: `${away.url}/old`, headers: { 'x-api-key': 'k3y-away' } }], { batch: false });
  assert.equal(await r2.request({ method: 'eth_getBalance', params: ['0x0000000000000000000000000000000000000002', 'latest'] }), '0x1');
  assert.ok(away.seen.every((r) => r.headers['x-api-key'] === 'k3y-away'));
  assert.ok(there.seen.length >= 1, 'answered where the node moved to');
  for (const r of there.seen) {
    assert.equal(r.headers['x-api-key'], undefined, 'the key stays on its origin');
    assert.equal(r.headers['content-type'], 'application/json');
  }
});

test('a 301 is the node\'s answer (no POST re-sent as a GET): an HttpError that says to use the new URL; a redirect loop ends', async () => {
  const moved = await movedNode(301, () => '/new');
  const { relayer } = relayerOf([`${moved.url}/old-key-s3cret`], { maxRetries: 1, chainId: 1 });
  const e = await relayer.request({ method: 'eth_blockNumber' }).then(() => null, (err) => err);
  assert.ok(isHttpError(e), String(e));
  assert.equal(e.status, 301);
  assert.match(e.message, /HTTP 301 .*a redirect the relayer does not follow .*configure the URL it points to/);
  assert.ok(!e.message.includes('s3cret'), e.message);
  assert.equal(moved.seen.filter((r) => r.path === '/new').length, 0, 'not followed');
  // A node redirecting to itself: each attempt follows a few hops, then takes the 307 as its answer.
  const loop = await movedNode(307, (path) => path);
  const { relayer: r2 } = relayerOf([`${loop.url}/old`], { maxRetries: 0, chainId: 1 });
  const l = await r2.request({ method: 'eth_blockNumber' }).then(() => null, (err) => err);
  assert.ok(isHttpError(l) && l.status === 307, String(l));
  assert.ok(loop.seen.length >= 2 && loop.seen.length <= 12, `a bounded number of hops: ${loop.seen.length}`);
});
