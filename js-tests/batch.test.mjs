// JSON-RPC batches: one HTTP request, per-item results and typed errors,
// replies matched by id whatever order or gaps, retryable items re-sent.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { FaultTolerantRelayer, isRpcError, isInvalidRequestError } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const FAST = { baseDelayMs: 1, maxDelayMs: 5 };

test('a batch is one HTTP request with one settled entry per call, in order', async () => {
  const a = await node([{ resultFor: { eth_chainId: '0x1', eth_blockNumber: '0x10', eth_gasPrice: '0x3b9aca00' } }]);
  const relayer = new FaultTolerantRelayer([a.url], FAST);
  const out = await relayer.batch([
    { method: 'eth_blockNumber' }, { method: 'eth_gasPrice', params: [] }, { method: 'eth_chainId' },
  ]);
  assert.deepEqual(out, [
    { status: 'fulfilled', value: '0x10' }, { status: 'fulfilled', value: '0x3b9aca00' }, { status: 'fulfilled', value: '0x1' },
  ]);
  assert.equal(a.requests.filter((r) => !r.chainCheck).length, 1, 'one upstream request for three calls');
});

test('replies are matched by id: reordered, duplicated and extra ids do not shift answers; reverts are per item', async () => {
  const a = await node([{
    batch: (items) => [
      { jsonrpc: '2.0', id: items[2].id, error: { code: 3, message: 'execution reverted', data: '0xdead' } },
      { jsonrpc: '2.0', id: 424242, result: 'stray' },
      { jsonrpc: '2.0', id: items[0].id, result: 'first' },
      { jsonrpc: '2.0', id: items[0].id, result: 'duplicate' },
      { jsonrpc: '2.0', id: items[1].id, result: 'second' },
    ],
  }]);
  const relayer = new FaultTolerantRelayer([a.url], FAST);
  const out = await relayer.batch([{ method: 'eth_call', params: [{}] }, { method: 'eth_call', params: [{}] }, { method: 'eth_call', params: [{}] }]);
  assert.deepEqual(out.slice(0, 2), [{ status: 'fulfilled', value: 'first' }, { status: 'fulfilled', value: 'second' }]);
  assert.equal(out[2].status, 'rejected');
  assert.ok(isRpcError(out[2].reason));
  assert.equal(out[2].reason.code, 3);
  assert.equal(out[2].reason.data, '0xdead');
  assert.equal(a.count(), 1, 'a revert is not retried');
});

test('missing and transient items are re-sent in a smaller batch; others are not', async () => {
  let round = 0;
  const a = await node([{
    batch: (items) => {
      round += 1;
      if (round === 1) {
        return [
          { jsonrpc: '2.0', id: items[0].id, result: 'ok0' },
          { jsonrpc: '2.0', id: items[1].id, error: { code: -32000, message: 'header not found' } },
        ]; // items[2] missing
      }
      return items.map((it) => ({ jsonrpc: '2.0', id: it.id, result: `retry-${it.method}` }));
    },
  }]);
  const relayer = new FaultTolerantRelayer([a.url], FAST);
  const out = await relayer.batch([{ method: 'eth_a' }, { method: 'eth_b' }, { method: 'eth_c' }]);
  assert.deepEqual(out.map((o) => o.value), ['ok0', 'retry-eth_b', 'retry-eth_c']);
  const [first, second] = a.requests.filter((r) => !r.chainCheck);
  assert.deepEqual([first.batch, second.batch], [3, 2], 'the second batch carries only the two items to retry');
  assert.equal(round, 2);
});

test('a whole-batch failure rejects every item with the typed failure; bad batches are refused up front', async () => {
  const a = await node([{ status: 503 }]);
  const relayer = new FaultTolerantRelayer([a.url], { ...FAST, maxRetries: 1 });
  const out = await relayer.batch([{ method: 'eth_blockNumber' }, { method: 'eth_chainId' }]);
  assert.ok(out.every((o) => o.status === 'rejected' && o.reason.kind === 'http' && o.reason.status === 503));
  for (const bad of [[], 'x', [{ params: [] }], Array.from({ length: 1001 }, () => ({ method: 'eth_chainId' }))]) {
    await assert.rejects(relayer.batch(bad), (e) => isInvalidRequestError(e));
  }
});

test('a batch is charged the sum of its items to the quota group', async () => {
  const a = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([{ url: a.url, quotaGroup: 'k' }], { ...FAST, quota: { k: { cuPerSecond: 1000 } } });
  await relayer.batch([{ method: 'eth_blockNumber' }, { method: 'eth_call', params: [{}] }, { method: 'eth_getLogs', params: [{}] }]);
  assert.equal(relayer.stats().quotaGroups[0].cuCharged, 10 + 26 + 75);
});

test('batch replies with string ids are matched like single replies', async () => {
  const a = await node([{
    batch: (items) => items.map((item, i) => ({ jsonrpc: '2.0', id: String(item.id), result: `0x${i + 1}` })).reverse(),
  }]);
  const relayer = new FaultTolerantRelayer([a.url], { ...FAST, chainId: 1 });
  const out = await relayer.batch([{ method: 'eth_blockNumber' }, { method: 'eth_gasPrice' }]);
  assert.deepEqual(out.map((o) => o.value), ['0x1', '0x2']);
  const body = a.requests.find((r) => r.batch === 2);
  assert.ok(body, 'one batch body of two items');
  await relayer.close();
});
