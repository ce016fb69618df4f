// A wallet page reloaded while its transaction is pending (docs/transactions.md, "The journal"):
// in headless Chromium, a relayer with `fleet: { indexedDB: true }` journals the signed bytes in
// the origin's IndexedDB before the broadcast; after a reload the page's relayer lists nothing,
// then `resumeTransactions` gives it the nonce back at once (the tab keeps its name across the
// reload), and the transaction completes: mined once, with the bytes signed before the reload.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { startStaticServer } from './helpers/static-server.mjs';
import { launchBrowser } from './helpers/browser.mjs';
import { startChain } from './helpers/chain.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const KEY = ethers.HDNodeWallet.fromPhrase('test test test test test test test test test test test junk', undefined, "m/44'/60'/0'/0/2").privateKey;
const PAGE = `<!doctype html><meta charset="utf-8"><title>a wallet page</title>
<script type="module">
  import { FaultTolerantRelayer } from '/pkg/web.js';
  import { ethers } from '/ethers/ethers.min.js';
  const q = new URLSearchParams(location.search);
  const wallet = new ethers.Wallet(q.get('key'));
  const relayer = new FaultTolerantRelayer([q.get('url')], { chainId: 31337, fleet: { indexedDB: true }, transactions: { pollIntervalMs: 200 } });
  window.submitted = [];
  relayer.on('txSubmitted', (e) => window.submitted.push(e.hash));
  window.send = () => {
    relayer.sendTransactionWithSpeedup(wallet, { to: '0x000000000000000000000000000000000000dEaD', value: 7n, gas: 21000n }, 3)
      .then((o) => { window.sent = o.hash; }, (e) => { window.sendError = String(e); });
  };
  window.pending = () => relayer.pendingTransactions(31337, wallet.address);
  window.resume = async () => {
    const { adopted } = await relayer.resumeTransactions(wallet);
    window.outcomes = Promise.all(adopted.map((t) => t.outcome.then((o) => ({ nonce: Number(o.nonce), hash: o.hash, outcome: o.outcome }), (e) => ({ error: String(e) }))));
    return adopted.map((t) => ({ nonce: t.nonce, hashes: t.hashes }));
  };
  window.__ready = true;
</script>`;

let browser; let site; let chain;
before(async () => {
  chain = await startChain({ mining: 'manual', head: 1200 }); // nothing is mined until the test says so
  site = await startStaticServer({
    routes: { '/pkg': join(root, 'pkg/dist'), '/ethers': join(root, 'node_modules/ethers/dist') },
    pages: { '/wallet.html': PAGE },
  });
  browser = await launchBrowser();
});
after(async () => {
  if (browser) await browser.close();
  await Promise.all([site && site.close(), chain && chain.stop()]);
});

test('a page reloaded while its transaction is pending lists it again and completes it', async (t) => {
  const page = await browser.newPage();
  const logs = [];
  page.on('pageerror', (e) => logs.push(String(e)));
  const address = new ethers.Wallet(KEY).address;
  const start = Number(await chain.rpc('eth_getTransactionCount', [address, 'pending']));
  await page.goto(`${site.url}/wallet.html?${new URLSearchParams({ url: chain.anvilUrl, key: KEY })}`);
  await page.waitForFunction(() => window.__ready, null, { timeout: 20000 });
  await page.evaluate(() => window.send());
  await page.waitForFunction(() => window.submitted.length > 0 || window.sendError, null, { timeout: 20000 });
  const [hash] = await page.evaluate(() => window.submitted);
  assert.ok(hash, `${await page.evaluate(() => window.sendError)}\n${logs.join('\n')}`);
  assert.equal(Number(await chain.rpc('eth_getTransactionCount', [address, 'pending'])), start + 1, 'pending on the node');

  await page.reload();
  await page.waitForFunction(() => window.__ready, null, { timeout: 20000 });
  assert.deepEqual(await page.evaluate(() => window.pending()), [], 'a new page knows nothing yet');
  const adopted = await page.evaluate(() => window.resume());
  t.diagnostic(JSON.stringify({ hash, adopted }));
  assert.deepEqual(adopted, [{ nonce: start, hashes: [hash] }], 'its nonce back from the journal, at once');
  assert.deepEqual(await page.evaluate(() => window.pending()), [{ nonce: start, hashes: [hash] }], 'listed');
  await chain.rpc('evm_mine');
  const outcomes = await page.evaluate(() => window.outcomes);
  assert.deepEqual(outcomes, [{ nonce: start, hash, outcome: 'mined' }], logs.join('\n'));
  assert.equal(Number(await chain.rpc('eth_getTransactionCount', [address, 'latest'])), start + 1, 'mined once');
  await page.close();
});
