// Provider objects as upstreams ("wrap my provider"): an ethers v6
// JsonRpcProvider and bare EIP-1193 objects next to URLs, under the same
// retry, breaker, failover and rate-limit treatment.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import { FaultTolerantRelayer, isConfigError, isRpcError } from '../pkg/dist/node.mjs';
import { startChain } from './helpers/chain.mjs';
import { deadUrl, startMockNode } from './helpers/mock-node.mjs';

const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

function relayerOf(upstreams, extra = {}) {
  const relayer = new FaultTolerantRelayer(upstreams, { baseDelayMs: 1, maxDelayMs: 5, cache: false, ...extra });
  cleanups.push(() => relayer.close());
  return relayer;
}

/** A bare EIP-1193 object whose behaviour a test scripts call by call. */
function scripted(behaviours) {
  const calls = [];
  let i = 0;
  return {
    calls,
    async request({ method, params }) {
      calls.push(method);
      if (method === 'eth_chainId') return '0x7a69';
      const b = behaviours[Math.min(i, behaviours.length - 1)];
      i += 1;
      if (b.hang) return new Promise(() => {});
      if (b.throw) throw Object.assign(new Error(b.throw.message), b.throw);
      return typeof b.result === 'function' ? b.result(method, params) : b.result;
    },
  };
}

test('an ethers JsonRpcProvider as an upstream: reads, a typed revert with data, a transaction', async () => {
  const anvil = await startChain(); // far past block 0, a block every second
  cleanups.push(anvil.stop);
  const ethersProvider = new ethers.JsonRpcProvider(anvil.anvilUrl, 31337, { staticNetwork: true, batchMaxCount: 1 });
  cleanups.push(() => ethersProvider.destroy());
  const relayer = relayerOf([await deadUrl(), { provider: ethersProvider, label: 'ethers-anvil' }], { chainId: 31337 });
  const failovers = [];
  relayer.on('failover', (e) => failovers.push(e));
  assert.equal(await relayer.request({ method: 'eth_chainId' }), '0x7a69');
  assert.match(await relayer.request({ method: 'eth_blockNumber' }), /^0x/);
  assert.ok(failovers.some((e) => e.to === 'ethers-anvil'), 'the dead URL failed over to the wrapped provider');
  assert.ok(relayer.endpoints.includes('ethers-anvil'));
  // PUSH1 0 PUSH1 0 REVERT deployed, then called: the node's revert keeps code 3.
  const wallet = new ethers.Wallet(ethers.HDNodeWallet.fromPhrase('test test test test test test test test test test test junk', undefined, "m/44'/60'/0'/0/6").privateKey);
  const deployed = await relayer.sendTransactionWithSpeedup(wallet, { data: '0x6460006000fd6000526005601bf3', chainId: 31337 }, 3, { pollIntervalMs: 20 });
  assert.equal(deployed.status, '0x1');
  const error = await relayer.request({ method: 'eth_call', params: [{ to: deployed.contractAddress, data: '0x' }, 'latest'] }).then(() => null, (e) => e);
  assert.ok(isRpcError(error), `${error && error.name}: ${error && error.message}`);
  assert.equal(error.code, 3);
  assert.equal(error.endpoint, 'ethers-anvil');
});

test('a bare EIP-1193 upstream that hangs and fails is timed out, failed over and its breaker opens', async () => {
  const flaky = scripted([{ hang: true }, { throw: { code: 'NETWORK_ERROR', message: 'socket hang up' } }]);
  const steady = scripted([{ result: '0x10' }]);
  const relayer = relayerOf([flaky, steady], {
    attemptTimeoutMs: 200, adaptiveTimeout: false, breaker: { consecutiveFailures: 2 }, strategy: 'roundRobin',
    // No hedges: a read to provider1 slower than 50 ms on a busy machine was hedged onto provider0, a
    // third call there (seen twice in full-suite runs, never alone).
    hedge: false,
  });
  const seen = [];
  for (const type of ['retry', 'failover', 'breaker']) relayer.on(type, (e) => seen.push({ ...e, type }));
  for (let i = 0; i < 4; i += 1) assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x10');
  assert.ok(seen.some((e) => e.type === 'retry' && e.rule === 'transport.timeout' && e.from === 'provider0'), JSON.stringify(seen));
  assert.ok(seen.some((e) => e.type === 'failover' && e.from === 'provider0' && e.to === 'provider1'));
  assert.ok(seen.some((e) => e.type === 'breaker' && e.endpoint === 'provider0' && e.to === 'open'), JSON.stringify(seen));
  assert.equal(relayer.stats().endpoints.find((e) => e.endpoint === 'provider0').state, 'open');
  assert.equal(flaky.calls.filter((m) => m !== 'eth_chainId').length, 2, `an open breaker sends nothing more ${JSON.stringify(flaky.calls)} ${JSON.stringify(seen)}`);
});

