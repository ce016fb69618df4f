// Compiled with `tsc --strict` by js-tests/types.test.mjs next to the real
// ethers v6 and viem type definitions: their providers, wallets and
// accounts fit our parameters, and the relayer fits theirs, without casts.
import { ethers } from 'ethers';
import { createPublicClient, createWalletClient, custom } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { mainnet } from 'viem/chains';
import { FaultTolerantRelayer, type TxOutcome } from 'breakwater-rpc';

const key = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

export async function interop(): Promise<void> {
  const ethersUpstream = new ethers.JsonRpcProvider('http://127.0.0.1:8545', 1, { staticNetwork: true });
  const relayer = new FaultTolerantRelayer([ethersUpstream, 'http://127.0.0.1:8546', { provider: ethersUpstream, label: 'e' }]);
  // The relayer under ethers and viem.
  const provider = new ethers.BrowserProvider(relayer);
  const block: number = await provider.getBlockNumber();
  const client = createPublicClient({ chain: mainnet, transport: custom(relayer) });
  const wallet = createWalletClient({ chain: mainnet, transport: custom(relayer) });
  // ethers Wallet, viem account and the relayer itself (an EIP-1193 wallet) as signers.
  const tx = { to: '0x000000000000000000000000000000000000dEaD', value: 1n, chainId: 1 };
  const a: TxOutcome = await relayer.sendTransactionWithSpeedup(new ethers.Wallet(key), tx);
  const b: TxOutcome = await relayer.sendTransactionWithSpeedup(privateKeyToAccount(key), tx, 2, { feeCeiling: 10n ** 11n });
  const c: TxOutcome = await relayer.sendTransactionWithSpeedup(await provider.getSigner(), tx);
  // A viem WalletClient with a local account signs with that account.
  const local = createWalletClient({ account: privateKeyToAccount(key), chain: mainnet, transport: custom(relayer) });
  const d: TxOutcome = await relayer.sendTransactionWithSpeedup(local, tx);
  // The chainId option as ethers reports it (a bigint).
  const typed = new FaultTolerantRelayer(['http://127.0.0.1:8545'], { chainId: (await provider.getNetwork()).chainId,
    wrap: (p) => new ethers.BrowserProvider(p, 1) });
  // The seed's operations over a wrapped ethers provider, per relayer or per call.
  const nonce: number = await typed.executeRpcWithRetry((p: ethers.BrowserProvider) => p.getTransactionCount(tx.to, 'pending'));
  const fees: ethers.FeeData = await relayer.executeRpcWithRetry((p: ethers.BrowserProvider) => p.getFeeData(),
    { wrap: (p) => new ethers.BrowserProvider(p) });
  const viemClient = (p: Parameters<typeof custom>[0]) => createPublicClient({ chain: mainnet, transport: custom(p, { retryCount: 0 }) });
  const head: bigint = await relayer.executeRpcWithRetry((c: ReturnType<typeof viemClient>) => c.getBlockNumber(), { wrap: viemClient });
  void [block, client, wallet, a, b, c, d, nonce, fees, head];
}
