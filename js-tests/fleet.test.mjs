// A fleet across processes on Redis (docs/coordination.md, "Redis"): Node processes sharing one
// rate-limited API key send, together, what one relayer would; news (a 429's cooldown) reaches
// every process; and the store failing in every way it fails (down at start, killed mid-run,
// restarted empty, slow) never fails or holds up a request. Each test starts its own
// redis-server on 127.0.0.1 (helpers/redis.mjs) and its own loopback nodes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { FaultTolerantRelayer, ConfigError, isRateLimitedError } from '../pkg/dist/node.mjs';
import { startRedis, freePort, scriptCalls as evalCalls } from './helpers/redis.mjs';
import { fleetProcess } from './helpers/fleet-process.mjs';
import { startLimitedKey } from './helpers/limited-node.mjs';
import { slowProxy } from './helpers/slow-proxy.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const stops = [];
after(async () => { for (const stop of stops) await stop(); });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const eventually = async (ok, ms, what) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
};

/** The key's two URLs in one quota group of `cuPerSecond` (one CU per request). */
const onKey = (key, cuPerSecond, extra = {}) => ({
  urls: key.urls.map((url) => ({ url, quotaGroup: 'key', costs: { eth_getBalance: 1, eth_chainId: 1 } })),
  // A burst of 10 under 90/s: at most 100 in any second, the key's limit. One read per HTTP
  // request (`batch: false`), as these figures were measured: batched, the uncoordinated control's
  // bursts go out in a few large batches early in a window and it met 12 429s once, where this
  // test's point is what coordination changes, not the wire's shape.
  options: { quota: { key: { cuPerSecond, burst: 10 } }, deadlineMs: 4000, batch: false, ...extra },
});

test('four processes on one key and Redis send what one relayer would; alone each spends the whole plan', async (t) => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const key = await startLimitedKey({ perSecond: 100 });
  stops.push(key.close);
  const run = async (fleet) => {
    key.reset();
    const { urls, options } = onKey(key, 90, fleet ? { fleet } : {});
    // The four start their load together: spawned one after another on a loaded machine, they
    // once ran staggered by seconds, and the uncoordinated control then met the key one process
    // at a time (8 429s in CI, where started together it gets 60-90).
    const startAt = Date.now() + 3000;
    const reports = await Promise.all([1, 2, 3, 4].map((id) => fleetProcess({ id, urls, options, rps: 30, burst: 60, waitLease: true, durationMs: 3000, relayers: 3, startAt })));
    const starts = reports.map((r) => r.startedAt);
    const answered = reports.reduce((sum, r) => sum + (r.tally.ok || 0), 0);
    return { ...key.counts(), answered, reports, windows: key.windows(), seconds: (Date.now() - startAt) / 1000, startSpreadMs: Math.max(...starts) - Math.min(...starts) };
  };
  const shared = await run({ redis: redis.url });
  const alone = await run(undefined);
  // The store's cost. Demand above the plan keeps the bucket empty, so each process asks about
  // once per refill it can use: bounded per second, not per request.
  const evals = await evalCalls(redis.url);
  const perProcessSecond = evals / (4 * shared.seconds);
  const detail = JSON.stringify({ shared: { ...shared, reports: shared.reports.map((r) => [r.fleet, r.allowedRate]), perProcess: shared.reports.map((r) => r.tally.ok || 0) }, alone: { ...alone, reports: undefined, windows: undefined }, evals, perProcessSecond });
  t.diagnostic(detail);
  // Measured: 19.6–20.4 on an idle machine (22.3–22.5 since the seconds count from the common
  // start, not the spawn), 23.7–30.3 with another heavy job on the 2 cores (the
  // build of 2026-12-02's start shows the same spread). Above the plan, grants fragment to about a
  // CU, 1.2–1.5 scripts per served read: a known cost (docs/coordination.md), bounded here per
  // process and second with room for a loaded machine, not per request.
  // Counted per second of load since the common start (fewer seconds than from the spawn): 22.3–22.5
  // idle, 37.4 once in the whole suite's run.
  assert.ok(perProcessSecond <= 50, `a bounded number of store round trips per process and second: ${detail}`);
  // The lease script (about 4 KB) goes whole only to a Redis that does not know it yet: the
  // processes' first asks (sent whole at once, not after a NOSCRIPT); every other ask names it by digest.
  const kinds = await evalCalls(redis.url, true);
  assert.ok(kinds.eval <= 4 && kinds.evalsha >= 100, `the script sent by its digest: ${JSON.stringify(kinds)}`);
  assert.ok(shared.reports.every((r) => r.fleet[0] === 'leased'), `every process leased from Redis: ${detail}`);
  assert.ok(shared.limited <= 10, `the fleet on Redis got at most 10 429s: ${detail}`);
  // The control: 62–139 429s started together (38–56 before the common start, 8 once in CI
  // with the processes staggered); 12 in two full-suite runs of 2026-12-03 (above 20 run alone;
  // which of that day's changes made uncoordinated processes back off sooner is not known).
  // The control shows they meet the key's limit where the fleet does not.
  assert.ok(alone.limited >= 5 && alone.limited > shared.limited, `uncoordinated processes each spend the whole plan: ${detail}`);
  // Demand (4 × (60 + 90) reads in 3 s) is above the plan (90/s): the fleet on Redis used the
  // plan in every full second of its load (measured 89–94 a second). (Alone the processes answer
  // about as many, over the key's limit and with 60–140 429s: since a wave of 429s is one step of
  // cooldown, their cooldowns no longer idle them for most of the run.)
  const full = shared.windows.slice(1, -1).map((w) => w.served);
  assert.ok(shared.answered >= 300 && Math.min(...full) >= 80, `the plan was used, not starved: ${detail}`);
  const fair = shared.reports.map((r) => r.tally.ok || 0);
  assert.ok(Math.min(...fair) >= Math.max(...fair) / 2, `and shared about evenly between the processes: ${fair}`);
});

