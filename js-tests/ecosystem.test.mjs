// The relayer as the EIP-1193 provider under ethers v6 and viem, against a
// real node (anvil) behind a faulty proxy: real reads, a revert, a signed
// transfer and its receipt, with the proxy failing over underneath.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ethers } from 'ethers';
import { createPublicClient, createWalletClient, custom, parseEther } from 'viem';
import { FaultTolerantRelayer } from '../pkg/dist/node.mjs';
import { startChain } from './helpers/chain.mjs';
import { useMockNodes, deadUrl } from './helpers/mock-node.mjs';

const node = useMockNodes(after);
const DEV = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const OTHER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
let anvil; let relayer; let proxy;

before(async () => {
  anvil = await startChain(); // far past block 0, a block every second
  // The primary is dead; the proxy in front of anvil browns out now and then.
  proxy = await node([{ status: 502 }, { proxy: anvil.anvilUrl }, { status: 503 }, { proxy: anvil.anvilUrl }]);
  relayer = new FaultTolerantRelayer([await deadUrl(), proxy.url], { baseDelayMs: 1, maxDelayMs: 5, cache: false });
});
after(async () => {
  if (relayer) await relayer.close();
  if (anvil) await anvil.stop();
});

test('ethers v6 BrowserProvider over the relayer: reads, a revert, a transfer and wait()', async () => {
  const provider = new ethers.BrowserProvider(relayer);
  assert.equal((await provider.getNetwork()).chainId, 31337n);
  assert.ok(await provider.getBlockNumber() >= 0);
  assert.ok(await provider.getBalance(DEV) > 0n);
  const signer = await provider.getSigner(DEV);
  // Deploy a contract whose code is PUSH1 0 PUSH1 0 REVERT, then call it: a revert, tried once.
  const deploy = await signer.sendTransaction({ data: '0x6460006000fd6000526005601bf3' });
  const { contractAddress } = await deploy.wait();
  const before = proxy.count('eth_call');
  await assert.rejects(provider.call({ to: contractAddress, data: '0x' }), (e) => e.code === 'CALL_EXCEPTION');
  assert.equal(proxy.count('eth_call'), before + 1, 'the revert reached the node once');
  const tx = await signer.sendTransaction({ to: OTHER, value: parseEther('0.01') });
  const receipt = await tx.wait();
  assert.equal(receipt.status, 1);
  assert.equal(receipt.hash, tx.hash);
});

test('viem public and wallet clients over custom(relayer): reads, a transfer and its receipt', async () => {
  const publicClient = createPublicClient({ transport: custom(relayer) });
  assert.equal(await publicClient.getChainId(), 31337);
  assert.ok(await publicClient.getBlockNumber() >= 0n);
  const before = await publicClient.getBalance({ address: OTHER });
  const wallet = createWalletClient({ account: DEV, transport: custom(relayer), chain: null });
  const hash = await wallet.sendTransaction({ to: OTHER, value: parseEther('0.02'), chain: null });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  assert.equal(receipt.status, 'success');
  assert.equal(await publicClient.getBalance({ address: OTHER }), before + parseEther('0.02'));
});

test('JSON-RPC errors keep their code, so viem maps them to its own error classes', async () => {
  const publicClient = createPublicClient({ transport: custom(relayer, { retryCount: 0 }) });
  const err = await publicClient.request({ method: 'eth_nonexistentMethod', params: [] }).catch((e) => e);
  assert.equal(err.name, 'MethodNotFoundRpcError');
  assert.equal(err.code, -32601);
  assert.ok(proxy.count() > 0);
});
