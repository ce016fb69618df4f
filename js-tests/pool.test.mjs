// The provider pool through the npm package, against loopback mock nodes:
// breakers trip and recover, a 429 cools the whole quota group, strategies
// choose as documented, overload fails fast, dedup/cache save requests,
// a wrong-chain node is never used.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { FaultTolerantRelayer, isOverloadError, isNoEndpointError } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const FAST = { baseDelayMs: 1, maxDelayMs: 5, cache: false, dedup: false };
const waitFor = async (cond, ms = 3000) => {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
};

test('a breaker trips after consecutive failures, keeps traffic away, then recovers through a probe', async () => {
  const a = await node([{ status: 503 }]);
  const b = await node([{ result: '0xb' }]);
  const relayer = new FaultTolerantRelayer([a.url, b.url], {
    ...FAST, breaker: { openMs: 150, openMaxMs: 150, closeAfter: 1, observeMs: 0, jitter: 0 }, slowStart: { warmupMs: 0 },
  });
  const changes = [];
  relayer.on('breaker', (e) => changes.push(`${e.from}->${e.to}`));
  for (let i = 0; i < 3; i += 1) await relayer.request({ method: 'eth_getBalance', params: ['0x1', String(i)] });
  assert.deepEqual(changes, ['closed->open']);
  assert.equal(relayer.stats().endpoints[0].state, 'open');
  for (let i = 0; i < 5; i += 1) await relayer.request({ method: 'eth_getBalance', params: ['0x2', String(i)] });
  assert.equal(a.count(), 3, 'no traffic to an open breaker');
  a.setScript([{ result: '0xa' }]);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x3', 'latest'] }), '0xa');
  assert.deepEqual(changes, ['closed->open', 'halfOpen->closed'], 'open→halfOpen happens by the clock, then one probe closes it');
  assert.equal(relayer.stats().endpoints[0].state, 'closed');
});

test('a 429 cools the whole quota group: the other URL on the same key is skipped', async () => {
  const a = await node([{ status: 429, headers: { 'retry-after': '5' } }]);
  const b = await node([{ result: '0xb' }]);
  const c = await node([{ result: '0xc' }]);
  const relayer = new FaultTolerantRelayer([
    { url: a.url, quotaGroup: 'alchemy' }, { url: b.url, quotaGroup: 'alchemy' }, { url: c.url },
  ], { ...FAST, quota: { alchemy: { cuPerSecond: 1000 } } });
  const limited = [];
  relayer.on('rateLimited', (e) => limited.push(e));
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0xc');
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0xc');
  assert.deepEqual([a.count(), b.count(), c.count()], [1, 0, 2]);
  assert.equal(limited[0].quotaGroup, 'alchemy');
  assert.equal(limited[0].cooldownMs, 5000);
  const group = relayer.stats().quotaGroups.find((g) => g.name === 'alchemy');
  assert.equal(group.rateLimited, 1);
  assert.ok(group.cooldownMs > 4000);
});

test('slow start: a recovered endpoint gets a small share of weighted traffic at first, its full share once warm', async () => {
  const a = await node([{ status: 503 }]);
  const b = await node([{ result: '0xb' }]);
  const relayer = new FaultTolerantRelayer([a.url, b.url], {
    ...FAST, strategy: 'weighted', slowStart: { warmupMs: 1500, floor: 0.1 },
    breaker: { openMs: 100, openMaxMs: 100, closeAfter: 1, observeMs: 0, jitter: 0 },
  });
  const changes = [];
  relayer.on('breaker', (e) => changes.push(`${e.from}->${e.to}`));
  let n = 0;
  const read = () => relayer.request({ method: 'eth_getBalance', params: ['0x1', `0x${(n += 1).toString(16)}`] });
  while (!changes.includes('closed->open')) await read(); // a fails three times
  a.setScript([{ result: '0xa' }]);
  await new Promise((r) => setTimeout(r, 150));
  while (!changes.includes('halfOpen->closed')) await read(); // its probe succeeds: the ramp starts
  const share = async (count) => {
    const before = a.count();
    for (let i = 0; i < count; i += 1) await read();
    return (a.count() - before) / count;
  };
  const early = await share(60);
  await new Promise((r) => setTimeout(r, 1600));
  const warm = await share(60);
  // Equal weights: 0.1 / 1.1 ≈ 9 % while the ramp is at its floor, 50 % once warm.
  assert.ok(early < 0.25, `early share ${early}`);
  assert.ok(warm > 0.3, `warm share ${warm}`);
  relayer.close();
});