test('a 429 one process hears cools the key in the other processes at once (Redis pub/sub)', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const limited = await node([{ status: 429, headers: { 'retry-after': '30' } }]);
  const options = { deadlineMs: 1500, fleet: { redis: redis.url, prefix: 'news-test:' } };
  const here = new FaultTolerantRelayer([limited.url], options);
  await sleep(300); // subscribed
  const there = await fleetProcess({ id: 9, urls: [limited.url], options, rps: 1, durationMs: 1, warmMs: 300 });
  assert.equal(there.tally.RateLimitedError, 1, JSON.stringify(there));
  const sent = limited.count();
  await sleep(100);
  const error = await here.request({ method: 'eth_getBalance', params: ['0x2', 'latest'] }).then(() => null, (e) => e);
  assert.ok(isRateLimitedError(error), String(error));
  assert.equal(limited.count(), sent, 'this process heard of the cooldown and sent nothing');
  await here.close();
});

/** Reads on `relayer` at ~`rps` for `ms`; resolves with how they ended. */
async function load(relayer, rps, ms, tag) {
  const outcomes = [];
  const start = Date.now();
  for (let n = 0; Date.now() - start < ms; n += 1) {
    const address = `0x${(tag * 1e6 + n).toString(16).padStart(40, '0')}`;
    outcomes.push(relayer.request({ method: 'eth_getBalance', params: [address, 'latest'] }).then(() => 'ok', (e) => `${e.name}: ${e.message}`));
    await sleep(1000 / rps);
  }
  const tally = {};
  for (const o of await Promise.all(outcomes)) tally[o] = (tally[o] || 0) + 1;
  return tally;
}

const ONE_CU = { eth_getBalance: 1, eth_chainId: 1 };
const groupFleet = (relayer) => relayer.stats().quotaGroups[0].fleet;

