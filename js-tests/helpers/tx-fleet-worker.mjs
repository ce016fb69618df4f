// One worker process of a bot fleet sending from one account (tx-fleet.test.mjs): `sends`
// transactions at once through a relayer that names the fleet's Redis, then one JSON line: each
// send's nonce and mined hash, or how it failed.
const config = JSON.parse(process.argv[2]);
const { FaultTolerantRelayer } = await import(config.pkg);
const { ethers } = await import('ethers');
const relayer = new FaultTolerantRelayer([config.url], { chainId: config.chainId, ...(config.redis ? { fleet: { redis: config.redis } } : {}) });
const wallet = new ethers.Wallet(config.key);
if (config.startAt) await new Promise((r) => setTimeout(r, Math.max(0, config.startAt - Date.now())));
const results = await Promise.allSettled(Array.from({ length: config.sends }, (_, i) => relayer.sendTransactionWithSpeedup(
  wallet, { to: '0x000000000000000000000000000000000000dEaD', value: BigInt(config.id * 1000 + i + 1), gas: 21000n }, 3,
)));
await relayer.close();
process.stdout.write(`${JSON.stringify(results.map((r) => (r.status === 'fulfilled'
  ? { nonce: Number(r.value.nonce), hash: r.value.hash }
  : { error: `${r.reason.name}: ${r.reason.message}` })))}\n`);
