// Run by js-tests/node18.test.mjs under Node 18 (CommonJS entry).
const { FaultTolerantRelayer, isTransportError } = require('../../pkg/dist/node.cjs');

(async () => {
  const [dead, good] = process.argv.slice(2);
  const relayer = new FaultTolerantRelayer([dead, good], { baseDelayMs: 1, maxDelayMs: 5, cache: false });
  const out = { version: process.version, block: await relayer.request({ method: 'eth_blockNumber' }) };
  const lonely = new FaultTolerantRelayer([dead], { baseDelayMs: 1, maxDelayMs: 5, maxRetries: 1 });
  out.deadTyped = await lonely.request({ method: 'eth_blockNumber' }).then(() => false, (e) => isTransportError(e));
  await Promise.all([relayer.close(), lonely.close()]);
  console.log(JSON.stringify(out));
})();