test('Redis down at start fails no request, and the relayer joins the fleet when Redis comes up', async (t) => {
  const port = await freePort();
  const upstream = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
    quota: { key: { cuPerSecond: 500 } }, deadlineMs: 2000, fleet: { redis: `redis://127.0.0.1:${port}` },
  });
  const down = await load(relayer, 50, 600, 1);
  assert.deepEqual(down, { ok: down.ok }, 'every read answered with the store down');
  assert.equal(groupFleet(relayer), 'local', 'its own bucket governs meanwhile');
  const redis = await startRedis({ port });
  stops.push(redis.stop);
  const joining = load(relayer, 50, 3000, 2);
  await eventually(() => groupFleet(relayer) === 'leased', 5000, 'the lease once Redis is up');
  const tally = await joining;
  assert.deepEqual(tally, { ok: tally.ok }, 'and none failed while it joined');
  // Below its plan, a group asks a chunk of one second of its rate while half the last is left.
  const perThousand = (1000 * await evalCalls(redis.url)) / tally.ok;
  t.diagnostic(`lease scripts per 1,000 reads below the plan: ${perThousand.toFixed(1)}`);
  assert.ok(perThousand <= 80, `store round trips per 1,000 reads below the plan: ${perThousand}`);
  await relayer.close();
});

test('Redis killed mid-run and restarted empty: no request fails, the relayer falls back and rejoins', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const upstream = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
    quota: { key: { cuPerSecond: 500 } }, deadlineMs: 2000, fleet: { redis: redis.url },
  });
  try {
    const running = load(relayer, 50, 6000, 3);
    await eventually(() => groupFleet(relayer) === 'leased', 3000, 'the first lease');
    await redis.stop();
    await eventually(() => groupFleet(relayer) === 'local', 3000, 'the fallback within a lease period');
    await sleep(300);
    await redis.start(); // empty: no bucket, no subscribers
    await eventually(() => groupFleet(relayer) === 'leased', 5000, 'the rejoin');
    const tally = await running;
    assert.deepEqual(tally, { ok: tally.ok }, 'every read answered across the crash and the restart');
    assert.ok(upstream.count() <= tally.ok + 1, `one upstream call per read (and the chain check), no retries: ${upstream.count()}`);
  } finally {
    await relayer.close();
  }
});

test('a slow store (every answer 600 ms late) holds up no request, even with a 400 ms deadline', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const proxy = await slowProxy(redis.port, 600);
  stops.push(proxy.close);
  const upstream = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
    quota: { key: { cuPerSecond: 1000, burst: 20 } }, deadlineMs: 400, fleet: { redis: `redis://127.0.0.1:${proxy.port}` },
  });
  const tally = await load(relayer, 40, 3000, 4);
  assert.deepEqual(tally, { ok: tally.ok }, JSON.stringify(tally));
  await relayer.close();
});

test('AUTH passes through to Redis, and a wrong password is a store that is down (a fleetStore event, no request fails)', async () => {
  const redis = await startRedis({ password: 'fleet-s3cret' });
  stops.push(redis.stop);
  const upstream = await node([{ result: '0x1' }]);
  const events = [];
  const make = (password, prefix) => {
    const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
      quota: { key: { cuPerSecond: 500 } }, fleet: { redis: { url: `redis://127.0.0.1:${redis.port}`, password }, prefix },
    });
    for (const type of ['retry', 'failover', 'breaker', 'rateLimited', 'fleetStore']) relayer.on(type, (e) => events.push(e));
    return relayer;
  };
  const good = make('fleet-s3cret', 'auth:');
  try {
    await eventually(() => groupFleet(good) === 'leased', 5000, 'the lease with the right password');
    await eventually(() => events.some((e) => e.type === 'fleetStore' && e.state === 'up'), 2000, 'the store is up');
  } finally {
    await good.close();
  }
  const wrong = make('not-it', 'auth:');
  try {
    const tally = await load(wrong, 40, 800, 5);
    assert.deepEqual(tally, { ok: tally.ok }, 'a store refusing us fails no read');
    assert.equal(groupFleet(wrong), 'local');
    const downs = events.filter((e) => e.type === 'fleetStore' && e.state === 'down');
    assert.equal(downs.length, 1, `told once, not on every reconnect: ${JSON.stringify(downs)}`);
    assert.match(downs[0].reason, /WRONGPASS|NOAUTH|auth|password/i, 'the reason says what is wrong');
    const seen = JSON.stringify([wrong.stats(), events]);
    assert.ok(!seen.includes('not-it') && !seen.includes('fleet-s3cret'), 'no password in stats or events');
  } finally {
    await wrong.close();
  }
});