test('priority follows the configured priorities', async () => {
  const a = await node([{ result: '0xa' }]);
  const b = await node([{ result: '0xb' }]);
  const relayer = new FaultTolerantRelayer([{ url: a.url, priority: 5 }, { url: b.url, priority: 1 }], { ...FAST, strategy: 'priority' });
  for (let i = 0; i < 4; i += 1) assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x1', String(i)] }), '0xb');
  assert.equal(a.count(), 0);
});

test('roundRobin rotates and weighted follows weights', async () => {
  const a = await node([{ result: '0xa' }]);
  const b = await node([{ result: '0xb' }]);
  const rr = new FaultTolerantRelayer([a.url, b.url], { ...FAST, strategy: 'roundRobin' });
  const seen = [];
  for (let i = 0; i < 4; i += 1) seen.push(await rr.request({ method: 'eth_getBalance', params: ['0x1', String(i)] }));
  assert.deepEqual(seen, ['0xa', '0xb', '0xa', '0xb']);
  const weighted = new FaultTolerantRelayer([{ url: a.url, weight: 9 }, { url: b.url, weight: 1 }], { ...FAST, strategy: 'weighted', slowStart: { warmupMs: 0 } });
  const before = a.count();
  for (let i = 0; i < 100; i += 1) await weighted.request({ method: 'eth_getBalance', params: ['0x2', String(i)] });
  const toA = a.count() - before;
  assert.ok(toA > 70 && toA < 100, `weight 9:1 sent ${toA}/100 to the heavy endpoint`);
});

test('sticky stays on one endpoint and rebinds when it becomes unavailable, without going back', async () => {
  const a = await node([{ result: '0xa' }]);
  const b = await node([{ result: '0xb' }]);
  const relayer = new FaultTolerantRelayer([a.url, b.url], { ...FAST, strategy: 'sticky', breaker: { openMs: 50, openMaxMs: 50, jitter: 0 } });
  for (let i = 0; i < 3; i += 1) assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x1', String(i)] }), '0xa');
  a.setScript([{ status: 502 }]);
  for (let i = 0; i < 3; i += 1) assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x2', String(i)] }), '0xb');
  a.setScript([{ result: '0xa' }]);
  await new Promise((r) => setTimeout(r, 80));
  for (let i = 0; i < 3; i += 1) assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x3', String(i)] }), '0xb');
});

test('latency prefers the faster endpoint but still samples the other', async () => {
  const slow = await node([{ delayMs: 60, then: { result: '0x51' } }]);
  const fast = await node([{ result: '0xfa' }]);
  const relayer = new FaultTolerantRelayer([slow.url, fast.url], { ...FAST, strategy: 'latency', slowStart: { warmupMs: 0 } });
  for (let i = 0; i < 60; i += 1) await relayer.request({ method: 'eth_getBalance', params: ['0x1', String(i)] });
  assert.ok(fast.count() > slow.count() * 2, `fast ${fast.count()} vs slow ${slow.count()}`);
  assert.ok(slow.count() >= 1);
  const stats = relayer.stats().endpoints;
  assert.ok(stats[0].latencyMs.call > stats[1].latencyMs.call);
});

test('when every endpoint is busy and the queue is full, new requests fail fast with an OverloadError', async () => {
  const a = await node([{ hang: true }]);
  const relayer = new FaultTolerantRelayer([{ url: a.url, maxConcurrency: 1 }], {
    ...FAST, maxQueue: 0, attemptTimeoutMs: 300, slowStart: { warmupMs: 0 },
  });
  const overloads = [];
  relayer.on('overload', (e) => overloads.push(e));
  const first = relayer.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] }).catch((e) => e);
  await waitFor(() => a.count() === 1);
  const t0 = Date.now();
  const second = await relayer.request({ method: 'eth_getBalance', params: ['0x2', 'latest'] }).catch((e) => e);
  assert.ok(isOverloadError(second), second);
  assert.ok(Date.now() - t0 < 100, 'fails fast instead of queueing');
  assert.equal(overloads.length, 1);
  await first;
});

