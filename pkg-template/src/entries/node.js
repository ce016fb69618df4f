// Entry of dist/node.mjs (Node's `import`): the wasm-bindgen `nodejs` glue,
// a CommonJS file that loads the wasm synchronously, and the transaction
// module's, loaded the same way on the first transaction call. The glue
// paths are relative to dist/, where scripts/build.mjs puts them (not bundled).

import { createRequire } from 'node:module';
import { createRelayerClass } from '../relayer.js';
import { nodeHttpSender } from '../node-http.js';
import { installed } from '../installed.js';
import * as redisStore from '../redis-store.js';
import * as idbNonces from '../idb-nonces.js';
import * as signers from '../signers.js';

export * from '../errors.js';

const require = createRequire(import.meta.url);
const wasm = require('./breakwater_rpc_node.cjs');
// The transaction module, loaded (synchronously) on the first transaction call.
const loadTx = () => ({ tx: require('./breakwater_rpc_tx_node.cjs'), signers });

/** Already resolved: the wasm was loaded synchronously. */
export const ready = Promise.resolve();

// Exported under its name, bound under another: a top-level binding named
// FaultTolerantRelayer would make the bundler rename the class (and its `name`).
const Relayer = createRelayerClass(wasm, {
  sender: nodeHttpSender, loadTx, txSynchronous: true, installed: installed(require),
  loadRedisStore: () => redisStore, loadIdbNonces: () => idbNonces,
});
export { Relayer as FaultTolerantRelayer };
