// What a process on Redis really asks the fleet's bucket for, read off the server's MONITOR
// (docs/coordination.md, "The plan's second, kept at the store"): the one-second window of a plan
// kept per second, the whole plan as rate once the store said it keeps that window, how long the
// oldest waiting read has waited, and, after spending alone while Redis was down, what was spent by age. Each test starts its own
// redis-server and loopback node.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { FaultTolerantRelayer } from '../pkg/dist/node.mjs';
import { startRedis, monitor } from './helpers/redis.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const stops = [];
after(async () => { for (const stop of stops) await stop(); });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ONE_CU = { eth_getBalance: 1, eth_chainId: 1 };
const groupFleet = (relayer) => relayer.stats().quotaGroups[0].fleet;
const eventually = async (ok, ms, what) => {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
};

/** `rps` reads a second for `ms`; resolves to how many failed. */
async function load(relayer, rps, ms, tag) {
  const outcomes = [];
  const start = Date.now();
  for (let n = 0; Date.now() - start < ms; n += 1) {
    const address = `0x${(tag * 1e6 + n).toString(16).padStart(40, '0')}`;
    outcomes.push(relayer.request({ method: 'eth_getBalance', params: [address, 'latest'] }).then(() => 0, () => 1));
    await sleep(1000 / rps);
  }
  return (await Promise.all(outcomes)).reduce((a, b) => a + b, 0);
}

// ARGV of the lease script (pkg-template/src/fleet-lease-script.js): 1 want, 2 rate, 3 burst, …,
// 10 spent alone, 11 the window, 12 spent alone by tenth of a second of age, 13 how long the oldest
// read has waited (ms; -1: none waits), 14 what the reads waiting cost (CU).
const said = (arg) => (arg === undefined || Number(arg) < 0 ? null : Number(arg));
const ask = ({ args }) => ({ rate: Number(args[1]), burst: Number(args[2]), alone: Number(args[9] || 0),
  window: Number(args[10] || 0), ages: args[11] ? args[11].split(',').map(Number) : null,
  waited: said(args[12]), line: said(args[13]) });

/**
 * A redis-server watched by MONITOR and one relayer on a `cuPerSecond` plan kept per second,
 * leasing under `prefix`; `asks()` reads back its lease asks (`ask` below), `done()` closes both.
 */
async function watchedRelayer(cuPerSecond, deadlineMs, prefix) {
  const redis = await startRedis();
  stops.push(redis.stop);
  const watch = await monitor(redis.port);
  const upstream = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
    quota: { key: { cuPerSecond } }, deadlineMs, batch: false, fleet: { redis: redis.url, prefix },
  });
  const asks = () => watch.scripts().filter((s) => s.keys.length === 3 && s.keys[0].startsWith(`${prefix}q:{`)).map(ask);
  const done = async () => { watch.stop(); await relayer.close(); };
  return { relayer, asks, done };
}

test('a plan kept per second asks for its window, and for the whole plan as rate once Redis says it keeps it', async () => {
  const { relayer, asks: asked, done } = await watchedRelayer(100, 2000, 'win:');
  try {
    assert.equal(await load(relayer, 40, 1500, 1), 0);
    const asks = asked();
    assert.ok(asks.length >= 2, `${asks.length} asks`);
    assert.ok(asks.every((a) => a.window === 100), `every ask names the plan's second: ${JSON.stringify(asks.map((a) => a.window))}`);
    assert.equal(asks[0].rate + asks[0].burst, 100, 'before the store said it keeps the window: token-bucket terms within the plan');
    assert.ok(asks.slice(1).some((a) => a.rate === 100), `after it said so, the whole plan as rate: ${JSON.stringify(asks.map((a) => a.rate))}`);
  } finally {
    await done();
  }
});

test('while reads wait for the plan, each ask tells Redis how long the oldest has waited and what the line costs', async () => {
  const { relayer, asks, done } = await watchedRelayer(20, 10000, 'wait:');
  try {
    await eventually(() => relayer.request({ method: 'eth_chainId' }).then(() => groupFleet(relayer) === 'leased'), 5000, 'a lease');
    // 40 reads at once on a 20/s plan: a line that takes two seconds to drain.
    const reads = Array.from({ length: 40 }, (_, n) => relayer.request({ method: 'eth_getBalance', params: [`0x${n.toString(16).padStart(40, '0')}`, 'latest'] }));
    await Promise.all(reads);
    const waits = asks().map((a) => a.waited);
    // Asks made while nothing waited say nothing (null); those made while the line drained say its age.
    assert.ok(waits.some((w) => w > 100), `the line's age told: ${JSON.stringify(waits)}`);
    assert.ok(waits.every((w) => w === null || (w >= 0 && w < 10000)), `each a wait within the deadline: ${JSON.stringify(waits)}`);
    // And what the line costs (one CU a read), so each member reckons a wait by the fleet's line.
    const lines = asks().map((a) => a.line);
    assert.ok(lines.some((l) => l >= 5) && lines.every((l) => l !== null && l <= 40), `the line's cost told: ${JSON.stringify(lines)}`);
  } finally {
    await done();
  }
});

test('what a process spent alone while Redis was down reaches the restarted store by age', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const upstream = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([{ url: upstream.url, quotaGroup: 'key', costs: ONE_CU }], {
    quota: { key: { cuPerSecond: 100 } }, deadlineMs: 2000, batch: false, fleet: { redis: redis.url, prefix: 'ages:' },
  });
  const events = [];
  relayer.on('fleetStore', (e) => events.push(e.state));
  try {
    assert.equal(await load(relayer, 40, 600, 2), 0);
    await eventually(() => groupFleet(relayer) === 'leased', 5000, 'the lease');
    await redis.stop();
    await eventually(() => events.includes('down'), 3000, 'the store told down');
    const spending = load(relayer, 40, 2500, 3); // alone, and on through the restart
    await sleep(1200);
    await redis.start();
    const watch = await monitor(redis.port);
    stops.push(async () => watch.stop());
    assert.equal(await spending, 0, 'no read failed across the outage');
    await eventually(() => watch.scripts().some((s) => ask(s).alone > 0), 5000, 'an ask telling what was spent alone');
    const told = ask(watch.scripts().find((s) => ask(s).alone > 0));
    assert.ok(told.ages && told.ages.length === 10, `by tenth of a second of age: ${JSON.stringify(told)}`);
    const byAge = told.ages.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(byAge - told.alone) < 1e-6, `the ages add up to what was spent alone (${byAge} of ${told.alone})`);
  } finally {
    await relayer.close();
  }
});
