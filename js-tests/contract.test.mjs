// One declared JS contract: the error kinds and event types the wasm core
// can produce (its own lists, exported by src/wasm/contract.rs) checked
// against the wrapper (pkg-template/src) and the published types
// (pkg-template/index.d.ts and types/), and the package's exports against
// those types. A name added, renamed or removed on one side only fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as errors from '../pkg-template/src/errors.js';
import { ERROR_CLASSES, toError } from '../pkg-template/src/descriptors.js';
import { ENGINE_EVENTS, KNOWN_EVENTS, LOG_LEVELS } from '../pkg-template/src/events.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const glue = require('../pkg/dist/breakwater_rpc_node.cjs');
const coreKinds = glue.errorKinds();
const coreEvents = glue.eventTypes();

// Every declaration file of the package, as one text.
const typesDir = join(root, 'pkg-template/types');
const declarations = [join(root, 'pkg-template/index.d.ts'), ...readdirSync(typesDir).map((f) => join(typesDir, f))]
  .map((file) => readFileSync(file, 'utf8'))
  .join('\n');

const eventDeclarations = readFileSync(join(typesDir, 'events.d.ts'), 'utf8');

const literals = (text) => [...text.matchAll(/'([^']+)'/g)].map((m) => m[1]);
const sorted = (values) => [...new Set(values)].sort();

/** Asserts two name sets are equal, saying which names only one side has. */
function sameNames(actual, expected, what) {
  const a = new Set(actual);
  const e = new Set(expected);
  const missing = [...e].filter((n) => !a.has(n));
  const extra = [...a].filter((n) => !e.has(n));
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, what);
}

/** `ErrorKind` in the .d.ts. */
function declaredKinds() {
  const union = /export type ErrorKind =([^;]+);/.exec(declarations);
  assert.ok(union, 'types/errors.d.ts declares ErrorKind');
  return literals(union[1]);
}

/** Each declared error class and the kind it narrows to (`readonly kind: '…'`). */
function declaredClassKinds() {
  return new Map([...declarations.matchAll(/export declare class (\w+) extends BreakwaterError\s*\{[^}]*?readonly kind: '([^']+)'/g)]
    .map((m) => [m[1], m[2]]));
}

/** The keys of RelayerEventMap: the events `on()` is typed for. */
function declaredEventMapKeys() {
  const body = /export interface RelayerEventMap \{([\s\S]*?)\n\}/.exec(declarations);
  assert.ok(body, 'types/events.d.ts declares RelayerEventMap');
  return [...body[1].matchAll(/^\s*(\w+)\??:/gm)].map((m) => m[1]);
}

