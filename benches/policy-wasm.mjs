// The policy layer's cost per request inside WebAssembly: the same loops as
// the native `policy_cost` example (examples/policy_cost/runner.rs), built
// for wasm32 with the release profile the package ships, timed from Node.
//   node benches/policy-wasm.mjs [n]   → one JSON line
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export async function policyCostWasm(n) {
  execFileSync('cargo', ['build', '--quiet', '--release', '--example', 'policy_cost_wasm', '--target', 'wasm32-unknown-unknown'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const bytes = readFileSync(join(root, 'target/wasm32-unknown-unknown/release/examples/policy_cost_wasm.wasm'));
  // The library's wasm-bindgen imports (fetch, timers, ...) are linked in but
  // never called by these loops: any call would throw and fail the bench.
  const stub = (module, name) => () => { throw new Error(`unexpected import ${module}.${name}`); };
  const imports = new Proxy({}, { get: (_, module) => new Proxy({}, { get: (__, name) => stub(module, name) }) });
  const { instance } = await WebAssembly.instantiate(bytes, imports);
  const { transport_only: transportOnly, pipeline } = instance.exports;
  pipeline(Math.min(n, 10000)); // warm-up: tier-up and allocator, like the native run
  let t0 = performance.now();
  transportOnly(n);
  const transportNs = ((performance.now() - t0) * 1e6) / n;
  t0 = performance.now();
  pipeline(n);
  const totalNs = ((performance.now() - t0) * 1e6) / n;
  return { requests: n, nsPerRequest: Math.round(totalNs), transportOnlyNs: Math.round(transportNs), policyNs: Math.round(totalNs - transportNs) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(await policyCostWasm(Number(process.argv[2]) || 200000)));
}
