// Hostile and broken nodes, each on a loopback server: every case ends in
// a bounded-time, bounded-memory typed error or a correct skip of that
// node, and the relayer keeps serving afterwards.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { FaultTolerantRelayer, isHttpError, isTransportError, isBreakwaterError } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const servers = [];
after(() => Promise.all(servers.map((s) => new Promise((r) => { s.closeAllConnections(); s.close(() => r()); }))));

/** A raw server: `handler(req, res, body)` answers however it likes (eth_chainId checks answered 0x1). */
async function rawNode(handler) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body = null;
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* not JSON */ }
      if (body && body.method === 'eth_chainId' && body.id === 0) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"jsonrpc":"2.0","id":0,"result":"0x1"}');
      }
      handler(req, res, body);
    });
  });
  servers.push(server);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${server.address().port}`;
}

const fast = { baseDelayMs: 1, maxDelayMs: 2, maxRetries: 1, cache: false, adaptiveTimeout: false };

test('a 50 MB body: refused on its declared length, and a chunked one is cut at maxResponseBytes', async () => {
  const MB = 1 << 20;
  let streamed = 0;
  let streamedClosed;
  const closed = new Promise((r) => { streamedClosed = r; });
  const declared = await rawNode((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * MB) });
    res.write(Buffer.alloc(64 * 1024, 0x20));
    res.on('close', () => {});
  });
  const chunked = await rawNode((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }); // no length: chunked
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (streamed < 50 * MB) {
        streamed += chunk.length;
        if (!res.write(chunk)) return res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => streamedClosed(streamed));
    pump();
  });
  const good = await node([{ result: '0x5' }]);
  for (const url of [declared, chunked]) {
    const relayer = new FaultTolerantRelayer([url], { ...fast, maxRetries: 0, maxResponseBytes: MB });
    const started = Date.now();
    const error = await relayer.request({ method: 'eth_blockNumber' }).then(() => null, (e) => e);
    assert.ok(isHttpError(error), `${error && error.name}: ${error && error.message}`);
    assert.match(error.message, /tooLarge/);
    assert.ok(Date.now() - started < 5000);
    await relayer.close();
  }
  const sent = await closed;
  assert.ok(sent < 16 * MB, `the client stopped reading early (${(sent / MB).toFixed(1)} MB of 50 sent)`);
  const relayer = new FaultTolerantRelayer([chunked, good.url], { ...fast, maxResponseBytes: MB });
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x5', 'the next node serves');
  await relayer.close();
});

test('a body that never ends and headers followed by silence both end at the attempt timeout', async () => {
  const trickle = await rawNode((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000000' });
    const timer = setInterval(() => res.write(' '), 20);
    res.on('close', () => clearInterval(timer));
  });
  const silent = await rawNode((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.flushHeaders(); });
  const good = await node([{ result: '0x6' }]);
  for (const url of [trickle, silent]) {
    const relayer = new FaultTolerantRelayer([url], { ...fast, maxRetries: 0, attemptTimeoutMs: 300 });
    const started = performance.now(); // monotonic: a wall-clock step (NTP) once read as 14 s here
    const error = await relayer.request({ method: 'eth_blockNumber' }).then(() => null, (e) => e);
    const took = performance.now() - started;
    assert.ok(isTransportError(error) && error.transport === 'timeout', `${error && error.name}: ${error && error.message}`);
    assert.ok(took >= 250 && took < 3000, `took ${took} ms`);
    await relayer.close();
  }
  const relayer = new FaultTolerantRelayer([trickle, good.url], { ...fast, attemptTimeoutMs: 300 });
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x6');
  await relayer.close();
});

test('a batch answered with missing, duplicated and extra ids: the missing ones fail typed, the rest resolve', async () => {
  const liar = await node([{ batch: (items) => [
    { jsonrpc: '2.0', id: items[0].id, result: '0xa' },
    { jsonrpc: '2.0', id: items[0].id, result: '0xbad' }, // duplicate
    { jsonrpc: '2.0', id: 999999, result: '0xextra' }, // not ours
    // items[1] is missing
    { jsonrpc: '2.0', id: items[2].id, result: '0xc' },
  ] }]);
  const relayer = new FaultTolerantRelayer([liar.url], { ...fast, maxRetries: 0 });
  const settled = await relayer.batch([{ method: 'eth_blockNumber' }, { method: 'eth_gasPrice' }, { method: 'eth_chainId' }]);
  assert.deepEqual(settled[0], { status: 'fulfilled', value: '0xa' }, 'the first answer for an id counts');
  assert.equal(settled[1].status, 'rejected');
  assert.ok(isBreakwaterError(settled[1].reason));
  assert.deepEqual(settled[2], { status: 'fulfilled', value: '0xc' });
  await relayer.close();
});

test('numbers beyond 2^256 and absurd heads pass through or are ignored, never crash the pool', async () => {
  const huge = `0x${'f'.repeat(80)}`;
  const weird = await node([{ raw: `{"jsonrpc":"2.0","id":1,"result":${'9'.repeat(400)}}` }, { result: huge }, { result: '0x10' }]);
  // No chain check: each scripted reply answers one request (a raw body to a check's batch is a refusal of batches).
  const relayer = new FaultTolerantRelayer([weird.url], { ...fast, maxRetries: 0, checkChainId: false });
  const outcomes = [];
  for (let i = 0; i < 3; i += 1) outcomes.push(await relayer.request({ method: 'eth_blockNumber' }).then((v) => v, (e) => e));
  assert.ok(outcomes[0] === Infinity || isBreakwaterError(outcomes[0]), String(outcomes[0]));
  assert.equal(outcomes[1], huge, 'an oversized quantity is the node answer, passed through untouched');
  assert.equal(outcomes[2], '0x10');
  assert.equal(relayer.stats().endpoints[0].inFlight, 0);
  await relayer.close();
});

test('a node whose chain changes mid-session is noticed at the next recheck and skipped', async () => {
  const flipper = await node([{ result: '0x1' }], { chainId: '0x1' });
  const steady = await node([{ result: '0x2' }], { chainId: '0x1' });
  const relayer = new FaultTolerantRelayer([flipper.url, steady.url], { ...fast, chainRecheckMs: 50, chainId: 1 });
  const mismatches = [];
  relayer.on('chainMismatch', (e) => mismatches.push(e));
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x1');
  flipper.setChainId('0x2'); // the load balancer now points at another chain
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x2', 'the re-check disabled it; the other node served');
  assert.equal(mismatches.length, 1);
  assert.equal(mismatches[0].got, 2);
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x2');
  await relayer.close();
});
