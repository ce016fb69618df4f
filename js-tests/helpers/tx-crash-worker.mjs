// A worker that sends one transaction from an account through a relayer on the fleet's Redis and
// is killed (SIGKILL, by itself: no cleanup of any kind runs) at one point of the send
// (tx-journal.test.mjs):
//   afterJournal  the nonce is live and its signed bytes journaled, nothing broadcast yet
//   afterBroadcast a node took the bytes ('txSubmitted')
//   midSpeedUp    a speed-up is signed and journaled, not broadcast yet
// Before dying it prints one JSON line: the nonce and the hashes it knew of.
const config = JSON.parse(process.argv[2]);
const { FaultTolerantRelayer } = await import(config.pkg);
const { ethers } = await import('ethers');
const { createClient } = await import('redis');

const client = createClient({ url: config.redis });
await client.connect();
const known = { nonce: null, hashes: [] };
const die = () => {
  process.stdout.write(`${JSON.stringify(known)}\n`, () => process.kill(process.pid, 'SIGKILL'));
};
// The kill points inside the store's script calls (sent by digest, or whole after NOSCRIPT):
// right after the store answered.
for (const name of ['eval', 'evalSha']) {
  const run = client[name].bind(client);
  client[name] = async (script, call) => {
    const reply = await run(script, call);
    const [op, , n, record] = call.arguments ?? [];
    if (op === 'live' && record) known.nonce = Number(n);
    if (op === 'live' && record && config.killAt === 'afterJournal') die();
    if (op === 'write' && config.killAt === 'midSpeedUp') die();
    return reply;
  };
}
const relayer = new FaultTolerantRelayer([config.url], { chainId: config.chainId, fleet: { redis: client }, transactions: { pollIntervalMs: 500 } });
relayer.on('txSubmitted', (e) => {
  known.hashes.push(e.hash);
  if (config.killAt === 'afterBroadcast') die();
});
relayer.on('speedUp', (e) => known.hashes.push(e.hash));
const wallet = new ethers.Wallet(config.key);
await relayer.sendTransactionWithSpeedup(wallet, { to: '0x000000000000000000000000000000000000dEaD', value: 12345n, gas: 21000n }, 2)
  .then(() => process.stdout.write(`${JSON.stringify({ ...known, error: 'not killed: mined' })}\n`),
    (e) => process.stdout.write(`${JSON.stringify({ ...known, error: `${e.name}: ${e.message}` })}\n`));
process.exit(1);
