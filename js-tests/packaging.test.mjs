// The packed artifact, as a user gets it: `npm pack` pkg/, install the
// tarball into a fresh temporary project, then import it with ESM and
// require it with CommonJS in separate Node processes, each making a real
// call (with a failover) against a loopback mock node.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMockNode, deadUrl } from './helpers/mock-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let work; let good; let dead; let tarballPath;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'breakwater-pack-'));
  execFileSync('npm', ['pack', join(root, 'pkg'), '--pack-destination', work, '--silent'], { stdio: 'pipe' });
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  tarballPath = join(work, tarball);
  const app = join(work, 'app');
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', join(work, tarball)], { cwd: app, stdio: 'pipe' });
  good = await startMockNode([{ result: '0xbeef' }]);
  dead = await deadUrl();
});
after(async () => {
  if (good) await good.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

function runNode(file, source) {
  const path = join(work, 'app', file);
  writeFileSync(path, source);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path], { cwd: join(work, 'app'), env: { ...process.env, DEAD: dead, GOOD: good.url } });
    let out = ''; let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out.trim()); else reject(new Error(`${file} exited ${code}: ${err}`));
    });
  });
}

const BODY = `
  const relayer = new FaultTolerantRelayer([process.env.DEAD, process.env.GOOD], { baseDelayMs: 1, maxDelayMs: 5 });
  let failovers = 0;
  relayer.on('failover', () => { failovers += 1; });
  const block = await relayer.request({ method: 'eth_blockNumber' });
  let config = 'none';
  try { new FaultTolerantRelayer([]); } catch (e) { config = isConfigError(e) ? e.field : 'untyped'; }
  console.log(JSON.stringify({ block, failovers, config }));
`;

test('ESM import of the installed tarball makes a real call', async () => {
  const out = await runNode('esm.mjs', `import { FaultTolerantRelayer, isConfigError } from 'breakwater-rpc';\n${BODY}`);
  assert.deepEqual(JSON.parse(out), { block: '0xbeef', failovers: 1, config: 'upstreams' });
});

test('CommonJS require of the installed tarball makes a real call', async () => {
  const out = await runNode('cjs.cjs', `const { FaultTolerantRelayer, isConfigError } = require('breakwater-rpc');\n(async () => {${BODY}})().catch((e) => { console.error(e); process.exit(1); });`);
  assert.deepEqual(JSON.parse(out), { block: '0xbeef', failovers: 1, config: 'upstreams' });
});

test('reads never load the transaction module; the first transaction call does (ESM and CommonJS)', async () => {
  // Node loads wasm-bindgen glue with require: its cache says which modules were loaded.
  const probe = `
    const loaded = () => Object.keys(require.cache).some((k) => k.endsWith('breakwater_rpc_tx_node.cjs'));
    const relayer = new FaultTolerantRelayer([process.env.GOOD], { chainId: 1 });
    await relayer.request({ method: 'eth_blockNumber' });
    const afterReads = loaded();
    const pending = relayer.pendingTransactions(1, '0x0000000000000000000000000000000000000001');
    let bad = null;
    try { relayer.pendingTransactions(1, 'nope'); } catch (e) { bad = e.name; }
    console.log(JSON.stringify({ afterReads, afterTx: loaded(), pending, bad }));
    await relayer.close();
  `;
  const expected = { afterReads: false, afterTx: true, pending: [], bad: 'InvalidTransactionError' };
  const esm = await runNode('lazy.mjs', `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
import { FaultTolerantRelayer } from 'breakwater-rpc';
${probe}`);
  assert.deepEqual(JSON.parse(esm), expected);
  const cjs = await runNode('lazy.cjs', `const { FaultTolerantRelayer } = require('breakwater-rpc');
(async () => {${probe}})().catch((e) => { console.error(e); process.exit(1); });`);
  assert.deepEqual(JSON.parse(cjs), expected);
});