test('with a non-zero maxQueue, that many requests wait for a busy endpoint and the next one fails fast with an OverloadError', async () => {
  const a = await node([{ delayMs: 150, then: { result: '0xa' } }]);
  const relayer = new FaultTolerantRelayer([{ url: a.url, maxConcurrency: 1 }], { ...FAST, maxQueue: 2, slowStart: { warmupMs: 0 } });
  const overloads = [];
  relayer.on('overload', (e) => overloads.push(e));
  const t0 = Date.now();
  const calls = [1, 2, 3, 4].map((i) => relayer.request({ method: 'eth_getBalance', params: [`0x${i}`, 'latest'] }).catch((e) => e));
  const fourth = await calls[3];
  assert.ok(isOverloadError(fourth), fourth);
  assert.ok(Date.now() - t0 < 100, 'the fourth fails before the first is answered');
  assert.deepEqual(await Promise.all(calls.slice(0, 3)), ['0xa', '0xa', '0xa'], 'one ran, two waited and were served');
  assert.equal(a.count(), 3);
  assert.equal(overloads.length, 1);
  relayer.close();
});

test('identical in-flight reads are deduplicated and cacheable results are cached', async () => {
  const a = await node([{ delayMs: 30, then: { resultFor: { eth_getBalance: '0x64', eth_chainId: '0x1', eth_getBlockByHash: { hash: '0xh' } } } }]);
  const relayer = new FaultTolerantRelayer([a.url], { baseDelayMs: 1, maxDelayMs: 5 });
  const params = ['0x0000000000000000000000000000000000000001', 'latest'];
  const results = await Promise.all([1, 2, 3, 4, 5].map(() => relayer.request({ method: 'eth_getBalance', params })));
  assert.deepEqual(results, ['0x64', '0x64', '0x64', '0x64', '0x64']);
  assert.equal(a.count('eth_getBalance'), 1, 'five callers, one upstream request');
  await relayer.request({ method: 'eth_getBlockByHash', params: ['0xh', false] });
  await relayer.request({ method: 'eth_getBlockByHash', params: ['0xh', false] });
  assert.equal(a.count('eth_getBlockByHash'), 1, 'immutable result served from cache');
  await relayer.request({ method: 'eth_getBalance', params: [params[0], 'pending'] });
  await relayer.request({ method: 'eth_getBalance', params: [params[0], 'pending'] });
  assert.equal(a.count('eth_getBalance'), 3, 'pending is never cached');
  assert.ok(relayer.stats().cacheHits >= 1);
});

test('a node on another chain is disabled before it serves anything', async () => {
  const wrong = await node([{ result: '0xbad' }], { chainId: '0x5' });
  const right = await node([{ result: '0x900d' }], { chainId: '0x1' });
  const relayer = new FaultTolerantRelayer([wrong.url, right.url], { ...FAST, chainId: 1 });
  const mismatches = [];
  relayer.on('chainMismatch', (e) => mismatches.push(e));
  for (let i = 0; i < 3; i += 1) assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x1', String(i)] }), '0x900d');
  // Its first read rode in one batch with the check (one round trip to a fresh node); the answer was dropped.
  assert.equal(wrong.count(), 1);
  assert.equal(wrong.chainChecks(), 1);
  assert.equal(wrong.batchedChecks(), 1);
  assert.deepEqual(mismatches.map((m) => [m.expected, m.got]), [[1, 5]]);
  assert.equal(relayer.stats().endpoints[0].chain, 'mismatch:5');
  const only = new FaultTolerantRelayer([wrong.url], { ...FAST, chainId: '0x1' });
  await assert.rejects(only.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] }), (e) => isNoEndpointError(e));
  // Every endpoint on another chain: the error says which chain was expected and what each serves.
  const other = await node([{ result: '0xbad' }], { chainId: '0x89' });
  const none = new FaultTolerantRelayer([wrong.url, other.url], { ...FAST, chainId: 1 });
  await none.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] }).catch(() => {}); // checks the first
  const error = await none.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] }).then(() => null, (e) => e);
  assert.ok(isNoEndpointError(error), `${error && error.name}: ${error && error.message}`);
  assert.equal(error.expectedChainId, 1);
  assert.equal(error.code, 4901, 'EIP-1193 chain disconnected');
  assert.deepEqual(error.chains.map((c) => c.chainId), [5, 137]);
  assert.match(error.message, /expected 1.*: 5, .*: 137/);
});

