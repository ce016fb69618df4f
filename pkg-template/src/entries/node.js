// Entry of dist/node.mjs (Node's `import`): the wasm-bindgen `nodejs` glue,
// a CommonJS file that loads the wasm synchronously. The glue path is
// relative to dist/, where scripts/build.mjs puts it (it is not bundled).

import { createRequire } from 'node:module';
import { createRelayerClass } from '../relayer.js';
import { nodeHttpSender } from '../node-http.js';

export * from '../errors.js';

const wasm = createRequire(import.meta.url)('./breakwater_rpc_node.cjs');

/** Already resolved: the wasm was loaded synchronously. */
export const ready = Promise.resolve();

// Exported under its name, bound under another: a top-level binding named
// FaultTolerantRelayer would make the bundler rename the class (and its `name`).
const Relayer = createRelayerClass(wasm, nodeHttpSender);
export { Relayer as FaultTolerantRelayer };
