// Relayers give their memory back: a closed relayer, and one dropped without
// close(), are garbage collected with their wasm engine, and the wasm memory
// they used is reused by the next relayers (linear memory never shrinks).
// Before, the engine held the wrapper's event listener, which closed over the
// wrapper: a cycle through the wasm boundary that no GC collects, so every
// relayer ever made stayed (~3 KB JS heap and ~6.5 KB wasm each).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { FaultTolerantRelayer } from '../pkg/dist/node.mjs';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const URLS = ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b'];
const N = 200;

/** Collects until `done()` or 40 rounds of GC and event-loop turns. */
async function collect(done) {
  for (let i = 0; i < 40 && !done(); i += 1) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const closeFirst of [true, false]) {
  test(`relayers ${closeFirst ? 'closed' : 'dropped without close()'} are collected and their wasm memory is reused`, async () => {
    const probe = new FaultTolerantRelayer(URLS);
    const wasmBytes = () => probe.stats().wasmMemoryBytes;
    let collected = 0;
    const registry = new FinalizationRegistry(() => { collected += 1; });
    const batch = async () => {
      let relayers = Array.from({ length: N }, () => new FaultTolerantRelayer(URLS));
      for (const r of relayers) {
        r.on('retry', () => {});
        registry.register(r, null);
      }
      if (closeFirst) await Promise.all(relayers.map((r) => r.close()));
      relayers = null;
    };
    await batch();
    await collect(() => collected >= N);
    assert.equal(collected, N, 'every relayer of the first batch was collected');
    const afterFirst = wasmBytes();
    for (let round = 2; round <= 3; round += 1) {
      await batch();
      await collect(() => collected >= N * round);
      assert.equal(collected, N * round);
    }
    assert.equal(wasmBytes(), afterFirst, 'the next batches reuse the wasm memory the first one gave back');
    await probe.close();
  });
}
