// One process of a bot fleet (fleet.test.mjs, benches): `relayers` relayers on the same URLs
// and options send `rps` reads per second in total for `durationMs` (distinct params: no cache or
// dedup hits), after an optional burst, then report one JSON line: how many were answered and how the rest failed.
// JSON has no Infinity: `'Infinity'` stands for it (`cuPerSecond: Infinity`, a plan to learn).
const config = JSON.parse(process.argv[2], (_, v) => (v === 'Infinity' ? Infinity : v));
const { FaultTolerantRelayer } = await import(config.pkg);
const relayers = Array.from({ length: config.relayers || 1 }, () => new FaultTolerantRelayer(config.urls, config.options));
// A bot's start-up: the store connects meanwhile (a relayer spends from its own bucket until
// its realm's first lease, one round trip after the connection is up).
// With `waitLease`, the bot starts its work once coordinated (at most 5 s), as a fleet that
// cares about its first second would.
const born = Date.now();
const fleetState = () => relayers[0].stats().quotaGroups.map((g) => g.fleet)[0];
await new Promise((r) => setTimeout(r, config.warmMs ?? 300));
while (config.waitLease && fleetState() === 'local' && Date.now() - born < 5000) await new Promise((r) => setTimeout(r, 20));
const fleetAtStart = fleetState();
// The plan it starts its reads at (Infinity: none yet, for a plan to learn).
const allowedAtStart = relayers[0].stats().quotaGroups.map((g) => g.allowedCuPerSecond)[0];
// With `startAt` (Unix ms), the processes of one run start their load together however long each
// took to spawn and load: a fleet's members run at once, not one after another on a busy machine.
if (config.startAt) await new Promise((r) => setTimeout(r, Math.max(0, config.startAt - Date.now())));
const startedAfterMs = Date.now() - born;
const startedAt = Date.now();
// Diagnostics for a failing test: TRACE prints process 1's breakers and quota group every 250 ms
// (on stderr, passed on by fleet-process.mjs); WHY tallies failures with when each read was sent
// and failed (s since the load started).
if (process.env.TRACE && config.id === 1) {
  setInterval(() => {
    const st = relayers[0].stats();
    const breakers = st.endpoints.map((e) => e.state[0]).join('');
    process.stderr.write(`${Date.now() - startedAt} ${breakers} ${JSON.stringify(st.quotaGroups[0])} waiting ${st.waiting}\n`);
  }, 250).unref();
}
// With `sampleMs`, process 1's learned plan over the run ([s since the load started, CU/s]; a
// plan to learn's Infinity is left out), so a test can tell what it first learned from what it kept.
const allowedSeen = [];
if (config.sampleMs) {
  setInterval(() => {
    const rate = relayers[0].stats().quotaGroups[0]?.allowedCuPerSecond;
    if (Number.isFinite(rate)) allowedSeen.push([(Date.now() - startedAt) / 1000, rate]);
  }, config.sampleMs).unref();
}
const halfSeconds = (ms) => Math.round(ms / 500) / 2;
const outcomes = [];
const read = (relayer, n) => {
  const address = `0x${(config.id * 1e6 + n).toString(16).padStart(40, '0')}`;
  const sentAt = Date.now();
  outcomes.push(relayer.request({ method: 'eth_getBalance', params: [address, 'latest'] }).then(() => 'ok', (e) => (process.env.WHY
    ? `${e.name} sent ${halfSeconds(sentAt - startedAt)} failed ${halfSeconds(Date.now() - startedAt)}` : e.name)));
};
// A job's start: `burst` reads at once (a bot fleet starting together), then the steady rate.
for (let i = 0; i < (config.burst || 0); i += 1) read(relayers[i % relayers.length], 5e5 + i);
const gap = 1000 / config.rps;
const start = Date.now();
let n = 0;
while (Date.now() - start < config.durationMs) {
  read(relayers[n % relayers.length], n);
  n += 1;
  const due = start + n * gap;
  const wait = due - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
const settled = await Promise.all(outcomes);
const tally = {};
for (const o of settled) tally[o] = (tally[o] || 0) + 1;
const fleet = relayers[0].stats().quotaGroups.map((g) => g.fleet);
const allowedRate = relayers[0].stats().quotaGroups.map((g) => g.allowedCuPerSecond);
// Each endpoint's head as the first relayer knows it (null: never heard).
const heads = relayers[0].stats().endpoints.map((e) => e.head);
await Promise.all(relayers.map((r) => r.close()));
process.stdout.write(`${JSON.stringify({ sent: settled.length, tally, fleet, allowedRate, fleetAtStart, allowedAtStart, startedAfterMs, startedAt, allowedSeen, heads })}\n`);
