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
  void [block, client, wallet, a, b, c];
}
