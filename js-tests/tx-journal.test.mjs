// The pending-transaction journal across crashes (docs/transactions.md, "The journal"): a worker
// sending through the fleet's Redis is killed with SIGKILL at three points of a send, on anvil far
// past block 0 with a block every second; a relayer started afterwards on the same store adopts
// the nonce once the dead worker's lease runs out and finishes it: the nonce mined exactly once,
// with bytes the dead worker signed, and no second nonce used for that intent.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { FaultTolerantRelayer } from '../pkg/dist/node.mjs';
import { startRedis } from './helpers/redis.mjs';
import { startChain } from './helpers/chain.mjs';

const MNEMONIC = 'test test test test test test test test test test test junk';
const keyAt = (i) => ethers.HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${i}`).privateKey;
const PKG = new URL('../pkg/dist/node.mjs', import.meta.url).href;
const WORKER = fileURLToPath(new URL('./helpers/tx-crash-worker.mjs', import.meta.url));
const stops = [];
after(async () => { for (const stop of stops.reverse()) await stop(); });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs the crash worker; resolves with what it knew when it died, and how it ended. */
function crashWorker(config) {
  return new Promise((resolve) => {
    execFile(process.execPath, [WORKER, JSON.stringify({ pkg: PKG, chainId: 31337, ...config })], { timeout: 120000 }, (error, stdout, stderr) => {
      const line = stdout.trim().split('\n').pop();
      resolve({ ...(line ? JSON.parse(line) : {}), signal: error?.signal ?? null, stderr: stderr.slice(-500) });
    });
  });
}

/** Resumes `wallet`'s account on `relayer` until the dead worker's lease has run out (bounded). */
async function resumeOnceOrphaned(relayer, wallet, options) {
  const until = Date.now() + 40000;
  for (;;) {
    const found = await relayer.resumeTransactions(wallet, options);
    if (found.adopted.length > 0 || Date.now() > until) return found;
    await sleep(1000);
  }
}

async function finishAfterCrash(t, { chain, redis, key, killAt, afterKill = async () => {}, resume = {} }) {
  const wallet = new ethers.Wallet(key);
  const start = Number(await chain.rpc('eth_getTransactionCount', [wallet.address, 'pending']));
  const dead = await crashWorker({ url: chain.url, redis: redis.url, key, killAt });
  assert.equal(dead.signal, 'SIGKILL', `the worker was killed ${killAt}: ${JSON.stringify(dead)}`);
  assert.equal(dead.nonce, start, 'it had taken the account\'s next nonce');
  const broadcast = Number(await chain.rpc('eth_getTransactionCount', [wallet.address, 'pending'])) > start;
  await afterKill(dead);
  const relayer = new FaultTolerantRelayer([chain.url], { chainId: 31337, fleet: { redis: redis.url }, transactions: { pollIntervalMs: 500 } });
  try {
    const found = await resumeOnceOrphaned(relayer, wallet, resume);
    assert.equal(found.adopted.length, 1, `adopted: ${JSON.stringify(found)}`);
    const [adopted] = found.adopted;
    assert.equal(adopted.nonce, start);
    for (const hash of dead.hashes) assert.ok(adopted.hashes.includes(hash), `the journal has ${hash}, which the dead worker broadcast`);
    const outcome = await adopted.outcome;
    t.diagnostic(JSON.stringify({ killAt, broadcastBeforeDeath: broadcast, dead: dead.hashes.length, journaled: adopted.hashes.length, mined: outcome.hash, outcome: outcome.outcome }));
    assert.equal(Number(outcome.nonce), start);
    const mined = await chain.rpc('eth_getTransactionByHash', [outcome.hash]);
    assert.deepEqual([mined.to.toLowerCase(), BigInt(mined.value), Number(mined.nonce)], ['0x000000000000000000000000000000000000dead', 12345n, start], 'the dead worker\'s intent, at its nonce');
    const receipt = await chain.rpc('eth_getTransactionReceipt', [outcome.hash]);
    assert.equal(receipt.status, '0x1');
    assert.equal(Number(await chain.rpc('eth_getTransactionCount', [wallet.address, 'latest'])), start + 1, 'one nonce for the intent, mined once');
    const late = await relayer.waitForTransaction({ hash: outcome.hash });
    assert.deepEqual([Number(late.nonce), late.hash], [start, outcome.hash], 'ended: a late caller still gets the outcome');
    const unknown = await relayer.waitForTransaction({ hash: `0x${'ab'.repeat(32)}` }).then(() => null, (e) => e);
    assert.equal(unknown && unknown.name, 'NonceStateError');
    assert.match(unknown.message, /no transaction with hash 0xabab.* is tracked/);
    // The fleet's book is not stuck on the dead worker's nonce: the next send takes the next one.
    const next = await relayer.sendTransactionWithSpeedup(wallet, { to: '0x000000000000000000000000000000000000dEaD', value: 1n, gas: 21000n }, 3);
    assert.equal(Number(next.nonce), start + 1);
    return { dead, adopted, outcome, broadcast };
  } finally {
    await relayer.close();
  }
}

test('a worker killed after journaling or after broadcasting: another relayer adopts the nonce and finishes it', async (t) => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const chain = await startChain({ head: 1200 });
  stops.push(chain.stop);
  const [journaled, broadcast] = await Promise.all([
    finishAfterCrash(t, { chain, redis, key: keyAt(3), killAt: 'afterJournal' }),
    finishAfterCrash(t, { chain, redis, key: keyAt(4), killAt: 'afterBroadcast' }),
  ]);
  for (const { adopted, outcome } of [journaled, broadcast]) {
    assert.ok(adopted.hashes.includes(outcome.hash), 'mined: the bytes the dead worker signed');
  }
  assert.equal(journaled.broadcast, false, 'killed before its broadcast: only the journal had the bytes');
  // A relayer that keeps no journal says so, as a mistake of the call, not an outage.
  const plain = new FaultTolerantRelayer([chain.url], { chainId: 31337 });
  const refused = await plain.resumeTransactions(new ethers.Wallet(keyAt(3))).then(() => null, (e) => e);
  await plain.close();
  assert.equal(refused && refused.name, 'InvalidRequestError');
  assert.match(refused.message, /needs a fleet store that keeps the journal/);
  assert.equal(journaled.adopted.hashes.length, 1);
  assert.equal(broadcast.dead.hashes.length, 1);
});

test('a worker killed mid-speed-up (the speed-up journaled, not broadcast): the adopter sends those bytes', async (t) => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const chain = await startChain({ head: 1200 });
  stops.push(chain.stop);
  chain.jamAtNextSend(); // blocks keep coming, none has room: the original waits and is sped up
  const { dead, adopted, outcome } = await finishAfterCrash(t, {
    chain, redis, key: keyAt(5), killAt: 'midSpeedUp',
    // The node drops the original (a gas spike evicts it) and blocks have room again: only the
    // speed-up the dead worker journaled, and never broadcast, can take the nonce now.
    afterKill: async ({ hashes }) => {
      await chain.rpc('anvil_dropTransaction', [hashes[0]]);
      await chain.unjam();
    },
    resume: { maxWaitBlockCount: 100, rebroadcastEveryPolls: 1 },
  });
  assert.equal(dead.hashes.length, 1, 'it broadcast the original only');
  assert.equal(adopted.hashes.length, 2, 'the journal had the original and the speed-up');
  assert.ok(!dead.hashes.includes(adopted.hashes[1]), 'the speed-up never left the dead worker');
  assert.equal(outcome.hash, adopted.hashes[1], 'the adopter broadcast the journaled speed-up, and it was mined');
  assert.equal(outcome.outcome, 'replaced');
});

test('a restarted worker whose send waits behind its dead predecessor\'s nonce takes that nonce over by itself once the lease runs out, paying no speed-up in vain', async (t) => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const chain = await startChain({ head: 1200 });
  stops.push(chain.stop);
  const key = keyAt(6);
  const wallet = new ethers.Wallet(key);
  const start = Number(await chain.rpc('eth_getTransactionCount', [wallet.address, 'pending']));
  // Killed with its nonce live and journaled, nothing broadcast: a gap every later nonce waits behind.
  const dead = await crashWorker({ url: chain.url, redis: redis.url, key, killAt: 'afterJournal' });
  assert.equal(dead.signal, 'SIGKILL');
  // Default polls (every ~4 s): the adopter re-broadcasts the journaled bytes at once, before any speed-up.
  const relayer = new FaultTolerantRelayer([chain.url], { chainId: 31337, fleet: { redis: redis.url } });
  try {
    const adoptedEvents = [];
    // Its outcome, asked for the moment it is adopted (before anything drives it).
    const adoptedOutcome = new Promise((resolve) => relayer.on('txAdopted', (e) => {
      adoptedEvents.push(e);
      resolve(relayer.waitForTransaction({ nonce: e.nonce, from: e.from }));
    }));
    const speedUps = [];
    relayer.on('speedUp', (e) => speedUps.push(e.nonce));
    // At once: the dead worker's lease still runs, so this takes start + 1 and waits behind the gap;
    // its own loop's events let the relayer look again until the lease has run out.
    const a = await relayer.sendTransactionWithSpeedup(wallet, { to: '0x000000000000000000000000000000000000dEaD', value: 1n, gas: 21000n }, 3);
    const adopted = await adoptedOutcome;
    t.diagnostic(JSON.stringify({ start, nonce: Number(a.nonce), adoptedEvents, speedUps }));
    assert.equal(Number(a.nonce), start + 1);
    assert.deepEqual(speedUps, [], 'no speed-up of a nonce a gap holds back');
    assert.equal(adoptedEvents.length, 1);
    assert.deepEqual([adoptedEvents[0].nonce, adoptedEvents[0].signer, adoptedEvents[0].from.toLowerCase()], [start, true, wallet.address.toLowerCase()]);
    assert.deepEqual([Number(adopted.nonce), adopted.hash, adopted.outcome], [start, adoptedEvents[0].hashes[0], 'mined'], 'waitForTransaction: the adopted nonce\'s outcome');
    assert.equal(Number(await chain.rpc('eth_getTransactionCount', [wallet.address, 'latest'])), start + 2, 'the dead worker\'s nonce mined with its journaled bytes, then ours');
    const receipt = await chain.rpc('eth_getTransactionReceipt', [adoptedEvents[0].hashes[0]]);
    assert.equal(receipt && receipt.status, '0x1', 'the journaled bytes were mined');
  } finally {
    await relayer.close();
  }
});