test('head polling: once a round has heard both heads, latest reads skip the endpoint 50 blocks behind', async () => {
  const stale = await node([{ resultFor: { eth_blockNumber: '0x64', eth_getBalance: '0xa' } }]);
  const fresh = await node([{ resultFor: { eth_blockNumber: '0x96', eth_getBalance: '0xb' } }]);
  const relayer = new FaultTolerantRelayer([stale.url, fresh.url], { ...FAST, headPollMs: 150, maxLagBlocks: 5 });
  const read = () => relayer.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] });
  assert.equal(await read(), '0xa', 'by priority; no head known yet');
  assert.equal(stale.count('eth_blockNumber') + fresh.count('eth_blockNumber'), 0, 'the first round waits one interval');
  await new Promise((r) => setTimeout(r, 200));
  await read(); // the round starts in the background; this read does not wait for it
  await waitFor(() => relayer.stats().endpoints.every((e) => e.head !== undefined));
  assert.deepEqual(relayer.stats().endpoints.map((e) => e.head), [100, 150]);
  for (let i = 0; i < 3; i += 1) assert.equal(await read(), '0xb', 'the stale endpoint is skipped for latest');
  assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x1', '0x10'] }), '0xa', 'a pinned read may still use it');
  assert.deepEqual([stale.count('eth_blockNumber'), fresh.count('eth_blockNumber')], [1, 1], 'one poll each per interval');
  relayer.close();
  // headPollMs: 0 turns it off: no polls, so nothing is known to lag.
  const off = new FaultTolerantRelayer([stale.url, fresh.url], { ...FAST, headPollMs: 0 });
  await off.request({ method: 'eth_getBalance', params: ['0x2', 'latest'] });
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(await off.request({ method: 'eth_getBalance', params: ['0x3', 'latest'] }), '0xa');
  assert.deepEqual([stale.count('eth_blockNumber'), fresh.count('eth_blockNumber')], [1, 1]);
  off.close();
});

test('head polling under 3,000 waiting reads: every slot taken, the heads are still heard and the lagging node skipped', async () => {
  // 20 ms a reply and 16 slots each: the reads hold every slot for seconds.
  const slow = (head, answer) => ({ delayMs: 20, then: { resultFor: { eth_blockNumber: head, eth_getBalance: answer } } });
  const stale = await node([slow('0x64', '0xa')]);
  const fresh = await node([slow('0x96', '0xb')]);
  const relayer = new FaultTolerantRelayer([{ url: stale.url, maxConcurrency: 16 }, { url: fresh.url, maxConcurrency: 16 }], {
    ...FAST, headPollMs: 150, maxLagBlocks: 5, batch: false, deadlineMs: 60000,
  });
  let settled = 0;
  const answers = [];
  const reads = Array.from({ length: 3000 }, (_, i) => relayer.request({ method: 'eth_getBalance', params: [`0x${(i + 1).toString(16)}`, 'latest'] })
    .then((v) => { settled += 1; answers.push(v); }));
  await waitFor(() => relayer.stats().endpoints.every((e) => e.head !== undefined), 10000);
  assert.ok(settled < 2000, `heads heard while reads still wait (${settled} of 3000 answered)`);
  assert.deepEqual(relayer.stats().endpoints.map((e) => e.head), [100, 150]);
  const at = answers.length;
  await Promise.all(reads);
  assert.ok(answers.slice(at + 100).every((v) => v === '0xb'), 'once heard, latest reads skip the node 50 blocks behind');
  relayer.close();
});

test('when the only node in sync fails, latest reads fail over to the node behind instead of failing', async () => {
  const stale = await node([{ resultFor: { eth_blockNumber: '0x64', eth_getBalance: '0xa' } }]);
  const fresh = await node([{ resultFor: { eth_blockNumber: '0x96', eth_getBalance: '0xb' } }]);
  const relayer = new FaultTolerantRelayer([fresh.url, stale.url], { ...FAST, headPollMs: 150, maxLagBlocks: 5 });
  const read = () => relayer.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] });
  await read();
  await new Promise((r) => setTimeout(r, 200));
  await read();
  await waitFor(() => relayer.stats().endpoints.every((e) => e.head !== undefined));
  assert.equal(await read(), '0xb');
  for (const [fault, expected] of [[{ status: 503 }, 'a 503'], [{ status: 429, headers: { 'retry-after': '2' } }, 'a 429']]) {
    fresh.setScript([fault]);
    const before = fresh.count();
    assert.equal(await read(), '0xa', `after ${expected} from the node in sync, the node 50 blocks behind answers`);
    assert.equal(fresh.count() - before, 1, `${expected}: the node in sync tried once, not retried first`);
    fresh.setScript([{ resultFor: { eth_blockNumber: '0x96', eth_getBalance: '0xb' } }]);
  }
  relayer.close();
});

