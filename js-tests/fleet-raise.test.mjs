// A fleet on Redis whose count of its key came out low raises its plan as one (a probe step told
// to every process, `policy/quota/fleet_raise.rs`). Kept, a low count stayed for good: a new
// user's fleet kept 28 of a 30/s key and failed 25.5 % of its reads at 120 % demand. Here another
// client takes 8 of the key's 30 a second while the fleet first meets the key, so the fleet counts
// about 22; that client then stops. Real processes, a real redis-server on 127.0.0.1, a key
// keeping any 1,000 ms within 30 requests; `stableWindowMs: 2000` runs the quota's calm
// windows five times faster than the default 10 s, so minutes of a fleet's life fit in 90 s.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRedis } from './helpers/redis.mjs';
import { runWorker } from './helpers/fleet-process.mjs';
import { startLimitedKey } from './helpers/limited-node.mjs';

const stops = [];
after(async () => { for (const stop of stops) await stop(); });

/** Another client on the key: `perSecond` raw requests a second to `url` from `startAt` for `ms`. */
async function foreignClient(url, perSecond, startAt, ms) {
  await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
  const sends = [];
  for (let i = 0; i < (perSecond * ms) / 1000; i += 1) {
    sends.push(fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.status, () => 0));
    await new Promise((r) => setTimeout(r, 1000 / perSecond));
  }
  return Promise.all(sends);
}

test('a fleet whose count came out low on a foreign client\'s second probes its plan up to the key together', async (t) => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const key = await startLimitedKey({ perSecond: 30, sliding: true });
  stops.push(key.close);
  const urls = key.urls.map((url) => ({ url, quotaGroup: 'key', costs: { eth_getBalance: 1, eth_chainId: 1 } }));
  const quota = { key: { cuPerSecond: 'Infinity', stableWindowMs: 2000 } };
  const options = { quota, deadlineMs: 4000, batch: false, fleet: { redis: redis.url } };
  const startAt = Date.now() + 3000;
  const foreign = foreignClient(key.urls[0], 8, startAt - 500, 6000);
  // 36 reads a second in all (120 % of the key) for 90 s.
  const reports = await Promise.all([1, 2].map((id) => runWorker('fleet-worker.mjs', { id, urls, options, rps: 18, waitLease: true, durationMs: 90000, startAt, sampleMs: 250 }, 150000)));
  await foreign;
  const windows = key.windows();
  // Each process's plan where it changed ([s since the load started, CU/s]; a plan to learn is
  // told as Number.MAX_VALUE and left out).
  const changes = reports.map((r) => r.allowedSeen.filter(([, rate], i, all) => rate < 1e300 && (i === 0 || all[i - 1][1] !== rate)));
  const learned = reports.map((r) => r.allowedRate[0]);
  const detail = JSON.stringify({ learned, changes, counts: key.counts(), windows: windows.map((w) => [w.served, w.limited]), tallies: reports.map((r) => r.tally) });
  t.diagnostic(detail);
  assert.ok(reports.every((r) => r.fleet[0] === 'leased'), `every process leased from Redis: ${detail}`);
  assert.ok(changes.every((c) => c.length > 0 && c[0][1] <= 25), `the fleet's count came out low, beside the other client: ${detail}`);
  // Raised together, the plan ends near the key in both processes (kept at its count, about 22).
  assert.ok(learned.every((rate) => rate >= 28.5), `the plan rose to 95 % of the key: ${detail}`);
  assert.ok(Math.max(...learned) <= Math.min(...learned) * 1.1, `one plan in both processes: ${detail}`);
  // The last 15 s: the key used (at the count the fleet was served 16-20 a second here; at 30.5
  // it is served 25-26, the rest of each second spent waiting out a probe's 429s and cooldown).
  // A probe whose step meets the key in these 15 s costs up to 2 a second of it (two cooldown
  // seconds: 23.8 seen), so the bar sits between the two: 22.
  const last = windows.slice(-16, -1).map((w) => w.served);
  const mean = last.reduce((a, b) => a + b, 0) / last.length;
  assert.ok(mean >= 22, `the key served ${mean.toFixed(1)} a second of its 30 at the end: ${detail}`);
  assert.ok(key.counts().limited <= 30, `a handful of 429 episodes: ${detail}`);
});
