// Sends from one account by 1, 2 and 4 worker processes sharing its nonces through Redis,
// beside one worker alone (its own nonce book): sends mined per second and the store's round
// trips per send. anvil far past block 0 with a block every second; each worker sends its share
// of the sends at once (concurrent calls, nonces in call order per worker). Prints one table;
// `--write` also writes benches/TX-FLEET.md.
//   node benches/tx-fleet.mjs [--sends=200] [--write]
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { startRedis, scriptCalls as evals } from '../js-tests/helpers/redis.mjs';
import { txProcess as worker } from '../js-tests/helpers/fleet-process.mjs';
import { startChain } from '../js-tests/helpers/chain.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SENDS = Number((process.argv.find((a) => a.startsWith('--sends=')) || '--sends=200').slice(8));
const MNEMONIC = 'test test test test test test test test test test test junk';
const key = (i) => ethers.HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${i}`).privateKey;

const redis = await startRedis();
const chain = await startChain({ head: 1200 });
const rows = [];
try {
  const runs = [
    { label: '1 worker alone (own nonce book)', workers: 1, redis: false, account: 3 },
    { label: '1 worker, nonces on Redis', workers: 1, redis: true, account: 4 },
    { label: '2 workers, nonces on Redis', workers: 2, redis: true, account: 5 },
    { label: '4 workers, nonces on Redis', workers: 4, redis: true, account: 6 },
  ];
  for (const run of runs) {
    const before = await evals(redis.url);
    const startAt = Date.now() + 3000;
    const reports = await Promise.all(Array.from({ length: run.workers }, (_, i) => worker({
      id: i + 1, url: chain.url, chainId: 31337, key: key(run.account), sends: SENDS / run.workers, startAt,
      ...(run.redis ? { redis: redis.url } : {}),
    })));
    const seconds = (Date.now() - startAt) / 1000;
    const done = reports.flat();
    const mined = done.filter((r) => !r.error).length;
    const nonces = new Set(done.filter((r) => !r.error).map((r) => r.nonce));
    const after = await evals(redis.url);
    const trips = (after - before) / SENDS;
    rows.push([run.label, `${mined} / ${SENDS}`, nonces.size === mined ? 'yes' : 'NO', (mined / seconds).toFixed(1), run.redis ? trips.toFixed(2) : '–']);
    console.log(rows.at(-1).join(' | '));
  }
} finally {
  await chain.stop();
  await redis.stop();
}
const table = ['| workers | mined | distinct nonces | sends mined per second | Redis scripts per send (nonce book, journal, quota leases) |', '|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
console.log(`\n${table}`);
if (process.argv.includes('--write')) {
  writeFileSync(join(here, 'TX-FLEET.md'), `# Sends from one account across processes

\`node benches/tx-fleet.mjs --write\`, ${new Date().toISOString().slice(0, 10)}: ${SENDS} sends from one account on anvil (block 1,200+, a block every second), split between the workers, all called at once; each worker is its own Node process; Redis on 127.0.0.1.

${table}

Sends per second counts from the common start to the last send mined (every send waits for its receipt; blocks come every second). Redis scripts per send: the nonce book's and journal's calls (allocate; live, which carries the journal record; a lease renewal every 5 s while the send is pending; settle; a resync when the book is new; the orphan sweep, at most once per 5 s per worker) and the quota leases of the reads a send makes (fees, gas, receipts).
`);
}
process.exit(0);
