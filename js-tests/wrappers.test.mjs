// Retries never stack: wrapped by viem's custom() transport (its defaults:
// 3 retries on -32603, -32005, unknown codes and some HTTP statuses) or by
// ethers' BrowserProvider, a give-up of the relayer is final. For every
// failing node below, the upstream requests under each wrapper equal the
// relayer's alone, and the error each side sees is the documented one.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import { createPublicClient, custom } from 'viem';
import { FaultTolerantRelayer, isRpcError, isHttpError, isTransportError, isRateLimitedError } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const OPTIONS = { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5, attemptTimeoutMs: 300, adaptiveTimeout: false, hedge: false,
  deadlineMs: 3000, maxRetryAfterMs: 60000, cache: false, dedup: false, chainId: 1 };

// How each node fails, what the relayer alone reports for it, the code it carries and viem's class for it.
// A give-up carries -32002 (no wrapper retries it) unless the node's code is one no wrapper retries anyway.
const UNAVAILABLE = [-32002, 'ResourceUnavailableRpcError'];
const FAULTS = [
  ['HTTP 429 with Retry-After', [{ status: 429, headers: { 'retry-after': '30' } }], isRateLimitedError, UNAVAILABLE],
  ['HTTP 503', [{ status: 503 }], isHttpError, UNAVAILABLE],
  ['a hang', [{ hang: true }], (e) => isTransportError(e) || e.kind === 'deadline', UNAVAILABLE],
  ['-32603 internal error', [{ error: { code: -32603, message: 'internal error', data: '0xfeed' } }], isRpcError, UNAVAILABLE],
  // A limit on the very first requests teaches no plan (too little sent to tell one): the read
  // is tried again after each cooldown, within maxRetries, and gives up with the node's error.
  ['-32005 limit exceeded', [{ error: { code: -32005, message: 'limit exceeded' } }], (e) => isRateLimitedError(e) || e.kind === 'deadline' || (isRpcError(e) && e.rpcCode === -32005), UNAVAILABLE],
  ['-32000 header not found', [{ error: { code: -32000, message: 'header not found' } }], isRpcError, [-32000, 'InvalidInputRpcError']],
];

/** The failing read through one caller; returns the error it saw and the upstream eth_blockNumber count. */
async function run(caller, script) {
  const upstream = await node(script);
  const relayer = new FaultTolerantRelayer([upstream.url], OPTIONS);
  let error;
  try {
    if (caller === 'alone') await relayer.request({ method: 'eth_blockNumber' });
    if (caller === 'viem') await createPublicClient({ transport: custom(relayer) }).getBlockNumber({ cacheTime: 0 });
    if (caller === 'ethers') await new ethers.BrowserProvider(relayer, 1, { staticNetwork: true }).getBlockNumber();
  } catch (e) {
    error = e;
  }
  await relayer.close();
  return { error, requests: upstream.count('eth_blockNumber') };
}

for (const [name, script, expected, [code, viemName]] of FAULTS) {
  test(`a node answering ${name}: viem custom() and ethers BrowserProvider send what the relayer alone sends`, async () => {
    const alone = await run('alone', script);
    assert.ok(alone.error && expected(alone.error), `${alone.error && alone.error.name}: ${alone.error && alone.error.message}`);
    assert.equal(alone.error.code, code, 'a give-up carries a code no wrapper retries');
    const viem = await run('viem', script);
    const ether = await run('ethers', script);
    assert.equal(viem.requests, alone.requests, `viem: ${viem.requests} upstream requests, alone: ${alone.requests}`);
    assert.equal(ether.requests, alone.requests, `ethers: ${ether.requests} upstream requests, alone: ${alone.requests}`);
    // What each side sees: viem's class for the code around ours; ethers' UNKNOWN_ERROR with our code.
    assert.equal(viem.error.name, viemName);
    assert.equal(viem.error.code, code);
    assert.equal(viem.error.cause.kind, alone.error.kind, 'our error is the cause');
    assert.equal(ether.error.code, 'UNKNOWN_ERROR');
    assert.equal(ether.error.error.code, code, 'ethers keeps our code and message in error.error');
    const portless = (m) => m.replace(/127\.0\.0\.1:\d+/g, 'node');
    assert.equal(portless(ether.error.error.message), portless(alone.error.message));
  });
}

