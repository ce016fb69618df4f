// A fleet starting together beside a slow Redis (docs/coordination.md, "Redis", the failure
// table's start row): workers that each have a start-up burst and cannot know how many start
// with them spend a quarter of the plan until the store first answers (then coordinated), and a
// worker whose client takes a while to load and connect waits for that connection, not against
// it. Before, four such workers (Redis 300-600 ms away each way) met 36-44 429s in their first
// two seconds and some reads failed; the whole plan each until the store answered.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRedis } from './helpers/redis.mjs';
import { fleetProcess } from './helpers/fleet-process.mjs';
import { startLimitedKey } from './helpers/limited-node.mjs';
import { slowProxy } from './helpers/slow-proxy.mjs';

const stops = [];
after(async () => { for (const stop of stops) await stop(); });

test('four workers starting together with a burst beside a Redis 300-600 ms away keep the key\'s plan', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const proxy = await slowProxy(redis.port, 300, 600);
  stops.push(proxy.close);
  // A key of 30 requests a second; each worker (2 relayers) starts with 10 reads at once, then
  // 5.6 a second: the fleet asks 40 at once and 75 % of the plan after.
  const key = await startLimitedKey({ perSecond: 30, urls: 2 });
  stops.push(key.close);
  const urls = key.urls.map((url) => ({ url, quotaGroup: 'key', costs: { eth_getBalance: 1, eth_chainId: 1 } }));
  const options = { quota: { key: { cuPerSecond: 30 } }, deadlineMs: 15000, fleet: { redis: `redis://127.0.0.1:${proxy.port}` } };
  const reports = await Promise.all([1, 2, 3, 4].map((id) => fleetProcess({
    id, urls, options, relayers: 2, burst: 10, rps: 22.5 / 4, durationMs: 8000, warmMs: 0,
  })));
  const counts = key.counts();
  const detail = JSON.stringify({ counts, windows: key.windows().map((w) => `${w.served}/${w.limited}`).join(' '), tallies: reports.map((r) => r.tally) });
  // Measured: 0 429s in 4 runs of 5, 10 once (a second of the hand-over to shares by need), 11
  // once in a full-suite run (2026-12-05: one second of 30 served and 10 refused, the hand-over's;
  // 0 in 7 runs alone). Before, 36-44 in the first two seconds.
  assert.ok(counts.limited <= 12, `at most 12 429s for the whole run: ${detail}`);
  const asked = reports.reduce((n, r) => n + r.sent, 0);
  const answered = reports.reduce((n, r) => n + (r.tally.ok || 0), 0);
  assert.equal(answered, asked, `every read answered: ${detail}`);
  assert.ok(reports.every((r) => r.allowedRate[0] === 30), `the plan kept: ${detail}`);
});
