// The main job: breakwater-rpc riding out faults, live, against a local
// faulty fleet in front of a real local Ethereum node (anvil).
//
//   anvil (real chain) ← alpha, bravo, charlie (loopback proxies that can
//   die, brown out, rate-limit or hang) ← FaultTolerantRelayer ← this script
//
// Every retry, failover and rate-limit event is printed as it happens; the
// fleet counts the requests it really received, so the summary shows how
// much extra load the faults cost (amplification).
import { FaultTolerantRelayer, isRpcError, isBreakwaterError } from '../pkg/dist/node.mjs';
import { startAnvil } from '../js-tests/helpers/anvil.mjs';
import { startMockNode } from '../js-tests/helpers/mock-node.mjs';
import { mnemonicToAccount } from 'viem/accounts';

const t0 = Date.now();
const stamp = () => `${String(Date.now() - t0).padStart(6)} ms`;
const log = (...a) => console.log(stamp(), ...a);
const scene = (title) => console.log(`\n${'─'.repeat(72)}\n${title}\n${'─'.repeat(72)}`);

// A block every second, starting far past block 0 like every real chain.
const anvil = await startAnvil(['--block-time', '1'], { head: 1200 });
const fleet = {};
for (const name of ['alpha', 'bravo', 'charlie']) fleet[name] = await startMockNode([{ proxy: anvil.url }]);
const healthy = [{ proxy: anvil.url }];
let logical = 0;
let txSceneRequests = 0;