test('one store, one log line: relayers of a process sharing a logger write a store\'s change once, and each still hears it', async () => {
  const port = await freePort(); // nothing listens: the store is down from the start
  const upstream = await node([{ result: '0x1' }]);
  const lines = [];
  const logger = { warn: (line) => lines.push(line), info: (line) => lines.push(line) };
  const heard = [];
  const relayers = [1, 2, 3, 4].map((n) => {
    const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
      quota: { key: { cuPerSecond: 500 } }, logger, fleet: { redis: `redis://127.0.0.1:${port}` },
    });
    relayer.on('fleetStore', (e) => heard.push([n, e.state]));
    return relayer;
  });
  try {
    await eventually(() => heard.length === 4, 5000, 'every relayer to hear the store is down');
    await sleep(100);
    const logged = lines.filter((line) => line.includes('fleetStore'));
    assert.equal(logged.length, 1, `one line for one change of one store: ${JSON.stringify(logged)}`);
    assert.match(logged[0], /fleetStore state=down/);
    assert.deepEqual(heard.map(([n]) => n).sort(), [1, 2, 3, 4], 'and every relayer\'s listeners heard it');
  } finally {
    await Promise.all(relayers.map((r) => r.close()));
  }
});

test('a Redis that stops answering (SIGSTOP) is a store that is down, told as such, and up again once it answers; no read fails', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const upstream = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
    quota: { key: { cuPerSecond: 500 } }, deadlineMs: 2000, fleet: { redis: redis.url, prefix: 'paused:' },
  });
  const events = [];
  relayer.on('fleetStore', (e) => events.push(e));
  try {
    await eventually(() => groupFleet(relayer) === 'leased', 5000, 'the lease');
    process.kill(redis.pid(), 'SIGSTOP'); // the connection stays open; nothing answers, no error comes
    try {
      const paused = await load(relayer, 40, 2500, 6);
      assert.deepEqual(paused, { ok: paused.ok }, 'every read answered while Redis is paused');
      // Told once an ask went unanswered for 4 s (as long as the engine awaits a late answer).
      await eventually(() => events.some((e) => e.state === 'down'), 4000, 'the store told down');
      assert.match(events.find((e) => e.state === 'down').reason, /does not answer/);
    } finally {
      process.kill(redis.pid(), 'SIGCONT');
    }
    const back = await load(relayer, 40, 1500, 7);
    assert.deepEqual(back, { ok: back.ok });
    await eventually(() => events.at(-1).state === 'up', 5000, 'the store told up again');
    await eventually(() => groupFleet(relayer) === 'leased', 5000, 'leasing again');
  } finally {
    await relayer.close();
  }
});

test('an idle relayer tells it spends alone as soon as Redis dies, not at its next request', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const upstream = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
    quota: { key: { cuPerSecond: 500 } }, deadlineMs: 2000, fleet: { redis: redis.url, prefix: 'idle:' },
  });
  const events = [];
  relayer.on('fleetStore', (e) => events.push(e));
  try {
    await relayer.request({ method: 'eth_getBalance', params: ['0x' + '1'.repeat(40), 'latest'] });
    await eventually(() => groupFleet(relayer) === 'leased', 5000, 'the lease');
    await redis.stop();
    await eventually(() => events.some((e) => e.state === 'down'), 3000, 'the store told down');
    await eventually(() => groupFleet(relayer) === 'local', 300, "stats() saying 'local' with no request made");
  } finally {
    await relayer.close();
  }
});