test('relayers of one realm poll heads once between them, and every one of them hears the heads', async () => {
  const stale = await node([{ resultFor: { eth_blockNumber: '0x64', eth_getBalance: '0xa' } }]);
  const fresh = await node([{ resultFor: { eth_blockNumber: '0x96', eth_getBalance: '0xb' } }]);
  const relayers = Array.from({ length: 20 }, () => new FaultTolerantRelayer([stale.url, fresh.url], { ...FAST, headPollMs: 150, maxLagBlocks: 5 }));
  const readAll = () => Promise.all(relayers.map((r, i) => r.request({ method: 'eth_getBalance', params: [`0x${i + 1}`, 'latest'] })));
  await readAll();
  await new Promise((r) => setTimeout(r, 200));
  await readAll(); // the first of them to find a round due starts it for all
  await waitFor(() => stale.count('eth_blockNumber') + fresh.count('eth_blockNumber') === 2);
  await new Promise((r) => setTimeout(r, 50));
  const after = await readAll(); // each takes the round's heads in on its next read
  assert.deepEqual([stale.count('eth_blockNumber'), fresh.count('eth_blockNumber')], [1, 1], 'one poll per endpoint for the 20');
  assert.ok(relayers.every((r) => r.stats().endpoints.map((e) => e.head).join() === '100,150'), 'every member heard both heads');
  assert.ok(after.every((v) => v === '0xb'), 'so every member skips the stale endpoint for latest');
  await Promise.all(relayers.map((r) => r.close()));
});

test('methods are routed only where allowed', async () => {
  const a = await node([{ result: '0xa' }]);
  const b = await node([{ result: '0xb' }]);
  const relayer = new FaultTolerantRelayer([{ url: a.url, methods: { deny: ['eth_getLogs'] } }, { url: b.url, methods: { allow: ['eth_getLogs'] } }], FAST);
  assert.equal(await relayer.request({ method: 'eth_getLogs', params: [{}] }), '0xb');
  assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] }), '0xa');
  assert.deepEqual([a.count(), b.count()], [1, 1]);
  const logsOnly = new FaultTolerantRelayer([{ url: b.url, methods: { allow: ['eth_getLogs'] } }], FAST);
  await assert.rejects(logsOnly.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] }), (e) => isNoEndpointError(e) && e.code === -32601);
  assert.equal(b.count(), 1, 'nothing was sent');
});

test("an endpoint's own costs are what its quota group is charged", async () => {
  const a = await node([{ result: '0xa' }]);
  const relayer = new FaultTolerantRelayer([{ url: a.url, quotaGroup: 'key', costs: { eth_getBalance: 7 } }], {
    ...FAST, quota: { key: { cuPerSecond: 1000 } },
  });
  await relayer.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] });
  await relayer.request({ method: 'eth_blockNumber' });
  assert.equal(relayer.stats().quotaGroups[0].cuCharged, 17, 'its own 7 for eth_getBalance (the table says 19), the table\'s 10 for eth_blockNumber');
});

test('stats report every endpoint and quota group', async () => {
  const a = await node([{ result: '0xa' }]);
  const relayer = new FaultTolerantRelayer([{ url: `${a.url}/v3/9aa3d95b3bc440fa88ea12eaa4456161`, quotaGroup: 'infura', label: 'infura main' }], {
    ...FAST, quota: { infura: { cuPerSecond: 500, share: 0.5 } },
  });
  await relayer.request({ method: 'eth_blockNumber' });
  const s = relayer.stats();
  assert.equal(s.endpoints[0].endpoint, 'infura main');
  assert.equal(s.endpoints[0].state, 'closed');
  assert.equal(s.endpoints[0].inFlight, 0);
  assert.equal(s.endpoints[0].successes, 1);
  assert.equal(s.endpoints[0].chain, 'verified');
  assert.equal(s.quotaGroups[0].name, 'infura');
  assert.equal(s.quotaGroups[0].allowedCuPerSecond, 250);
  assert.equal(s.quotaGroups[0].cuCharged, 10);
  assert.ok(!JSON.stringify(s).includes('9aa3d95b'));
});