try {
  // alpha's URL carries a (fake) API key: watch it stay out of every line below.
  // bravo and charlie are two URLs on one API key: a quota group.
  const upstreams = [
    { url: `${fleet.alpha.url}/v3/9aa3d95b3bc440fa88ea12eaa4456161`, label: 'alpha' },
    { url: fleet.bravo.url, label: 'bravo', quotaGroup: 'sharedKey' },
    { url: fleet.charlie.url, label: 'charlie', quotaGroup: 'sharedKey' },
  ];
  const relayer = new FaultTolerantRelayer(upstreams, {
    maxRetries: 4, baseDelayMs: 100, maxDelayMs: 2000, attemptTimeoutMs: 800, deadlineMs: 8000, maxRetryAfterMs: 3000,
    strategy: 'priority', cache: false, breaker: { openMs: 2000, openMaxMs: 4000 }, hedge: { initialDelayMs: 200 }, budget: { burst: 20 },
    quota: { sharedKey: { cuPerSecond: Infinity } },
  });
  relayer.on('retry', (e) => log(`  ↻ retry #${e.attempt} in ${e.delayMs.toFixed(0)} ms: ${e.class} (${e.rule}) at ${e.from}`));
  relayer.on('failover', (e) => log(`  ⇢ failover ${e.from} → ${e.to}`));
  relayer.on('hedge', (e) => log(`  ⇉ hedge: ${e.method} at ${e.from} slower than ${e.afterMs.toFixed(0)} ms, also asked ${e.to}`));
  relayer.on('breaker', (e) => log(`  ⚡ breaker ${e.endpoint}: ${e.from} → ${e.to}`));
  relayer.on('chainMismatch', (e) => log(`  ✘ ${e.endpoint} serves chain ${e.got}, not ${e.expected}: disabled`));
  relayer.on('rateLimited', (e) => log(`  ⏸ ${e.endpoint} rate limited: quota group ${e.quotaGroup || '(own)'} rests ${e.cooldownMs.toFixed(0)} ms`));

  const call = async (method, params) => {
    logical += 1;
    try {
      const result = await relayer.request({ method, params });
      const shown = typeof result === 'string' ? result : JSON.stringify(result).slice(0, 60);
      log(`✔ ${method} → ${shown}`);
      return result;
    } catch (e) {
      if (isBreakwaterError(e)) log(`✘ ${method} → ${e.name} [${e.kind}, code ${e.code}, ${e.attempts} attempt(s)]: ${e.shortMessage}`);
      else throw e;
      return undefined;
    }
  };

  scene(`Fleet up: alpha, bravo, charlie proxy anvil at ${anvil.url}. Endpoints: ${relayer.endpoints.join(', ')}`);
  await call('eth_chainId');
  await call('eth_blockNumber');

  scene('alpha dies (connection refused): requests fail over; three failures open its breaker and traffic stops');
  await fleet.alpha.stop();
  await call('eth_blockNumber');
  await call('eth_getBalance', ['0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', 'latest']);
  await call('eth_gasPrice');
  await call('eth_getBalance', ['0x70997970C51812dc3A010C7d01b50e0d17dc79C8', 'latest']);

  scene('bravo hangs (accepts the request, never answers): the read is hedged to charlie after the hedge delay instead of waiting out the attempt timeout; the hung request is aborted');
  fleet.bravo.setScript([{ hang: true }, ...healthy]);
  await call('eth_getBalance', ['0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', 'latest']);

  scene('bravo browns out (502s, Cloudflare HTML pages) and charlie answers 503 with Retry-After, while alpha is still down');
  fleet.bravo.setScript([{ status: 502 }, { html: true }, ...healthy]);
  fleet.charlie.setScript([{ status: 503, headers: { 'retry-after': '1' } }, ...healthy]);
  await call('eth_blockNumber');

  scene('charlie hits the quota of the API key it shares with bravo: the 429 cools the whole key (bravo too, not just one URL); with alpha down, the relayer waits out Retry-After instead of hammering');
  fleet.bravo.setScript(healthy);
  fleet.charlie.setScript([{ status: 429, headers: { 'retry-after': '2' } }, ...healthy]);
  await call('eth_blockNumber');

  scene('a request that cannot succeed: insufficient funds is fatal, tried exactly once');
  const before = fleet.bravo.count() + fleet.charlie.count();
  await call('eth_call', [{ from: '0x000000000000000000000000000000000000dEaD', to: '0x0000000000000000000000000000000000000001', value: '0x56bc75e2d63100000' }, 'latest']);
  log(`  upstream requests for that call: ${fleet.bravo.count() + fleet.charlie.count() - before}`);

  scene('a real transfer on anvil while alpha is still down');
  const hash = await call('eth_sendTransaction', [{ from: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', value: '0xde0b6b3a7640000' }]);
  let receipt = null;
  for (let i = 0; i < 30 && !receipt; i += 1) {
    receipt = await relayer.request({ method: 'eth_getTransactionReceipt', params: [hash] });
    logical += 1;
    if (!receipt) await new Promise((r) => setTimeout(r, 200));
  }
  log(receipt ? `✔ mined in block ${parseInt(receipt.blockNumber, 16)}, status ${receipt.status}` : '✘ not mined');

  scene('gas spike: a transfer signed by a viem account goes out at today\'s fee, then the base fee jumps 20×; the node evicts it, and after 2 blocks the relayer replaces it (same nonce, both fees up, priced at the new estimate) — never a second nonce');
  // anvil's public dev account #2; its key never enters the relayer, only the account's signTransaction is called.
  const account = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 2 });
  const txLog = (e) => log(`  ⛓ ${e.type} nonce ${e.nonce ?? '-'} ${e.hash ? e.hash.slice(0, 12) + '…' : ''}${e.maxFeePerGas ? ` maxFee ${(Number(e.maxFeePerGas) / 1e9).toFixed(2)} gwei` : ''}${e.kind ? ` (${e.kind})` : ''}${e.block ? ` at block ${e.block}, ${e.block - e.waitedSince} blocks after block ${e.waitedSince}` : ''}`);
  const offs = ['txSubmitted', 'txUnknown', 'speedUp', 'cancel', 'txIncluded', 'reorg', 'txMined', 'replaced'].map((t) => relayer.subscribe(t, txLog));
  const fleetCount = () => Object.values(fleet).reduce((n, f) => n + f.count(), 0);
  const txSceneStart = fleetCount();
  const base = BigInt(await relayer.request({ method: 'eth_gasPrice' }));
  const anvilRpc = (method, params) => fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  // Block production pauses while the transfer goes out and the spike is set, so no block can slip in between.
  await anvilRpc('evm_setIntervalMining', [0]);
  const sending = relayer.sendTransactionWithSpeedup(account, { to: '0x000000000000000000000000000000000000dEaD', value: 1n, chainId: 31337,
    maxFeePerGas: base + base / 10n, maxPriorityFeePerGas: base / 10n }, 2, { pollIntervalMs: 250 });
  await Promise.race([new Promise((r) => relayer.on('txSubmitted', r)), sending.catch(() => {})]);
  await anvilRpc('anvil_setNextBlockBaseFeePerGas', [`0x${(base * 20n).toString(16)}`]);
  await anvilRpc('evm_setIntervalMining', [1]);
  log(`  (base fee set to ${(Number(base * 20n) / 1e9).toFixed(2)} gwei for the next block; head ${parseInt(await relayer.request({ method: 'eth_blockNumber' }), 16)})`);
  try {
    const outcome = await sending;
    log(`✔ nonce ${outcome.nonce} ${outcome.outcome} in block ${parseInt(outcome.blockNumber, 16)}: ${outcome.hashes.length} transaction(s) sent for it, the mined one is ${outcome.hash.slice(0, 12)}…`);
  } catch (e) {
    log(`✘ ${e.name}: ${e.message}`);
  }
  offs.forEach((off) => off());
  txSceneRequests = fleetCount() - txSceneStart;
  log(`  (the transaction layer made ${txSceneRequests} upstream requests: fee data, nonce, sends, jittered receipt polls; left out of the amplification below)`);

  scene('total outage: bravo and charlie fail too (alpha is still down); both are back 1.5 s later');
  fleet.bravo.setScript([{ status: 503 }]);
  fleet.charlie.setScript([{ status: 503 }]);
  setTimeout(() => { fleet.bravo.setScript(healthy); fleet.charlie.setScript(healthy); log('  (bravo and charlie are back)'); }, 1500);
  for (let i = 0; i < 3; i += 1) await call('eth_getBalance', ['0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', `0x${i}`]);
  log(`  breakers now: ${relayer.stats().endpoints.map((e) => `${e.endpoint} ${e.state}`).join(', ')}`);

  scene('alpha comes back: after its open time the breaker half-opens, probes prove it, traffic returns');
  await fleet.alpha.restart();
  await new Promise((r) => setTimeout(r, 4200));
  for (let i = 0; i < 5; i += 1) await call('eth_getBalance', ['0x70997970C51812dc3A010C7d01b50e0d17dc79C8', `0x${i}`]);

  scene('summary');
  for (const e of relayer.stats().endpoints) {
    log(`${e.endpoint.padEnd(8)} breaker ${e.state.padEnd(8)} ok ${String(e.successes).padStart(3)}  failed ${String(e.failures).padStart(3)}  latency ${Object.values(e.latencyMs).map((v) => v.toFixed(0)).join('/')} ms`);
  }
  const upstream = Object.values(fleet).reduce((n, f) => n + f.count(), 0) - txSceneRequests;
  for (const [name, f] of Object.entries(fleet)) log(`${name.padEnd(8)} received ${f.count()} requests`);
  log(`logical requests ${logical}, upstream requests ${upstream}, amplification ${(upstream / logical).toFixed(2)}`);
  log(`retry budget left: ${relayer.stats().retryBudget.toFixed(2)} tokens`);
  await relayer.close();
} finally {
  await Promise.all(Object.values(fleet).map((f) => f.close().catch(() => {})));
  await anvil.stop();
}
