// Run by js-tests/node18.test.mjs under Node 18 (ESM entry): a failover, a
// typed error, and a transaction sent with a viem account against anvil.
import { FaultTolerantRelayer, isRpcError } from '../../pkg/dist/node.mjs';
import { privateKeyToAccount } from 'viem/accounts';

const [dead, good, revert, anvil, key] = process.argv.slice(2);
const relayer = new FaultTolerantRelayer([dead, good], { baseDelayMs: 1, maxDelayMs: 5, cache: false });
const out = { version: process.version };
out.block = await relayer.request({ method: 'eth_blockNumber' });
const failing = new FaultTolerantRelayer([revert], { baseDelayMs: 1 });
out.revertTyped = await failing.request({ method: 'eth_call', params: [{}, 'latest'] }).then(() => false, (e) => isRpcError(e) && e.code === 3);
const chain = new FaultTolerantRelayer([anvil], { chainId: 31337, transactions: { pollIntervalMs: 20 } });
const sent = await chain.sendTransactionWithSpeedup(privateKeyToAccount(key), { to: '0x000000000000000000000000000000000000dEaD', value: 1n });
out.tx = sent.status;
await Promise.all([relayer.close(), failing.close(), chain.close()]);
console.log(JSON.stringify(out));
