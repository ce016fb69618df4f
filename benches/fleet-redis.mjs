// A fleet across processes: 100 clients in 4 Node processes, on 3 loopback nodes (their own
// process, benches/fleet.mjs), for ours on Redis, ours per process (no store), viem's fallback
// transport and ethers' FallbackProvider (quorum 1), in three scenarios: two URLs sharing a key
// whose limit is below the fleet's demand, every endpoint down 5 s then back, and a node
// flapping every second. Prints one table; `--write` also writes benches/FLEET-REDIS.md.
//   node benches/fleet-redis.mjs [--quick] [--write]
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFleet } from './fleet-client.mjs';
import { startRedis } from '../js-tests/helpers/redis.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const PROCESSES = 4;
const CLIENTS = quick ? 10 : 25; // per process
const KINDS_ALL = ['breakwater-rpc + Redis', 'breakwater-rpc (per process)', 'viem fallback', 'ethers FallbackProvider (quorum 1)'];
const kindArg = process.argv.find((a) => a.startsWith('--kind='));
const KINDS = kindArg ? KINDS_ALL.filter((k) => k.includes(kindArg.slice(7))) : KINDS_ALL;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const ALL_SCENARIOS = [
  {
    name: 'two URLs share a key, demand 1.33× its limit',
    rate: 2,
    seconds: quick ? 4 : 8,
    limit: 0.75,
    setup: async (f, logicalPerSecond) => {
      // The plan ours is told is this limit; elsewhere, twice the fleet's demand (a plan with room).
      await f.quota('A', logicalPerSecond * 0.75);
      await f.mode(0, { quota: 'A' });
      await f.mode(1, { quota: 'A' });
    },
  },
  {
    name: 'every endpoint down 5 s, then back',
    rate: 1,
    seconds: quick ? 8 : 12,
    recovery: true,
    during: async (f) => {
      await sleep(2000);
      for (const n of [0, 1, 2]) await f.mode(n, 'down');
      await sleep(5000);
      for (const n of [0, 1, 2]) await f.mode(n, 'healthy');
      return Date.now();
    },
  },
  {
    name: 'a node flapping every 1 s',
    rate: 1,
    seconds: quick ? 4 : 8,
    during: async (f, _, seconds) => {
      for (let t = 0; t < seconds; t += 1) {
        await f.mode(0, t % 2 === 0 ? 'down' : 'healthy');
        await sleep(1000);
      }
    },
  },
];

const only = process.argv.find((a) => a.startsWith('--only='));
const SCENARIOS = only ? ALL_SCENARIOS.filter((s) => s.name.includes(only.slice(7))) : ALL_SCENARIOS;

function worker(config) {
  const child = fork(join(here, 'fleet-redis-worker.mjs'), [JSON.stringify(config)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = new Promise((r) => child.once('message', r));
  const report = ready.then(() => new Promise((r) => child.once('message', r)));
  return { ready, report, go: () => child.send('go'), kill: () => child.kill('SIGKILL') };
}

const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : null);

async function runOne(fleet, redis, kind, scenario, round) {
  await fleet.reset();
  const logicalPerSecond = PROCESSES * CLIENTS * scenario.rate;
  if (scenario.setup) await scenario.setup(fleet, logicalPerSecond);
  const workers = Array.from({ length: PROCESSES }, (_, id) => worker({
    id, kind, urls: fleet.urls, clients: CLIENTS, rate: scenario.rate, seconds: scenario.seconds,
    redis: redis.url, prefix: `bench${round}:`, plan: Math.round(logicalPerSecond * (scenario.limit || 2)),
  }));
  await Promise.all(workers.map((w) => w.ready));
  await fleet.reset({ keepModes: true });
  if (scenario.setup) await scenario.setup(fleet, logicalPerSecond);
  const began = Date.now();
  for (const w of workers) w.go();
  const during = scenario.during ? scenario.during(fleet, logicalPerSecond, scenario.seconds) : null;
  const reports = await Promise.all(workers.map((w) => w.report));
  const recoveredAt = during ? await during : null;
  const counters = await fleet.counters();
  for (const w of workers) w.kill();
  const issued = reports.reduce((s, r) => s + r.issued, 0);
  const all = reports.flatMap((r) => r.results);
  const ok = all.filter((o) => o.ok);
  const why = {};
  for (const o of all) if (!o.ok) { const k = process.env.FLEET_WHY ? `${o.at}: ${o.error}` : o.error; why[k] = (why[k] || 0) + 1; }
  if (process.env.FLEET_WHY) console.error(kind, JSON.stringify(why), JSON.stringify(all.filter((o) => !o.ok).map((o) => o.at).sort((a, b) => a - b)));
  const lat = ok.map((o) => o.ms).sort((a, b) => a - b);
  let peak = null;
  if (scenario.recovery && typeof recoveredAt === 'number') {
    const from = Math.floor((recoveredAt - counters.start) / 100);
    const perSecond = [];
    for (let s = from; s < from + 30; s += 1) {
      perSecond.push(counters.per100ms.filter(([k]) => k >= s && k < s + 10).reduce((a, [, n]) => a + n, 0));
    }
    peak = Math.max(0, ...perSecond) / logicalPerSecond;
  }
  return {
    scenario: scenario.name, kind, issued, success: ok.length / Math.max(1, issued),
    p50: percentile(lat, 0.5), p99: percentile(lat, 0.99),
    amplification: counters.requests / Math.max(1, issued), limited: counters.limited, peak,
    seconds: (Date.now() - began) / 1000,
  };
}

const fleet = await startFleet(3);
const redis = await startRedis();
const rows = [];
try {
  let round = 0;
  for (const scenario of SCENARIOS) {
    for (const kind of KINDS) {
      round += 1;
      const row = await runOne(fleet, redis, kind, scenario, round);
      rows.push(row);
      console.error(`${scenario.name} / ${kind}: ${(row.success * 100).toFixed(1)} % success, ${row.limited} 429s, amplification ${row.amplification.toFixed(2)}`);
    }
  }
} finally {
  fleet.stop();
  await redis.stop();
}

const f = (x, d = 0) => (x === null || x === undefined ? '–' : x.toFixed(d));
let table = `| scenario | client | success | p50 ms | p99 ms | amplification | 429s | peak after recovery |\n|---|---|---|---|---|---|---|---|\n`;
for (const r of rows) {
  table += `| ${r.scenario} | ${r.kind} | ${(r.success * 100).toFixed(1)} % | ${f(r.p50)} | ${f(r.p99)} | ${f(r.amplification, 2)} | ${r.limited} | ${r.peak === null ? '–' : `${r.peak.toFixed(2)}×`} |\n`;
}
console.log(`${PROCESSES} processes × ${CLIENTS} clients, 3 loopback nodes${quick ? ' (quick)' : ''}\n\n${table}`);
if (process.argv.includes('--write')) {
  writeFileSync(join(here, 'FLEET-REDIS.md'), `# A fleet across processes\n\n\`node benches/fleet-redis.mjs --write\`, ${new Date().toISOString().slice(0, 10)}: ${PROCESSES} Node processes × ${CLIENTS} clients (100 in all) on 3 loopback nodes in their own process (benches/fleet.mjs counts every request), Redis on 127.0.0.1 for ours.\n\n${table}\n`);
}
