// Head polls of a fleet on Redis whose key is leased near its plan. Two processes read 8 a second
// each through two URLs of one 20 CU/s key (1 CU a call): the store pays the fleet 16 a second, a
// member holds at most a share of a 4 CU burst, and its reads spend it. A head poll the key could
// not pay at its round's start was skipped: one eth_blockNumber in 15 s, and one endpoint's head
// never known, so `maxLagBlocks` had nothing to judge it by. A poll now waits its turn in the key's
// line, as a read does (`Router::start_head_round`). Real processes and a real redis-server on
// 127.0.0.1; the mock nodes count what they were asked.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRedis } from './helpers/redis.mjs';
import { runWorker } from './helpers/fleet-process.mjs';
import { startMockNode } from './helpers/mock-node.mjs';

const stops = [];
after(async () => { for (const stop of stops) await stop(); });

test('a fleet leased near its plan still polls every endpoint for its head', async (t) => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const nodes = await Promise.all(['0x100', '0x101'].map((head) => startMockNode([{ resultFor: { eth_blockNumber: head, eth_getBalance: '0x1' } }])));
  for (const node of nodes) stops.push(node.close);
  const urls = nodes.map((node) => ({ url: node.url, quotaGroup: 'key', costs: { '*': 1 } }));
  const options = { chainId: 1, headPollMs: 3000, quota: { key: { cuPerSecond: 20 } }, deadlineMs: 10000, batch: false, fleet: { redis: redis.url } };
  const startAt = Date.now() + 2500;
  const reports = await Promise.all([1, 2].map((id) => runWorker('fleet-worker.mjs', { id, urls, options, rps: 8, waitLease: true, durationMs: 14000, startAt }, 60000)));
  const polls = nodes.map((node) => node.count('eth_blockNumber'));
  const detail = JSON.stringify({ polls, heads: reports.map((r) => r.heads), tallies: reports.map((r) => r.tally), fleet: reports.map((r) => r.fleet) });
  t.diagnostic(detail);
  assert.ok(reports.every((r) => r.fleet[0] === 'leased'), `both processes leased from Redis: ${detail}`);
  assert.ok(reports.every((r) => r.heads[0] === 256 && r.heads[1] === 257), `every endpoint's head known in both processes: ${detail}`);
  // Rounds fall due every 3 s in each process (a round heard from the other holds its own back):
  // 4 to 8 rounds in 14 s, each asking both nodes.
  assert.ok(polls.every((n) => n >= 3), `each node polled in most rounds: ${detail}`);
  assert.ok(reports.every((r) => r.tally.ok >= 0.95 * r.sent), `the reads were still served: ${detail}`);
});
