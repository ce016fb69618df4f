// Auto-batching on the wire (policy/wire_batch.rs, src/wasm/wire.rs): concurrent reads to one node
// share HTTP requests as JSON-RPC batches, while each read keeps its own outcome: its own answer
// (matched by id), its own error, its own retry. A lone read never waits and goes alone; sends,
// abortable calls and unknown methods never ride in a batch; a node that refuses batches or
// finds them too large is answered item by item and remembered.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { FaultTolerantRelayer, ConfigError } from '../pkg/dist/node.mjs';

const servers = [];
after(() => Promise.all(servers.map((s) => new Promise((r) => { s.closeAllConnections?.(); s.close(r); }))));

/**
 * A node answering with `handle(body, exchange#)` → [status, payload] (payload: an object, or text),
 * after `delayMs` (or what `delayMs()` says at each request); it records every HTTP body, and the relayer's chain check (id 0) is answered
 * with chain 1 whatever `handle` says.
 */
async function startNode(handle, delayMs = 3) {
  const bodies = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const isCheck = (m) => m.method === 'eth_chainId' && m.id === 0;
      const check = { jsonrpc: '2.0', id: 0, result: '0x1' };
      // A fresh node's first read rides behind the check (`[check, call]`): the call is handled
      // as if alone, the check answered.
      const checked = Array.isArray(body) && body.length === 2 && isCheck(body[0]);
      const call = checked ? body[1] : body;
      const checkOnly = !Array.isArray(body) && isCheck(body);
      if (!checkOnly) bodies.push(call);
      setTimeout(() => {
        let [status, payload] = checkOnly ? [200, check] : handle(call, bodies.length);
        if (checked && status === 200 && typeof payload === 'object') payload = [check, payload];
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
      }, typeof delayMs === 'function' ? delayMs() : delayMs);
    });
  });
  servers.push(server);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, bodies };
}

/** Each item answered with its own params' first value (so a swapped answer would show). */
const echo = (m) => ({ jsonrpc: '2.0', id: m.id, result: m.params[0] });
const perItem = (reply) => (body) => [200, Array.isArray(body) ? body.map(reply) : reply(body)];
const address = (i) => `0x${i.toString(16).padStart(40, '0')}`;
const reads = (relayer, n, from = 0) => Promise.allSettled(Array.from({ length: n }, (_, i) =>
  relayer.request({ method: 'eth_getBalance', params: [address(from + i), 'latest'] })));
const batches = (bodies) => bodies.filter(Array.isArray);
const relayerOn = (node, options = {}) => new FaultTolerantRelayer([node.url], { chainId: 1, cache: false, hedge: false, ...options });

test('reads in flight together share HTTP requests, each answered with its own result; a lone read goes alone', async () => {
  // The node answers a batch in reverse order: answers are matched by id, not position.
  const node = await startNode((body) => [200, Array.isArray(body) ? body.map(echo).reverse() : echo(body)]);
  const relayer = relayerOn(node);
  try {
    await relayer.request({ method: 'eth_getBalance', params: [address(9999), 'latest'] });
    const lone = node.bodies.length;
    for (let i = 0; i < 5; i += 1) await relayer.request({ method: 'eth_getBalance', params: [address(i), 'latest'] });
    assert.equal(batches(node.bodies.slice(lone)).length, 0, 'one read at a time: each alone, as a plain request');
    const before = node.bodies.length;
    const settled = await reads(relayer, 300);
    settled.forEach((s, i) => assert.equal(s.status === 'fulfilled' && s.value, address(i), `read ${i} got its own answer`));
    const exchanges = node.bodies.length - before;
    const items = node.bodies.slice(before).reduce((n, b) => n + (Array.isArray(b) ? b.length : 1), 0);
    assert.equal(items, 300, 'every read sent once');
    assert.ok(exchanges <= 60, `300 reads in ${exchanges} HTTP requests`);
    assert.ok(Math.max(...batches(node.bodies).map((b) => b.length)) <= 100, 'no batch above the default maxSize of 100');
  } finally {
    await relayer.close();
  }
});

