// One process of a fleet under test (benches/fleet-redis.mjs): `clients` clients of one kind on
// the same URLs, each reading at `rate` per second once the harness says go, for `seconds`;
// reports every read's outcome and latency. Kinds: ours on Redis, ours per process, and the
// peers' multi-endpoint clients as benches/clients.mjs builds them. FLEET_BURST (default 10) is
// the key's burst in CU.
import { CLIENTS } from './clients.mjs';
import { FaultTolerantRelayer } from '../pkg/dist/node.mjs';

const config = JSON.parse(process.argv[2]);
const address = (i) => `0x${(0x100000 + (i % 0xffffff)).toString(16).padStart(40, '0')}`;

function ours(fleet) {
  // The first two URLs are on one key whose plan the user knows (the bench's limit, one CU a read).
  const costs = { eth_getBalance: 1, eth_chainId: 1 };
  const r = new FaultTolerantRelayer(config.urls.map((url, i) => (i < 2 ? { url, quotaGroup: 'key', costs } : url)), {
    quota: { key: { cuPerSecond: config.plan, burst: Number(process.env.FLEET_BURST || 10) } }, deadlineMs: 10000, ...(fleet ? { fleet } : {}),
  });
  return { read: (i) => r.request({ method: 'eth_getBalance', params: [address(i), 'latest'] }), close: () => r.close(), stats: () => r.stats() };
}

const make = {
  'breakwater-rpc + Redis': () => ours({ redis: config.redis, prefix: config.prefix }),
  'breakwater-rpc (per process)': () => ours(undefined),
  'viem fallback': () => CLIENTS['viem fallback'].make(config.urls),
  'ethers FallbackProvider (quorum 1)': () => CLIENTS['ethers FallbackProvider (quorum 1)'].make(config.urls),
}[config.kind];
const clients = Array.from({ length: config.clients }, () => make());
const fleetState = () => (clients[0].stats ? clients[0].stats().quotaGroups[0].fleet : undefined);
const born = Date.now();
while (fleetState() === 'local' && Date.now() - born < 5000) await new Promise((r) => setTimeout(r, 20));
process.send({ ready: true });
await new Promise((resolve) => process.once('message', resolve)); // go

const outcomes = [];
const start = Date.now();
if (process.env.FLEET_TRACE && clients[0].stats) {
  const trace = setInterval(() => {
    const st = clients[0].stats();
    const states = st.endpoints.map((e) => e.state[0]).join('');
    const q = st.quotaGroups[0];
    process.stderr.write(`p${config.id} ${Date.now() - start} ${states} ${JSON.stringify(q)} waiting ${st.waiting}\n`);
  }, 500);
  trace.unref();
}
const senders = clients.map(async (client, c) => {
  const gap = 1000 / config.rate;
  await new Promise((r) => setTimeout(r, (c / clients.length) * gap)); // spread, not in lockstep
  for (let n = 0; Date.now() - start < config.seconds * 1000; n += 1) {
    const began = Date.now();
    const i = config.id * 1e7 + c * 1e4 + n;
    const settled = Promise.resolve().then(() => client.read(i)).then(() => null, (e) => String(e && e.message).slice(0, process.env.FLEET_WHY ? 200 : 80));
    outcomes.push(settled.then((error) => ({ ok: error === null, ms: Date.now() - began, at: began - start, ...(error === null ? {} : { error }) })));
    await new Promise((r) => setTimeout(r, gap));
  }
});
await Promise.all(senders);
const settledAll = await Promise.race([
  Promise.all(outcomes),
  new Promise((r) => setTimeout(() => r(null), 15000)),
]);
const results = settledAll || [];
for (const c of clients) await Promise.resolve(c.close()).catch(() => {});
process.send({ issued: outcomes.length, results });
setTimeout(() => process.exit(0), 50);