/** Every `type: '…'` literal of the event interfaces (types/events.d.ts). */
function declaredEventTypes() {
  return [...eventDeclarations.matchAll(/\btype: ((?:'[^']+'\s*\|?\s*)+)/g)].flatMap((m) => literals(m[1]));
}

// Kinds the wrapper gives on its own, never the core: a descriptor without a
// kind, and a foreign error (a wasm trap) wrapped.
const wrapperKinds = [new errors.BreakwaterError({}).kind, toError(new TypeError('a wasm trap')).kind];

test('the core lists its error kinds and event types', () => {
  assert.ok(Array.isArray(coreKinds) && coreKinds.length > 0, 'errorKinds() is a non-empty array');
  assert.ok(Array.isArray(coreEvents) && coreEvents.length > 0, 'eventTypes() is a non-empty array');
  assert.equal(new Set(coreKinds).size, coreKinds.length, 'no kind listed twice');
  assert.equal(new Set(coreEvents).size, coreEvents.length, 'no event type listed twice');
  for (const kind of wrapperKinds) assert.ok(!coreKinds.includes(kind), `${kind} is the wrapper's own kind`);
});

test('every error kind of the core has an error class in errors.js, and no class waits for a kind the core lacks', () => {
  sameNames(Object.keys(ERROR_CLASSES), coreKinds, 'ERROR_CLASSES (pkg-template/src/descriptors.js) vs errorKinds()');
  const publicClasses = new Set(Object.values(errors));
  for (const kind of coreKinds) {
    const Class = ERROR_CLASSES[kind];
    assert.ok(publicClasses.has(Class), `${kind}: ${Class && Class.name} is exported by errors.js`);
    const error = toError({ kind, code: -32603, message: 'm' });
    assert.ok(error instanceof Class, `${kind} becomes a ${Class.name}`);
    assert.equal(error.kind, kind);
    const guard = errors[`is${Class.name}`];
    assert.equal(typeof guard, 'function', `is${Class.name} exists`);
    assert.ok(guard(error), `is${Class.name} recognises a ${kind} error`);
  }
});

test('the .d.ts lists exactly the kinds the core and the wrapper can produce, each class with its own', () => {
  sameNames(declaredKinds(), [...coreKinds, ...wrapperKinds], 'ErrorKind (types/errors.d.ts) vs errorKinds() + wrapper kinds');
  const classKinds = declaredClassKinds();
  for (const [kind, Class] of Object.entries(ERROR_CLASSES)) {
    if (Class === errors.BreakwaterError) continue; // a kind without a class of its own
    assert.equal(classKinds.get(Class.name), kind, `${Class.name} is declared with readonly kind: '${kind}'`);
  }
  for (const [name, kind] of classKinds) {
    assert.ok(coreKinds.includes(kind), `${name} is declared with kind '${kind}', which the core never produces`);
  }
});

test('the wrapper accepts exactly the core\'s events and its own, and the .d.ts types exactly those', () => {
  sameNames(ENGINE_EVENTS, coreEvents, 'ENGINE_EVENTS (pkg-template/src/events.js) vs eventTypes()');
  const own = [...KNOWN_EVENTS].filter((e) => !coreEvents.includes(e));
  assert.ok(own.length > 0 && own.every((e) => !coreEvents.includes(e)));
  sameNames(declaredEventMapKeys(), [...KNOWN_EVENTS], 'RelayerEventMap (types/events.d.ts) vs KNOWN_EVENTS');
  const typed = declaredEventTypes();
  for (const type of coreEvents) assert.ok(typed.includes(type), `an event interface has type: '${type}'`);
  for (const type of typed) assert.ok(KNOWN_EVENTS.has(type), `type: '${type}' in the .d.ts is no event the relayer emits`);
  for (const type of Object.keys(LOG_LEVELS)) assert.ok(KNOWN_EVENTS.has(type), `LOG_LEVELS names an unknown event ${type}`);
});

test('the core writes no kind or event type as a bare literal (so its lists are complete)', () => {
  const dir = join(root, 'src/wasm');
  const shapes = [
    /simple_error\(\s*"/, // simple_error("kind", …)
    /with_hashes\(\s*"/, // with_hashes("kind", …)
    /"(?:kind|type)"\s*,\s*(?:JsValue::from\(\s*)?"/, // .set("kind", "…"), ("kind", JsValue::from("…"))
    /"(?:kind|type)"\s*,\s*if\b[^;]*?\{\s*"/, // .set("type", if … { "…" } else …)
  ];
  const found = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.rs') && f !== 'contract.rs')) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const shape of shapes) {
      const m = shape.exec(text);
      if (m) found.push(`src/wasm/${file}:${text.slice(0, m.index).split('\n').length}: ${m[0].trim()}`);
    }
  }
  assert.deepEqual(found, [], 'use the constants of src/wasm/contract.rs (kind::…, event_type::…)');
});

test('the package exports exactly what the .d.ts declares, the same from import and require', async () => {
  const declared = [...declarations.matchAll(/export declare (?:class|function|const) (\w+)/g)].map((m) => m[1]);
  const esm = await import('../pkg/dist/node.mjs');
  const cjs = require('../pkg/dist/node.cjs');
  sameNames(Object.keys(esm), declared, 'dist/node.mjs exports vs the .d.ts');
  assert.deepEqual(sorted(Object.keys(cjs)), sorted(Object.keys(esm)), 'dist/node.cjs exports the same names');
  // require() gives a plain object, as it always did: data properties, no __esModule flag.
  assert.equal(Object.getOwnPropertyNames(cjs).length, Object.keys(cjs).length, 'no hidden property (__esModule)');
  for (const name of Object.keys(cjs)) assert.ok('value' in Object.getOwnPropertyDescriptor(cjs, name), `${name} is a data property`);
  for (const name of Object.keys(esm).filter((n) => /^[A-Z]/.test(n))) {
    assert.equal(esm[name].name, name, `class ${name} keeps its name in dist/node.mjs`);
    assert.equal(cjs[name].name, name, `class ${name} keeps its name in dist/node.cjs`);
  }
});