test('a wrapped provider that answers "limit exceeded" is rate limited like a URL on that key', async () => {
  const limited = scripted([{ throw: { code: -32005, message: 'limit exceeded' } }, { result: '0x1' }]);
  const steady = scripted([{ result: '0x10' }]);
  const relayer = relayerOf([limited, steady]);
  const seen = [];
  for (const type of ['rateLimited', 'failover']) relayer.on(type, (e) => seen.push({ ...e, type }));
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x10');
  assert.ok(seen.some((e) => e.type === 'rateLimited' && e.endpoint === 'provider0'));
  assert.ok(seen.some((e) => e.type === 'failover' && e.to === 'provider1'));
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x10', 'it rests: the next request goes elsewhere at once');
  assert.equal(limited.calls.filter((m) => m !== 'eth_chainId').length, 1);
});

test('a provider whose JSON-RPC error is a revert is not retried anywhere', async () => {
  const reverting = scripted([{ throw: { code: 3, message: 'execution reverted: nope', data: '0x08c379a0' } }]);
  const other = scripted([{ result: '0x1' }]);
  const relayer = relayerOf([reverting, other]);
  const error = await relayer.request({ method: 'eth_call', params: [{}, 'latest'] }).then(() => null, (e) => e);
  assert.ok(isRpcError(error));
  assert.equal(error.data, '0x08c379a0');
  assert.equal(error.attempts, 1);
  assert.deepEqual(other.calls.filter((m) => m !== 'eth_chainId'), []);
});

test('wrong kinds of upstream objects are ConfigErrors naming the field', () => {
  for (const [upstream, field] of [
    [{ provider: 42 }, 'upstreams[0].provider'],
    [{ provider: { nothing: true } }, 'upstreams[0].provider'],
    [{ request: 'not a function' }, 'upstreams[0].request'],
    [{ provider: { request() {} }, url: 'http://127.0.0.1:1' }, 'upstreams[0].url'],
  ]) {
    assert.throws(() => new FaultTolerantRelayer([upstream]), (e) => isConfigError(e) && e.field === field, JSON.stringify(upstream));
  }
});

test('a signed transaction goes only to a node of the chain it was signed for (anvil 31337 beside a chain-5 node listed first)', async () => {
  const anvil = await startChain(); // far past block 0, a block every second
  cleanups.push(anvil.stop);
  const wrong = await startMockNode([{ result: '0x' + '11'.repeat(32) }], { chainId: '0x5' });
  cleanups.push(wrong.close);
  const wallet = new ethers.Wallet(ethers.HDNodeWallet.fromPhrase('test test test test test test test test test test test junk', undefined, "m/44'/60'/0'/0/7").privateKey);
  const direct = new ethers.JsonRpcProvider(anvil.anvilUrl, 31337, { staticNetwork: true });
  const nonce = await direct.getTransactionCount(wallet.address);
  const sign = (n) => wallet.signTransaction({
    type: 2, chainId: 31337, nonce: n, to: '0x000000000000000000000000000000000000dEaD', value: 1n,
    gasLimit: 21000n, maxFeePerGas: 100n * 10n ** 9n, maxPriorityFeePerGas: 10n ** 9n,
  });
  // No `chainId`: the send is the first call, and names the chain; the chain-5 node is checked
  // and disabled, never given the bytes (before, its eth_chainId became the relayer's chain).
  const relayer = new FaultTolerantRelayer([wrong.url, anvil.url], { strategy: 'priority' });
  cleanups.push(() => relayer.close());
  const raw = await sign(nonce);
  const hash = await relayer.request({ method: 'eth_sendRawTransaction', params: [raw] });
  assert.equal(hash, ethers.keccak256(raw));
  assert.equal(wrong.count('eth_sendRawTransaction'), 0, 'the chain-5 node never got the signed bytes');
  assert.ok(wrong.chainChecks() >= 1, 'it was checked');
  const receipt = await direct.waitForTransaction(hash, 1, 15000);
  assert.equal(receipt.status, 1, 'mined on the chain it was signed for');
  // A relayer told another chain sends nothing, and says why.
  const elsewhere = new FaultTolerantRelayer([anvil.url], { chainId: 1 });
  cleanups.push(() => elsewhere.close());
  const next = await sign(nonce + 1);
  await assert.rejects(elsewhere.request({ method: 'eth_sendRawTransaction', params: [next] }), (e) => e.name === 'NoEndpointError'
    && /signed for chain 31337, and this relayer serves chain 1 \(the `chainId` option\): nothing was sent/.test(e.message) && e.attempts === 0);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await direct.getTransaction(ethers.keccak256(next)), null, 'the node never saw it');
  direct.destroy();
});