test('a Redis that accepts connections and never answers is told down once the first connection gives up', async () => {
  const net = await import('node:net');
  const sockets = [];
  const mute = net.createServer((socket) => { sockets.push(socket); }); // accepts, reads, never writes
  await new Promise((resolve) => mute.listen(0, '127.0.0.1', resolve));
  stops.push(() => { for (const s of sockets) s.destroy(); return new Promise((resolve) => mute.close(resolve)); });
  const upstream = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
    quota: { key: { cuPerSecond: 500 } }, deadlineMs: 2000,
    fleet: { redis: { url: `redis://127.0.0.1:${mute.address().port}`, socket: { connectTimeout: 10_000 } } },
  });
  const events = [];
  relayer.on('fleetStore', (e) => events.push(e));
  try {
    const tally = await load(relayer, 20, 600, 8);
    assert.deepEqual(tally, { ok: tally.ok }, 'every read answered meanwhile');
    await eventually(() => events.some((e) => e.state === 'down'), 6000, 'the store told down');
    assert.match(events.find((e) => e.state === 'down').reason, /did not get ready/);
    assert.equal(groupFleet(relayer), 'local');
  } finally {
    await relayer.close();
  }
});

test('a process that cannot reach Redis spends alone; the others stay coordinated', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const key = await startLimitedKey({ perSecond: 100 });
  stops.push(key.close);
  const { urls, options } = onKey(key, 90);
  const on = { ...options, fleet: { redis: redis.url } };
  const cut = { ...options, fleet: { redis: `redis://127.0.0.1:${await freePort()}` } };
  const reports = await Promise.all([
    ...[1, 2, 3].map((id) => fleetProcess({ id, urls, options: on, rps: 20, waitLease: true, durationMs: 2000 })),
    fleetProcess({ id: 4, urls, options: cut, rps: 20, durationMs: 2000 }),
  ]);
  const detail = JSON.stringify({ reports, key: key.counts() });
  assert.deepEqual(reports.map((r) => r.fleet[0]), ['leased', 'leased', 'leased', 'local'], detail);
  for (const r of reports) assert.deepEqual(r.tally, { ok: r.sent }, `every read answered: ${detail}`);
});

test('a fleet on Redis comes back from a total outage with every held read answered, and probes the dead nodes sparingly', async (t) => {
  // Four processes × 5 relayers, 10 reads a second each, on two nodes of one key whose plan has
  // room (80 CU/s for 40 reads/s). Both nodes refuse connections from 2 s to 5 s.
  const redis = await startRedis();
  stops.push(redis.stop);
  const nodes = [await node([{ result: '0x1' }]), await node([{ result: '0x1' }])];
  const urls = nodes.map((n) => ({ url: n.url, quotaGroup: 'key', costs: { eth_getBalance: 1, eth_chainId: 1 } }));
  const options = { quota: { key: { cuPerSecond: 80, burst: 10 } }, deadlineMs: 10000, batch: false, fleet: { redis: redis.url } };
  const startAt = Date.now() + 3000;
  const outage = setTimeout(() => { for (const n of nodes) n.stop(); }, startAt + 2000 - Date.now());
  const back = setTimeout(() => { for (const n of nodes) n.restart(); }, startAt + 5000 - Date.now());
  t.after(() => { clearTimeout(outage); clearTimeout(back); });
  const reports = await Promise.all([1, 2, 3, 4].map((id) => fleetProcess({ id, urls, options, rps: 10, relayers: 5, waitLease: true, durationMs: 8000, startAt })));
  const sent = reports.reduce((sum, r) => sum + r.sent, 0);
  const answered = reports.reduce((sum, r) => sum + (r.tally.ok || 0), 0);
  const detail = JSON.stringify(reports.map((r) => [r.fleet, r.tally]));
  // Counted at what it took while the outage held everything, each process's line for the plan
  // looked 15-30 s long when the nodes came back, and a fifth to a third of the held reads were
  // turned away at once (benches/fleet-redis.mjs, 6 of 9 runs; `serving_rate`).
  assert.ok(answered >= 0.99 * sent, `${answered} of ${sent} answered: ${detail}`);
  // While both nodes are down, only probes reach them (connections refused are not counted by a
  // stopped server): what the nodes saw in the 2.5 s after they came back is the held reads and
  // the new ones, each once (amplification, not retries).
  const seen = nodes.reduce((sum, n) => sum + n.count('eth_getBalance'), 0);
  assert.ok(seen <= 1.1 * sent, `each read went upstream about once: ${seen} for ${sent} (${detail})`);
});

