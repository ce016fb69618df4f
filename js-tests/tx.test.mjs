// The transaction layer against a real node (anvil), with real signed
// transactions from anvil's dev accounts. Blocks are mined by the tests
// (anvil --no-mining) so "stays pending" and "mined after" are decided by
// the test, not by timing; waits are on the relayer's own events.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import { privateKeyToAccount } from 'viem/accounts';
import {
  FaultTolerantRelayer, isFeeCeilingError, isInvalidTransactionError, isSignerError, isRpcError, isBreakwaterError,
} from '../pkg/dist/node.mjs';
import { startAnvil } from './helpers/anvil.mjs';
import { startTxProxy } from './helpers/tx-proxy.mjs';

const GWEI = 1_000_000_000n;
// anvil's dev accounts come from the public test mnemonic; one account per test so books never overlap.
const MNEMONIC = 'test test test test test test test test test test test junk';
const KEYS = Array.from({ length: 10 }, (_, i) => ethers.HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${i + 1}`).privateKey);
const RECIPIENT = '0x000000000000000000000000000000000000dEaD';
const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

/**
 * anvil (--no-mining: blocks come when a test mines them) behind a proxy.
 * `stall()` mines a block that cannot hold any transaction (block gas limit
 * below 21000 for that one block), so pooled transactions stay pending
 * while blocks pass; the proxy holds the relayer's traffic meanwhile, so it
 * never sees the chain half-rearranged. `mine()` mines a normal block.
 */
async function chain(args = ['--no-mining', '--base-fee', String(GWEI)]) {
  const anvil = await startAnvil(args);
  cleanups.push(anvil.stop);
  const proxy = await startTxProxy(anvil.url);
  cleanups.push(proxy.close);
  const rpc = async (method, params = []) => {
    const r = await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = await r.json();
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
  const mine = () => rpc('evm_mine');
  const stall = async () => {
    proxy.hold();
    try {
      await rpc('evm_setBlockGasLimit', ['0x5000']);
      await rpc('evm_mine');
      await rpc('evm_setBlockGasLimit', ['0x1c9c380']);
    } finally {
      proxy.release();
    }
  };
  return { ...anvil, proxy, rpc, mine, stall };
}

function relayerFor(url, extra = {}) {
  const relayer = new FaultTolerantRelayer([url], {
    baseDelayMs: 1, maxDelayMs: 10, cache: false, chainId: 31337,
    transactions: { pollIntervalMs: 20, rebroadcastEveryPolls: 3 }, ...extra,
  });
  cleanups.push(() => relayer.close());
  return relayer;
}

/** Collects the relayer's transaction events; `next(type)` resolves at the next one of that type. */
function recorder(relayer) {
  if (process.env.TX_DEBUG) relayer.on("txSubmitted", () => {});
  const events = [];
  const waiters = [];
  const types = ['txSubmitted', 'txUnknown', 'txRebroadcast', 'speedUp', 'cancel', 'txIncluded', 'reorg', 'txMined', 'replaced', 'nonceResync', 'nonceGap'];
  for (const type of types) {
    relayer.on(type, (e) => {
      if (process.env.TX_DEBUG) console.log('event', JSON.stringify(e));
      events.push(e);
      for (const w of waiters.filter((w) => w.type === e.type && w.match(e))) { waiters.splice(waiters.indexOf(w), 1); w.resolve(e); }
    });
  }
  return {
    events,
    of: (type) => events.filter((e) => e.type === type),
    next: (type, match = () => true) => new Promise((resolve) => waiters.push({ type, match, resolve })),
    /** The node accepted a transaction of this kind ('original' | 'speedUp' | 'cancel'). */
    accepted: (kind) => new Promise((resolve) => waiters.push({ type: 'txSubmitted', match: (e) => e.kind === kind, resolve })),
  };
}

/** Mines blocks (`how`: 'mine' or 'stall') until `promise` settles; bounded in count. */
async function mineUntil(node, promise, how = 'mine') {
  let settled = false;
  promise.then(() => { settled = true; }, () => { settled = true; });
  for (let i = 0; i < 200 && !settled; i += 1) {
    await node[how]();
    await new Promise((r) => setTimeout(r, 25));
  }
  return promise;
}

/** Stalls blocks until the relayer emits `type`, then returns that event. */
async function stallUntil(node, log, type) {
  const next = log.next(type);
  return mineUntil(node, next, 'stall');
}

const lowFee = { maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI };
const fee = { maxFeePerGas: 50n * GWEI, maxPriorityFeePerGas: GWEI };

test('a low-fee transaction that stays pending is sped up once and the replacement is mined (viem account)', async () => {
  const node = await chain();
  const relayer = relayerFor(node.proxy.url);
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[0]);
  const sending = relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 1n, gas: 21000n, ...lowFee }, 2);
  const submitted = await log.next('txSubmitted');
  const pooled = await node.rpc('eth_getTransactionByHash', [submitted.hash]);
  assert.equal(pooled.blockNumber, null, 'the original is in the pool');
  const accepted = log.accepted('speedUp');
  const speedUp = await stallUntil(node, log, 'speedUp');
  assert.equal((await accepted).hash, speedUp.hash, 'the node accepted the replacement');
  const outcome = await mineUntil(node, sending);
  assert.equal(outcome.outcome, 'replaced');
  assert.equal(outcome.replaced, true);
  assert.equal(outcome.nonce, 0);
  assert.deepEqual(outcome.hashes, [submitted.hash, speedUp.hash], 'one speed-up: the bump was accepted on the first try');
  assert.equal(outcome.hash, speedUp.hash);
  assert.equal(outcome.status, '0x1');
  assert.ok(BigInt(speedUp.maxFeePerGas) * 10n > 2n * GWEI * 11n, 'max fee raised by more than 10 %');
  assert.ok(BigInt(speedUp.maxPriorityFeePerGas) * 10n > GWEI * 11n, 'tip raised by more than 10 %');
  assert.equal(await node.rpc('eth_getTransactionCount', [account.address, 'latest']), '0x1', 'exactly one tx with that nonce was mined');
  assert.equal(await node.rpc('eth_getTransactionReceipt', [submitted.hash]), null);
});

test('the original mined after its replacement was broadcast resolves with the original (ethers Wallet)', async () => {
  const node = await chain();
  const relayer = relayerFor(node.proxy.url);
  const log = recorder(relayer);
  const wallet = new ethers.Wallet(KEYS[1]);
  const sending = relayer.sendTransactionWithSpeedup(wallet, { to: RECIPIENT, value: 5n, gas: 21000n, ...lowFee }, 1);
  const submitted = await log.next('txSubmitted');
  node.proxy.setMode('swallow'); // the replacement is "accepted" but never reaches the node
  const speedUp = await stallUntil(node, log, 'speedUp');
  const outcome = await mineUntil(node, sending); // the node still has the original: it is mined
  assert.equal(outcome.outcome, 'mined');
  assert.equal(outcome.replaced, false);
  assert.equal(outcome.hash, submitted.hash);
  assert.ok(outcome.hashes.includes(speedUp.hash), 'the replacement was sent and watched too');
  assert.equal(outcome.from.toLowerCase(), wallet.address.toLowerCase());
});

test('a dropped response to eth_sendRawTransaction: outcome unknown, same bytes again, exactly one tx, no nonce skipped', async () => {
  const node = await chain();
  const relayer = relayerFor(node.proxy.url, { maxRetries: 1, attemptTimeoutMs: 500 });
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[2]);
  node.proxy.setMode('drop', 2); // the first attempt and the pipeline's retry both lose their answer
  const first = relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 7n, gas: 21000n, ...fee }, 3);
  const unknown = await log.next('txUnknown');
  const outcome = await mineUntil(node, first);
  assert.equal(outcome.outcome, 'mined');
  assert.equal(outcome.hash, unknown.hash);
  assert.equal(outcome.nonce, 0);
  const sends = node.proxy.raws.filter((r) => ethers.keccak256(r) === outcome.hash);
  assert.ok(sends.length >= 2, `identical bytes re-broadcast (${sends.length} sends)`);
  assert.equal(new Set(node.proxy.raws).size, 1, 'never a re-sign: one distinct signed transaction');
  node.proxy.setMode('forward');
  const second = await mineUntil(node, relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 1n, gas: 21000n, ...fee }));
  assert.equal(second.nonce, 1, 'the next send takes the next nonce: none skipped, none reused');
  assert.equal(await node.rpc('eth_getTransactionCount', [account.address, 'latest']), '0x2');
});

test('50 concurrent sends from one account: contiguous nonces, all mined, failures in the middle leave no gap', async () => {
  const node = await chain(['--base-fee', String(GWEI)]); // automine
  const relayer = relayerFor(node.proxy.url);
  const account = privateKeyToAccount(KEYS[3]);
  let signatures = 0;
  const flaky = { ...account, signTransaction: async (tx) => {
    signatures += 1;
    if (signatures === 20) throw new Error('hardware wallet unplugged');
    return account.signTransaction(tx);
  } };
  const sends = Array.from({ length: 50 }, (_, i) => relayer.sendTransactionWithSpeedup(flaky,
    { to: RECIPIENT, value: i === 30 ? 10n ** 30n : BigInt(i + 1), gas: 21000n, ...fee }));
  const results = await Promise.allSettled(sends);
  const failed = results.filter((r) => r.status === 'rejected');
  assert.equal(failed.length, 2);
  const signerError = failed.find((r) => isSignerError(r.reason));
  assert.ok(signerError, 'the signer failure is typed');
  assert.equal(signerError.reason.cause.message, 'hardware wallet unplugged');
  assert.ok(failed.some((r) => isRpcError(r.reason) && /insufficient funds/i.test(r.reason.message)), 'the node refused the unaffordable one');
  const nonces = results.filter((r) => r.status === 'fulfilled').map((r) => r.value.nonce).sort((a, b) => a - b);
  assert.deepEqual(nonces, Array.from({ length: 48 }, (_, i) => i));
  assert.ok(results.every((r) => r.status === 'rejected' || r.value.status === '0x1'));
  assert.equal(await node.rpc('eth_getTransactionCount', [account.address, 'latest']), '0x30');
});

test('a cancel racing a speed-up on the same nonce: one mined tx, one outcome for both callers', async () => {
  const node = await chain();
  const relayer = relayerFor(node.proxy.url);
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[4]);
  let release;
  const gate = new Promise((r) => { release = r; });
  let signing = 0;
  let speedUpSigning;
  const signingStarted = new Promise((r) => { speedUpSigning = r; });
  const slow = { ...account, signTransaction: async (tx) => {
    signing += 1;
    if (signing === 2) { speedUpSigning(); await gate; } // hold the speed-up mid-signature
    return account.signTransaction(tx);
  } };
  const sending = relayer.sendTransactionWithSpeedup(slow, { to: RECIPIENT, value: 9n, gas: 21000n, ...lowFee }, 1);
  await log.next('txSubmitted');
  await mineUntil(node, signingStarted, 'stall');
  const cancelAccepted = log.accepted('cancel');
  const cancelling = relayer.cancelTransaction(slow, { nonce: 0 });
  release();
  await cancelAccepted;
  const [a, b] = await mineUntil(node, Promise.all([sending, cancelling]));
  assert.equal(a.hash, b.hash, 'both callers get the same outcome');
  assert.equal(a.outcome, 'cancelled');
  assert.equal(a.cancelled, true);
  // The speed-up signed while the cancel was asked for is never broadcast: the cancel goes first, so it wins.
  assert.deepEqual(log.events.filter((e) => e.type === 'speedUp' || e.type === 'cancel').map((e) => e.type), ['cancel']);
  assert.equal(a.hashes.length, 2, 'the original and the cancel are the only transactions sent');
  const mined = await node.rpc('eth_getTransactionByHash', [a.hash]);
  assert.equal(mined.to.toLowerCase(), account.address.toLowerCase(), 'the cancel is a self-transfer');
  assert.equal(BigInt(mined.value), 0n);
  assert.equal(await node.rpc('eth_getTransactionCount', [account.address, 'latest']), '0x1');
});

test('the fee ceiling is respected: a typed error names the pending hashes, and the nonce stays tracked', async () => {
  const node = await chain();
  const relayer = relayerFor(node.proxy.url);
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[5]);
  const ceiling = 2n * GWEI + GWEI / 20n; // below the smallest acceptable replacement (> +10 %)
  const sending = relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 1n, gas: 21000n, ...lowFee }, 1,
    { feeCeiling: ceiling });
  await log.next('txSubmitted');
  const error = await mineUntil(node, sending, 'stall').then(() => assert.fail('resolved past the ceiling'), (e) => e);
  assert.ok(isFeeCeilingError(error), `${error.name}: ${error.message}`);
  assert.equal(error.nonce, 0);
  assert.equal(error.hashes.length, 1);
  assert.equal(error.ceiling, ceiling);
  assert.ok(error.needed > ceiling);
  assert.equal(log.of('speedUp').length, 0, 'nothing was signed past the ceiling');
  assert.deepEqual(relayer.pendingTransactions(31337, account.address).map((p) => p.hashes), [error.hashes]);
  // Nothing was lost: a cancel with room to pay takes the nonce.
  const cancelAccepted = log.accepted('cancel');
  const cancelling = relayer.cancelTransaction(account, { hash: error.hashes[0] }, { feeCeiling: 100n * GWEI });
  await cancelAccepted;
  const cancelled = await mineUntil(node, cancelling);
  assert.equal(cancelled.outcome, 'cancelled');
  assert.deepEqual(relayer.pendingTransactions(31337, account.address), []);
});

test('"nonce too low" because our own transaction was already mined is reported as success', async () => {
  const node = await chain(['--base-fee', String(GWEI)]); // automine: mined the moment it arrives
  const relayer = relayerFor(node.proxy.url, { maxRetries: 2 });
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[6]);
  node.proxy.setMode('drop', 1); // mined, answer lost; the retry hears "nonce too low"
  const outcome = await relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 3n, gas: 21000n, ...fee });
  assert.equal(outcome.outcome, 'mined');
  assert.equal(outcome.status, '0x1');
  assert.equal(log.of('txUnknown').length, 1);
  // The low-level call: bytes mined, their answer lost, sent again.
  const raw = await account.signTransaction({ chainId: 31337, nonce: 1, to: RECIPIENT, value: 1n, gas: 21000n, type: 'eip1559', ...fee });
  node.proxy.setMode('drop', 1);
  const again = await relayer.submitRaw(raw);
  assert.equal(again.hash, ethers.keccak256(raw));
  assert.ok(['mined', 'accepted'].includes(again.status), again.status); // anvil says "known" or "nonce too low" for it
  assert.equal((await relayer.waitForReceipt(again.hash)).status, '0x1');
  // A different transaction for a used nonce is not ours: a typed refusal, not a success.
  const other = await account.signTransaction({ chainId: 31337, nonce: 1, to: RECIPIENT, value: 2n, gas: 21000n, type: 'eip1559', ...fee });
  await assert.rejects(relayer.submitRaw(other), (e) => isRpcError(e) && e.class === 'nonceTooLow');
});

test('a reorg that drops the receipt is noticed; the wait goes on and the same bytes are mined again', async () => {
  const node = await chain(['--base-fee', String(GWEI)]); // automine
  const relayer = relayerFor(node.proxy.url);
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[7]);
  const snapshot = await node.rpc('evm_snapshot');
  const sending = relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 4n, gas: 21000n, ...fee }, 3, { confirmations: 3 });
  const included = await log.next('txIncluded');
  const reorg = log.next('reorg');
  await node.rpc('evm_revert', [snapshot]);
  assert.equal((await reorg).hash, included.hash);
  const outcome = await mineUntil(node, sending);
  assert.equal(outcome.hash, included.hash, 'the same transaction, re-broadcast and mined again');
  assert.ok(outcome.confirmations >= 3);
  assert.ok(log.of('txRebroadcast').length >= 1);
});

test('bad transaction requests fail typed before anything is signed or sent', async () => {
  const node = await chain();
  const relayer = relayerFor(node.proxy.url, { chainId: undefined });
  const account = privateKeyToAccount(KEYS[8]);
  let signed = 0;
  const counting = { ...account, signTransaction: async (tx) => { signed += 1; return account.signTransaction(tx); } };
  const cases = [
    [{ to: RECIPIENT, value: -1n, chainId: 31337 }, 'value'],
    [{ to: '0x1234', value: 1n, chainId: 31337 }, 'to'],
    [{ to: RECIPIENT, maxFeePerGas: 1.5e9 + 0.5, chainId: 31337 }, 'maxFeePerGas'],
    [{ to: RECIPIENT, value: 1n }, 'chainId'],
    [{ to: RECIPIENT, chainId: 31337, maxFeePerGass: 1n }, 'maxFeePerGass'],
    [{ to: RECIPIENT, chainId: 31337, nonce: 5 }, 'nonce'],
  ];
  for (const [tx, field] of cases) {
    const error = await relayer.sendTransactionWithSpeedup(counting, tx).then(() => assert.fail('accepted'), (e) => e);
    assert.ok(isInvalidTransactionError(error), `${field}: ${error.name}`);
    assert.equal(error.field, field);
  }
  await assert.rejects(relayer.sendTransactionWithSpeedup({ privateKey: KEYS[8] }, { to: RECIPIENT, chainId: 31337 }), { name: 'InvalidSignerError' });
  await assert.rejects(relayer.sendTransactionWithSpeedup(counting, { to: RECIPIENT, chainId: 31337 }, 0), (e) => e.field === 'maxWaitBlockCount');
  await assert.rejects(relayer.sendTransactionWithSpeedup(counting, { to: RECIPIENT, chainId: 31337 }, 3, { bumpPercent: 5 }), (e) => e.field === 'options.bumpPercent');
  assert.equal(signed, 0);
  assert.equal(node.proxy.raws.length, 0);
});

test('an EIP-1193 wallet signs and sends by itself; its speed-up re-sends the same nonce with higher fees', async () => {
  const node = await chain();
  const relayer = relayerFor(node.proxy.url);
  const log = recorder(relayer);
  // anvil's unlocked account 0 behind a bare EIP-1193 object: the wallet, not us, holds the key and broadcasts.
  const wallet = { request: ({ method, params }) => node.rpc(method, params) };
  const sending = relayer.sendTransactionWithSpeedup(wallet, { to: RECIPIENT, value: 2n, gas: 21000n, ...lowFee }, 1);
  const submitted = await log.next('txSubmitted');
  const speedUp = await stallUntil(node, log, 'speedUp');
  const outcome = await mineUntil(node, sending);
  assert.deepEqual(outcome.hashes, [submitted.hash, speedUp.hash]);
  assert.equal(outcome.hash, speedUp.hash);
  assert.equal(outcome.outcome, 'replaced');
  assert.equal(outcome.nonce, 0);
  assert.equal(node.proxy.raws.length, 0, 'a wallet broadcasts itself: no raw bytes went through the relayer');
});

test('a legacy gasPrice transaction stays legacy through its speed-up', async () => {
  const node = await chain();
  const relayer = relayerFor(node.proxy.url);
  const log = recorder(relayer);
  const wallet = new ethers.Wallet(KEYS[8]);
  const sending = relayer.sendTransactionWithSpeedup(wallet, { to: RECIPIENT, value: 6n, gasPrice: 2n * GWEI }, 1);
  const submitted = await log.next('txSubmitted');
  const accepted = log.accepted('speedUp');
  const speedUp = await stallUntil(node, log, 'speedUp');
  await accepted; // mine only once the node holds the replacement
  assert.ok(BigInt(speedUp.gasPrice) * 10n > 2n * GWEI * 11n, 'gas price raised by more than 10 %');
  assert.equal(speedUp.maxFeePerGas, undefined);
  const outcome = await mineUntil(node, sending);
  assert.equal(outcome.outcome, 'replaced');
  assert.equal(outcome.type, '0x0', 'mined as a legacy transaction');
  assert.deepEqual(outcome.hashes, [submitted.hash, speedUp.hash]);
  assert.equal(BigInt(outcome.gasUsed), 21000n, 'the gas limit was estimated');
});

test('a batch of sends through a chaos proxy (drops, delays, duplicates, 502 after forwarding): every nonce once, true outcomes, no double spend', async () => {
  const node = await chain(['--base-fee', String(GWEI)]); // automine
  const relayer = relayerFor(node.proxy.url, {
    maxRetries: 6, attemptTimeoutMs: 400, deadlineMs: 8000, adaptiveTimeout: false, breaker: { openMs: 200, openMaxMs: 1000 },
  });
  const account = privateKeyToAccount(ethers.HDNodeWallet.fromPhrase(MNEMONIC, undefined, "m/44'/60'/0'/0/9").privateKey);
  const recipient = '0x00000000000000000000000000000000c0ffee00';
  const before = BigInt(await node.rpc('eth_getTransactionCount', [account.address, 'latest']));
  if (process.env.TX_DEBUG) {
    const t0 = Date.now();
    for (const type of ['txSubmitted', 'txUnknown', 'txRebroadcast', 'txMined', 'retry', 'breaker', 'nonceResync']) {
      relayer.on(type, (e) => console.log(Date.now() - t0, type, e.nonce ?? '', e.from ?? '', e.rule ?? '', e.to ?? '', e.delayMs ?? ''));
    }
  }
  node.proxy.setMode('chaos');
  const values = Array.from({ length: 20 }, (_, i) => BigInt(1000 + i));
  const results = await Promise.allSettled(values.map((value) => relayer.sendTransactionWithSpeedup(account,
    { to: recipient, value, gas: 21000n, ...fee }, 3)));
  node.proxy.setMode('forward');
  const faults = node.proxy.faults;
  assert.ok(faults.drop + faults.error502 + faults.duplicate + faults.slow > 10, JSON.stringify(faults));
  const mined = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
  for (const r of results.filter((x) => x.status === 'rejected')) assert.ok(isBreakwaterError(r.reason), String(r.reason));
  // Every resolved call names a transaction that really is mined, with its own value.
  for (const outcome of mined) {
    const tx = await node.rpc('eth_getTransactionByHash', [outcome.hash]);
    assert.ok(tx && tx.blockNumber, `${outcome.hash} is mined`);
    assert.equal(BigInt(tx.nonce), BigInt(outcome.nonce));
  }
  // Nonces: contiguous from the start, each used exactly once.
  const count = BigInt(await node.rpc('eth_getTransactionCount', [account.address, 'latest']));
  const nonces = mined.map((o) => BigInt(o.nonce)).sort((a, b) => (a < b ? -1 : 1));
  const why = JSON.stringify({ count: String(count), nonces: nonces.map(String), faults,
    rejected: results.filter((x) => x.status === 'rejected').map((x) => `${x.reason.name}: ${x.reason.message}`) });
  assert.deepEqual(nonces, Array.from({ length: Number(count - before) }, (_, i) => before + BigInt(i)), `no nonce skipped or reused ${why}`);
  // No duplicate economic effect: the recipient got exactly the values of the calls that said "mined".
  const received = BigInt(await node.rpc('eth_getBalance', [recipient, 'latest']));
  assert.equal(received, mined.reduce((sum, o) => sum + values[results.findIndex((r) => r.value === o)], 0n));
  assert.ok(mined.length >= 15, `${mined.length}/20 mined through the chaos`);
});
