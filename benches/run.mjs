// One command, us and the peers in the same run, markdown out:
//   node benches/run.mjs            full run (a few minutes); writes benches/RESULTS.md
//   node benches/run.mjs --smoke    tiny counts, checks every part still works (CI)
import { execFileSync } from 'node:child_process';
import { cpus, tmpdir } from 'node:os';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFleet } from './fleet-client.mjs';
import { overhead, overheadTable } from './overhead.mjs';
import { faults, faultsTable } from './faults.mjs';
import { sizes, sizeTable } from './size.mjs';
import { coldStart, coldTable } from './coldstart.mjs';
import { policyCostWasm } from './policy-wasm.mjs';
import { firstAnswer, firstAnswerTable } from './first-answer.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const smoke = process.argv.includes('--smoke');
const settings = smoke
  ? { overhead: { requests: 40, levels: [1, 8] }, load: { clients: 2, rate: 5, seconds: 1, grace: 1000 }, coldRuns: 1, policyN: 1000, firstRuns: 1 }
  : { overhead: { requests: 3000, levels: [1, 32, 256] }, load: { clients: 20, rate: 10, seconds: 6, grace: 12000 }, coldRuns: 21, policyN: 300000, firstRuns: 5 };

const version = (pkg) => JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version;
const log = (...a) => console.error('[bench]', ...a);

function policyTable(native, wasm) {
  const row = (name, r) => (r ? `| ${name} | **${r.policyNs}** | ${r.nsPerRequest} | ${r.transportOnlyNs} | ${r.requests} |\n` : `| ${name} | – | – | – | – |\n`);
  return 'Policy layer alone: the whole pipeline (budget, routing, breaker, quota, classification) around a transport that answers at once, minus that transport alone (`examples/policy_cost/`).\n\n' +
    '| build | policy ns/request | pipeline ns/request | transport-only ns/request | requests |\n|---|---|---|---|---|\n' +
    row('native (release)', native) + row('WebAssembly (release, opt-level z, in Node)', wasm);
}

const fleet = await startFleet(3);
let report = '';
try {
  log('overhead');
  const over = await overhead(fleet, settings.overhead);
  await fleet.reset();
  log('policy cost (native)');
  let policy = null;
  try {
    const out = execFileSync('cargo', ['run', '--quiet', '--release', '--example', 'policy_cost', String(settings.policyN)], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    policy = JSON.parse(out.trim());
  } catch (e) {
    log('policy cost skipped:', e.message);
  }
  log('policy cost (wasm)');
  let policyWasm = null;
  try {
    policyWasm = await policyCostWasm(settings.policyN);
  } catch (e) {
    log('wasm policy cost skipped:', e.message);
  }
  log('faults');
  const fault = await faults(fleet, settings.load);
  log('size');
  const size = await sizes(mkdtempSync(join(tmpdir(), 'bw-size-')));
  log('cold start');
  await fleet.reset();
  const cold = await coldStart(fleet.urls[0], size, settings.coldRuns);
  log('first answer');
  const first = await firstAnswer({ runs: settings.firstRuns, rttMs: 100 });

  const machine = `${cpus().length} cores (${cpus()[0] && cpus()[0].model}), Node ${process.version}`;
  report = `# Benchmarks: breakwater-rpc and its peers, same run

${smoke ? '**Smoke run** (tiny counts; numbers mean nothing).' : `Run ${new Date().toISOString().slice(0, 10)} on ${machine}.`}
Versions: breakwater-rpc ${version('../pkg')}, viem ${version('viem')}, ethers ${version('ethers')}, cockatiel ${version('cockatiel')}, esbuild ${version('esbuild')}.
Absolute numbers on a shared 2-core machine are noisy; compare ratios within a table.
The fleet runs in its own process and counts every request it receives.

## Healthy path: throughput and client CPU (${settings.overhead.requests} requests per level; each client in its own process, better of 2 passes)

${overheadTable(over, settings.overhead.levels)}
${policyTable(policy, policyWasm)}
## Behaviour under faults (${settings.load.clients} independent client instances × ${settings.load.rate} req/s × ${settings.load.seconds} s, 3 nodes)

${faultsTable(fault)}
## Size of a minimal app (esbuild, minified, tree-shaken; ours = JS + .wasm)

${sizeTable(size)}
## Cold start: import, or a page's load, to the first answered call (median of ${settings.coldRuns})

A page's load: a fresh page navigated to an HTML page that imports the bundle and asks once, timed from the navigation's start; ours also with its \`.wasm\` preloaded by that HTML (\`<link rel="preload" as="fetch" crossorigin>\`).

${coldTable(cold)}
## A new client's first answer from a node 100 ms away (a fresh node per run, median of ${settings.firstRuns})

${firstAnswerTable(first, 100)}`;
} finally {
  fleet.stop();
}
console.log(report);
if (!smoke) writeFileSync(join(root, 'benches/RESULTS.md'), report);