test('a node-redis client of the caller\'s is used (connected if it was not), never closed by the relayer', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const upstream = await node([{ result: '0x1' }]);
  const client = createClient({ url: redis.url }); // not connected
  const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
    quota: { key: { cuPerSecond: 500 } }, fleet: { redis: client, prefix: 'given:' },
  });
  const events = [];
  relayer.on('fleetStore', (e) => events.push(e.state));
  try {
    await eventually(() => groupFleet(relayer) === 'leased', 5000, 'the lease through the given client');
    // Each ask tells the member's need (the lease script's ninth argument): kept as 'd:<member>'.
    const [bucket] = await client.keys('given:q:{*}');
    const needs = Object.keys(await client.hGetAll(bucket)).filter((f) => f.startsWith('d:'));
    assert.equal(needs.length, 1, `the member's need in ${bucket}`);
    // Redis dies under the caller's client, which has no 'error' listener of its own: the
    // relayer's keeps the process alive and tells the outage, as with a client of its own.
    await redis.stop();
    await eventually(() => events.includes('down'), 5000, 'fleetStore down through the given client');
    await redis.start();
    await eventually(() => events.at(-1) === 'up', 8000, 'fleetStore up again');
  } finally {
    await relayer.close();
  }
  assert.ok(client.isOpen, 'the caller\'s client stays the caller\'s');
  assert.equal(client.listenerCount('error'), 0, 'and gets no listener of ours left behind');
  await client.close();
});

test('bad store options are typed errors that name the field', () => {
  const cases = [
    [{ redis: 'http://127.0.0.1:6379' }, 'fleet.redis'],
    [{ redis: 42 }, 'fleet.redis'],
    [{ redis: { url: 'localhost' } }, 'fleet.redis.url'],
    // Nowhere to connect: node-redis would take localhost:6379, perhaps another application's Redis.
    [{ redis: { uri: 'redis://127.0.0.1:16399' } }, 'fleet.redis'],
    [{ redis: { password: 'p' } }, 'fleet.redis'],
    [{ redis: 'redis://127.0.0.1:1', prefix: 'a b' }, 'fleet.prefix'],
    [{ prefix: 'p:' }, 'fleet.prefix'],
    [{ tabs: 'yes' }, 'fleet.tabs'],
    // Not a node-redis client (a hand-made object, or another library's): it failed later, told
    // only as a TypeError in a fleetStore event.
    [{ redis: { eval() {}, duplicate() {} } }, 'fleet.redis'],
  ];
  for (const [fleet, field] of cases) {
    assert.throws(() => new FaultTolerantRelayer(['http://127.0.0.1:1'], { fleet }), (e) => e instanceof ConfigError && e.field === field, JSON.stringify(fleet));
  }
  assert.throws(() => new FaultTolerantRelayer(['http://127.0.0.1:1'], { fleet: { redis: { uri: 'redis://127.0.0.1:16399' } } }),
    /did you mean `url` for `uri`/);
  // The URL as the whole option: told where it goes, and its password never printed.
  assert.throws(() => new FaultTolerantRelayer(['http://127.0.0.1:1'], { fleet: 'redis://:s3cret@127.0.0.1:1' }),
    (e) => e instanceof ConfigError && e.field === 'fleet' && /fleet\.redis/.test(e.message) && !e.message.includes('s3cret'));
  const first = new FaultTolerantRelayer(['http://127.0.0.1:1'], { fleet: { redis: 'redis://127.0.0.1:1' } });
  assert.throws(() => new FaultTolerantRelayer(['http://127.0.0.1:1'], { fleet: { redis: 'redis://127.0.0.1:2' } }),
    (e) => e instanceof ConfigError && e.field === 'fleet.redis' && /another store/.test(e.message));
  first.close();
  // Where tabs cannot lease (Node: no Web Locks), `tabs` is accepted and changes nothing.
  new FaultTolerantRelayer(['http://127.0.0.1:1'], { fleet: { tabs: false } }).close();
  new FaultTolerantRelayer(['http://127.0.0.1:1'], { fleet: { tabs: true, budget: false } }).close();
});

