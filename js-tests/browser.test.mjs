// The web build in real headless Chromium: the ES module loads its wasm,
// fetches from a page (CORS), fails over from a dead node and reports a
// revert as a typed error.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMockNode, deadUrl } from './helpers/mock-node.mjs';
import { startStaticServer } from './helpers/static-server.mjs';
import { launchBrowser } from './helpers/browser.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PAGE = `<!doctype html><meta charset="utf-8"><title>breakwater browser test</title>
<script type="module">
  import { FaultTolerantRelayer, isRpcError } from '/pkg/web.js';
  const q = new URLSearchParams(location.search);
  const out = { events: [] };
  try {
    const relayer = new FaultTolerantRelayer([q.get('dead'), q.get('good')], { baseDelayMs: 1, maxDelayMs: 5 });
    relayer.on('failover', (e) => out.events.push(e.type));
    out.block = await relayer.request({ method: 'eth_blockNumber' });
    const err = await relayer.request({ method: 'eth_call', params: [{}, 'latest'] }).catch((e) => e);
    out.revert = { typed: isRpcError(err), code: err.code, name: err.name };
  } catch (e) {
    out.error = String(e && e.stack || e);
  }
  window.__done = out;
</script>`;

// The same module inside a module Web Worker (no window, no document).
const WORKER = `import { FaultTolerantRelayer } from '/pkg/web.js';
const q = new URLSearchParams(self.location.search);
try {
  const relayer = new FaultTolerantRelayer([q.get('dead'), q.get('good')], { baseDelayMs: 1, maxDelayMs: 5 });
  let failovers = 0;
  relayer.on('failover', () => { failovers += 1; });
  self.postMessage({ block: await relayer.request({ method: 'eth_blockNumber' }), failovers });
} catch (e) {
  self.postMessage({ error: String(e && e.stack || e) });
}`;
const WORKER_PAGE = `<!doctype html><meta charset="utf-8"><script type="module">
  const worker = new Worker('/worker.js' + location.search, { type: 'module' });
  worker.onmessage = ({ data }) => { window.__done = data; };
  worker.onerror = (e) => { window.__done = { error: e.message || 'worker failed to load' }; };
</script>`;

// A dapp open in several tabs: each page a relayer on the same rate-limited key.
const TAB = `<!doctype html><meta charset="utf-8"><script type="module">
  import { FaultTolerantRelayer } from '/pkg/web.js';
  const q = new URLSearchParams(location.search);
  const relayer = new FaultTolerantRelayer([q.get('url')], { deadlineMs: 2000 });
  window.read = () => relayer.request({ method: 'eth_getBalance', params: ['0x1', 'latest'] }).then((v) => v, (e) => e.name);
  window.__ready = true;
</script>`;

// A page that starts its .wasm download with the HTML, as the README says.
const PRELOADED = `<!doctype html><meta charset="utf-8">
<link rel="preload" href="/pkg/breakwater_rpc_bg.wasm" as="fetch" crossorigin>
<script type="module">
  import { FaultTolerantRelayer } from '/pkg/web.js';
  const url = new URLSearchParams(location.search).get('good');
  window.__done = await new FaultTolerantRelayer([url]).request({ method: 'eth_blockNumber' });
</script>`;

// A page's first transaction call with a signer of no known kind: the adapters come with the
// transaction module, and what they throw is the entry's own class.
const BAD_SIGNER = `<!doctype html><meta charset="utf-8"><script type="module">
  import { FaultTolerantRelayer, InvalidSignerError } from '/pkg/web.js';
  const url = new URLSearchParams(location.search).get('good');
  const relayer = new FaultTolerantRelayer([url]);
  await relayer.request({ method: 'eth_blockNumber' });
  await new Promise((go) => { window.go = go; });
  const error = await relayer.sendTransactionWithSpeedup({ not: 'a signer' }, { to: '0x000000000000000000000000000000000000dEaD' })
    .then(() => null, (e) => e);
  window.__done = { instance: error instanceof InvalidSignerError, name: error && error.name, kind: error && error.kind };
