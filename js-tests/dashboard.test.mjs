// The dashboard (examples-web/) as a person would use it: a Vite
// production build of a page that imports the package, served with its
// faulty fleet in front of anvil, driven in headless Chromium. Kill a node
// and watch its breaker open, revive it and watch it close, rate-limit the
// shared key, and send a transaction through a gas spike. Screenshots go
// to test-output/dashboard/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { startDashboard } from '../examples-web/server.mjs';
import { launchBrowser } from './helpers/browser.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const shots = join(root, 'test-output/dashboard');

test('dashboard: a failure and a recovery, a rate limit and a sped-up transaction, live in the page', { timeout: 120000 }, async (t) => {
  const dist = join(root, 'js-tests/.tmp/dashboard-dist');
  await build({ configFile: join(root, 'examples-web/vite.config.mjs'), build: { outDir: dist, emptyOutDir: true } });
  mkdirSync(shots, { recursive: true });
  const dashboard = await startDashboard({ dist });
  t.after(dashboard.stop);
  const browser = await launchBrowser();
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(dashboard.url);

  const state = (name) => page.$eval(`[data-endpoint="${name}"] .state`, (el) => el.dataset.state);
  const waitState = (name, wanted, timeout) => page.waitForFunction(
    ([n, w]) => document.querySelector(`[data-endpoint="${n}"] .state`)?.dataset.state === w, [name, wanted], { timeout },
  );

  // Healthy: traffic flows, every breaker closed.
  await page.waitForFunction(() => Number(document.body.dataset.answered) >= 20, null, { timeout: 20000 });
  assert.deepEqual([await state('alpha'), await state('bravo'), await state('charlie')], ['closed', 'closed', 'closed']);
  await page.screenshot({ path: join(shots, '1-healthy.png'), fullPage: true });

  // Failure: alpha dies; its breaker opens, traffic fails over, requests keep being answered.
  await page.click('#kill-alpha');
  await waitState('alpha', 'open', 15000);
  const answeredAtFailure = Number(await page.$eval('body', (b) => b.dataset.answered));
  await page.waitForFunction((n) => Number(document.body.dataset.answered) >= n + 10, answeredAtFailure, { timeout: 15000 });
  const events = await page.$eval('#events', (el) => el.textContent);
  assert.match(events, /failover alpha → bravo/);
  assert.match(events, /breaker alpha: closed → open/);
  assert.match(await page.$eval('#status', (el) => el.textContent), /not closed/);
  await page.screenshot({ path: join(shots, '2-alpha-down.png'), fullPage: true });

  // Recovery: alpha comes back; probes prove it and the breaker closes.
  await page.click('#revive-alpha');
  await waitState('alpha', 'closed', 30000);
  await page.waitForFunction(() => document.querySelector('#status').textContent === 'all endpoints healthy', null, { timeout: 15000 });
  await page.screenshot({ path: join(shots, '3-alpha-recovered.png'), fullPage: true });

  // The shared key is rate limited: the group cools down together.
  await page.click('#kill-alpha');
  await waitState('alpha', 'open', 15000);
  await page.click('#ratelimit-bravo');
  await page.waitForFunction(() => /rateLimited bravo: group sharedKey/.test(document.querySelector('#events').textContent), null, { timeout: 15000 });
  await page.waitForFunction(() => /[1-9]\d* × 429/.test(document.querySelector('#quota-text').textContent), null, { timeout: 15000 });
  await page.screenshot({ path: join(shots, '4-shared-key-limited.png'), fullPage: true });
  await page.click('#revive-bravo');
  await page.click('#revive-alpha');

  // A transaction through a gas spike: sped up with the same nonce, mined, reported.
  await page.click('#send-tx');
  await page.waitForFunction(() => document.querySelector('#tx-status').dataset.outcome !== undefined, null, { timeout: 60000 });
  const outcome = await page.$eval('#tx-status', (el) => ({ outcome: el.dataset.outcome, text: el.textContent }));
  assert.equal(outcome.outcome, 'replaced', outcome.text);
  assert.match(await page.$eval('#tx-log', (el) => el.textContent), /speedUp · nonce 0/);
  await page.screenshot({ path: join(shots, '5-transaction-sped-up.png'), fullPage: true });
  assert.deepEqual(pageErrors, []);
});