test('an item\'s error is its own: a revert fails that read only and is not retried; a transient error retries that item only', async () => {
  let flaky = 0;
  const node = await startNode(perItem((m) => {
    if (m.params[0] === address(7)) return { jsonrpc: '2.0', id: m.id, error: { code: 3, message: 'execution reverted', data: '0x' } };
    if (m.params[0] === address(8) && flaky++ === 0) return { jsonrpc: '2.0', id: m.id, error: { code: -32000, message: 'header not found' } };
    return echo(m);
  }));
  const relayer = relayerOn(node, { baseDelayMs: 1, maxDelayMs: 5 });
  try {
    await relayer.request({ method: 'eth_blockNumber' });
    const before = node.bodies.length;
    const settled = await reads(relayer, 40);
    assert.ok(batches(node.bodies.slice(before)).length > 0, 'they went in batches');
    assert.equal(settled[7].status, 'rejected');
    assert.match(settled[7].reason.message, /execution reverted/);
    settled.forEach((s, i) => { if (i !== 7) assert.equal(s.status === 'fulfilled' && s.value, address(i), `read ${i}`); });
    const sent = (a) => node.bodies.slice(before).flatMap((b) => (Array.isArray(b) ? b : [b])).filter((m) => m.params[0] === a).length;
    assert.equal(sent(address(7)), 1, 'a revert is never retried');
    assert.equal(sent(address(8)), 2, 'the transient item alone was sent again');
    assert.equal(sent(address(3)), 1, 'its neighbours were not');
  } finally {
    await relayer.close();
  }
});

