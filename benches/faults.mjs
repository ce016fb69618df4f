// Behaviour under faults: the same scenarios for every multi-endpoint
// client, against a fleet of 3 loopback nodes in another process. Many
// independent client instances send an open-loop load; the fleet counts
// what it really received.
import { CLIENTS } from './clients.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const SCENARIOS = [
  { name: 'one node down', setup: (f) => f.mode(0, 'down') },
  { name: 'brownout (30 % 503)', setup: (f) => f.mode(0, { brownout: 0.3 }) },
  { name: 'one node hangs', setup: (f) => f.mode(0, 'hang') },
  {
    name: 'shared key below demand (429 + Retry-After)',
    setup: async (f, load) => {
      await f.quota('A', Math.max(5, load.clients * load.rate * 0.3));
      await f.mode(0, { quota: 'A' });
      await f.mode(1, { quota: 'A' });
    },
  },
  {
    name: 'flapping (node 0 every 1 s)',
    during: async (f, load) => {
      for (let t = 0; t < load.seconds; t += 1) {
        await f.mode(0, t % 2 === 0 ? 'down' : 'healthy');
        await sleep(1000);
      }
    },
  },
  {
    name: 'all down, then all back',
    recovery: true,
    during: async (f, load) => {
      const third = (load.seconds * 1000) / 3;
      await sleep(third);
      for (const n of [0, 1, 2]) await f.mode(n, 'down');
      await sleep(third);
      for (const n of [0, 1, 2]) await f.mode(n, 'healthy');
      return third * 2;
    },
  },
  { name: 'reverts', revert: true },
  // Wrong from the start (before any client exists), so first-seen chain ids meet it first.
  { name: 'wrong-chain node first', before: (f) => f.mode(0, 'wrongChain') },
];

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))];
}

async function runOne(spec, fleet, scenario, load) {
  await fleet.reset();
  if (scenario.before) await scenario.before(fleet);
  const clients = [];
  for (let c = 0; c < load.clients; c += 1) clients.push(await spec.make(fleet.urls));
  // Warm-up (connections, chain checks, network detection), then count from zero.
  await Promise.all(clients.map((c, k) => c.read(k).catch(() => {})));
  await fleet.reset({ keepModes: Boolean(scenario.before) });
  if (scenario.setup) await scenario.setup(fleet, load);
  const start = Date.now();
  const during = scenario.during ? scenario.during(fleet, load) : Promise.resolve();
  const outcomes = [];
  let i = 0;
  const senders = clients.map(async (client) => {
    const gap = 1000 / load.rate;
    await sleep(Math.random() * gap);
    while (Date.now() - start < load.seconds * 1000) {
      const n = i++;
      const t0 = Date.now();
      const p = (scenario.revert ? client.revert(n) : client.read(n)).then(
        () => outcomes.push({ ok: true, ms: Date.now() - t0 }),
        (e) => outcomes.push({ ok: false, ms: Date.now() - t0, e }),
      );
      outcomes.pending = (outcomes.pending || 0) + 1;
      p.finally(() => { outcomes.pending -= 1; });
      await sleep(gap);
    }
  });
  await Promise.all(senders);
  const recoveredAt = await during;
  const issued = i;
  const graceEnd = Date.now() + load.grace;
  while (outcomes.length < issued && Date.now() < graceEnd) await sleep(20);
  const counters = await fleet.counters();
  for (const c of clients) await Promise.resolve(c.close()).catch(() => {});
  const ok = outcomes.filter((o) => o.ok);
  const lat = ok.map((o) => o.ms).sort((a, b) => a - b);
  const steadyPer100ms = (load.clients * load.rate) / 10;
  let peak = null;
  if (scenario.recovery && recoveredAt) {
    const from = Math.floor(recoveredAt / 100);
    const slots = counters.per100ms.filter(([s]) => s >= from && s < from + 30).map(([, n]) => n);
    const perSecond = [];
    for (let s = from; s < from + 30; s += 1) {
      const window = counters.per100ms.filter(([k]) => k >= s && k < s + 10).reduce((a, [, n]) => a + n, 0);
      perSecond.push(window);
    }
    peak = { per100ms: Math.max(0, ...slots) / steadyPer100ms, perSecond: Math.max(0, ...perSecond) / (steadyPer100ms * 10) };
  }
  return {
    issued,
    unfinished: issued - outcomes.length,
    success: scenario.revert ? null : ok.length / Math.max(1, issued),
    p50: percentile(lat, 0.5),
    p99: percentile(lat, 0.99),
    amplification: counters.requests / Math.max(1, issued),
    perRevert: scenario.revert ? counters.reverts / Math.max(1, issued) : null,
    limited: counters.limited,
    peak,
    wrongChainServed: scenario.name.startsWith('wrong-chain') ? counters.servedWrongChain : null,
  };
}

export async function faults(fleet, load, only) {
  const results = [];
  for (const scenario of SCENARIOS) {
    for (const [name, spec] of Object.entries(CLIENTS)) {
      if (!spec.multi || (only && !only.includes(name))) continue;
      // Our chain-id variant only differs where the chain matters.
      if (name === 'breakwater-rpc (chainId: 1)' && !scenario.name.startsWith('wrong-chain')) continue;
      results.push({ scenario: scenario.name, client: name, ...(await runOne(spec, fleet, scenario, load)) });
    }
  }
  return results;
}

export function faultsTable(results) {
  let out = '| scenario | client | success | p50 ms | p99 ms | amplification | attempts/revert | 429s | peak after recovery (1 s / 100 ms) | served by wrong chain | unfinished |\n';
  out += '|---|---|---|---|---|---|---|---|---|---|---|\n';
  const f = (v, d = 0) => (v === null || v === undefined || Number.isNaN(v) ? '–' : v.toFixed(d));
  for (const r of results) {
    out += `| ${r.scenario} | ${r.client} | ${r.success === null ? '–' : `${(r.success * 100).toFixed(1)} %`} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.amplification, 2)} | ${f(r.perRevert, 2)} | ${r.limited} | ${r.peak ? `${r.peak.perSecond.toFixed(2)}× / ${r.peak.per100ms.toFixed(2)}×` : '–'} | ${r.wrongChainServed === null ? '–' : r.wrongChainServed} | ${r.unfinished} |\n`;
  }
  return out;
}
