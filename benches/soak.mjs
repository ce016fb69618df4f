// Soak: many logical requests through one relayer against a loopback fleet
// (its own process) whose faults rotate every few seconds. Checks that every
// request ends exactly once, that JS heap and wasm memory level off, and
// that nothing (timers, sockets) is left behind after close().
//
//   node --expose-gc benches/soak.mjs [--requests 1000000] [--concurrency 64]
//   node --expose-gc benches/soak.mjs --smoke        (5,000 requests; npm test runs this)
import { FaultTolerantRelayer, isBreakwaterError } from '../pkg/dist/node.mjs';
import { startFleet } from './fleet-client.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const smoke = process.argv.includes('--smoke');
const total = arg('requests', smoke ? 5_000 : 1_000_000);
const concurrency = arg('concurrency', 64);
const gc = globalThis.gc || (() => {});

// Fault phases, rotated every PHASE_MS: each is a set of node modes.
const PHASES = [
  ['healthy', [['healthy'], ['healthy'], ['healthy']]],
  ['primary down', [['down'], ['healthy'], ['healthy']]],
  ['brownout 30 % on two', [[{ brownout: 0.3 }], [{ brownout: 0.3 }], ['healthy']]],
  ['a node hangs', [['healthy'], ['hang'], ['healthy']]],
  ['shared key over quota', [['down'], [{ quota: 'k' }], [{ quota: 'k' }]]],
  ['all down', [['down'], ['down'], ['down']]],
  ['wrong chain + brownout', [['wrongChain'], [{ brownout: 0.5 }], ['healthy']]],
];
const PHASE_MS = smoke ? 400 : 3000;

function sample(relayer) {
  gc();
  const m = process.memoryUsage();
  return { heapMB: m.heapUsed / 2 ** 20, rssMB: m.rss / 2 ** 20, wasmMB: relayer.stats().wasmMemoryBytes / 2 ** 20 };
}

const timersBefore = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const fleet = await startFleet(3);
await fleet.quota('k', 2000);
const relayer = new FaultTolerantRelayer(fleet.urls, {
  maxRetries: 3, baseDelayMs: 5, maxDelayMs: 50, attemptTimeoutMs: 150, deadlineMs: 1000, cache: false, dedup: false,
  chainId: 1, breaker: { openMs: 500, openMaxMs: 2000 }, maxQueue: 10_000, adaptiveTimeout: { multiplier: 5, floorMs: 50 },
  // Time runs fast here (phases of seconds, breakers open for 500 ms), so the warm-up after a
  // recovery is one phase, not the default 30 s: a pool that lost a node every 3 s would
  // otherwise be warming all run long, by design.
  slowStart: { warmupMs: PHASE_MS },
});
let events = 0;
for (const type of ['retry', 'failover', 'breaker', 'rateLimited', 'chainMismatch', 'overload']) relayer.on(type, () => { events += 1; });

const ended = new Uint8Array(total); // 1 = ok, 2 = failed; a second ending would be a bug
let ok = 0; let failed = 0; let doubleEnds = 0; let started = 0;
const kinds = {};
const samples = [];
const t0 = Date.now();
let phase = 0;
const perPhase = [];
let phaseStart = 0;
let phaseOkStart = 0;
const rotate = async () => {
  perPhase.push({ name: PHASES[phase][0], ended: ok + failed - phaseStart, answered: ok - phaseOkStart, at: ok + failed });
  phaseOkStart = ok;
  if (process.env.SOAK_PHASES === 'live') {
    const st = relayer.stats();
    console.error(`[phase] ${PHASES[phase][0]}: ${ok + failed - phaseStart} · ${JSON.stringify({ pacing: st.recoveryPacing, budget: st.retryBudget, waiting: st.waiting, eps: st.endpoints.map((e) => [e.state, Number(e.share.toFixed(2)), e.inFlight]), groups: st.quotaGroups })}`);
  }
  phaseStart = ok + failed;
  phase = (phase + 1) % PHASES.length;
  await Promise.all(PHASES[phase][1].map((modes, node) => fleet.mode(node, modes[0])));
};
const rotation = setInterval(() => { rotate().catch(() => {}); }, PHASE_MS);

