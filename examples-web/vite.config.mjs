// Production build of the dashboard. `breakwater-rpc` resolves to the
// package's browser entry built by scripts/build.mjs (as a bundler would
// resolve the published package); its .wasm becomes a hashed asset.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  resolve: { alias: { 'breakwater-rpc': fileURLToPath(new URL('../pkg/dist/web.js', import.meta.url)) } },
  build: { target: 'es2022', outDir: 'dist', emptyOutDir: true, reportCompressedSize: false },
  logLevel: 'warn',
});
