// Entry of dist/web.js (browsers, bundlers, Deno): the wasm-bindgen `web`
// glue, initialised before the module finishes loading, so a relayer can
// be made as soon as the import resolves. The glue path is relative to
// dist/, where scripts/build.mjs puts it (it is not bundled).

import { wasmResponse } from './wasm-fetch.js';
import init, {
  WasmRelayer, attachRealmStore, deliverHttp, detachRealmStore, hearRealmNews, realmLeaseFailed,
  realmLeaseGranted, realmStoreBack, realmStoreDown, setRealmNewsSink, tabBucketAsk,
} from './breakwater_rpc.js';
import { createRelayerClass } from '../relayer.js';

// What the wrapper calls of the glue, named, not as `import * as`: a namespace object makes
// esbuild put its helper in a chunk shared with the transaction module's, which the page then
// loads before the .wasm (one more round trip before the first answer). js-tests/web-entry.test.mjs
// keeps this list complete.
const wasm = {
  WasmRelayer, attachRealmStore, deliverHttp, detachRealmStore, hearRealmNews, realmLeaseFailed,
  realmLeaseGranted, realmStoreBack, realmStoreDown, setRealmNewsSink, tabBucketAsk,
};

export * from '../errors.js';

/** Resolves once the WebAssembly module is ready (already resolved when the import resolves). */
export const ready = init({ module_or_path: wasmResponse }).then(() => undefined);
await ready;

// Exported under its name, bound under another: a top-level binding named
// FaultTolerantRelayer would make the bundler rename the class (and its `name`).
// The transaction module, imported and compiled on the first transaction call: a page that
// only reads never downloads it, nor the signer adapters (tx-signers.js, built from signers.js).
// Its .wasm is fetched beside its glue, not after it: one round trip, not two (450 ms more on a
// new user's throttled link).
const loadTx = () => {
  const binary = fetch(new URL('./breakwater_rpc_tx_bg.wasm', import.meta.url));
  binary.catch(() => {}); // a failed import reports first
  const signers = import('./tx-signers.js');
  signers.catch(() => {}); // a failed import is reported where it is awaited below
  return import('./breakwater_rpc_tx.js').then(async (tx) => {
    await tx.default({ module_or_path: binary });
    return { tx, signers: await signers };
  });
};
// The Redis store's code (redis-store.js, built beside this file): imported only when a relayer
// names `fleet.redis` (its lease and nonce scripts are a quarter of this wrapper), outside a
// browser (a runtime that resolves this entry and has sockets). A page or a browser worker has
// no Redis: fleet.redis is a ConfigError there.
const inBrowser = typeof window !== 'undefined' || typeof importScripts === 'function';
const loadRedisStore = inBrowser ? undefined : () => import('./redis-store.js');
// The origin's IndexedDB nonce book (idb-nonces.js, beside this file): imported on the first
// nonce call of a relayer with fleet.indexedDB.
const loadIdbNonces = () => import('./idb-nonces.js');
const Relayer = createRelayerClass(wasm, { loadTx, loadRedisStore, loadIdbNonces });
export { Relayer as FaultTolerantRelayer };
