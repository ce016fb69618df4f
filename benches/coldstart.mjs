// Cold start: from the first line of a fresh program to the first answered
// call. Node: a new process importing each client. Chromium: a fresh page
// loading each esbuild bundle from size.mjs (ours also fetches its .wasm),
// timed from the import, and a page navigated to, timed from its start:
// there ours is also loaded with its .wasm preloaded by the page's HTML.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../js-tests/helpers/static-server.mjs';
import { launchBrowser } from '../js-tests/helpers/browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));

const NODE_APPS = {
  'breakwater-rpc': `const { FaultTolerantRelayer } = await import(${JSON.stringify(join(here, '../pkg/dist/node.mjs'))});
    const r = new FaultTolerantRelayer([URL]); await r.request({ method: 'eth_blockNumber' });`,
  'viem fallback + http': `const { createPublicClient, http, fallback } = await import('viem');
    await createPublicClient({ transport: fallback([http(URL)]) }).getBlockNumber();`,
  'ethers JsonRpcProvider': `const { JsonRpcProvider } = await import('ethers');
    const p = new JsonRpcProvider(URL, 1, { staticNetwork: true }); await p.getBlockNumber(); p.destroy();`,
};

function nodeOnce(source, url) {
  const script = `const t0 = performance.now(); const URL = ${JSON.stringify(url)}; ${source}; console.log(performance.now() - t0);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: join(here, '..') });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('close', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`exit ${code}`))));
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function coldStart(url, bundles, runs) {
  // Clients take turns, run by run (the first of each run rotating): a slow spell of the machine
  // then falls on every client alike, not on the one whose runs it happened to cover.
  const rotated = (list, i) => list.map((_, k) => list[(i + k) % list.length]);
  const rows = Object.keys(NODE_APPS).map((name) => ({ name, nodeTimes: [] }));
  for (let i = 0; i < runs; i += 1) {
    for (const row of rotated(rows, i)) row.nodeTimes.push(await nodeOnce(NODE_APPS[row.name], url));
  }
  for (const row of rows) row.node = median(row.nodeTimes);
  const pages = {};
  // A page per client that imports its bundle and asks once; ours also with `<link rel=preload>`
  // for its .wasm, which the entry's own fetch then takes (one request, begun with the HTML).
  const loadPage = (file, preload) => `<!doctype html><title>cold</title>${preload
    ? '<link rel="preload" href="/b/breakwater_rpc_bg.wasm" as="fetch" crossorigin>' : ''}
<script>globalThis.URLS = [${JSON.stringify(url)}];</script>
<script type="module">import('/b/${file}').then(() => globalThis.firstCall())
  .then(() => { globalThis.answeredAt = performance.now(); });</script>`;
  const loads = [];
  for (const b of bundles) {
    const file = b.file.split('/').pop();
    const path = `/load-${b.name.replace(/[^a-z0-9]+/gi, '-')}.html`;
    pages[path] = loadPage(file, false);
    loads.push({ name: b.name, path, times: [] });
    if (b.name === 'breakwater-rpc') {
      pages['/load-ours-preloaded.html'] = loadPage(file, true);
      loads.push({ name: PRELOADED, path: '/load-ours-preloaded.html', times: [] });
    }
  }
  const site = await startStaticServer({ routes: { '/b': dirname(bundles[0].file) }, pages });
  const browser = await launchBrowser();
  try {
    const times = new Map(bundles.map((b) => [b, []]));
    for (let i = 0; i < runs; i += 1) {
      for (const b of rotated(bundles, i)) {
        const page = await browser.newPage();
        const file = b.file.split('/').pop();
        await page.setContent('<!doctype html><title>cold</title>');
        await page.goto(`${site.url}/b/__none__`).catch(() => {});
        const ms = await page.evaluate(async ([src, u]) => {
          globalThis.URLS = [u];
          const t0 = performance.now();
          await import(src);
          await globalThis.firstCall();
          return performance.now() - t0;
        }, [`${site.url}/b/${file}`, url]);
        times.get(b).push(ms);
        await page.close();
      }
      for (const load of rotated(loads, i)) {
        const page = await browser.newPage();
        await page.goto(site.url + load.path);
        await page.waitForFunction(() => globalThis.answeredAt !== undefined, null, { timeout: 30_000 });
        load.times.push(await page.evaluate(() => globalThis.answeredAt));
        await page.close();
      }
    }
    for (const b of bundles) {
      const row = rows.find((r) => r.name === b.name) || rows[rows.push({ name: b.name }) - 1];
      row.browserTimes = times.get(b);
      row.browser = median(row.browserTimes);
    }
    for (const load of loads) {
      const row = rows.find((r) => r.name === load.name) || rows[rows.push({ name: load.name }) - 1];
      row.loadTimes = load.times;
      row.load = median(load.times);
    }
  } finally {
    await browser.close();
    await site.close();
  }
  return rows;
}

/** Ours in a page whose HTML preloads its .wasm (a page that knows where it serves it can). */
const PRELOADED = 'breakwater-rpc, .wasm preloaded by the page';

const quartiles = (xs) => (xs?.length ? `${quantile(xs, 0.25).toFixed(0)}–${quantile(xs, 0.75).toFixed(0)}` : '–');
const quantile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)];

export function coldTable(rows) {
  let out = '| client | Node: import + first call (ms) | its middle half | Chromium: import + first call (ms) | its middle half | Chromium: page load to first answer (ms) | its middle half |\n|---|---|---|---|---|---|---|\n';
  const ms = (x) => (x === undefined ? '–' : x.toFixed(0));
  for (const r of rows) {
    out += `| ${r.name} | ${ms(r.node)} | ${quartiles(r.nodeTimes)} | ${ms(r.browser)} | ${quartiles(r.browserTimes)} | ${ms(r.load)} | ${quartiles(r.loadTimes)} |\n`;
  }
  return out;
}
