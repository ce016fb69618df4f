// The relayer's .wasm, fetched by the first module a page evaluates (web.js imports this before
// the glue and the wrapper): the download starts before the rest of the bundle runs.
export const wasmResponse = fetch(new URL('./breakwater_rpc_bg.wasm', import.meta.url));
