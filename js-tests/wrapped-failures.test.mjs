// Wrapped providers failing the way they really fail: an ethers
// JsonRpcProvider and viem clients/transports whose node is dead, answers
// 503 or 429, or refuses the key; EIP-1193 objects throwing a
// ProviderRpcError or a Node socket error. Each is the first upstream
// beside a healthy URL: the request succeeds, the wrapped one's breaker
// opens (or its quota cools), stats count it, and the provider's own error
// is kept as `cause` when nothing else is left.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import { createPublicClient, http as viemHttp } from 'viem';
import { FaultTolerantRelayer, isTransportError, isHttpError, isRpcError, isAuthError } from '../pkg/dist/node.mjs';
import { deadUrl, useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

/** ethers with its own retries and batching off, as the README says. */
function ethersProvider(url) {
  const request = new ethers.FetchRequest(url);
  request.setThrottleParams({ maxAttempts: 1 });
  const provider = new ethers.JsonRpcProvider(request, 1, { staticNetwork: true, batchMaxCount: 1 });
  cleanups.push(() => provider.destroy());
  return provider;
}
/** viem with its own retries and batching off, as the README says. */
const viemClient = (url) => createPublicClient({ transport: viemHttp(url, { retryCount: 0, batch: false }) });
const viemTransport = (url) => viemHttp(url, { retryCount: 0, batch: false })({ retryCount: 0 });

const KINDS = { ethers: ethersProvider, 'viem client': viemClient, 'viem transport': viemTransport };

function relayerOf(upstreams, extra = {}) {
  const relayer = new FaultTolerantRelayer(upstreams, {
    baseDelayMs: 1, maxDelayMs: 5, cache: false, dedup: false, hedge: false, chainId: 1, ...extra,
  });
  cleanups.push(() => relayer.close());
  const events = [];
  relayer.on('retry', (e) => events.push(e));
  relayer.on('breaker', (e) => events.push(e));
  relayer.on('rateLimited', (e) => events.push(e));
  return { relayer, events };
}

async function failingUrl(how) {
  if (how === 'dead') return deadUrl();
  const n = await node([{ status: how, body: { error: 'no' }, chainCheckToo: true }]);
  return n.url;
}

for (const [kind, wrap] of Object.entries(KINDS)) {
  for (const how of ['dead', 503]) {
    test(`${kind} whose node is ${how === 'dead' ? 'down' : 'answering 503'} fails over; its breaker opens`, async () => {
      const healthy = await node([{ result: '0x2a' }]);
      const { relayer, events } = relayerOf([{ provider: wrap(await failingUrl(how)), label: 'wrapped' }, healthy.url]);
      for (let i = 0; i < 5; i += 1) {
        assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x2a');
      }
      const rule = how === 'dead' ? 'transport.refused' : 'http.5xx';
      assert.ok(events.some((e) => e.type === 'retry' && e.from === 'wrapped' && e.rule === rule), JSON.stringify(events));
      assert.ok(events.some((e) => e.type === 'breaker' && e.endpoint === 'wrapped' && e.to === 'open'), JSON.stringify(events));
      const stats = relayer.stats().endpoints.find((e) => e.endpoint === 'wrapped');
      assert.equal(stats.state, 'open');
      assert.ok(stats.failures >= 3, JSON.stringify(stats));
    });
  }

  test(`${kind} answering 429 cools its quota and the healthy URL answers`, async () => {
    const healthy = await node([{ result: '0x2a' }]);
    const { relayer, events } = relayerOf([{ provider: wrap(await failingUrl(429)), label: 'wrapped' }, healthy.url]);
    assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x2a');
    assert.ok(events.some((e) => e.type === 'rateLimited' && e.endpoint === 'wrapped'), JSON.stringify(events));
    const stats = relayer.stats().endpoints.find((e) => e.endpoint === 'wrapped');
    assert.equal(stats.failures, 0, 'a rate limit is not a health failure');
  });

  test(`${kind} alone and down: a typed error whose cause is the provider's own`, async () => {
    const { relayer } = relayerOf([{ provider: wrap(await deadUrl()), label: 'wrapped' }], { maxRetries: 1 });
    const error = await relayer.request({ method: 'eth_blockNumber' }).then(() => null, (e) => e);
    assert.ok(isTransportError(error), `${error && error.name}: ${error && error.message}`);
    assert.equal(error.transport, 'refused');
    assert.equal(error.attempts, 2, 'a refused connection is retried, not fatal');
    assert.ok(error.cause instanceof Error, 'the wrapped provider\'s error is the cause');
    assert.notEqual(error.cause.name, 'TransportError');
  });

  test(`${kind} whose key is refused (401) fails over and stays out`, async () => {
    const healthy = await node([{ result: '0x2a' }]);
    const refusing = await node([{ status: 401, body: 'invalid project id', headers: { 'content-type': 'text/plain' }, chainCheckToo: true }]);
    const { relayer, events } = relayerOf([{ provider: wrap(refusing.url), label: 'wrapped' }, healthy.url]);
    for (let i = 0; i < 5; i += 1) assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x2a');
    // The chain check and the first read go together (one round trip: a wrapped provider gets
    // both calls at once), then it is kept out.
    assert.equal(refusing.requests.length, 2, 'asked once, then kept out');
    assert.ok(events.some((e) => e.type === 'retry' && e.class === 'unauthorized'), JSON.stringify(events));
  });
}

test('an EIP-1193 provider throwing a ProviderRpcError keeps its code; a Node socket error fails over', async () => {
  const healthy = await node([{ result: '0x2a' }]);
  const providerRpcError = Object.assign(new Error('Internal JSON-RPC error.'), { code: -32603, data: { why: 1 } });
  const revert = Object.assign(new Error('execution reverted'), { code: 3, data: '0x08c379a0' });
  let calls = 0;
  const eip1193 = {
    async request({ method }) {
      if (method === 'eth_chainId') return '0x1';
      calls += 1;
      if (method === 'eth_call') throw revert;
      // A socket error two causes down, the way viem and undici nest it.
      if (calls % 2) throw providerRpcError;
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNRESET'), { code: 'ECONNRESET' }) });
    },
  };
  const { relayer, events } = relayerOf([{ provider: eip1193, label: 'wallet' }, healthy.url]);
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x2a');
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x2a');
  const rules = events.filter((e) => e.type === 'retry').map((e) => e.rule);
  assert.deepEqual(rules, ['fallback.unknown', 'transport.reset'], 'the -32603 is read as a node answer (one retry elsewhere), the socket error as a reset');
  const error = await relayer.request({ method: 'eth_call', params: [{ to: '0x' + '1'.repeat(40) }, 'latest'] }).then(() => null, (e) => e);
  assert.ok(isRpcError(error));
  assert.equal(error.code, 3, 'a revert from a wrapped provider is never retried');
  assert.equal(healthy.count('eth_call'), 0);
});

test('a viem TimeoutError and an ethers NETWORK_ERROR are transport failures, not fatal', async () => {
  const healthy = await node([{ result: '0x2a' }]);
  const timeout = Object.assign(new Error('The request took too long to respond.'), { name: 'TimeoutError' });
  const network = Object.assign(new Error('network error'), { code: 'NETWORK_ERROR' });
  let n = 0;
  const flaky = { request: async ({ method }) => { if (method === 'eth_chainId') return '0x1'; n += 1; throw n % 2 ? timeout : network; } };
  const { relayer, events } = relayerOf([{ provider: flaky, label: 'flaky' }, healthy.url]);
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x2a');
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x2a');
  assert.deepEqual(events.filter((e) => e.type === 'retry').map((e) => e.rule), ['transport.timeout', 'transport.network']);
});

test('an HTTP error from a wrapped viem client alone is an HttpError with its status', async () => {
  const { relayer } = relayerOf([{ provider: viemClient(await failingUrl(503)), label: 'v' }], { maxRetries: 1 });
  const error = await relayer.request({ method: 'eth_blockNumber' }).then(() => null, (e) => e);
  assert.ok(isHttpError(error), `${error && error.name}: ${error && error.message}`);
  assert.equal(error.status, 503);
  assert.equal(error.cause && error.cause.name, 'HttpRequestError');
  const refusing = await node([{ status: 403, body: 'forbidden', chainCheckToo: true }]);
  const alone = relayerOf([{ provider: ethersProvider(refusing.url), label: 'e' }]).relayer;
  const refused = await alone.request({ method: 'eth_blockNumber' }).then(() => null, (e) => e);
  assert.ok(isAuthError(refused), `${refused && refused.name}: ${refused && refused.message}`);
  assert.equal(refusing.requests.length, 1);
});

test("a viem client's JSON-RPC errors are classified by the node's own words, not viem's generic ones", async () => {
  const healthy = await node([{ result: '0x2a' }]);
  const lagging = await node([{ error: { code: -32000, message: 'header not found' } }]);
  const { relayer, events } = relayerOf([{ provider: viemClient(lagging.url), label: 'viem' }, healthy.url]);
  // viem says "Missing or invalid parameters." for any -32000; the node said it is behind.
  assert.equal(await relayer.request({ method: 'eth_getBalance', params: ['0x' + '0'.repeat(40), 'latest'] }), '0x2a');
  assert.equal(events.find((e) => e.type === 'retry').rule, 'lag.text');
  const stuck = await node([{ error: { code: -32603, message: 'err: nonce has max value' } }]);
  const other = await node([{ result: '0x2a' }]);
  const second = relayerOf([{ provider: viemClient(stuck.url), label: 'viem' }, other.url]).relayer;
  const error = await second.request({ method: 'eth_call', params: [{ to: '0x' + '1'.repeat(40) }, 'latest'] }).then(() => null, (e) => e);
  assert.ok(isRpcError(error), `${error && error.name}: ${error && error.message}`);
  assert.equal(error.rule, 'fatal.deterministic', 'viem\'s "An internal error was received." would have been retried');
  assert.equal(other.count('eth_call'), 0);
});
