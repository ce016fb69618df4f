// The Redis store's code loaded on first use, as the web entry loads it: entries/web.js imports
// dist/redis-store.js only when a relayer names `fleet.redis`, so a page that never does downloads
// neither the store nor its Lua scripts (docs/architecture.md, "Size"). Here the relayer class is
// made from the wrapper's source as the web entry makes it, on Node's glue and HTTP, with a loader
// that imports the shipped dist/redis-store.js after a delay (a slow chunk): what a relayer asks
// and sends while the code loads must reach the store once it is here, and a load that fails must
// be a store that is down, never a failed read or a guessed nonce. Real Redis, a real chain.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { createClient } from 'redis';
import { ethers } from 'ethers';
import { createRelayerClass } from '../pkg-template/src/relayer.js';
import { nodeHttpSender } from '../pkg-template/src/node-http.js';
import * as signers from '../pkg-template/src/signers.js';
import { startRedis, scriptCalls } from './helpers/redis.mjs';
import { startChain } from './helpers/chain.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const require = createRequire(import.meta.url);
const glue = require('../pkg/dist/breakwater_rpc_node.cjs');
// What an entry's loader gives: the transaction module's glue and the signer adapters.
const loadTx = () => ({ tx: require('../pkg/dist/breakwater_rpc_tx_node.cjs'), signers });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MNEMONIC = 'test test test test test test test test test test test junk';

const node = useMockNodes(after);
const stops = [];
after(async () => { for (const stop of stops) await stop(); });

/** The relayer class as a page's entry makes it, its store's code imported `delayMs` after it is asked for. */
function pageRelayer(load) {
  let asked = 0;
  const Relayer = createRelayerClass(glue, {
    sender: nodeHttpSender, loadTx, txSynchronous: true,
    loadRedisStore: () => { asked += 1; return load(); },
  });
  return { Relayer, asked: () => asked };
}
const slowChunk = (delayMs) => () => sleep(delayMs).then(() => import('../pkg/dist/redis-store.js'));

/** A chain far past block 0, a Redis, and anvil's funded account `index`, for a send's test. */
async function chainRedisWallet(t, index) {
  const chain = await startChain({ head: 1500 });
  t.after(chain.stop);
  const redis = await startRedis();
  stops.push(redis.stop);
  const wallet = new ethers.Wallet(ethers.HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${index}`).privateKey);
  return { chain, redis, wallet };
}
const SEND = { to: '0x000000000000000000000000000000000000dEaD', value: 1n, gas: 21000n };

test('reads made while the store\'s code loads are answered, and their group leases from Redis once it is here', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const upstream = await node([{ result: '0x5' }]);
  const { Relayer, asked } = pageRelayer(slowChunk(1500));
  const made = Date.now();
  const relayer = new Relayer([{ url: upstream.url, quotaGroup: 'key' }], {
    chainId: 1, quota: { key: { cuPerSecond: 50 } }, fleet: { redis: redis.url },
  });
  try {
    assert.equal(asked(), 1, 'the store\'s code is asked for by the first relayer that names one');
    const early = await Promise.all(Array.from({ length: 3 }, () => relayer.request({ method: 'eth_blockNumber' })));
    assert.deepEqual(early, Array(3).fill('0x5'), 'answered while the code loads');
    assert.ok(Date.now() - made < 1500, `answered before the code was here (${Date.now() - made} ms)`);
    assert.equal(await scriptCalls(redis.url), 0, 'nothing reached Redis before the code was here');
    // No request after the load: the group's ask held meanwhile goes to Redis by itself.
    await sleep(Math.max(0, made + 2500 - Date.now()));
    assert.ok(await scriptCalls(redis.url) > 0, 'the ask held while the code loaded was sent once it was here');
    const end = Date.now() + 3000;
    while (relayer.stats().quotaGroups[0].fleet !== 'leased' && Date.now() < end) {
      await relayer.request({ method: 'eth_blockNumber' });
      await sleep(50);
    }
    assert.equal(relayer.stats().quotaGroups[0].fleet, 'leased', 'the group leases from the store');
  } finally {
    await relayer.close();
  }
});

test('a send made while the store\'s code loads takes its nonce from the fleet\'s book once it is here', async (t) => {
  const { chain, redis, wallet } = await chainRedisWallet(t, 6);
  const { Relayer } = pageRelayer(slowChunk(400));
  const relayer = new Relayer([chain.url], { chainId: 31337, fleet: { redis: redis.url } });
  try {
    const sent = await relayer.sendTransactionWithSpeedup(wallet, SEND, 3);
    assert.equal(sent.outcome, 'mined');
    // The receipt's block, not a field the outcome may lack (read as `undefined ?? 1501`, this passed unsent).
    const receipt = await chain.rpc('eth_getTransactionReceipt', [sent.hash]);
    assert.ok(Number(receipt.blockNumber) > 1500, 'mined past the chain\'s long head');
    const admin = createClient({ url: redis.url });
    await admin.connect();
    const books = await admin.keys('breakwater:n:*');
    await admin.quit();
    assert.ok(books.length > 0, `the nonce came from the fleet's book on Redis (keys: ${books})`);
  } finally {
    await relayer.close();
  }
});

test('a store whose code fails to load is a store that is down: told once, reads answered, a shared send fails unsent', async (t) => {
  const { chain, redis, wallet } = await chainRedisWallet(t, 5);
  const { Relayer } = pageRelayer(() => sleep(100).then(() => { throw new Error('chunk load failed (offline)'); }));
  const relayer = new Relayer([{ url: chain.url, quotaGroup: 'key' }], { chainId: 31337, quota: { key: { cuPerSecond: 50 } }, fleet: { redis: redis.url } });
  const events = [];
  relayer.on('fleetStore', (e) => events.push(e));
  try {
    const before = await chain.rpc('eth_getTransactionCount', [wallet.address, 'pending']);
    const send = relayer.sendTransactionWithSpeedup(wallet, SEND, 3)
      .then(() => null, (error) => error);
    const reads = await Promise.all(Array.from({ length: 5 }, () => relayer.request({ method: 'eth_blockNumber' })));
    assert.ok(reads.every((r) => /^0x[0-9a-f]+$/.test(r)), 'reads answered');
    const error = await send;
    assert.ok(error instanceof Error, 'the shared send fails');
    assert.match(String(error.message), /code did not load: chunk load failed.*no nonce was guessed and nothing was broadcast/, error.message);
    await sleep(200);
    const downs = events.filter((e) => e.state === 'down');
    assert.equal(downs.length, 1, JSON.stringify(events));
    assert.match(downs[0].reason, /did not load: chunk load failed/);
    assert.equal(await chain.rpc('eth_getTransactionCount', [wallet.address, 'pending']), before, 'nothing reached the chain');
    assert.equal(await scriptCalls(redis.url), 0);
  } finally {
    await relayer.close();
  }
});
