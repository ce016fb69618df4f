// The transaction layer against a real node (anvil), with real signed
// transactions from anvil's dev accounts, on a chain as users have it:
// far past block 0 (anvil_mine) with a block every second. "Stays pending"
// comes from what makes real transactions wait: a gas spike that evicts a
// cheap transaction (base fee raised above its cap) or congestion (blocks
// with no room); both are applied right after the send reaches the node,
// with block production paused for that instant, so no test races a block.
// Waits are on the relayer's own events.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import { createWalletClient, http, defineChain } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  FaultTolerantRelayer, isFeeCeilingError, isInvalidTransactionError, isSignerError, isRpcError, isBreakwaterError,
  isClosedError, isNoEndpointError, isInvalidSignerError,
} from '../pkg/dist/node.mjs';
import { startChain } from './helpers/chain.mjs';
import { startTxProxy } from './helpers/tx-proxy.mjs';

const GWEI = 1_000_000_000n;
// anvil's dev accounts come from the public test mnemonic; one account per test so books never overlap.
const MNEMONIC = 'test test test test test test test test test test test junk';
const KEYS = Array.from({ length: 19 }, (_, i) => ethers.HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${i + 1}`).privateKey);
const RECIPIENT = '0x000000000000000000000000000000000000dEaD';
const ANVIL_ACCOUNT_0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const cleanups = [];
// Each test's chains and relayers stop when it ends (a chain mines every second: none may outlive its test).
afterEach(async () => { while (cleanups.length) await cleanups.pop()(); });

async function chain(options) {
  const node = await startChain({ args: ['--accounts', '20'], ...options });
  cleanups.push(node.stop);
  return node;
}

function relayerFor(url, extra = {}) {
  const relayer = new FaultTolerantRelayer(Array.isArray(url) ? url : [url], {
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

const lowFee = { maxFeePerGas: 2n * GWEI, maxPriorityFeePerGas: GWEI };
const fee = { maxFeePerGas: 50n * GWEI, maxPriorityFeePerGas: GWEI };

/** The events' block numbers: the speed-up came exactly `wait` blocks after the head at broadcast. */
function assertWaitedExactly(speedUp, wait, headBefore, headAtSubmit) {
  assert.equal(speedUp.block - speedUp.waitedSince, wait, `decided at ${speedUp.block}, counting from ${speedUp.waitedSince}`);
  assert.ok(speedUp.waitedSince >= headBefore && speedUp.waitedSince <= headAtSubmit + 1,
    `the wait counts from the head at broadcast (${headBefore}..${headAtSubmit}), not ${speedUp.waitedSince}`);
}

test('a healthy send on a chain far past block 0 is mined as the original: one hash, no speed-up (the issue\'s own usage)', async () => {
  const node = await chain();
  assert.ok(await node.head() >= 1000);
  const relayer = new FaultTolerantRelayer([node.url], { chainId: 31337 });
  cleanups.push(() => relayer.close());
  const log = recorder(relayer);
  const outcome = await relayer.sendTransactionWithSpeedup(new ethers.Wallet(KEYS[10]), { to: RECIPIENT, value: 1n }, 3);
  assert.equal(outcome.outcome, 'mined');
  assert.deepEqual(outcome.hashes, [outcome.hash], 'exactly one hash broadcast');
  assert.equal(log.of('speedUp').length, 0);
  assert.equal(new Set(node.proxy.raws).size, 1, 'one signed transaction went out');
  assert.ok(Number(outcome.blockNumber) > 1000);
});

test('a stuck transaction (gas spike above its cap) is sped up after exactly maxWaitBlockCount new blocks, and the replacement is mined (viem account)', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[0]);
  node.spikeBaseFeeAtNextSend(100n * GWEI);
  const headBefore = await node.head();
  const sending = relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 1n, gas: 21000n, ...lowFee }, 2);
  const submitted = await log.next('txSubmitted');
  const headAtSubmit = await node.head();
  const accepted = log.accepted('speedUp');
  const speedUp = await log.next('speedUp');
  const headAtSpeedUp = await node.head();
  assertWaitedExactly(speedUp, 2, headBefore, headAtSubmit);
  assert.ok(headAtSpeedUp - speedUp.waitedSince >= 2 && headAtSpeedUp - speedUp.waitedSince <= 3, 'not before 2 blocks had passed');
  assert.equal((await accepted).hash, speedUp.hash, 'the node accepted the replacement');
  const outcome = await sending;
  assert.equal(outcome.outcome, 'replaced');
  assert.equal(outcome.replaced, true);
  assert.equal(outcome.nonce, 0);
  assert.deepEqual(outcome.hashes, [submitted.hash, speedUp.hash], 'one speed-up');
  assert.equal(outcome.hash, speedUp.hash);
  assert.equal(outcome.status, '0x1');
  assert.ok(BigInt(speedUp.maxFeePerGas) * 10n > 2n * GWEI * 11n, 'max fee raised by more than 10 %');
  assert.ok(BigInt(speedUp.maxPriorityFeePerGas) * 10n > GWEI * 11n, 'tip raised by more than 10 %');
  assert.equal(await node.rpc('eth_getTransactionCount', [account.address, 'latest']), '0x1', 'exactly one tx with that nonce was mined');
  assert.equal(await node.rpc('eth_getTransactionReceipt', [submitted.hash]), null);
});

test('the original mined after its replacement was broadcast resolves with the original (ethers Wallet)', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
  const log = recorder(relayer);
  const wallet = new ethers.Wallet(KEYS[1]);
  node.jamAtNextSend(); // blocks keep coming, none has room: the original stays pooled
  const sending = relayer.sendTransactionWithSpeedup(wallet, { to: RECIPIENT, value: 5n, gas: 21000n, ...lowFee }, 1);
  const submitted = await log.next('txSubmitted');
  node.proxy.setMode('swallow'); // the replacement is "accepted" but never reaches the node
  const speedUp = await log.next('speedUp');
  await node.unjam(); // the node still has the original: it is mined
  const outcome = await sending;
  assert.equal(outcome.outcome, 'mined');
  assert.equal(outcome.replaced, false);
  assert.equal(outcome.hash, submitted.hash);
  assert.ok(outcome.hashes.includes(speedUp.hash), 'the replacement was sent and watched too');
  assert.equal(outcome.from.toLowerCase(), wallet.address.toLowerCase());
});

test('a dropped response to eth_sendRawTransaction: outcome unknown, same bytes again, exactly one tx, no nonce skipped', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url, { maxRetries: 1, attemptTimeoutMs: 500 });
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[2]);
  node.proxy.setMode('drop', 2); // the first attempt and the pipeline's retry both lose their answer
  const first = relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 7n, gas: 21000n, ...fee }, 3);
  const unknown = await log.next('txUnknown');
  const outcome = await first;
  assert.equal(outcome.outcome, 'mined');
  assert.equal(outcome.hash, unknown.hash);
  assert.equal(outcome.nonce, 0);
  const sends = node.proxy.raws.filter((r) => ethers.keccak256(r) === outcome.hash);
  assert.ok(sends.length >= 2, `identical bytes re-broadcast (${sends.length} sends)`);
  assert.equal(new Set(node.proxy.raws).size, 1, 'never a re-sign: one distinct signed transaction');
  assert.equal(log.of('speedUp').length, 0, 'no speed-up for a transaction mined in time');
  node.proxy.setMode('forward');
  const second = await relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 1n, gas: 21000n, ...fee });
  assert.equal(second.nonce, 1, 'the next send takes the next nonce: none skipped, none reused');
  assert.equal(await node.rpc('eth_getTransactionCount', [account.address, 'latest']), '0x2');
});

test('a node that swallows a send: the same bytes go to every endpoint again, and the honest one gets them mined', { timeout: 90000 }, async () => {
  const node = await chain();
  const honest = await startTxProxy(node.anvilUrl); // a second endpoint on the same chain
  cleanups.push(() => honest.close());
  // Priority order: the send goes to the first endpoint, which answers with the right hash and
  // never forwards (a node that lies); only a re-broadcast to every endpoint reaches the chain.
  const relayer = relayerFor([node.url, honest.url]);
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[16]);
  node.proxy.setMode('swallow');
  const outcome = await relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 9n, gas: 21000n, ...fee }, 10);
  const [submitted] = log.of('txSubmitted');
  assert.equal(outcome.outcome, 'mined');
  assert.equal(outcome.hash, submitted.hash, 'the original bytes were mined: no replacement was needed');
  assert.ok(log.of('txRebroadcast').length >= 1, 'a re-broadcast');
  assert.deepEqual(honest.raws.map((r) => ethers.keccak256(r)).filter((h) => h === outcome.hash).length > 0, true,
    'the honest endpoint was sent the very bytes the liar swallowed');
  assert.equal(new Set([...node.proxy.raws, ...honest.raws]).size, 1, 'never a re-sign');
  assert.equal(log.of('speedUp').length, 0);
});

test('50 concurrent sends from one account: nonces in call order, all mined, failures in the middle leave no gap', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
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
  const nonces = results.filter((r) => r.status === 'fulfilled').map((r) => r.value.nonce);
  assert.deepEqual(nonces, Array.from({ length: 48 }, (_, i) => i), 'in call order, contiguous');
  assert.ok(results.every((r) => r.status === 'rejected' || r.value.status === '0x1'));
  assert.equal(await node.rpc('eth_getTransactionCount', [account.address, 'latest']), '0x30');
});

test('sends get nonces in the order they were called, even when the signer answers the later calls first', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
  const wallet = new ethers.Wallet(KEYS[11]);
  // An ethers-style signer whose address lookup is slowest for the first call (a remote signer, say).
  let lookups = 0;
  const remote = {
    getAddress: () => { lookups += 1; const delay = 250 - lookups * 50; return new Promise((r) => setTimeout(() => r(wallet.address), delay)); },
    signTransaction: (tx) => wallet.signTransaction(tx),
  };
  const sends = [1n, 2n, 3n, 4n, 5n].map((value) => relayer.sendTransactionWithSpeedup(remote, { to: RECIPIENT, value, ...fee }));
  const outcomes = await Promise.all(sends);
  assert.deepEqual(outcomes.map((o) => o.nonce), [0, 1, 2, 3, 4]);
  const values = await Promise.all(outcomes.map((o) => node.rpc('eth_getTransactionByHash', [o.hash]).then((t) => BigInt(t.value))));
  assert.deepEqual(values, [1n, 2n, 3n, 4n, 5n], 'call 1 (value 1) holds nonce 0');
});

test('a cancel racing a speed-up on the same nonce: one mined tx, one outcome for both callers', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
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
  node.spikeBaseFeeAtNextSend(100n * GWEI);
  const sending = relayer.sendTransactionWithSpeedup(slow, { to: RECIPIENT, value: 9n, gas: 21000n, ...lowFee }, 1);
  await log.next('txSubmitted');
  await signingStarted;
  const cancelAccepted = log.accepted('cancel');
  const cancelling = relayer.cancelTransaction(slow, { nonce: 0 });
  release();
  await cancelAccepted;
  const [a, b] = await Promise.all([sending, cancelling]);
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
  const relayer = relayerFor(node.url);
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[5]);
  const ceiling = 2n * GWEI + GWEI / 20n; // below the smallest acceptable replacement (> +10 %)
  node.spikeBaseFeeAtNextSend(100n * GWEI);
  const sending = relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 1n, gas: 21000n, ...lowFee }, 1,
    { feeCeiling: ceiling });
  await log.next('txSubmitted');
  const error = await sending.then(() => assert.fail('resolved past the ceiling'), (e) => e);
  assert.ok(isFeeCeilingError(error), `${error.name}: ${error.message}`);
  assert.equal(error.nonce, 0);
  assert.equal(error.hashes.length, 1);
  assert.equal(error.ceiling, ceiling);
  assert.ok(error.needed > ceiling);
  assert.equal(log.of('speedUp').length, 0, 'nothing was signed past the ceiling');
  assert.deepEqual(relayer.pendingTransactions(31337, account.address).map((p) => p.hashes), [error.hashes]);
  // Nothing was lost: a cancel with room to pay takes the nonce.
  const cancelAccepted = log.accepted('cancel');
  const cancelling = relayer.cancelTransaction(account, { hash: error.hashes[0] }, { feeCeiling: 1000n * GWEI });
  await cancelAccepted;
  const cancelled = await cancelling;
  assert.equal(cancelled.outcome, 'cancelled');
  assert.deepEqual(relayer.pendingTransactions(31337, account.address), []);
});

test('a transaction a gas spike evicted, past the fee ceiling, is kept: re-broadcast once fees fall, later sends not stuck', { timeout: 60000 }, async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[15]);
  node.spikeBaseFeeAtNextSend(100n * GWEI); // the node drops it at the next block
  const error = await relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 1n, gas: 21000n, ...lowFee }, 1,
    { feeCeiling: 2n * GWEI + GWEI / 20n }).then(() => assert.fail('resolved past the ceiling'), (e) => e);
  assert.ok(isFeeCeilingError(error), `${error.name}: ${error.message}`);
  const kept = log.next('txMined', (e) => e.nonce === 0);
  await node.rpc('anvil_setNextBlockBaseFeePerGas', ['0x7']); // the spike is over
  const next = await relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 2n, gas: 21000n, ...fee });
  assert.equal(next.nonce, 1, 'the next send was not stuck behind nonce 0');
  assert.equal((await kept).hash, error.hashes[0], 'the kept original was re-broadcast and mined');
  assert.equal((await node.rpc('eth_getTransactionReceipt', [error.hashes[0]])).status, '0x1');
  assert.deepEqual(relayer.pendingTransactions(31337, account.address), []);
});

test('"nonce too low" because our own transaction was already mined is reported as success', async () => {
  // Automine: the test needs the transaction mined the moment it arrives, before the retry asks again.
  const node = await chain({ mining: 'auto' });
  const relayer = relayerFor(node.url, { maxRetries: 2 });
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[6]);
  node.proxy.setMode('drop', 1); // mined, answer lost; the retry hears "nonce too low"
  const outcome = await relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 3n, gas: 21000n, ...fee });
  assert.equal(outcome.outcome, 'mined');
  assert.equal(outcome.status, '0x1');
  // The retry of the cut send meets the mined transaction: anvil says "nonce too low" (the outcome
  // was unknown until the receipt: txUnknown) or, while the automined transaction is still in its
  // pool, "already known" (the node holds our bytes: accepted, nothing unknown left).
  const unknown = log.of('txUnknown').length;
  assert.ok(unknown === 1 || log.of('txSubmitted').length === 1, `txUnknown ${unknown}, txSubmitted ${log.of('txSubmitted').length}`);
  assert.equal(unknown + log.of('txSubmitted').length, 1, 'one or the other, once');
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

test('"nonce too low" from a gateway that delivered our bytes itself is ours: a node knows the hash, no other nonce is used', async () => {
  // A retrying gateway delivers the bytes, its second delivery hears "nonce too low", and that is the
  // answer the relayer gets: no attempt of ours was ambiguous, yet the bytes wait in the node's pool
  // (no receipt yet: a block every second). Only asking the nodes for the hash tells ours from a
  // nonce someone else used; taken for someone else's, the book moves on and the same payment goes
  // out again under the next nonce.
  const node = await chain();
  const relayer = relayerFor(node.url);
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[17]);
  const start = Number(await node.rpc('eth_getTransactionCount', [account.address, 'pending']));
  node.proxy.onNextSend(async (forward) => {
    const delivered = await forward();
    const { id } = JSON.parse(delivered.text);
    return { status: 200, text: JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'nonce too low' } }) };
  });
  const outcome = await relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 17n, gas: 21000n, ...fee });
  assert.equal(outcome.outcome, 'mined');
  assert.equal(outcome.status, '0x1');
  assert.equal(log.of('nonceResync').length, 0, 'the nonce was ours: no resync');
  const ours = node.proxy.raws.map((raw) => ethers.Transaction.from(raw)).filter((tx) => tx.from === account.address);
  assert.deepEqual([...new Set(ours.map((tx) => tx.nonce))], [start], 'every send carried the one nonce');
  assert.equal(Number(await node.rpc('eth_getTransactionCount', [account.address, 'latest'])), start + 1, 'paid once');
});

test('a reorg that drops the receipt is noticed; the wait goes on and the same bytes are mined again', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
  const log = recorder(relayer);
  const account = privateKeyToAccount(KEYS[7]);
  const snapshot = await node.rpc('evm_snapshot');
  const sending = relayer.sendTransactionWithSpeedup(account, { to: RECIPIENT, value: 4n, gas: 21000n, ...fee }, 3, { confirmations: 3 });
  const included = await log.next('txIncluded');
  const reorg = log.next('reorg');
  await node.rpc('evm_revert', [snapshot]);
  assert.equal((await reorg).hash, included.hash);
  const outcome = await sending;
  assert.equal(outcome.hash, included.hash, 'the same transaction, re-broadcast and mined again');
  assert.ok(outcome.confirmations >= 3);
  assert.ok(log.of('txRebroadcast').length >= 1);
});

test('bad transaction requests fail typed before anything is signed or sent, and the nonce book is unchanged', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url, { chainId: undefined });
  const account = privateKeyToAccount(KEYS[8]);
  let signed = 0;
  const counting = { ...account, signTransaction: async (tx) => { signed += 1; return account.signTransaction(tx); } };
  const cases = [
    [{ to: RECIPIENT, value: -1n, chainId: 31337 }, 'value'],
    [{ to: '0x1234', value: 1n, chainId: 31337 }, 'to'],
    [{ to: RECIPIENT, maxFeePerGas: 1.5e9 + 0.5, chainId: 31337 }, 'maxFeePerGas'],
    [{ to: RECIPIENT, value: 1n, chainId: 1 }, 'chainId'],
    [{ value: 1n }, 'to'],
    [{ to: RECIPIENT, chainId: 31337, maxFeePerGass: 1n }, 'maxFeePerGass'],
    [{ to: RECIPIENT, chainId: 31337, nonce: 5 }, 'nonce'],
    [{ to: RECIPIENT, from: ANVIL_ACCOUNT_0 }, 'from'],
  ];
  for (const [tx, field] of cases) {
    const error = await relayer.sendTransactionWithSpeedup(counting, tx).then(() => assert.fail('accepted'), (e) => e);
    assert.ok(isInvalidTransactionError(error), `${field}: ${error.name}: ${error.message}`);
    assert.equal(error.field, field);
  }
  await assert.rejects(relayer.sendTransactionWithSpeedup({ privateKey: KEYS[8] }, { to: RECIPIENT, chainId: 31337 }), { name: 'InvalidSignerError' });
  await assert.rejects(relayer.sendTransactionWithSpeedup(counting, { to: RECIPIENT, chainId: 31337 }, 0), (e) => e.field === 'maxWaitBlockCount');
  await assert.rejects(relayer.sendTransactionWithSpeedup(counting, { to: RECIPIENT, chainId: 31337 }, 3, { bumpPercent: 5 }), (e) => e.field === 'options.bumpPercent');
  // A ceiling below what the next block needs: refused before signing, not a transaction the node rejects.
  // Under interval mining the block being built when the fee is set may still be mined at the old fee, so
  // wait until a mined block carries it (bounded), not just for the next block; a setting the block
  // being built swallowed (anvil races it with interval mining on a busy machine) is made again.
  const carried = async () => BigInt((await node.rpc('eth_getBlockByNumber', ['latest', false])).baseFeePerGas) >= 40n * GWEI;
  for (let i = 0; !(await carried()); i += 1) {
    if (i >= 150) assert.fail('the raised base fee never reached a mined block');
    if (i % 30 === 0) await node.rpc('anvil_setNextBlockBaseFeePerGas', ['0x' + (50n * GWEI).toString(16)]);
    await new Promise((r) => setTimeout(r, 50));
  }
  const low = await relayer.sendTransactionWithSpeedup(counting, { to: RECIPIENT, value: 1n }, 3, { feeCeiling: 10n * GWEI })
    .then(() => assert.fail('accepted'), (e) => e);
  assert.ok(isFeeCeilingError(low), `${low.name}: ${low.message}`);
  assert.equal(low.ceiling, 10n * GWEI);
  assert.ok(low.needed > 10n * GWEI);
  assert.equal(signed, 0);
  assert.equal(node.proxy.raws.length, 0);
  // Nothing was taken: the next good send gets the account's first nonce.
  const ok = await relayer.sendTransactionWithSpeedup(counting, { to: RECIPIENT, value: 1n, ...fee });
  assert.equal(ok.nonce, 0);
});

test('an EIP-1193 wallet signs and sends by itself; its speed-up re-sends the same nonce with higher fees', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
  const log = recorder(relayer);
  // anvil's unlocked account 0 behind a bare EIP-1193 object (through the proxy): the wallet, not us, holds the key and broadcasts.
  const wallet = { request: async ({ method, params }) => {
    const r = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = await r.json();
    if (body.error) throw Object.assign(new Error(body.error.message), { code: body.error.code });
    return body.result;
  } };
  node.spikeBaseFeeAtNextSend(100n * GWEI);
  const sending = relayer.sendTransactionWithSpeedup(wallet, { to: RECIPIENT, value: 2n, gas: 21000n, ...lowFee }, 1);
  const submitted = await log.next('txSubmitted');
  const speedUp = await log.next('speedUp');
  const outcome = await sending;
  assert.deepEqual(outcome.hashes, [submitted.hash, speedUp.hash]);
  assert.equal(outcome.hash, speedUp.hash);
  assert.equal(outcome.outcome, 'replaced');
  assert.equal(outcome.from.toLowerCase(), ANVIL_ACCOUNT_0.toLowerCase());
  assert.equal(node.proxy.raws.length, 0, 'a wallet broadcasts itself: no raw bytes went through the relayer');
});

test('a viem WalletClient signs with its own account: a local account signs here, never the node\'s unlocked account', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
  const anvilChain = defineChain({ id: 31337, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [node.url] } } });
  const account = privateKeyToAccount(KEYS[12]);
  const client = createWalletClient({ account, chain: anvilChain, transport: http(node.url) });
  const outcome = await relayer.sendTransactionWithSpeedup(client, { to: RECIPIENT, value: 3n });
  assert.equal(outcome.from.toLowerCase(), account.address.toLowerCase(), 'sent from the client\'s account');
  const distinct = () => new Set(node.proxy.raws).size;
  assert.equal(distinct(), 1, 'signed locally, broadcast by the relayer');
  // A JSON-RPC account: the wallet behind the client sends (here anvil's unlocked account 0).
  const jsonRpc = createWalletClient({ account: ANVIL_ACCOUNT_0, chain: anvilChain, transport: http(node.url) });
  const sent = await relayer.sendTransactionWithSpeedup(jsonRpc, { to: RECIPIENT, value: 4n });
  assert.equal(sent.from.toLowerCase(), ANVIL_ACCOUNT_0.toLowerCase());
  assert.equal(distinct(), 1, 'the wallet sent it itself');
  // A client without an account, or a `from` that is not the signer's: refused before anything is signed.
  const bare = createWalletClient({ chain: anvilChain, transport: http(node.url) });
  await assert.rejects(relayer.sendTransactionWithSpeedup(bare, { to: RECIPIENT, value: 1n }), (e) => isInvalidSignerError(e));
  await assert.rejects(relayer.sendTransactionWithSpeedup(client, { to: RECIPIENT, value: 1n, from: ANVIL_ACCOUNT_0 }),
    (e) => isInvalidTransactionError(e) && e.field === 'from');
  // A client on another chain is cross-checked.
  const elsewhere = createWalletClient({ account, chain: { ...anvilChain, id: 5 }, transport: http(node.url) });
  await assert.rejects(relayer.sendTransactionWithSpeedup(elsewhere, { to: RECIPIENT, value: 1n }),
    (e) => isInvalidSignerError(e) && /chain 5/.test(e.message));
  assert.equal(distinct(), 1);
  assert.equal(await node.rpc('eth_getTransactionCount', [account.address, 'latest']), '0x1', 'the refusals took no nonce');
});

test('with no chainId anywhere the relayer signs for the chain its endpoints serve (the seed\'s usage); endpoints that disagree are named', async () => {
  const node = await chain();
  // The seed's constructor call, as is.
  const relayer = new FaultTolerantRelayer([node.url], { maxRetries: 4, baseDelayMs: 1000, maxDelayMs: 15000 });
  cleanups.push(() => relayer.close());
  const wallet = new ethers.Wallet(KEYS[13]);
  const outcome = await relayer.sendTransactionWithSpeedup(wallet, { to: RECIPIENT, value: 1n }, 3);
  assert.equal(outcome.outcome, 'mined');
  assert.equal((await node.rpc('eth_getTransactionByHash', [outcome.hash])).chainId, '0x7a69', 'signed for the endpoints\' chain');
  assert.equal(node.proxy.count('eth_chainId'), 1, 'asked once: the pool reuses the answer as its own chain check');
  assert.equal(relayer.stats().endpoints[0].chain, 'verified');
  // An ethers Wallet connected to a provider on another chain is refused before signing.
  const other = await chain({ args: ['--chain-id', '5'] });
  const onOther = new ethers.Wallet(KEYS[13], new ethers.JsonRpcProvider(other.anvilUrl, undefined, { staticNetwork: true }));
  await assert.rejects(relayer.sendTransactionWithSpeedup(onOther, { to: RECIPIENT, value: 1n }),
    (e) => isInvalidSignerError(e) && /chain 5/.test(e.message) && /31337/.test(e.message));
  // Endpoints on different chains: which one is meant is the caller's choice.
  const mixed = new FaultTolerantRelayer([node.url, other.url]);
  cleanups.push(() => mixed.close());
  const error = await mixed.sendTransactionWithSpeedup(wallet, { to: RECIPIENT, value: 1n }).then(() => assert.fail('signed'), (e) => e);
  assert.ok(isNoEndpointError(error), `${error.name}: ${error.message}`);
  assert.deepEqual(error.chains.map((c) => c.chainId).sort((a, b) => a - b), [5, 31337]);
  assert.equal(new Set([...other.proxy.raws, ...node.proxy.raws]).size, 1, 'nothing more was signed or sent');
  // Every spelling of the chainId option.
  for (const chainId of [31337n, '31337', '0x7a69']) {
    const r = new FaultTolerantRelayer([node.url], { chainId });
    cleanups.push(() => r.close());
    await assert.rejects(r.sendTransactionWithSpeedup(wallet, { to: RECIPIENT, value: 1n, chainId: 1 }), (e) => e.field === 'chainId');
  }
});

test('after close(), sends, raw submits and cancels fail with ClosedError and nothing is signed', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
  const account = privateKeyToAccount(KEYS[14]);
  let signed = 0;
  const counting = { ...account, signTransaction: async (tx) => { signed += 1; return account.signTransaction(tx); } };
  await relayer.close();
  await assert.rejects(relayer.sendTransactionWithSpeedup(counting, { to: RECIPIENT, value: 1n }), (e) => isClosedError(e));
  const raw = await account.signTransaction({ chainId: 31337, nonce: 0, to: RECIPIENT, value: 1n, gas: 21000n, type: 'eip1559', ...fee });
  await assert.rejects(relayer.submitRaw(raw), (e) => isClosedError(e));
  await assert.rejects(relayer.cancelTransaction(counting, { nonce: 0 }), (e) => isClosedError(e));
  assert.equal(signed, 0);
  assert.equal(node.proxy.raws.length, 0);
});

test('a legacy gasPrice transaction stays legacy through its speed-up', async () => {
  const node = await chain();
  const relayer = relayerFor(node.url);
  const log = recorder(relayer);
  const wallet = new ethers.Wallet(KEYS[9]);
  node.spikeBaseFeeAtNextSend(100n * GWEI);
  const sending = relayer.sendTransactionWithSpeedup(wallet, { to: RECIPIENT, value: 6n, gasPrice: 2n * GWEI }, 1);
  const submitted = await log.next('txSubmitted');
  const speedUp = await log.next('speedUp');
  assert.ok(BigInt(speedUp.gasPrice) * 10n > 2n * GWEI * 11n, 'gas price raised by more than 10 %');
  assert.equal(speedUp.maxFeePerGas, undefined);
  const outcome = await sending;
  assert.equal(outcome.outcome, 'replaced');
  assert.equal(outcome.type, '0x0', 'mined as a legacy transaction');
  assert.deepEqual(outcome.hashes, [submitted.hash, speedUp.hash]);
  assert.equal(BigInt(outcome.gasUsed), 21000n, 'the gas limit was estimated');
});

test('a batch of sends through a chaos proxy (drops, delays, duplicates, 502 after forwarding): every nonce once, true outcomes, no double spend', async () => {
  // Automine: a duplicate delivery must meet a transaction that is already mined (the double-payment
  // race this test guards); with automine the first delivery is mined before the second arrives.
  const node = await chain({ mining: 'auto' });
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