test('a fleet on Redis without the redis package installed is a ConfigError at construction (ESM and CommonJS)', async () => {
  // The consumer project holds breakwater-rpc alone (no node-redis).
  const probe = `
    const field = (options) => { try { new FaultTolerantRelayer([process.env.GOOD], options).close(); return 'built'; } catch (e) { return isConfigError(e) ? e.field + ': ' + e.message : 'untyped ' + e; } };
    const ask = { fleet: { redis: 'redis://127.0.0.1:6379' } };
    const client = { eval() {}, duplicate() { return this; }, on() {}, connect: async () => {}, publish: async () => {} };
    console.log(JSON.stringify({ url: field(ask), options: field({ fleet: { redis: { url: 'redis://127.0.0.1:6379' } } }), none: field({}), client: field({ fleet: { redis: client } }) }));
  `;
  for (const [file, source] of [
    ['noredis.mjs', `import { FaultTolerantRelayer, isConfigError } from 'breakwater-rpc';\n${probe}`],
    ['noredis.cjs', `const { FaultTolerantRelayer, isConfigError } = require('breakwater-rpc');\n${probe}`],
  ]) {
    const out = JSON.parse(await runNode(file, source));
    assert.match(out.url, /^fleet\.redis: .*npm install redis/, `${file}: ${out.url}`);
    assert.match(out.options, /^fleet\.redis: .*npm install redis/, `${file}: ${out.options}`);
    assert.equal(out.none, 'built', 'no fleet store: nothing to load');
    assert.equal(out.client, 'built', 'a client of your own needs no package here');
  }
});

test('the tarball holds only what users need', () => {
  const listing = execFileSync('npm', ['pack', join(root, 'pkg'), '--dry-run', '--json'], { encoding: 'utf8' });
  const files = JSON.parse(listing)[0].files.map((f) => f.path).sort();
  assert.deepEqual(files, [
    'README.md', 'dist/breakwater_rpc.js', 'dist/breakwater_rpc_bg.wasm', 'dist/breakwater_rpc_node.cjs',
    'dist/breakwater_rpc_tx.js', 'dist/breakwater_rpc_tx_bg.wasm', 'dist/breakwater_rpc_tx_node.cjs',
    'dist/idb-nonces.js', 'dist/node.cjs', 'dist/node.mjs', 'dist/redis-store.js', 'dist/tx-signers.js', 'dist/web.js', 'index.d.cts', 'index.d.mts', 'package.json',
    ...['errors', 'events', 'options', 'transactions'].flatMap((t) => [`types/${t}.d.cts`, `types/${t}.d.mts`]),
  ].sort());
});

test('publint (strict) and are-the-types-wrong pass on the packed tarball', () => {
  const bin = (name) => join(root, 'node_modules/.bin', name);
  const lint = execFileSync(bin('publint'), ['--strict', tarballPath], { encoding: 'utf8', stdio: 'pipe' });
  assert.match(lint, /All good/);
  // attw exits non-zero on any problem in any resolution mode (node10, node16 CJS/ESM, bundler).
  const types = execFileSync(bin('attw'), [tarballPath, '--format', 'table-flipped'], { encoding: 'utf8', stdio: 'pipe' });
  assert.match(types, /No problems found/);
});

test("the web entry hands the wrapper every glue function it calls (named, so a bundle needs no shared chunk before the .wasm)", async () => {
  const { readFileSync } = await import('node:fs');
  const src = join(root, 'pkg-template/src');
  const web = readFileSync(join(src, 'entries/web.js'), 'utf8');
  const handed = new Set(web.match(/const wasm = \{([^}]*)\}/)[1].split(',').map((s) => s.trim()).filter(Boolean));
  const glue = readFileSync(join(root, 'pkg/dist/breakwater_rpc.js'), 'utf8');
  const exported = new Set([...glue.matchAll(/^export (?:class|function) (\w+)/gm)].map((m) => m[1]));
  const called = new Set();
  for (const file of readdirSync(src).filter((f) => f.endsWith('.js'))) {
    const code = readFileSync(join(src, file), 'utf8').split('\n').filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l)).join('\n');
    for (const m of code.matchAll(/\bwasm\.(\w+)/g)) if (exported.has(m[1])) called.add(m[1]);
  }
  assert.ok(called.has('WasmRelayer') && called.size >= 8, `found the wrapper's calls: ${[...called]}`);
  const missing = [...called].filter((name) => !handed.has(name));
  assert.deepEqual(missing, [], 'pkg-template/src/entries/web.js must name these');
  for (const name of handed) assert.ok(exported.has(name), `${name} is no longer in the glue`);
});
