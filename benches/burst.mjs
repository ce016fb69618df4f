// Never amplify an overload: N relayers in one process each make their
// first eth_blockNumber at once (two endpoint URLs on one node in another
// process that answers after 20 ms), beside raw fetch doing what a fresh
// client must (eth_chainId, then the read) for as many clients, in one run;
// then one relayer reading while the application blocks the event loop in
// 50 ms slices (CPU-bound work between awaits), where every attempt looks
// slow and a naive hedger hedges them all.
//   node benches/burst.mjs           500, 3,000 and 5,000 relayers; writes benches/BURST.md
//   node benches/burst.mjs --smoke   50 relayers (npm test: every part still works)
import { writeFileSync } from 'node:fs';
import { FaultTolerantRelayer } from '../pkg/dist/node.mjs';
import { startSlowNode } from './slow-node.mjs';

const smoke = process.argv.includes('--smoke');
const sizes = smoke ? [50] : [500, 3000, 5000];

const node = await startSlowNode();
const { url, calls, reset } = node;
const post = (path, method, id) => fetch(`${url}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: [] }),
}).then((r) => r.json());

async function rawBurst(n) {
  await reset();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: n }, async (_, i) => {
    await post('/a', 'eth_chainId', i);
    await post('/a', 'eth_blockNumber', i);
  }));
  return { ms: performance.now() - t0, calls: await calls(), failed: 0 };
}

async function ourBurst(n) {
  await reset();
  const relayers = Array.from({ length: n }, () => new FaultTolerantRelayer([`${url}/a`, `${url}/b`]));
  let hedges = 0;
  for (const r of relayers) r.on('hedge', () => { hedges += 1; });
  const t0 = performance.now();
  const out = await Promise.allSettled(relayers.map((r) => r.request({ method: 'eth_blockNumber' })));
  const ms = performance.now() - t0;
  const failed = out.filter((o) => o.status === 'rejected').length;
  await Promise.all(relayers.map((r) => r.close()));
  return { ms, calls: await calls(), failed, hedges };
}

/** One relayer with the defaults (hedging on), `n` reads at once. */
async function manyInFlight(n) {
  await reset();
  const relayer = new FaultTolerantRelayer([`${url}/a`, `${url}/b`]);
  let hedges = 0;
  relayer.on('hedge', () => { hedges += 1; });
  const t0 = performance.now();
  const out = await Promise.allSettled(Array.from({ length: n }, (_, i) => relayer.request({ method: 'eth_getBalance', params: [`0x${(i + 1).toString(16).padStart(40, '0')}`, 'latest'] })));
  const ms = performance.now() - t0;
  await relayer.close();
  return { ms, calls: await calls(), failed: out.filter((o) => o.status === 'rejected').length, hedges, logical: n };
}

/** One relayer, `total` reads 100 at a time, the event loop blocked 50 ms every 100 ms meanwhile. */
async function cpuBound(total) {
  await reset();
  const relayer = new FaultTolerantRelayer([`${url}/a`, `${url}/b`], { cache: false, dedup: false });
  let hedges = 0;
  relayer.on('hedge', () => { hedges += 1; });
  let stop = false;
  const blocker = (async () => {
    while (!stop) {
      const until = performance.now() + 50;
      while (performance.now() < until) { /* the application's CPU-bound work */ }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  let next = 0; let failed = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 100 }, async () => {
    while (next < total) {
      next += 1;
      await relayer.request({ method: 'eth_getBalance', params: [`0x${next.toString(16).padStart(40, '0')}`, 'latest'] }).catch(() => { failed += 1; });
    }
  }));
  const ms = performance.now() - t0;
  stop = true;
  await blocker;
  await relayer.close();
  return { ms, calls: await calls(), failed, hedges, logical: total };
}

await rawBurst(20); await ourBurst(20); // warm-up: connections, JIT, wasm tier-up
const rows = [];
for (const n of sizes) {
  const raw = await rawBurst(n);
  const ours = await ourBurst(n);
  rows.push({ n, raw, ours });
}
const many = await manyInFlight(smoke ? 500 : 10000);
const cpu = await cpuBound(smoke ? 300 : 3000);
node.stop();

const f0 = (v) => v.toFixed(0);
let table = '| relayers | raw fetch: time / upstream calls | breakwater-rpc: time / upstream calls (hedges) | calls ÷ raw | time ÷ raw | failed |\n|---|---|---|---|---|---|\n';
for (const { n, raw, ours } of rows) {
  table += `| ${n.toLocaleString('en-US')} | ${(raw.ms / 1000).toFixed(2)} s / ${raw.calls.toLocaleString('en-US')} | ${(ours.ms / 1000).toFixed(2)} s / ${ours.calls.toLocaleString('en-US')} (${ours.hedges}) | ${(ours.calls / raw.calls).toFixed(2)} | ${(ours.ms / raw.ms).toFixed(2)} | ${ours.failed} |\n`;
}
const cpuRow = `| one relayer, ${cpu.logical.toLocaleString('en-US')} reads 100 at a time, event loop blocked 50 ms in every 100 ms | ${(cpu.ms / 1000).toFixed(2)} s | ${cpu.calls.toLocaleString('en-US')} upstream calls (${(cpu.calls / cpu.logical).toFixed(3)} × logical, 2 of them chain checks) | ${cpu.hedges} hedges | ${cpu.failed} failed |`;
const manyRow = `| one relayer, ${many.logical.toLocaleString('en-US')} reads at once (defaults: hedging on) | ${(many.ms / 1000).toFixed(2)} s | ${many.calls.toLocaleString('en-US')} upstream calls (${(many.calls / many.logical).toFixed(3)} × logical, 2 of them chain checks) | ${many.hedges} hedges | ${many.failed} failed |`;
console.log(table);
console.log(manyRow);
console.log(cpuRow);
if (!smoke) {
  writeFileSync(new URL('./BURST.md', import.meta.url), `# Bursts and a busy process: no hedge storm

\`node benches/burst.mjs\`, run of ${new Date().toISOString().slice(0, 10)} on this repository's 2-core machine
(Node ${process.version}). The node answers every call after 20 ms, in its own
process; every relayer has two endpoint URLs on it (so a hedge has
somewhere to go) and the default options. Raw fetch does what a fresh
client must: \`eth_chainId\`, then the read.

${table}
Issue target: upstream calls ≤ 1.05 × raw fetch's and time ≤ 1.1 × at every
size. Relayers of one process share each endpoint's chain check (one
\`eth_chainId\` per endpoint for the process, requests waiting on its
answer), a realm-wide hedge budget, and do not hedge when the hedge timer
itself fires late (the process, not the node, is slow); before, 3,000
relayers sent 10,227 calls (1.70 × raw fetch) and 5,000 took 14.4 s
(1.66 × raw fetch's time).

| one busy relayer | time | upstream | hedges | failed |
|---|---|---|---|---|
${manyRow}
${cpuRow}

Issue targets: upstream ≤ 1.05 × logical with 10,000 in flight; no hedge
storm while the application keeps the event loop busy.
`);
}