test("a node's error the relayer gave up on keeps its code, message and data where an app can read them", async () => {
  const { error } = await run('alone', [{ error: { code: -32603, message: 'internal error', data: '0xfeed' } }]);
  assert.equal(error.code, -32002);
  assert.equal(error.rpcCode, -32603, "the node's own code");
  assert.equal(error.data, '0xfeed', "the node's own data");
  assert.equal(error.shortMessage, 'internal error', "the node's own message");
  assert.equal(error.stopReason, 'attemptsExhausted');
  assert.equal(error.attempts, 3);
  const viem = await run('viem', [{ error: { code: -32603, message: 'internal error', data: '0xfeed' } }]);
  assert.equal(viem.error.cause.rpcCode, -32603, 'under viem: error.cause is ours');
});

test('errors the relayer did not retry keep the node code, so viem and ethers map them as usual', async () => {
  const revert = [{ error: { code: 3, message: 'execution reverted: no', data: '0x08c379a0' } }];
  const upstream = await node(revert);
  const relayer = new FaultTolerantRelayer([upstream.url], OPTIONS);
  const call = { to: '0x000000000000000000000000000000000000dEaD', data: '0x' };
  const alone = await relayer.request({ method: 'eth_call', params: [call, 'latest'] }).catch((e) => e);
  assert.equal(alone.code, 3);
  assert.equal(upstream.count('eth_call'), 1, 'a revert is tried once');
  const provider = new ethers.BrowserProvider(relayer, 1, { staticNetwork: true });
  const mapped = await provider.call(call).catch((e) => e);
  assert.equal(mapped.code, 'CALL_EXCEPTION');
  assert.equal(upstream.count('eth_call'), 2, 'ethers sent it once');
  const invalid = await node([{ error: { code: -32602, message: 'invalid params' } }]);
  const other = new FaultTolerantRelayer([invalid.url], OPTIONS);
  const viemError = await createPublicClient({ transport: custom(other) }).getBlockNumber({ cacheTime: 0 }).catch((e) => e);
  assert.equal(viemError.name, 'InvalidParamsRpcError');
  assert.equal(invalid.count('eth_blockNumber'), 1, 'viem does not retry invalid params');
  await relayer.close();
  await other.close();
});

test('ethers derives its usual codes from what the relayer passes through: NONCE_EXPIRED, INSUFFICIENT_FUNDS, REPLACEMENT_UNDERPRICED', async () => {
  // Signed (in shape) for chain 1, the relayer's: a transaction for another chain is not sent at all.
  const raw = '0x02f86a0180843b9aca00850ba43b740082520894000000000000000000000000000000000000dead0180c080a0' +
    '1111111111111111111111111111111111111111111111111111111111111111a02222222222222222222222222222222222222222222222222222222222222222';
  const cases = [
    ['nonce too low', 'NONCE_EXPIRED'],
    ['insufficient funds for gas * price + value', 'INSUFFICIENT_FUNDS'],
    ['replacement transaction underpriced', 'REPLACEMENT_UNDERPRICED'],
  ];
  for (const [message, code] of cases) {
    const upstream = await node([{ error: { code: -32000, message } }]);
    const relayer = new FaultTolerantRelayer([upstream.url], OPTIONS);
    const provider = new ethers.BrowserProvider(relayer, 1, { staticNetwork: true });
    const error = await provider.send('eth_sendRawTransaction', [raw]).catch((e) => e);
    assert.equal(error.code, code, `${message}: ${error.code} ${error.message}`);
    assert.equal(upstream.count('eth_sendRawTransaction'), 1, `${message}: a certain refusal is sent once`);
    await relayer.close();
  }
});

test("viem's custom() retries codes it does not know, reverts included: the README's retryCount: 0 keeps a revert at one request", async () => {
  const revert = [{ error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } }];
  const call = { to: '0x000000000000000000000000000000000000dEaD', data: '0x' };
  for (const [config, expected] of [[undefined, 4], [{ retryCount: 0 }, 1]]) {
    const upstream = await node(revert);
    const relayer = new FaultTolerantRelayer([upstream.url], OPTIONS);
    const error = await createPublicClient({ transport: custom(relayer, config) }).call(call).catch((e) => e);
    assert.equal(error.name, 'CallExecutionError');
    assert.equal(upstream.count('eth_call'), expected, `custom(relayer, ${JSON.stringify(config)})`);
    await relayer.close();
  }
});