test('a hung node costs a hedge delay, not the timeout: another endpoint answers and the abandoned attempt is aborted', async () => {
  const a = await node([{ hang: true }]);
  const b = await node([{ result: '0xb' }]);
  const relayer = new FaultTolerantRelayer([a.url, b.url], {
    ...FAST, attemptTimeoutMs: 60000, deadlineMs: 120000, hedge: { initialDelayMs: 50, minDelayMs: 10 },
  });
  const hedges = [];
  relayer.on('hedge', (e) => hedges.push(e));
  assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] }), '0xb');
  assert.equal(hedges.length, 1);
  assert.deepEqual([hedges[0].method, hedges[0].from, hedges[0].to, hedges[0].afterMs], ['eth_getBalance', ...relayer.endpoints, 50]);
  // The hung exchange is cut at once (its own timeout is a minute away).
  await waitFor(() => a.aborts() === 1);
  assert.equal(a.count(), 1);
  relayer.close();
});

test('sends are never hedged, and hedge: false turns hedging off', async () => {
  // Slower than the default 1 s initial hedge delay: each case would hedge if the rule were broken.
  const a = await node([{ delayMs: 1200, then: { result: '0xa' } }]);
  const b = await node([{ result: '0xb' }]);
  for (const [options, method, params] of [
    [{ hedge: { initialDelayMs: 20, minDelayMs: 10 } }, 'eth_sendRawTransaction', ['0x02']],
    [{ hedge: false }, 'eth_getBalance', ['0x1', 'latest']],
  ]) {
    const relayer = new FaultTolerantRelayer([a.url, b.url], { ...FAST, ...options });
    const hedges = [];
    relayer.on('hedge', (e) => hedges.push(e));
    assert.equal(await relayer.request({ method, params }), '0xa');
    assert.equal(hedges.length, 0, method);
    relayer.close();
  }
  assert.equal(b.count(), 0);
});

test('one host timer serves every sleep: a short backoff armed after a long hedge delay still ends first', async () => {
  const hung = await node([{ hang: true }]);
  const ok = await node([{ result: '0x1' }]);
  const flaky = await node([{ status: 503 }, { result: '0x2' }]);
  const slow = new FaultTolerantRelayer([hung.url, ok.url], { ...FAST, hedge: { initialDelayMs: 2000 } });
  const quick = new FaultTolerantRelayer([flaky.url], { ...FAST, baseDelayMs: 20, maxDelayMs: 20 });
  const hedges = [];
  slow.on('hedge', (e) => hedges.push(e));
  const long = slow.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] });
  await waitFor(() => hung.count() === 1);
  assert.equal(await quick.request({ method: 'eth_getBalance', params: ['0x2', 'latest'] }), '0x2');
  assert.equal(hedges.length, 0, 'the backoff ended on its own timer, before the 2 s hedge delay');
  assert.equal(await long, '0x1');
  assert.equal(hedges.length, 1);
  slow.close();
  quick.close();
});

test('5,000 reads fired at once are all answered with the defaults, each sent upstream once (node in its own process)', async (t) => {
  const { spawn } = await import('node:child_process');
  // A node is another process: an in-process server would share the event loop with 5,000 requests.
  const code = `const http=require('node:http');let n=0;const s=http.createServer((q,r)=>{const c=[];q.on('data',d=>c.push(d));
    q.on('end',()=>{if(q.url==='/count'){r.end(String(n));return}let b={};try{b=JSON.parse(Buffer.concat(c))}catch{}
    if(b.method==='eth_getBalance')n++;setTimeout(()=>{r.setHeader('content-type','application/json');
    r.end(JSON.stringify({jsonrpc:'2.0',id:b.id,result:b.method==='eth_chainId'?'0x1':'0x64'}))},20)})});
    s.keepAliveTimeout=60000;s.listen(0,'127.0.0.1',()=>console.log(s.address().port));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill());
  const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
  const url = `http://127.0.0.1:${port}`;
  const relayer = new FaultTolerantRelayer([url, `${url}/b`], { chainId: 1, hedge: false });
  t.after(() => relayer.close());
  const address = (i) => `0x${i.toString(16).padStart(40, '0')}`;
  const calls = [];
  for (let i = 0; i < 5000; i += 1) calls.push(relayer.request({ method: 'eth_getBalance', params: [address(i), 'latest'] }));
  const results = await Promise.allSettled(calls);
  const failed = results.filter((r) => r.status === 'rejected');
  assert.equal(failed.length, 0, failed.slice(0, 2).map((r) => `${r.reason.name}: ${r.reason.message} ${JSON.stringify(r.reason.history)}`).join('; '));
  assert.equal(Number(await (await fetch(`${url}/count`, { method: 'POST' })).text()), 5000, 'each read sent upstream once');
});

