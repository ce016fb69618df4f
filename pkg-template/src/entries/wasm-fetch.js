// The relayer's .wasm, fetched by the first module a page evaluates (web.js imports this before
// the glue and the wrapper): the download starts before the rest of the bundle runs.
const url = new URL('./breakwater_rpc_bg.wasm', import.meta.url);

export const wasmResponse = fetch(url).then((response) => {
  // What to do, not only what failed: a bundler that does not emit assets named by
  // `new URL('…', import.meta.url)` (esbuild) leaves the .wasm behind (a new user's page).
  if (!response.ok) {
    throw new Error(`breakwater-rpc: its WebAssembly module was not found at ${response.url} (${response.status}): `
      + 'serve node_modules/breakwater-rpc/dist/breakwater_rpc_bg.wasm and breakwater_rpc_tx_bg.wasm beside your bundle '
      + '(Vite and webpack 5 emit them; esbuild does not, copy them)');
  }
  return response;
});
