// What a bundler ships for a minimal app using each client (esbuild,
// minified, tree-shaken, browser), gzip and brotli. Ours is the JS plus
// the .wasm it fetches. The bundles are kept for the browser cold start.
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

/** Each app's bundle sizes; `only` (names) builds just those. */
export async function sizes(outDir, only = Object.keys(APPS)) {
  mkdirSync(outDir, { recursive: true });
  const rows = [];
  for (const [name, source] of Object.entries(APPS).filter(([n]) => only.includes(n))) {
    const file = join(outDir, `${name.replace(/[^a-z0-9]+/gi, '-')}.js`);
    await build({
      stdin: { contents: source, resolveDir: root, loader: 'js' },
      bundle: true, minify: true, treeShaking: true, format: 'esm', platform: 'browser', target: 'es2022',
      alias: { 'breakwater-rpc': join(root, 'pkg/dist/web.js') },
      outfile: file, logLevel: 'silent',
    });
    const parts = [readFileSync(file)];
    if (name === 'breakwater-rpc') {
      const wasm = readFileSync(join(root, 'pkg/dist/breakwater_rpc_bg.wasm'));
      writeFileSync(join(outDir, 'breakwater_rpc_bg.wasm'), wasm);
      parts.push(wasm);
    }
    const raw = parts.reduce((n, b) => n + b.length, 0);
    const gz = parts.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0);
    const br = parts.reduce((n, b) => n + brotliCompressSync(b).length, 0);
    rows.push({ name, raw, gz, br, file });
  }
  return rows;
}

export function sizeTable(rows) {
  const viem = rows.find((r) => r.name === 'viem fallback + http');
  let out = '| minimal app | raw bytes | gzip | brotli | gzip ÷ viem fallback+http |\n|---|---|---|---|---|\n';
  for (const r of rows) out += `| ${r.name} | ${r.raw} | ${r.gz} | ${r.br} | ${(r.gz / viem.gz).toFixed(2)} |\n`;
  return out;
}