test('processes on Redis poll their nodes\' heads about once per interval between them, and each knows the laggard', async (t) => {
  const redis = await startRedis();
  stops.push(redis.stop);
  // A chain far past block 0; the second node lags 40 blocks behind.
  const fresh = await node([{ resultFor: { eth_blockNumber: '0x1406f40', eth_getBalance: '0x1' } }]);
  const behind = await node([{ resultFor: { eth_blockNumber: '0x1406f18', eth_getBalance: '0x1' } }]);
  const urls = [behind.url, fresh.url]; // the laggard first: it serves until its lag is known
  const run = async (fleet) => {
    const polls = () => fresh.count('eth_blockNumber') + behind.count('eth_blockNumber');
    const before = polls();
    const laggard = behind.count('eth_getBalance');
    const options = { headPollMs: 500, maxLagBlocks: 5, deadlineMs: 2000, ...(fleet ? { fleet } : {}) };
    const startAt = Date.now() + 3000;
    const reports = await Promise.all([1, 2, 3, 4].map((id) => fleetProcess({ id, urls, options, rps: 10, durationMs: 4000, startAt })));
    return { polls: polls() - before, reports, laggardServed: behind.count('eth_getBalance') - laggard };
  };
  const shared = await run({ redis: redis.url, prefix: 'heads:' });
  const alone = await run(undefined);
  const detail = JSON.stringify({ shared: [shared.polls, shared.laggardServed], alone: [alone.polls, alone.laggardServed] });
  t.diagnostic(detail);
  for (const r of [...shared.reports, ...alone.reports]) assert.deepEqual(r.tally, { ok: r.sent }, `every read answered: ${detail}`);
  // 4 s at 500 ms on two nodes: alone, each process polls both every interval (4 × 2 × ~8).
  assert.ok(alone.polls >= 40, `the control: every process polls: ${detail}`);
  // Shared: the first round of each process (all due as the load starts: 8 polls), then one round
  // per interval for the fleet. The four read on one timer grid and their first rounds collide;
  // the first to end leads (coord/head_rounds.rs). Measured: 20 in 12 of 12 runs. Before the
  // tie-break, one run in six had all four in the same tick round after round (36-40).
  assert.ok(shared.polls <= alone.polls / 2, `the fleet polls well below every process alone: ${detail}`);
  // Freshness routing (maxLagBlocks 5) keeps reads off the node 40 blocks behind once its head is
  // known, with the fleet's rounds as with each process's own (the Rust test
  // news_tests.rs shows a realm that only heard a round knowing the lag).
  const reads = shared.reports.reduce((sum, r) => sum + r.sent, 0);
  assert.ok(shared.laggardServed <= reads / 4, `reads stay off the lagging node: ${detail}`);
});
