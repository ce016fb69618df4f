// The wasm code a page's first answer runs: `node benches/first-code.mjs [--runs N]`.
// Chromium compiles a WebAssembly function on the main thread when it is first called (V8's
// lazy compilation; a page cannot ask for eager compilation), so the functions our minimal
// app (size.mjs) calls on its way to the first answer are both its cold-start compile cost and
// the least code any module could hold and still give that answer. Each run is a fresh page
// traced for V8's `wasm.CompileLazy` events. Printed: how many functions were compiled, their
// bytes and the main-thread milliseconds, and the gzip of those bodies against the module's
// whole code (the floor of the size goal; data and JS come on top). With a profiling build
// (`node scripts/build.mjs --profiling`) it also names them by Rust module.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { sizes } from './size.mjs';
import { startStaticServer } from '../js-tests/helpers/static-server.mjs';
import { launchBrowser } from '../js-tests/helpers/browser.mjs';
import { startMockNode } from '../js-tests/helpers/mock-node.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const at = process.argv.indexOf('--runs');
const runs = at > 0 ? Number(process.argv[at + 1]) : 5;

/** The module's functions: `imported` (they come first in the index space), code bodies, names if kept. */
function readModule(bytes) {
  let p = 8;
  const leb = () => {
    let value = 0;
    let shift = 0;
    let byte;
    do {
      byte = bytes[p++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  // Imported functions come first in the index space V8's trace numbers functions by.
  const imported = WebAssembly.Module.imports(new WebAssembly.Module(bytes)).filter((i) => i.kind === 'function').length;
  const bodies = [];
  const names = new Map();
  let data = Buffer.alloc(0);
  while (p < bytes.length) {
    const id = bytes[p++];
    const size = leb();
    const end = p + size;
    if (id === 10) {
      for (let n = leb(); n > 0; n -= 1) {
        const length = leb();
        bodies.push(bytes.subarray(p, p + length));
        p += length;
      }
    } else if (id === 11) {
      data = bytes.subarray(p, end);
    } else if (id === 0) {
      const nameLength = leb();
      const sectionName = bytes.subarray(p, p + nameLength).toString();
      p += nameLength;
      while (sectionName === 'name' && p < end) {
        const sub = bytes[p++];
        const subEnd = leb() + p;
        if (sub === 1) {
          for (let n = leb(); n > 0; n -= 1) {
            const index = leb();
            const length = leb();
            names.set(index, bytes.subarray(p, p + length).toString());
            p += length;
          }
        }
        p = subEnd;
      }
    }
    p = end;
  }
  return { imported, bodies, names, data };
}

/** A Rust path's first two segments, generics and hashes dropped: `breakwater_rpc::pool`, `alloc::vec`. */
const moduleOf = (name) => name.replace(/^<+/, '').replace(/\[[0-9a-f]+\]/g, '').split(/::|</).slice(0, 2).join('::');

const gz = (parts) => gzipSync(Buffer.concat(parts), { level: 9 }).length;
const bytesOf = (parts) => parts.reduce((n, b) => n + b.length, 0);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const wasm = readModule(readFileSync(join(here, '../pkg/dist/breakwater_rpc_bg.wasm')));
const node = await startMockNode([{ result: '0x10' }]);
const out = mkdtempSync(join(tmpdir(), 'bw-first-code-'));
const [ours] = await sizes(out, ['breakwater-rpc']);
const site = await startStaticServer({ routes: { '/b': dirname(ours.file) }, pages: {} });
const browser = await launchBrowser();
const seen = [];
try {
  for (let i = 0; i < runs; i += 1) {
    const page = await browser.newPage();
    await page.goto(`${site.url}/b/__none__`).catch(() => {});
    const trace = join(out, `trace-${i}.json`);
    await browser.startTracing(page, { path: trace, categories: ['v8.wasm'] });
    await page.evaluate(async ([src, url]) => {
      globalThis.URLS = [url];
      await import(src);
      await globalThis.firstCall();
    }, [`${site.url}/b/${ours.file.split('/').pop()}`, node.url]);
    await browser.stopTracing();
    await page.close();
    const events = JSON.parse(readFileSync(trace, 'utf8')).traceEvents.filter((e) => e.name === 'wasm.CompileLazy');
    seen.push({ indices: new Set(events.map((e) => e.args.func_index - wasm.imported)), ms: events.reduce((n, e) => n + (e.dur ?? 0), 0) / 1000 });
  }
} finally {
  await browser.close();
  await site.close();
  await node.close();
  rmSync(out, { recursive: true, force: true });
}

if (seen.some((s) => s.indices.size === 0)) {
  throw new Error('a page compiled no wasm function lazily: this Chromium compiles eagerly, and the trace says nothing of the first answer');
}
// The functions every run compiled (a run may take a timing path more: a head poll, the tabs' news).
const first = new Set([...seen[0].indices].filter((i) => seen.every((s) => s.indices.has(i))));
const run = wasm.bodies.filter((_, i) => first.has(i));
const counts = seen.map((s) => s.indices.size);
console.log(`## The wasm code the first answer runs (Chromium, ${runs} fresh pages)\n`);
console.log('| | functions | bytes | gzip |\n|---|---|---|---|');
console.log(`| the relayer's module, all code | ${wasm.bodies.length} | ${bytesOf(wasm.bodies)} | ${gz(wasm.bodies)} |`);
console.log(`| compiled on the way to the first answer, in every run | ${first.size} (per run ${Math.min(...counts)}–${Math.max(...counts)}) | ${bytesOf(run)} | ${gz(run)} |`);
console.log(`| the data segments (strings, tables) | – | ${wasm.data.length} | ${gz([wasm.data])} |`);
console.log(`\nMain-thread lazy compilation: ${median(seen.map((s) => s.ms)).toFixed(1)} ms (median; ${seen.map((s) => s.ms.toFixed(1)).join(', ')}).`);
console.log(`The minimal app's JS (bundle + glue), gzip: ${ours.gz - gzipSync(readFileSync(join(here, '../pkg/dist/breakwater_rpc_bg.wasm')), { level: 9 }).length}.`);
if (wasm.names.size) {
  const groups = new Map();
  for (const i of first) {
    const key = moduleOf(wasm.names.get(i + wasm.imported) ?? '?');
    const g = groups.get(key) ?? { n: 0, bytes: 0 };
    g.n += 1;
    g.bytes += wasm.bodies[i].length;
    groups.set(key, g);
  }
  console.log('\n| Rust module | functions | bytes |\n|---|---|---|');
  for (const [key, g] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 20)) console.log(`| ${key} | ${g.n} | ${g.bytes} |`);
}