test('relayers of one realm check an endpoint\'s chain once between them; fleet: false learns alone', async () => {
  const shared = await node([{ result: '0x1' }]);
  const a = new FaultTolerantRelayer([shared.url]);
  const b = new FaultTolerantRelayer([shared.url]);
  assert.equal(await a.request({ method: 'eth_blockNumber' }), '0x1');
  assert.equal(await b.request({ method: 'eth_blockNumber' }), '0x1');
  assert.equal(shared.chainChecks(), 1, 'the second relayer trusts the first one\'s check');
  const loner = new FaultTolerantRelayer([shared.url], { fleet: false });
  assert.equal(await loner.request({ method: 'eth_blockNumber' }), '0x1');
  assert.equal(shared.chainChecks(), 2, 'fleet: false checks for itself');
  assert.equal(loner.stats().endpoints[0].chain, 'verified');
  await Promise.all([a.close(), b.close(), loner.close()]);
});

test('relayers of one realm listening for connect ask the node its chain once between them', async () => {
  // A bot's two relayers on one key, each with a `connect` listener (which asks eth_chainId):
  // one check answers both listeners and every later eth_chainId, with the cache off too.
  const shared = await node([{ result: '0x1' }]);
  const relayers = [0, 1].map(() => new FaultTolerantRelayer([shared.url], { chainId: 1, cache: false }));
  const connected = await Promise.all(relayers.map((r) => new Promise((resolve) => r.on('connect', resolve))));
  assert.deepEqual(connected.map((e) => e.chainId), ['0x1', '0x1']);
  assert.deepEqual(await Promise.all(relayers.map((r) => r.request({ method: 'eth_chainId' }))), ['0x1', '0x1']);
  assert.equal(shared.count('eth_chainId'), 1, 'one check, no eth_chainId call after it');
  assert.equal(shared.exchanges(), 1);
  await Promise.all(relayers.map((r) => r.close()));
});

test('a relayer that expects another chain hears of the mismatch even when another relayer made the check', async () => {
  const shared = await node([{ result: '0x1' }]);
  const first = new FaultTolerantRelayer([shared.url]);
  assert.equal(await first.request({ method: 'eth_blockNumber' }), '0x1');
  const second = new FaultTolerantRelayer([shared.url], { chainId: 5 });
  const mismatches = [];
  second.on('chainMismatch', (e) => mismatches.push(e));
  await assert.rejects(second.request({ method: 'eth_blockNumber' }), (e) => isNoEndpointError(e));
  assert.equal(shared.chainChecks(), 1, 'the first relayer\'s check answered for both');
  assert.equal(mismatches.length, 1);
  assert.equal(String(mismatches[0].expected), '5');
  assert.equal(String(mismatches[0].got), '1');
  await Promise.all([first.close(), second.close()]);
});

test('an app that only listens for disconnect hears of a total outage', async () => {
  const a = await node([{ status: 503 }]);
  const b = await node([{ status: 503 }]);
  const relayer = new FaultTolerantRelayer([a.url, b.url], { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 2, breaker: { consecutiveFailures: 1 } });
  const seen = [];
  relayer.on('disconnect', (e) => seen.push(e.code));
  for (let i = 0; i < 3; i += 1) await relayer.request({ method: 'eth_blockNumber' }).catch(() => {});
  assert.deepEqual(seen, [4900], 'one disconnect, with no connect listener ever added');
  await relayer.close();
});
