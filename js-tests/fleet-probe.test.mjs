// One half-open probe of a failing node for a fleet of processes on Redis
// (docs/coordination.md, "probing"): each process's breaker on a hung node
// opens; when one process probes the node it tells the others, whose own
// probes wait for its verdict while the pool has another node to serve.
// Alone, every process probes the hung node once per open period.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRedis } from './helpers/redis.mjs';
import { fleetProcess } from './helpers/fleet-process.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const stops = [];
after(async () => { for (const stop of stops) await stop(); });

test('processes on Redis probe a hung node once per open period between them, not once each', async (t) => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const hung = await node([{ hang: true }]); // answers its chain check, then nothing
  const good = await node([{ result: '0x1' }]);
  const run = async (fleet) => {
    const startAt = Date.now() + 3000;
    const options = {
      strategy: 'priority', // the hung node first: every read takes it while its breaker lets it
      breaker: { openMs: 1000, openMaxMs: 1000 },
      attemptTimeoutMs: 1500,
      adaptiveTimeout: false,
      deadlineMs: 4000,
      ...(fleet ? { fleet } : {}),
    };
    const reports = await Promise.all([1, 2, 3, 4].map((id) => fleetProcess({ id, urls: [hung.url, good.url], options, rps: 5, durationMs: 10000, startAt })));
    // Once every breaker has opened (3 timeouts of 1.5 s at most after the start), what the
    // hung node still gets are probes.
    const probes = hung.requests.filter((r) => !r.chainCheck && r.at >= startAt + 3000 && r.at < startAt + 10000).length;
    return { probes, reports };
  };
  const alone = await run(undefined);
  const shared = await run({ redis: redis.url, prefix: 'probe-test:' });
  const detail = JSON.stringify({ alone: alone.probes, shared: shared.probes });
  t.diagnostic(detail);
  for (const r of [...alone.reports, ...shared.reports]) assert.deepEqual(r.tally, { ok: r.sent }, `every read answered: ${detail}`);
  // Alone: 4 processes × one probe per ~1 s open period for 7 s (measured 22–26).
  assert.ok(alone.probes >= 16, `the control: each process probes on its own: ${detail}`);
  // On Redis: about one probe per open period for the fleet (measured 6–9).
  assert.ok(shared.probes <= alone.probes / 2, `the fleet probes as one: ${detail}`);
});
