// Entry of dist/web.js (browsers, bundlers, Deno): the wasm-bindgen `web`
// glue, initialised before the module finishes loading, so a relayer can
// be made as soon as the import resolves. The glue path is relative to
// dist/, where scripts/build.mjs puts it (it is not bundled).

import init, * as wasm from './breakwater_rpc.js';
import { createRelayerClass } from '../relayer.js';

export * from '../errors.js';

/** Resolves once the WebAssembly module is ready (already resolved when the import resolves). */
export const ready = init({ module_or_path: new URL('./breakwater_rpc_bg.wasm', import.meta.url) }).then(() => undefined);
await ready;

// Exported under its name, bound under another: a top-level binding named
// FaultTolerantRelayer would make the bundler rename the class (and its `name`).
const Relayer = createRelayerClass(wasm);
export { Relayer as FaultTolerantRelayer };
