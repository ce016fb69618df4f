// The package under Node 18 (Debian's build, unpacked beside the system
// Node by scripts/node18.sh): ESM and CommonJS entries, failover, typed
// errors and a transaction against anvil.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useMockNodes, deadUrl } from './helpers/mock-node.mjs';
import { startChain } from './helpers/chain.mjs';
import { ethers } from 'ethers';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const node = useMockNodes(after);

function node18(args) {
  const bin = join(root, '.cache/node18/usr/bin/node');
  const env = { ...process.env, LD_LIBRARY_PATH: join(root, '.cache/node18/usr/lib/x86_64-linux-gnu') };
  return new Promise((resolve, reject) => {
    execFile(bin, args, { env, cwd: root, timeout: 60000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`node 18 failed (run scripts/node18.sh): ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

test('Node 18: ESM entry (failover, typed revert, a transaction on anvil) and CommonJS entry', async (t) => {
  const anvil = await startChain(); // far past block 0, a block every second
  t.after(anvil.stop);
  const dead = await deadUrl();
  const good = await node([{ result: '0x2a' }]);
  const revert = await node([{ error: { code: 3, message: 'execution reverted', data: '0x' } }]);
  const key = ethers.HDNodeWallet.fromPhrase('test test test test test test test test test test test junk', undefined, "m/44'/60'/0'/0/5").privateKey;
  const esm = await node18([join('js-tests/node18/smoke.mjs'), dead, good.url, revert.url, anvil.anvilUrl, key]);
  assert.match(esm.version, /^v18\./);
  assert.deepEqual({ block: esm.block, revertTyped: esm.revertTyped, tx: esm.tx }, { block: '0x2a', revertTyped: true, tx: '0x1' });
  const cjs = await node18([join('js-tests/node18/smoke.cjs'), dead, good.url]);
  assert.match(cjs.version, /^v18\./);
  assert.deepEqual({ block: cjs.block, deadTyped: cjs.deadTyped }, { block: '0x2a', deadTyped: true });
});