const METHODS = [
  { method: 'eth_blockNumber' },
  { method: 'eth_getBalance', params: ['0x0000000000000000000000000000000000000001', 'latest'] },
  { method: 'eth_call', params: [{ to: '0x0000000000000000000000000000000000000002', data: '0x' }, 'latest'] },
  { method: 'eth_chainId' },
];
async function worker() {
  for (;;) {
    const i = started;
    if (i >= total) return;
    started += 1;
    const settle = (code) => {
      if (ended[i] !== 0) doubleEnds += 1;
      ended[i] = code;
    };
    try {
      await relayer.request(METHODS[i % METHODS.length]);
      settle(1);
      ok += 1;
    } catch (e) {
      settle(2);
      failed += 1;
      const kind = isBreakwaterError(e) ? e.kind : `foreign:${e && e.name}`;
      kinds[kind] = (kinds[kind] || 0) + 1;
    }
    if ((ok + failed) % Math.max(1, Math.floor(total / 20)) === 0) {
      const row = { at: ok + failed, ...sample(relayer) };
      samples.push(row);
      if (!smoke) {
        const t = ((Date.now() - t0) / 1000).toFixed(0);
        console.error(`[soak] ${row.at} done in ${t} s · heap ${row.heapMB.toFixed(1)} MB · wasm ${row.wasmMB.toFixed(2)} MB · rss ${row.rssMB.toFixed(0)} MB · ok ${ok} · failed ${failed}`);
      }
    }
  }
}
samples.push({ at: 0, ...sample(relayer) });
await Promise.all(Array.from({ length: concurrency }, worker));
clearInterval(rotation);
const seconds = (Date.now() - t0) / 1000;
// One large request at the end (20 MiB of calldata): wasm memory, which never
// shrinks, must grow by at most its size (params cross into wasm in chunks).
await Promise.all([0, 1, 2].map((node) => fleet.mode(node, 'healthy')));
const LARGE_MB = 20;
const beforeLarge = sample(relayer).wasmMB;
const calldata = `0x${'ab'.repeat((LARGE_MB * 2 ** 20) / 2 - 1)}`;
await relayer.request({ method: 'eth_call', params: [{ to: `0x${'1'.repeat(40)}`, data: calldata }, 'latest'] }).catch(() => {});
const largeGrowthMB = sample(relayer).wasmMB - beforeLarge;
const upstream = (await fleet.counters()).requests;
await relayer.close();
fleet.stop();
await new Promise((r) => setTimeout(r, 200));
const timersAfter = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const unended = ended.reduce((n, c) => n + (c === 0 ? 1 : 0), 0);

// No ratchet (a policy that learns less after each fault cycle): the healthy phases of the
// last 10 % of the run answer at least 90 % of what the first one did.
const healthy = perPhase.filter((p) => p.name === 'healthy');
const lateHealthy = healthy.filter((p) => p.at >= 0.9 * total);
const tail = lateHealthy.length ? lateHealthy : healthy.slice(-1);
const mean = (xs) => xs.reduce((a, p) => a + p.answered, 0) / Math.max(1, xs.length);
const healthyAnswered = healthy.length
  ? { first: healthy[0].answered, lastTenth: Math.round(mean(tail)), ratio: Number((mean(tail) / Math.max(1, healthy[0].answered)).toFixed(2)), phases: healthy.length }
  : null;

const first = samples[Math.min(2, samples.length - 1)];
const last = samples[samples.length - 1];
const report = {
  requests: total, seconds: Number(seconds.toFixed(1)), perSecond: Math.round(total / seconds), ok, failed, kinds,
  unended, doubleEnds, upstream, amplification: Number((upstream / total).toFixed(3)), events,
  heapMB: [first.heapMB, last.heapMB].map((v) => Number(v.toFixed(1))),
  wasmMB: [first.wasmMB, last.wasmMB].map((v) => Number(v.toFixed(2))),
  rssMB: [first.rssMB, last.rssMB].map((v) => Number(v.toFixed(0))),
  timersLeft: timersAfter - timersBefore,
  largeRequestWasmGrowthMB: Number(largeGrowthMB.toFixed(2)),
  healthyAnswered,
  perPhase: process.env.SOAK_PHASES ? perPhase : undefined,
};
console.log(JSON.stringify(report, null, 2));
const healthyCell = healthyAnswered ? `${healthyAnswered.first} → ${healthyAnswered.lastTenth} (${healthyAnswered.ratio})` : '–';
console.log(`\n| requests | seconds | req/s | ok | failed | unended | double ends | amplification | heap MB (after warm-up → end) | wasm MB | wasm growth for one ${LARGE_MB} MiB request | timers left after close | answered per healthy phase (first → last 10 %) |`);
console.log(`|---|---|---|---|---|---|---|---|---|---|---|---|---|`);
console.log(`| ${total} | ${report.seconds} | ${report.perSecond} | ${ok} | ${failed} | ${unended} | ${doubleEnds} | ${report.amplification} | ${report.heapMB.join(' → ')} | ${report.wasmMB.join(' → ')} | ${report.largeRequestWasmGrowthMB} MB | ${report.timersLeft} | ${healthyCell} |`);
const problems = [];
if (unended !== 0 || doubleEnds !== 0 || ok + failed !== total) problems.push('a request did not end exactly once');
if (report.timersLeft > 0) problems.push(`${report.timersLeft} timer(s) left after close()`);
if (!smoke && last.heapMB > first.heapMB * 1.5 + 20) problems.push('the JS heap kept growing');
if (!smoke && last.wasmMB > first.wasmMB * 1.5 + 2) problems.push('wasm memory kept growing');
if (Object.keys(kinds).some((k) => k.startsWith('foreign'))) problems.push('an untyped error escaped');
if (!smoke && healthyAnswered && healthyAnswered.ratio < 0.9) {
  problems.push(`healthy phases late in the run answered ${healthyAnswered.lastTenth}, the first ${healthyAnswered.first} (a ratchet)`);
}
if (largeGrowthMB > LARGE_MB) problems.push(`one ${LARGE_MB} MiB request grew wasm memory by ${largeGrowthMB.toFixed(1)} MB`);
if (problems.length) {
  console.error(`SOAK FAILED: ${problems.join('; ')}`);
  process.exit(1);
}