test('a node that refuses batches answers every read anyway, and gets no batch after', async () => {
  const node = await startNode((body) => (Array.isArray(body)
    ? [200, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not supported' } }]
    : [200, echo(body)]));
  const relayer = relayerOn(node);
  try {
    await relayer.request({ method: 'eth_blockNumber' });
    const first = await reads(relayer, 50);
    first.forEach((s, i) => assert.equal(s.status === 'fulfilled' && s.value, address(i), `read ${i}`));
    const refused = batches(node.bodies).length;
    assert.ok(refused >= 1, 'a batch was tried');
    const second = await reads(relayer, 50, 100);
    second.forEach((s, i) => assert.equal(s.status === 'fulfilled' && s.value, address(100 + i)));
    assert.equal(batches(node.bodies).length, refused, 'no batch once refused');
  } finally {
    await relayer.close();
  }
});

test('a node that refuses batches with a client error (400, 405) answers every read anyway, and gets no batch after', async () => {
  for (const status of [400, 405]) {
    const node = await startNode((body) => (Array.isArray(body)
      ? [status, status === 400 ? { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not supported' } } : 'Method Not Allowed']
      : [200, echo(body)]));
    const relayer = relayerOn(node);
    try {
      await relayer.request({ method: 'eth_blockNumber' });
      const first = await reads(relayer, 100);
      first.forEach((s, i) => assert.equal(s.status === 'fulfilled' && s.value, address(i), `${status}: read ${i}: ${s.reason?.message}`));
      const refused = batches(node.bodies).length;
      assert.ok(refused >= 1, 'a batch was tried');
      await reads(relayer, 50, 200);
      assert.equal(batches(node.bodies).length, refused, `${status}: no batch once refused`);
    } finally {
      await relayer.close();
    }
  }
});

test('batch.waitMs gathers even a lone read for that long, and every read is answered', async () => {
  const node = await startNode(perItem(echo));
  const relayer = relayerOn(node, { batch: { waitMs: 5, maxSize: 16 } });
  try {
    await relayer.request({ method: 'eth_blockNumber' });
    const before = node.bodies.length;
    assert.equal(await relayer.request({ method: 'eth_getBalance', params: [address(1), 'latest'] }), address(1), 'a lone read goes after its wait');
    const settled = await reads(relayer, 40, 100);
    settled.forEach((s, i) => assert.equal(s.status === 'fulfilled' && s.value, address(100 + i), `read ${i}: ${s.reason?.message}`));
    const sizes = node.bodies.slice(before).map((b) => (Array.isArray(b) ? b.length : 1));
    assert.ok(sizes.slice(1).every((n) => n <= 16) && sizes.length <= 6, `40 reads gathered in batches of at most 16: ${sizes}`);
  } finally {
    await relayer.close();
  }
});

test('"too large" (HTTP 413, or an item saying so) halves the batch size for that node, and loses no read', async () => {
  const over = (body) => Array.isArray(body) && body.length > 8;
  const node413 = await startNode((body) => (over(body) ? [413, 'Payload Too Large'] : perItem(echo)(body)));
  const nodeSays = await startNode((body) => (over(body)
    ? [200, body.map((m) => ({ jsonrpc: '2.0', id: m.id, error: { code: -32600, message: 'batch limit exceeded' } }))]
    : perItem(echo)(body)));
  for (const node of [node413, nodeSays]) {
    const relayer = relayerOn(node, { batch: { maxSize: 64 } });
    try {
      await relayer.request({ method: 'eth_blockNumber' });
      const settled = await reads(relayer, 200);
      settled.forEach((s, i) => assert.equal(s.status === 'fulfilled' && s.value, address(i), `read ${i}: ${s.reason?.message}`));
      const sizes = batches(node.bodies).map((b) => b.length);
      const late = sizes.slice(-5);
      assert.ok(late.every((n) => n <= 8), `later batches fit the node: ${sizes}`);
    } finally {
      await relayer.close();
    }
  }
});

test('a node that answers its first 10 items and cuts off or refuses the rest: the limit learned is 10, not a halving below it', async () => {
  const LIMIT = 10;
  const tooLarge = (m) => ({ jsonrpc: '2.0', id: m.id, error: { code: -32005, message: 'Number of requests exceeds max batch size' } });
  const cutting = await startNode((body) => [200, Array.isArray(body) ? body.slice(0, LIMIT).map(echo) : echo(body)]);
  const saying = await startNode((body) => [200, Array.isArray(body) ? body.map((m, i) => (i < LIMIT ? echo(m) : tooLarge(m))) : echo(body)]);
  for (const node of [cutting, saying]) {
    const relayer = relayerOn(node, { batch: { maxSize: 64 } });
    try {
      await relayer.request({ method: 'eth_blockNumber' });
      const settled = await reads(relayer, 300);
      settled.forEach((s, i) => assert.equal(s.status === 'fulfilled' && s.value, address(i), `read ${i}: ${s.reason?.message}`));
      const sizes = batches(node.bodies).map((b) => b.length);
      const late = sizes.slice(-10);
      assert.ok(late.every((n) => n <= LIMIT), `later batches fit the node: ${sizes}`);
      // Halving from 64 settled at 8 (64, 32, 16, 8): the items a node answers are its limit.
      assert.ok(late.slice(0, -1).filter((n) => n === LIMIT).length >= 5, `later batches of the node's own limit: ${sizes}`);
    } finally {
      await relayer.close();
    }
  }
});

test('a node that always leaves one read out of its batch answers: the others keep batching, that read fails typed or goes alone', async () => {
  const odd = address(7);
  const node = await startNode((body) => [200, Array.isArray(body) ? body.filter((m) => m.params[0] !== odd).map(echo).concat([{ jsonrpc: '2.0', id: 999999, result: '0x0' }]) : echo(body)]);
  const relayer = relayerOn(node, { maxRetries: 2 });
  try {
    await relayer.request({ method: 'eth_blockNumber' });
    let lastRound = 0;
    for (let round = 0; round < 3; round += 1) {
      lastRound = node.bodies.length;
      const settled = await reads(relayer, 100);
      settled.forEach((s, i) => {
        if (address(i) === odd) assert.ok(s.status === 'fulfilled' ? s.value === odd : s.reason?.name, String(s.reason));
        else assert.equal(s.status === 'fulfilled' && s.value, address(i), `read ${i}: ${s.reason?.message}`);
      });
    }
    const sizes = batches(node.bodies.slice(lastRound)).map((b) => b.length);
    assert.ok(sizes.some((n) => n > 8), `still batching in the third round: ${sizes} (${node.bodies.length - lastRound} HTTP requests)`);
  } finally {
    await relayer.close();
  }
});

test('sends, abortable calls and unknown methods never ride in a batch; batch: false sends every read alone', async () => {
  const node = await startNode(perItem((m) => ({ jsonrpc: '2.0', id: m.id, result: m.method === 'eth_getBalance' ? m.params[0] : '0x1' })));
  const relayer = relayerOn(node);
  try {
    await relayer.request({ method: 'eth_blockNumber' });
    const signal = new AbortController().signal;
    await Promise.allSettled([
      ...Array.from({ length: 30 }, (_, i) => relayer.request({ method: 'eth_getBalance', params: [address(i), 'latest'] })),
      ...Array.from({ length: 10 }, () => relayer.request({ method: 'eth_sendRawTransaction', params: ['0x02f86c0180843b9aca00850ba43b740082520894000000000000000000000000000000000000000080c080a0aa05e8d4b29c9a7d3c8ba6a9b9b9e7ad2bd86fa5c1ebc4e7bdc06bbe4a4c55a0a0116bf2cea2b8e1b3e5c73ba0b16fa3c3d1fd3e45f0d2e21c65ea51c3e0c4bd0b'] })),
      ...Array.from({ length: 10 }, () => relayer.request({ method: 'eth_getBalance', params: [address(500), 'latest'] }, { signal })),
      ...Array.from({ length: 10 }, (_, i) => relayer.request({ method: 'acme_customRead', params: [i] })),
    ]);
    const items = node.bodies.filter(Array.isArray).flat();
    assert.ok(items.length > 0, 'the plain reads batched');
    assert.ok(items.every((m) => m.method === 'eth_getBalance' && m.params[0] !== address(500)), 'only plain known reads in batches');
  } finally {
    await relayer.close();
  }
  const plain = await startNode(perItem(echo));
  const unbatched = relayerOn(plain, { batch: false });
  try {
    await reads(unbatched, 100);
    assert.equal(batches(plain.bodies).length, 0);
  } finally {
    await unbatched.close();
  }
});

test('a batch the node fails as a whole (503, then a 429) is each read\'s failure, retried as each read\'s own', async () => {
  let n = 0;
  const node = await startNode((body) => {
    n += 1;
    if (Array.isArray(body) && n <= 3) return [503, 'busy'];
    return perItem(echo)(body);
  });
  const relayer = relayerOn(node, { baseDelayMs: 1, maxDelayMs: 5 });
  try {
    await relayer.request({ method: 'eth_blockNumber' });
    const settled = await reads(relayer, 60);
    settled.forEach((s, i) => assert.equal(s.status === 'fulfilled' && s.value, address(i), `read ${i}: ${s.reason?.message}`));
  } finally {
    await relayer.close();
  }
});

test('reads batched on a node that turned slow are hedged to another: each answered once, with its own result', async () => {
  let slow = false;
  const tagged = (tag) => perItem((m) => ({ jsonrpc: '2.0', id: m.id, result: `${m.params[0]}:${tag}` }));
  const a = await startNode(tagged('a'), () => (slow ? 1500 : 5));
  const b = await startNode(tagged('b'));
  const relayer = new FaultTolerantRelayer([{ url: a.url, priority: 0 }, { url: b.url, priority: 1 }],
    { chainId: 1, cache: false, hedge: { initialDelayMs: 100, minDelayMs: 50 } });
  const hedges = [];
  relayer.on('hedge', (e) => hedges.push(e));
  try {
    // The first node answers in 5 ms for a while (its usual speed), then takes 1.5 s.
    for (let i = 0; i < 20; i += 1) await relayer.request({ method: 'eth_getBalance', params: [address(900 + i), 'latest'] });
    const [fromA, fromB] = [a.bodies.length, b.bodies.length];
    slow = true;
    const settled = await reads(relayer, 12);
    settled.forEach((s, i) => assert.equal(s.status === 'fulfilled' && s.value, `${address(i)}:b`, `read ${i}: ${s.reason?.message ?? s.value}`));
    const sentA = a.bodies.slice(fromA);
    assert.ok(batches(sentA).length >= 1, 'reads queued behind the four in flight went to the slow node as a batch');
    assert.ok(hedges.length >= 8, `the batched reads were hedged too: ${hedges.length} hedges`);
    const items = (bodies) => bodies.flatMap((body) => (Array.isArray(body) ? body : [body])).filter((m) => m.method === 'eth_getBalance');
    for (const [name, sent] of [['slow', items(sentA)], ['other', items(b.bodies.slice(fromB))]]) {
      const once = new Set(sent.map((m) => m.params[0]));
      assert.equal(once.size, sent.length, `no read went to the ${name} node twice`);
    }
    // The slow node's answers arrive after the reads were answered: dropped, nothing held.
    await new Promise((resolve) => setTimeout(resolve, 1700));
    assert.deepEqual(relayer.stats().endpoints.map((e) => e.inFlight), [0, 0]);
    assert.match(await relayer.request({ method: 'eth_getBalance', params: [address(77), 'latest'] }), /^0x0+4d:/);
  } finally {
    await relayer.close();
  }
});

test('a batch wait longer than the hedge delay neither hedges every read nor trips a healthy node', async () => {
  // `waitMs` 300 holds each read in the relayer's own queue; hedges after 100 ms. Hedged from
  // the queue and its losses counted as the node's failures, a healthy 20 ms node's breaker
  // opened during warm-up.
  const a = await startNode(perItem(echo), 20);
  const b = await startNode(perItem(echo), 20);
  const relayer = new FaultTolerantRelayer([{ url: a.url, priority: 0 }, { url: b.url, priority: 1 }],
    { chainId: 1, cache: false, batch: { waitMs: 300 }, hedge: { initialDelayMs: 100, minDelayMs: 50 } });
  const events = [];
  relayer.on('breaker', (e) => events.push(`breaker ${e.endpoint} ${e.from}->${e.to}`));
  relayer.on('hedge', () => events.push('hedge'));
  try {
    for (let round = 0; round < 4; round += 1) {
      const settled = await reads(relayer, 10, round * 10);
      settled.forEach((s, i) => assert.equal(s.status === 'fulfilled' && s.value, address(round * 10 + i), `read ${i}: ${s.reason?.message}`));
    }
    assert.deepEqual(events.filter((e) => e.startsWith('breaker')), [], `no breaker moved: ${events}`);
    assert.ok(events.filter((e) => e === 'hedge').length <= 4, `reads waiting in the queue are not hedged: ${events}`);
    assert.deepEqual(relayer.stats().endpoints.map((e) => e.state), ['closed', 'closed']);
  } finally {
    await relayer.close();
  }
});

test('bad batch options are typed errors that name the field', () => {
  for (const [batch, field] of [[5, 'batch'], [{ maxSize: 0 }, 'batch.maxSize'], [{ waitMs: -1 }, 'batch.waitMs'], [{ wait: 5 }, 'batch.wait']]) {
    assert.throws(() => new FaultTolerantRelayer(['http://127.0.0.1:1'], { batch }), (e) => e instanceof ConfigError && e.field === field, JSON.stringify(batch));
  }
});
