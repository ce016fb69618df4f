// Workers in four processes sending from one account, their nonces from the fleet's book on Redis
// (docs/transactions.md, "Across processes"): on anvil far past block 0 with a block every
// second, 4 × 50 sends at once get exactly the 200 nonces expected, each mined once, none skipped.
// Alone, the same workers collide on nonces.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import { FaultTolerantRelayer, isCoordinationError } from '../pkg/dist/node.mjs';
import { startRedis, freePort } from './helpers/redis.mjs';
import { startChain } from './helpers/chain.mjs';
import { txProcess as worker } from './helpers/fleet-process.mjs';

const MNEMONIC = 'test test test test test test test test test test test junk';
const KEY = ethers.HDNodeWallet.fromPhrase(MNEMONIC, undefined, "m/44'/60'/0'/0/9").privateKey;
const CONTROL_KEY = ethers.HDNodeWallet.fromPhrase(MNEMONIC, undefined, "m/44'/60'/0'/0/8").privateKey;
const stops = [];
after(async () => { for (const stop of stops.reverse()) await stop(); });

test('four workers × 50 sends from one account on Redis: exactly the 200 nonces expected, each mined once', async (t) => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const chain = await startChain({ head: 1200 });
  stops.push(chain.stop);
  const address = new ethers.Wallet(KEY).address;
  const start = Number(await chain.rpc('eth_getTransactionCount', [address, 'pending']));
  const startAt = Date.now() + 3000;
  const reports = await Promise.all([1, 2, 3, 4].map((id) => worker({ id, url: chain.url, chainId: 31337, redis: redis.url, key: KEY, sends: 50, startAt })));
  const failures = reports.flat().filter((r) => r.error);
  t.diagnostic(JSON.stringify({ start, failures: failures.slice(0, 5) }));
  assert.deepEqual(failures, [], 'every send mined');
  for (const mine of reports) {
    const nonces = mine.map((r) => r.nonce);
    assert.deepEqual(nonces, [...nonces].sort((a, b) => a - b), 'in call order per worker');
  }
  const nonces = reports.flat().map((r) => r.nonce).sort((a, b) => a - b);
  assert.deepEqual(nonces, Array.from({ length: 200 }, (_, i) => start + i), 'exactly the 200 expected, none twice, none skipped');
  assert.equal(Number(await chain.rpc('eth_getTransactionCount', [address, 'latest'])), start + 200, 'the chain used each once');
  const hashes = new Set(reports.flat().map((r) => r.hash));
  assert.equal(hashes.size, 200);
  for (const hash of [...hashes].slice(0, 20)) {
    const receipt = await chain.rpc('eth_getTransactionReceipt', [hash]);
    assert.ok(receipt && receipt.status === '0x1', `${hash} mined`);
  }
  // The control: the same workers without the store, each with its own book, on another account.
  const alone = await Promise.all([1, 2, 3, 4].map((id) => worker({ id, url: chain.url, chainId: 31337, key: CONTROL_KEY, sends: 50, startAt: Date.now() + 3000 })));
  const lost = alone.flat().filter((r) => r.error).length;
  t.diagnostic(JSON.stringify({ aloneFailed: lost, aloneErrors: [...new Set(alone.flat().filter((r) => r.error).map((r) => r.error.slice(0, 60)))].slice(0, 3) }));
  assert.ok(lost >= 50, `alone, the workers collide on nonces: ${lost} of 200 sends failed`);

  // Redis unreachable: a send fails with a typed error, no nonce guessed, nothing broadcast.
  const key = ethers.HDNodeWallet.fromPhrase(MNEMONIC, undefined, "m/44'/60'/0'/0/7").privateKey;
  const wallet = new ethers.Wallet(key);
  const before = await chain.rpc('eth_getTransactionCount', [wallet.address, 'pending']);
  const cut = new FaultTolerantRelayer([chain.url], { chainId: 31337, fleet: { redis: `redis://127.0.0.1:${await freePort()}` } });
  try {
    const error = await cut.sendTransactionWithSpeedup(wallet, { to: '0x000000000000000000000000000000000000dEaD', value: 1n, gas: 21000n })
      .then(() => null, (e) => e);
    assert.ok(isCoordinationError(error), String(error));
    assert.match(error.message, /store \(shared nonce book and journal\) could not answer.*nothing was broadcast/);
    assert.equal(await chain.rpc('eth_getTransactionCount', [wallet.address, 'pending']), before, 'nothing reached the chain');
  } finally {
    await cut.close();
  }
});
