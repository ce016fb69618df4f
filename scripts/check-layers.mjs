// The documented layering, checked (npm test runs this; docs/architecture.md
// describes the layers). Two rules over src/ (test code excluded: files named
// tests.rs or *_tests.rs, and a trailing `#[cfg(test)] mod tests { … }`):
//
// 1. A top-level module imports only from its own layer or lower ones
//    (LAYERS below, lowest first).
// 2. No import cycle between files (a module and its own submodules may
//    use each other; that is nesting, not a cycle). Cycles that exist today
//    are listed in KNOWN_CYCLES with the issue that removes them; a new one
//    fails, and so does a listed one that is gone (so the list shrinks).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const src = join(root, 'src');

const LAYERS = [
  ['time', 'config_error', 'ranges', 'url_credentials', 'small_sort', 'wait_map'],
  ['redact'],
  ['policy'],
  ['runtime'],
  ['rpc', 'retry'],
  ['options'],
  ['config'],
  ['input'],
  ['error'],
  ['coord'],
  ['pool'],
  ['tx'],
  ['simulation'],
  ['wasm'],
];
const layerOf = new Map(LAYERS.flatMap((mods, i) => mods.map((m) => [m, i])));

// File-level cycles that exist today ("Architecture" issue, item 4).
const KNOWN_CYCLES = [
  // none left: keep it that way
];

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.endsWith('.rs') ? [path] : [];
  });
}

/** `src/pool/router.rs` → `pool::router`; `src/pool/mod.rs` → `pool`. */
function modulePath(file) {
  const parts = relative(src, file).replace(/\.rs$/, '').split('/');
  if (parts.at(-1) === 'mod' || parts.at(-1) === 'lib') parts.pop();
  return parts.join('::');
}

const isTest = (file) => /(^|\/)(tests|[a-z_]+_tests)\.rs$/.test(file) || file.includes('/tests/');
const sources = files(src).filter((f) => !isTest(f));
const modules = new Set(sources.map(modulePath));

/** The longest known module a path like `pool::router::Selection` names. */
function resolve(path) {
  const parts = path.split('::');
  for (let n = parts.length; n > 0; n -= 1) {
    const candidate = parts.slice(0, n).join('::');
    if (modules.has(candidate)) return candidate;
  }
  return null;
}

/** Every module a file imports, as absolute module paths. */
function importsOf(file, self) {
  let text = readFileSync(file, 'utf8');
  const cut = text.search(/#\[cfg\(test\)\]\s*mod tests\s*\{/);
  if (cut >= 0) text = text.slice(0, cut);
  const found = new Set();
  for (const m of text.matchAll(/\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
    let base = self.split('::');
    const isModFile = /(^|\/)(mod|lib)\.rs$/.test(file);
    if (m[1] === 'crate') base = [];
    else if (!isModFile) base = base.slice(0, -1); // `super` of a leaf file is its parent
    else base = base.slice(0, -1);
    const target = resolve([...base, ...m[2].slice(2).split('::')].filter(Boolean).join('::'));
    if (target && target !== self) found.add(target);
  }
  return found;
}

const top = (m) => m.split('::')[0];
const nested = (a, b) => a === b || a.startsWith(`${b}::`) || b.startsWith(`${a}::`);
const graph = new Map(sources.map((f) => [modulePath(f), importsOf(f, modulePath(f))]));
const problems = [];

for (const [from, targets] of graph) {
  for (const to of targets) {
    const [lf, lt] = [layerOf.get(top(from)), layerOf.get(top(to))];
    if (lf === undefined || lt === undefined) continue; // lib.rs re-exports
    if (lt > lf) problems.push(`layer: ${from} (${top(from)}) imports ${to} (${top(to)}), a higher layer`);
  }
}

// Cycles: strongly connected groups of files (Tarjan), over edges that are
// not nesting. A group is named by its members, sorted: stable whatever
// the order of traversal.
const groups = new Set();
let counter = 0;
const index = new Map();
const low = new Map();
const onStack = new Set();
const stack = [];
function connect(m) {
  index.set(m, counter);
  low.set(m, counter);
  counter += 1;
  stack.push(m);
  onStack.add(m);
  for (const to of graph.get(m) || []) {
    if (nested(m, to) || !graph.has(to)) continue;
    if (!index.has(to)) {
      connect(to);
      low.set(m, Math.min(low.get(m), low.get(to)));
    } else if (onStack.has(to)) {
      low.set(m, Math.min(low.get(m), index.get(to)));
    }
  }
  if (low.get(m) === index.get(m)) {
    const members = [];
    let x;
    do {
      x = stack.pop();
      onStack.delete(x);
      members.push(x);
    } while (x !== m);
    if (members.length > 1) groups.add(members.sort().join(' <-> '));
  }
}
for (const m of [...graph.keys()].sort()) if (!index.has(m)) connect(m);

for (const g of groups) if (!KNOWN_CYCLES.includes(g)) problems.push(`new import cycle: ${g}`);
for (const g of KNOWN_CYCLES) if (!groups.has(g)) problems.push(`listed cycle is gone (remove it from KNOWN_CYCLES): ${g}`);

if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`layers ok: ${graph.size} modules, ${groups.size} known cycle(s) left`);
