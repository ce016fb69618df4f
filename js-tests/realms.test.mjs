// Realms of one origin telling each other what they learned (docs/coordination.md, "news"):
// a key's cooldown after a 429, a breaker's opening, a chain id. In Node the realms are worker
// threads of one process, over the same BroadcastChannel a browser's tabs use (the Chromium test
// with three pages is in browser.test.mjs).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { FaultTolerantRelayer, isRateLimitedError } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const PKG = new URL('../pkg/dist/node.mjs', import.meta.url).href;

/** One relayer in a worker thread (another realm): reads once on `urls`, reports how it ended. */
function inWorker(urls, options = {}) {
  const code = `
    import { parentPort, workerData } from 'node:worker_threads';
    const { FaultTolerantRelayer } = await import(workerData.pkg);
    const relayer = new FaultTolerantRelayer(workerData.urls, workerData.options);
    const out = await relayer.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] }).then(
      (value) => ({ value }), (e) => ({ error: e.name }));
    // Linger a moment so its news is posted before the thread ends.
    await new Promise((r) => setTimeout(r, 50));
    relayer.close();
    parentPort.postMessage(out);`;
  const worker = new Worker(code, { eval: true, type: 'module', workerData: { pkg: PKG, urls, options } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => { worker.terminate(); resolve(m); });
    worker.once('error', reject);
  });
}

const settle = () => new Promise((r) => setTimeout(r, 100));

test('a 429 one realm hears cools the key in every realm of the origin, and one chain check serves all', async () => {
  const limited = await node([{ status: 429, headers: { 'retry-after': '30' } }]);
  const here = new FaultTolerantRelayer([limited.url], { deadlineMs: 2000 });
  const there = await inWorker([limited.url], { deadlineMs: 2000 });
  assert.equal(there.error, 'RateLimitedError', JSON.stringify(there));
  assert.equal(limited.count(), 1, 'the other realm was refused once');
  await settle();
  const error = await here.request({ method: 'eth_getBalance', params: ['0x2', 'latest'] }).then(() => null, (e) => e);
  assert.ok(isRateLimitedError(error), String(error));
  assert.equal(limited.count(), 1, 'this realm heard of the cooldown and sent nothing');
  assert.equal(limited.chainChecks(), 1, 'and took the other realm\'s chain check');
  // fleet: false learns alone, as before.
  const loner = new FaultTolerantRelayer([limited.url], { deadlineMs: 2000, fleet: false });
  await loner.request({ method: 'eth_getBalance', params: ['0x3', 'latest'] }).catch(() => {});
  assert.equal(limited.count(), 2);
  here.close();
  loner.close();
});

test('a breaker another realm opened keeps this realm off the node', async () => {
  const failing = await node([{ status: 503 }]);
  const good = await node([{ result: '0xb' }]);
  const options = { baseDelayMs: 1, maxDelayMs: 2, maxRetries: 1, breaker: { consecutiveFailures: 1, openMs: 30000, openMaxMs: 30000 } };
  const here = new FaultTolerantRelayer([failing.url, good.url], options);
  const there = await inWorker([failing.url, good.url], options);
  assert.equal(there.value, '0xb', JSON.stringify(there));
  assert.equal(failing.count(), 1, 'the other realm failed once there and opened its breaker');
  await settle();
  assert.equal(await here.request({ method: 'eth_getBalance', params: ['0x2', 'latest'] }), '0xb');
  assert.equal(failing.count(), 1, 'this realm went straight to the healthy node');
  assert.equal(here.stats().endpoints[0].state, 'open');
  here.close();
});

test("news told before the realm's channel is made (after the constructor's task) is sent once it is", async () => {
  const { newsHub } = await import('../pkg-template/src/realm-news.js');
  let sink;
  const hub = newsHub({ setRealmNewsSink: (fanOut) => { sink = fanOut; }, hearRealmNews: () => {} });
  const other = new BroadcastChannel('breakwater-rpc/news');
  const got = [];
  other.onmessage = ({ data }) => got.push(data);
  try {
    const made = [];
    const Real = globalThis.BroadcastChannel;
    globalThis.BroadcastChannel = class extends Real { constructor(name) { super(name); made.push(name); } };
    try {
      hub.open();
      sink('limited', 'k1', 5); // told in the same task
      assert.deepEqual(made, [], 'no channel made in the task that opened the hub');
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(made, ['breakwater-rpc/news']);
    } finally {
      globalThis.BroadcastChannel = Real;
    }
    sink('limited', 'k2', 6); // and once it is open, at once
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(got, [{ v: 1, kind: 'limited', key: 'k1', value: 5 }, { v: 1, kind: 'limited', key: 'k2', value: 6 }]);
  } finally {
    other.close();
  }
});
