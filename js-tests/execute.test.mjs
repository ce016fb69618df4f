// executeRpcWithRetry: the operation gets a provider bound to one endpoint
// and is retried on the next endpoint under the same policies.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { FaultTolerantRelayer, isHttpError, isRpcError } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const FAST = { baseDelayMs: 1, maxDelayMs: 5 };

test('an operation fails over to the next endpoint and sees which one it got', async () => {
  const a = await node([{ status: 502 }]);
  const b = await node([{ resultFor: { eth_blockNumber: '0x10', eth_chainId: '0x1' } }]);
  const relayer = new FaultTolerantRelayer([a.url, b.url], FAST);
  const seen = [];
  const value = await relayer.executeRpcWithRetry(async (provider, ctx) => {
    seen.push([ctx.attempt, provider.endpoint]);
    const block = await provider.request({ method: 'eth_blockNumber' });
    const chain = await provider.request({ method: 'eth_chainId' });
    return { block, chain };
  });
  assert.deepEqual(value, { block: '0x10', chain: '0x1' });
  assert.deepEqual(seen, [[0, a.url], [1, b.url]]);
  assert.equal(a.count(), 1);
});

test("an operation's own non-retryable error is rethrown unchanged after one attempt", async () => {
  const a = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([`${a.url}/0`, `${a.url}/1`], FAST);
  const mine = new TypeError('bug in my code');
  let calls = 0;
  await assert.rejects(relayer.executeRpcWithRetry(async () => { calls += 1; throw mine; }), (e) => e === mine);
  assert.equal(calls, 1);
  const reverted = await node([{ error: { code: 3, message: 'execution reverted' } }]);
  const r2 = new FaultTolerantRelayer([reverted.url, a.url], FAST);
  await assert.rejects(r2.executeRpcWithRetry((p) => p.request({ method: 'eth_call', params: [] })), (e) => isRpcError(e) && e.code === 3);
  assert.equal(reverted.count(), 1);
});

test('errors shaped like ethers and viem errors are classified by their fields', async () => {
  const a = await node([{ result: '0x1' }]);
  const b = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([a.url, b.url], { ...FAST, maxRetries: 2, breaker: { consecutiveFailures: 100 } });
  const shapes = [
    Object.assign(new Error('timeout'), { code: 'TIMEOUT' }),
    Object.assign(new Error('server'), { code: 'SERVER_ERROR', info: { responseStatus: '503 Service Unavailable' } }),
    Object.assign(new Error('rpc'), { code: -32603 }),
  ];
  let n = 0;
  const value = await relayer.executeRpcWithRetry(async () => {
    if (n < shapes.length - 1) throw shapes[n++];
    return 'recovered';
  });
  assert.equal(value, 'recovered');
  const always = await relayer.executeRpcWithRetry(async () => { throw shapes[1]; }).catch((e) => e);
  assert.ok(isHttpError(always), always);
  assert.equal(always.attempts, 3);
  assert.equal(always.cause, shapes[1], 'the operation\'s last error is the cause');
});

test("the seed's operations get an ethers provider bound to the endpoint (`wrap`), and fail over when a node is down", async (t) => {
  const { ethers } = await import('ethers');
  const { createPublicClient, custom } = await import('viem');
  const { startChain } = await import('./helpers/chain.mjs');
  const { deadUrl } = await import('./helpers/mock-node.mjs');
  const chain = await startChain();
  t.after(chain.stop);
  const dead = await deadUrl();
  const address = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
  // The seed's constructor and its two operations, unchanged but for `wrap`.
  const relayer = new FaultTolerantRelayer([dead, chain.url], {
    maxRetries: 4, baseDelayMs: 1, maxDelayMs: 15, wrap: (p) => new ethers.BrowserProvider(p, 31337),
  });
  t.after(() => relayer.close());
  const failovers = [];
  relayer.on('failover', (e) => failovers.push(e));
  const nonce = await relayer.executeRpcWithRetry((p) => p.getTransactionCount(address, 'pending'));
  assert.equal(typeof nonce, 'number');
  const feeData = await relayer.executeRpcWithRetry((p) => p.getFeeData());
  assert.equal(typeof feeData.maxFeePerGas, 'bigint');
  assert.ok(failovers.length >= 1, 'the dead node was failed over, not taken as fatal');
  // A viem client per call; the raw bound provider stays reachable in the context.
  const block = await relayer.executeRpcWithRetry((client, ctx) => {
    assert.equal(typeof ctx.provider.request, 'function');
    return client.getBlockNumber();
  }, { wrap: (p) => createPublicClient({ transport: custom(p, { retryCount: 0 }) }) });
  assert.ok(block > 1000n, `a chain far past block 0 (${block})`);
  assert.throws(() => new FaultTolerantRelayer([chain.url], { wrap: 'ethers' }), (e) => e.name === 'ConfigError' && e.field === 'wrap');
});
