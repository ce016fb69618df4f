// Entry of dist/node.cjs (Node's `require`): the same as node.js, built as
// CommonJS. `module.exports` is a plain object of the same names (no
// __esModule flag, no getters), as require() has always returned. The
// glue path is relative to dist/, where scripts/build.mjs puts it.

import * as errors from '../errors.js';
import { createRelayerClass } from '../relayer.js';
import { nodeHttpSender } from '../node-http.js';
import { installed } from '../installed.js';
import * as redisStore from '../redis-store.js';
import * as idbNonces from '../idb-nonces.js';
import * as signers from '../signers.js';

const wasm = require('./breakwater_rpc_node.cjs');
// The transaction module, loaded (synchronously) on the first transaction call.
const loadTx = () => ({ tx: require('./breakwater_rpc_tx_node.cjs'), signers });

// Bound under another name: a top-level FaultTolerantRelayer would make the bundler rename the class.
const Relayer = createRelayerClass(wasm, {
  sender: nodeHttpSender, loadTx, txSynchronous: true, installed: installed(require),
  loadRedisStore: () => redisStore, loadIdbNonces: () => idbNonces,
});
module.exports = { FaultTolerantRelayer: Relayer, ...errors, ready: Promise.resolve() };
