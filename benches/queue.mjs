// Cost per request with thousands in flight: eth_getBalance reads with N in
// flight at once at one relayer (two endpoints on one node in another
// process that answers after 20 ms), beside raw fetch doing the same reads,
// in one run. Each level sends max(N, 5,000) reads (N at a time, a new one
// as each ends) after a warm-up, so CPU per request compares across levels.
//   node benches/queue.mjs                 10, 1,000, 10,000 and 100,000 in flight; writes benches/QUEUE.md
//   node benches/queue.mjs --smoke         10 and 200 (CI: every part still works; numbers mean nothing)
//   node benches/queue.mjs --levels 3000   chosen levels, printed only
// Reported: wall time, CPU µs per request (this process: the relayer's
// work plus fetch's), upstream calls and failures; ours with the defaults
// and with `maxQueue` raised so nothing is refused.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FaultTolerantRelayer } from '../pkg/dist/node.mjs';
import { startSlowNode } from './slow-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const smoke = process.argv.includes('--smoke');
const levelArg = process.argv.indexOf('--levels');
const skipRaw = process.argv.includes('--no-raw');
const levels = levelArg > 0 ? process.argv[levelArg + 1].split(',').map(Number) : smoke ? [10, 200] : [10, 1000, 10000, 100000];

const address = (i) => `0x${i.toString(16).padStart(40, '0')}`;
const body = (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [address(i), 'latest'] });

/** Runs `one(i)` for `total` values of i, `n` at a time; wall ms, CPU µs per request, failures. */
async function measure(n, total, one) {
  const warm = [];
  for (let i = 0; i < Math.min(n, 200); i += 1) warm.push(one(total + i)); // warm-up
  await Promise.allSettled(warm);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  let failed = 0;
  const reasons = {};
  const worker = async () => {
    while (next < total) {
      const i = next;
      next += 1;
      try {
        await one(i);
      } catch (e) {
        failed += 1;
        const name = (e && (e.name || e.code)) || String(e);
        reasons[name] = (reasons[name] || 0) + 1;
      }
    }
  };
  // A loop, not Array.from: Node 20's V8 aborts (fatal "unreachable code" in
  // its deoptimizer) when an Array.from callback makes ~16,000+ calls that
  // enter wasm (see docs/profiling.md).
  const workers = [];
  for (let w = 0; w < n; w += 1) workers.push(worker());
  await Promise.all(workers);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuUsPerRequest: (cpu.user + cpu.system) / total, failed, reasons };
}

const node = await startSlowNode();
const rows = [];
try {
  for (const n of levels) {
    const total = Math.max(n, smoke ? n : 5000);
    const raw = skipRaw ? { ms: NaN, cpuUsPerRequest: NaN, failed: 0, reasons: {} } : await measure(n, total, async (i) => {
      const r = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(i) });
      const json = await r.json();
      if (json.result === undefined) throw new Error('no result');
    });
    const rawCalls = await node.calls();
    await node.reset();
    const variants = [['ours, defaults', {}], ['ours, maxQueue raised', { maxQueue: n + 10 }]];
    const ours = [];
    for (const [name, extra] of variants) {
      const relayer = new FaultTolerantRelayer([node.url, `${node.url}/b`], { hedge: false, ...extra });
      const memory0 = relayer.stats().wasmMemoryBytes;
      const result = await measure(n, total, (i) => relayer.request({ method: 'eth_getBalance', params: [address(i), 'latest'] }));
      const wasmGrowthMb = (relayer.stats().wasmMemoryBytes - memory0) / 2 ** 20;
      await relayer.close();
      ours.push({ name, ...result, calls: await node.calls(), wasmGrowthMb });
      await node.reset();
    }
    rows.push({ n, total, raw: { ...raw, calls: rawCalls }, ours });
    console.error(`[queue] ${n}: raw ${raw.ms.toFixed(0)} ms; ${ours.map((o) => `${o.name} ${o.ms.toFixed(0)} ms, ${o.cpuUsPerRequest.toFixed(1)} µs/req, ${o.failed} failed`).join('; ')}`);
  }
} finally {
  node.stop();
}

const fmt = (r) => `${(r.ms / 1000).toFixed(2)} s | ${r.cpuUsPerRequest.toFixed(1)} | ${r.calls} | ${r.failed}${r.failed ? ` (${Object.entries(r.reasons).map(([k, v]) => `${v} ${k}`).join(', ')})` : ''} | ${r.wasmGrowthMb === undefined ? '–' : r.wasmGrowthMb.toFixed(1)}`;
let table = '| in flight | reads | client | time | CPU µs/request | upstream calls (warm-up included) | failed | wasm memory growth, MB |\n|---|---|---|---|---|---|---|---|\n';
for (const row of rows) {
  table += `| ${row.n.toLocaleString('en')} | ${row.total.toLocaleString('en')} | raw fetch | ${fmt(row.raw)} |\n`;
  for (const o of row.ours) table += `| | | ${o.name} | ${fmt(o)} |\n`;
}
console.log(table);
if (!smoke && levelArg < 0) {
  writeFileSync(join(root, 'benches/QUEUE.md'), `# Thousands in flight\n\n\`node benches/queue.mjs\` (${new Date().toISOString().slice(0, 10)}, ${process.version}). ` +
    'N reads at once at one relayer with two endpoints on a node in another process that answers after 20 ms; `hedge: false`.\n\n' + table);
}