</script>`;

let browser; let site; let good;
before(async () => {
  good = await startMockNode([{ resultFor: { eth_blockNumber: '0x2a' } }]);
  // The web entry and its glue without the .wasm beside them, as an esbuild bundle leaves them.
  const bare = mkdtempSync(join(tmpdir(), 'bw-nowasm-'));
  for (const f of ['web.js', 'breakwater_rpc.js']) copyFileSync(join(root, 'pkg/dist', f), join(bare, f));
  site = await startStaticServer({ routes: { '/pkg': join(root, 'pkg/dist'), '/nowasm': bare }, pages: { '/': PAGE, '/worker.html': WORKER_PAGE, '/worker.js': WORKER, '/tab.html': TAB, '/preloaded.html': PRELOADED, '/bad-signer.html': BAD_SIGNER } });
  browser = await launchBrowser();
});
after(async () => {
  if (browser) await browser.close();
  await Promise.all([site && site.close(), good && good.close()]);
});

test('the ES module build fails over and classifies errors inside Chromium', async () => {
  good.setScript([{ resultFor: { eth_blockNumber: '0x2a' } }, { error: { code: 3, message: 'execution reverted' } }]);
  const page = await browser.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(m.text()));
  page.on('pageerror', (e) => logs.push(String(e)));
  const q = new URLSearchParams({ dead: await deadUrl(), good: good.url });
  await page.goto(`${site.url}/?${q}`);
  const out = await (await page.waitForFunction(() => window.__done, null, { timeout: 20000 })).jsonValue();
  assert.equal(out.error, undefined, `${out.error}\n${logs.join('\n')}`);
  assert.equal(out.block, '0x2a');
  assert.deepEqual(out.events, ['failover', 'failover'], 'one failure does not trip the breaker: both requests fail over');
  assert.deepEqual(out.revert, { typed: true, code: 3, name: 'RpcError' });
  assert.equal(good.count(), 2, 'one success, one revert: no retries of the revert');
  // A page that only reads downloads the relayer's module, never the transaction engine's, even
  // when it asks what is pending (nothing, before a transaction call).
  assert.deepEqual(await page.evaluate(async () => {
    const { FaultTolerantRelayer } = await import('/pkg/web.js');
    const relayer = new FaultTolerantRelayer(['http://127.0.0.1:9']);
    const pending = relayer.pendingTransactions(1, '0x0000000000000000000000000000000000000001');
    // A bad address is refused in the engine's words before the engine is loaded too: a
    // mixed-case address with a wrong EIP-55 checksum, a number; a padded one is taken.
    const refusal = (address) => { try { relayer.pendingTransactions(1, address); return null; } catch (e) { return `${e.name} ${e.field}: ${e.message}`; } };
    const refusals = [refusal('0xAbCdEf0000000000000000000000000000000001'), refusal(42), refusal(' 0x52908400098527886E0F7030069857D2E4169EE7 ')];
    await new Promise((r) => setTimeout(r, 200));
    await relayer.close();
    // A page has no Redis: said as a typed error naming the field, not as a store down later.
    let redis = null;
    try { new FaultTolerantRelayer(['http://127.0.0.1:9'], { fleet: { redis: 'redis://127.0.0.1:6379' } }); } catch (e) { redis = `${e.name} ${e.field}`; }
    return { pending, refusals, redis };
  }), {
    pending: [],
    redis: 'ConfigError fleet.redis',
    refusals: [
      'InvalidTransactionError address: transaction field `address` has mixed case but an invalid EIP-55 checksum (a typo?)',
      'InvalidTransactionError address: transaction field `address` must be a 0x-prefixed 20-byte hex string',
      null,
    ],
  });
  const fetched = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname));
  assert.ok(fetched.includes('/pkg/breakwater_rpc_bg.wasm'), fetched.join(', '));
  assert.ok(!fetched.some((f) => f.includes('breakwater_rpc_tx')), `the transaction module stays unloaded: ${fetched.join(', ')}`);
  await page.close();
});

test('a page whose .wasm is missing fails its import with what to do (a bundler that left it behind)', async () => {
  const page = await browser.newPage();
  await page.goto(site.url);
  const message = await page.evaluate(async () => {
    try {
      await import('/nowasm/web.js');
      return 'loaded';
    } catch (e) {
      return String(e && e.message);
    }
  });
  assert.match(message, /WebAssembly module was not found at http:\/\/.*\/nowasm\/breakwater_rpc_bg\.wasm \(404\)/);
  assert.match(message, /esbuild does not, copy them/);
  await page.close();
});

test('a page that preloads the .wasm as the README says downloads it once: the entry takes the preloaded answer', async () => {
  good.setScript([{ resultFor: { eth_blockNumber: '0x2c' } }]);
  const page = await browser.newPage();
  const wasmRequests = [];
  page.on('request', (r) => { if (r.url().endsWith('.wasm')) wasmRequests.push(r.url()); });
  await page.goto(`${site.url}/preloaded.html?${new URLSearchParams({ good: good.url })}`);
  assert.equal(await (await page.waitForFunction(() => window.__done, null, { timeout: 20000 })).jsonValue(), '0x2c');
  assert.deepEqual(wasmRequests.map((u) => new URL(u).pathname), ['/pkg/breakwater_rpc_bg.wasm']);
  await page.close();
});

test('a page loads the signer adapters only on its first transaction call, and their errors are the package\'s classes', async () => {
  good.setScript([{ resultFor: { eth_blockNumber: '0x2d', eth_chainId: '0x1' } }]);
  const page = await browser.newPage();
  const loaded = [];
  page.on('request', (r) => loaded.push(new URL(r.url()).pathname));
  await page.goto(`${site.url}/bad-signer.html?${new URLSearchParams({ good: good.url })}`);
  await page.waitForFunction(() => window.go, null, { timeout: 20000 });
  assert.ok(!loaded.includes('/pkg/tx-signers.js'), 'a page that has only read has not loaded the adapters');
  await page.evaluate(() => window.go());
  const out = await (await page.waitForFunction(() => window.__done, null, { timeout: 20000 })).jsonValue();
  assert.deepEqual(out, { instance: true, name: 'InvalidSignerError', kind: 'invalidSigner' });
  assert.ok(loaded.includes('/pkg/tx-signers.js'), `the adapters were loaded (${loaded.join(', ')})`);
  await page.close();
});

test('the ES module build works inside a module Web Worker', async () => {
  good.setScript([{ resultFor: { eth_blockNumber: '0x2b' } }]);
  const page = await browser.newPage();
  const q = new URLSearchParams({ dead: await deadUrl(), good: good.url });
  await page.goto(`${site.url}/worker.html?${q}`);
  const out = await (await page.waitForFunction(() => window.__done, null, { timeout: 20000 })).jsonValue();
  assert.deepEqual(out, { block: '0x2b', failovers: 1 });
  await page.close();
});

test('three tabs on one rate-limited key get no more 429s than one tab alone', async () => {
  const limited = await startMockNode([{ status: 429, headers: { 'retry-after': '30', 'access-control-expose-headers': 'retry-after' } }]);
  const context = await browser.newContext(); // one profile: the tabs share an origin's BroadcastChannel
  try {
    const tabs = [];
    for (let i = 0; i < 3; i += 1) {
      const tab = await context.newPage();
      await tab.goto(`${site.url}/tab.html?${new URLSearchParams({ url: limited.url })}`);
      await tab.waitForFunction(() => window.__ready, null, { timeout: 20000 });
      tabs.push(tab);
    }
    assert.equal(await tabs[0].evaluate(() => window.read()), 'RateLimitedError');
    assert.equal(limited.count(), 1, 'the first tab is refused once');
    await new Promise((r) => setTimeout(r, 300));
    const others = await Promise.all(tabs.slice(1).map((t) => t.evaluate(() => window.read())));
    assert.deepEqual(others, ['RateLimitedError', 'RateLimitedError'], 'the key is cooling in every tab');
    assert.equal(limited.count(), 1, 'three tabs, one 429: what one tab alone gets');
    assert.equal(limited.chainChecks(), 1, 'one chain check for the three');
  } finally {
    await context.close();
    await limited.close();
  }
});
