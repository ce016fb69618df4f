// What a page loads for a minimal app using each client before its first
// answer (esbuild, minified, tree-shaken, browser, split at dynamic imports
// as Vite does), gzip and brotli. Ours is the JS plus the .wasm it fetches.
// The bundles are kept for the browser cold start.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, brotliCompressSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const URLS = "['http://127.0.0.1:1', 'http://127.0.0.1:2']";
// Each app makes one call and exposes the result, so nothing is shaken away.
export const APPS = {
  'breakwater-rpc': `import { FaultTolerantRelayer } from 'breakwater-rpc';
    const r = new FaultTolerantRelayer(globalThis.URLS || ${URLS});
    globalThis.firstCall = () => r.request({ method: 'eth_blockNumber' });`,
  'viem http': `import { createPublicClient, http } from 'viem';
    const c = createPublicClient({ transport: http((globalThis.URLS || ${URLS})[0]) });
    globalThis.firstCall = () => c.getBlockNumber();`,
  'viem fallback + http': `import { createPublicClient, http, fallback } from 'viem';
    const c = createPublicClient({ transport: fallback((globalThis.URLS || ${URLS}).map((u) => http(u))) });
    globalThis.firstCall = () => c.getBlockNumber();`,
  'ethers JsonRpcProvider': `import { JsonRpcProvider } from 'ethers';
    const p = new JsonRpcProvider((globalThis.URLS || ${URLS})[0], 1, { staticNetwork: true });
    globalThis.firstCall = () => p.getBlockNumber();`,
  'ethers FallbackProvider': `import { FallbackProvider, JsonRpcProvider } from 'ethers';
    const p = new FallbackProvider((globalThis.URLS || ${URLS}).map((u) => new JsonRpcProvider(u, 1, { staticNetwork: true })), 1, { quorum: 1 });
    globalThis.firstCall = () => p.getBlockNumber();`,
};

/** Each app's bundle sizes; `only` (names) builds just those. Bundled as
 * an app's bundler does it for a page (esbuild with code splitting, as
 * Vite and rollup split): a dynamic `import()` becomes a chunk the page
 * loads when that code first runs. Counted: the entry and the chunks it
 * imports statically, and for ours the .wasm it fetches, i.e. what a page
 * loads before its first answer (a chunk behind a dynamic import, such as
 * our transaction module's glue, is not; `lazy` says how much that is). */
export async function sizes(outDir, only = Object.keys(APPS)) {
  mkdirSync(outDir, { recursive: true });
  const rows = [];
  for (const [name, source] of Object.entries(APPS).filter(([n]) => only.includes(n))) {
    const base = name.replace(/[^a-z0-9]+/gi, '-');
    const entry = join(outDir, `${base}.src.mjs`);
    writeFileSync(entry, source);
    const { metafile } = await build({
      entryPoints: { [base]: entry }, nodePaths: [join(root, 'node_modules')],
      bundle: true, minify: true, treeShaking: true, format: 'esm', platform: 'browser', target: 'es2022',
      splitting: true, chunkNames: `${base}-chunk-[hash]`, metafile: true,
      alias: { 'breakwater-rpc': join(root, 'pkg/dist/web.js') },
      outdir: outDir, absWorkingDir: root, logLevel: 'silent',
    });
    const file = join(outDir, `${base}.js`);
    // What the entry loads before it runs: its static imports, transitively.
    const loaded = new Set();
    const visit = (out) => {
      if (loaded.has(out)) return;
      loaded.add(out);
      for (const i of metafile.outputs[out].imports) if (i.kind === 'import-statement' && !i.external) visit(i.path);
    };
    const key = Object.keys(metafile.outputs).find((o) => join(root, o) === file);
    visit(key);
    const parts = [...loaded].map((o) => readFileSync(join(root, o)));
    const lazy = Object.keys(metafile.outputs).filter((o) => o.endsWith('.js') && !loaded.has(o))
      .reduce((n, o) => n + gzipSync(readFileSync(join(root, o)), { level: 9 }).length, 0);
    if (name === 'breakwater-rpc') {
      const wasm = readFileSync(join(root, 'pkg/dist/breakwater_rpc_bg.wasm'));
      writeFileSync(join(outDir, 'breakwater_rpc_bg.wasm'), wasm);
      parts.push(wasm);
    }
    const raw = parts.reduce((n, b) => n + b.length, 0);
    const gz = parts.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0);
    const br = parts.reduce((n, b) => n + brotliCompressSync(b).length, 0);
    // Scripts a page loads before the .wasm fetch can start (each one more round trip).
    rows.push({ name, raw, gz, br, lazy, file, scripts: loaded.size });
  }
  return rows;
}

export function sizeTable(rows) {
  const viem = rows.find((r) => r.name === 'viem fallback + http');
  let out = '| minimal app | raw bytes | gzip | brotli | gzip ÷ viem fallback+http | split off, loaded on use (gzip) |\n|---|---|---|---|---|---|\n';
  for (const r of rows) out += `| ${r.name} | ${r.raw} | ${r.gz} | ${r.br} | ${(r.gz / viem.gz).toFixed(2)} | ${r.lazy} |\n`;
  return out;
}
