// A fresh endpoint in one round trip: the chain check rides with the first
// read in one JSON-RPC batch. Counted in HTTP requests the loopback nodes
// received (the timing of one round trip is measured by
// benches/first-answer.mjs, not here).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { FaultTolerantRelayer, isNoEndpointError } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const FAST = { baseDelayMs: 1, maxDelayMs: 5 };
const relayers = [];
after(() => Promise.all(relayers.map((r) => r.close())));
const relayerOf = (urls, options) => {
  const r = new FaultTolerantRelayer(urls, { ...FAST, ...options });
  relayers.push(r);
  return r;
};

test('a read on a fresh endpoint is one HTTP request: [eth_chainId, the read]', async () => {
  for (const chainId of [undefined, 1]) {
    const n = await node([{ result: '0xbee' }]);
    const r = relayerOf([n.url], chainId === undefined ? {} : { chainId });
    assert.equal(await r.request({ method: 'eth_getBalance', params: ['0x' + '1'.repeat(40), 'latest'] }), '0xbee');
    assert.equal(n.exchanges(), 1, `chainId ${chainId}: one request`);
    assert.deepEqual(n.requests[0].method, 'eth_getBalance');
    assert.equal(n.batchedChecks(), 1);
    assert.equal(r.stats().endpoints[0].chain, 'verified');
    await r.request({ method: 'eth_blockNumber' });
    assert.equal(n.exchanges(), 2, 'checked: the next read goes alone');
  }
});

test('eth_chainId on a fresh endpoint is answered by the check itself', async () => {
  const n = await node([{ result: '0xdead' }], { chainId: '0x89' });
  const r = relayerOf([n.url]);
  assert.equal(await r.request({ method: 'eth_chainId' }), '0x89');
  assert.equal(n.exchanges(), 1);
  assert.equal(n.batchedChecks(), 0);
});

test('a send never rides with the check: a node on another chain never sees the signed bytes', async () => {
  const wrong = await node([{ result: '0x' + 'ab'.repeat(32) }], { chainId: '0x5' });
  const right = await node([{ result: '0x' + 'cd'.repeat(32) }], { chainId: '0x1' });
  const r = relayerOf([wrong.url, right.url], { chainId: 1 });
  assert.equal(await r.request({ method: 'eth_sendRawTransaction', params: ['0x02f8'] }), '0x' + 'cd'.repeat(32));
  assert.equal(wrong.count('eth_sendRawTransaction'), 0);
  assert.deepEqual([wrong.exchanges(), wrong.chainChecks(), wrong.batchedChecks()], [1, 1, 0], 'checked alone');
  assert.equal(right.exchanges(), 2, 'the check, then the send');
});

test('a node that refuses batches is checked alone in the same call, and remembered', async () => {
  for (const refusal of [
    { status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not supported' } } },
    { status: 413 },
    { batch: () => ({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } }) },
  ]) {
    const n = await node([refusal, { result: '0x7' }], {});
    const r = relayerOf([n.url], { chainRecheckMs: 30 });
    assert.equal(await r.request({ method: 'eth_getBalance', params: ['0x' + '2'.repeat(40), 'latest'] }), '0x7', JSON.stringify(refusal));
    assert.equal(n.exchanges(), 3, `${JSON.stringify(refusal)}: the refused batch, the check, the read`);
    await new Promise((done) => setTimeout(done, 40));
    await r.request({ method: 'eth_getCode', params: ['0x' + '2'.repeat(40), 'latest'] });
    assert.equal(n.batchedChecks(), 1, 'the re-check went alone');
    assert.equal(n.exchanges(), 5);
  }
});

test('a wrapped EIP-1193 provider gets the check and the read at once', async () => {
  const calls = [];
  let inFlight = 0;
  let most = 0;
  const provider = {
    async request({ method }) {
      calls.push(method);
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((done) => setTimeout(done, 20));
      inFlight -= 1;
      return method === 'eth_chainId' ? '0x1' : '0x99';
    },
  };
  const r = relayerOf([provider]);
  assert.equal(await r.request({ method: 'eth_blockNumber' }), '0x99');
  assert.deepEqual(calls.sort(), ['eth_blockNumber', 'eth_chainId']);
  assert.equal(most, 2, 'both in flight together: one round trip');
});

test('a fresh node on another chain: its first read is dropped, whatever it answered', async () => {
  const wrong = await node([{ result: '0xbad' }], { chainId: '0x5' });
  const r = relayerOf([wrong.url], { chainId: 1 });
  const error = await r.request({ method: 'eth_getBalance', params: ['0x' + '3'.repeat(40), 'latest'] }).then(() => null, (e) => e);
  assert.ok(isNoEndpointError(error), `${error && error.name}: ${error && error.message}`);
  assert.equal(wrong.batchedChecks(), 1);
});

test('a node that answers batches with an HTML page (200) but single requests with JSON serves from the first read', async () => {
  const http = await import('node:http');
  const seen = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      seen.push(Array.isArray(body) ? 'batch' : body.method);
      if (Array.isArray(body)) {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html><body>batches are not supported here</body></html>');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: body.method === 'eth_chainId' ? '0x1' : '0x55' }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  after(() => new Promise((r) => { server.closeAllConnections(); server.close(r); }));
  const r = relayerOf([`http://127.0.0.1:${server.address().port}`], { chainId: 1, chainRecheckMs: 30 });
  assert.equal(await r.request({ method: 'eth_getBalance', params: ['0x' + '4'.repeat(40), 'latest'] }), '0x55');
  assert.deepEqual(seen, ['batch', 'eth_chainId', 'eth_getBalance']);
  await new Promise((done) => setTimeout(done, 40));
  await r.request({ method: 'eth_getCode', params: ['0x' + '4'.repeat(40), 'latest'] });
  assert.deepEqual(seen.slice(3), ['eth_chainId', 'eth_getCode'], 'remembered: the re-check went alone');
});

test('listening for `connect` before the first read costs that read no round trip', async () => {
  const n = await node([{ resultFor: { eth_getBalance: '0xabc', eth_chainId: '0x1' } }]);
  const r = relayerOf([n.url]);
  const connected = new Promise((resolve) => r.on('connect', resolve));
  assert.equal(await r.request({ method: 'eth_getBalance', params: ['0x' + '5'.repeat(40), 'latest'] }), '0xabc');
  assert.deepEqual(n.requests.slice(0, 1).map((q) => [q.method, q.batchedCheck]), [['eth_getBalance', true]], 'the read rode with the check');
  assert.equal((await connected).chainId, '0x1');
});
