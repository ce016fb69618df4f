// Jitter must come from the platform CSPRNG: two independent processes
// (two wasm instances) facing the same failures must not retry in lockstep.
// With Rust's RandomState on wasm32 they would produce identical delays.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMockNode } from './helpers/mock-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let failing;
after(() => failing && failing.close());

const SCRIPT = `
  const { FaultTolerantRelayer } = await import(${JSON.stringify(join(root, 'pkg/dist/node.mjs'))});
  const relayer = new FaultTolerantRelayer([process.env.URL], {
    maxRetries: 3, baseDelayMs: 5, maxDelayMs: 40, breaker: { consecutiveFailures: 1000, minSamples: 1000 },
    budget: { burst: 20 },
  });
  const delays = [];
  relayer.on('retry', (e) => delays.push(e.delayMs));
  for (let i = 0; i < 3; i += 1) await relayer.request({ method: 'eth_blockNumber' }).catch(() => {});
  console.log(JSON.stringify(delays));
`;

function delaysFromProcess(url) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], { env: { ...process.env, URL: url } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}`))));
  });
}

test('two wasm instances draw different jitter for the same failure sequence', async () => {
  failing = await startMockNode([{ status: 503 }]);
  const [a, b] = await Promise.all([delaysFromProcess(failing.url), delaysFromProcess(failing.url)]);
  assert.equal(a.length, b.length);
  assert.ok(a.length >= 6, `retries seen: ${a.length}`);
  assert.notDeepEqual(a, b);
  // And within one instance the draws vary too (full jitter, not a fixed schedule).
  assert.ok(new Set(a.map((d) => d.toFixed(3))).size > a.length / 2, JSON.stringify(a));
});
