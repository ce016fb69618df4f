// The dashboard: one FaultTolerantRelayer in the page, steady read traffic
// through it, and everything it reports drawn live. The server behind the
// buttons only breaks and mends the nodes; every decision shown here is
// the relayer's.
import { FaultTolerantRelayer, isBreakwaterError } from 'breakwater-rpc';
import { privateKeyToAccount } from 'viem/accounts';

const $ = (selector) => document.querySelector(selector);
const NAMES = ['alpha', 'bravo', 'charlie'];
const ACTIONS = [['kill', 'danger'], ['slow', ''], ['brownout', ''], ['ratelimit', ''], ['revive', 'good']];
// anvil's public dev account #1 (the well-known test mnemonic); only this page's demo uses it.
const ACCOUNT = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

const config = await (await fetch('./config')).json();
const relayer = new FaultTolerantRelayer([
  { url: config.nodes.alpha, label: 'alpha' },
  { url: config.nodes.bravo, label: 'bravo', quotaGroup: 'sharedKey' },
  { url: config.nodes.charlie, label: 'charlie', quotaGroup: 'sharedKey' },
], {
  chainId: config.chainId, maxRetries: 4, baseDelayMs: 100, maxDelayMs: 2000, attemptTimeoutMs: 800, deadlineMs: 5000,
  strategy: 'priority', cache: false, dedup: false, breaker: { openMs: 2000, openMaxMs: 4000 },
  quota: { sharedKey: { cuPerSecond: 300 } }, transactions: { pollIntervalMs: 300 },
});

// ── per-second series for the chart ──────────────────────────────────────
const SECONDS = 60;
const series = { ok: [], fail: [], retry: [], failover: [] };
const totals = { ok: 0, fail: 0, retry: 0, failover: 0 };
let current = { ok: 0, fail: 0, retry: 0, failover: 0 };
const count = (kind) => { current[kind] += 1; totals[kind] += 1; };
setInterval(() => {
  for (const k of Object.keys(series)) {
    series[k].push(current[k]);
    if (series[k].length > SECONDS) series[k].shift();
  }
  current = { ok: 0, fail: 0, retry: 0, failover: 0 };
  drawChart();
}, 1000);

// ── events ───────────────────────────────────────────────────────────────
const eventList = $('#events');
function logEvent(text, list = eventList) {
  const item = document.createElement('li');
  item.textContent = `${new Date().toLocaleTimeString()}  ${text}`;
  list.prepend(item);
  while (list.children.length > 40) list.lastChild.remove();
}
relayer.on('retry', (e) => { count('retry'); logEvent(`↻ retry #${e.attempt} in ${e.delayMs.toFixed(0)} ms after ${e.class} at ${e.from}`); });
relayer.on('failover', (e) => { count('failover'); logEvent(`⇢ failover ${e.from} → ${e.to}`); });
relayer.on('hedge', (e) => logEvent(`⇉ hedge ${e.from} → ${e.to} after ${e.afterMs.toFixed(0)} ms`));
relayer.on('breaker', (e) => logEvent(`⚡ breaker ${e.endpoint}: ${e.from} → ${e.to}`));
relayer.on('rateLimited', (e) => logEvent(`‖ rateLimited ${e.endpoint}: group ${e.quotaGroup || '(own)'} rests ${e.cooldownMs.toFixed(0)} ms`));
relayer.on('overload', (e) => logEvent(`! overload: ${e.waiting} waiting`));

// ── steady read traffic ──────────────────────────────────────────────────
let tick = 0;
setInterval(() => {
  tick += 1;
  const call = tick % 2 ? { method: 'eth_blockNumber' } : { method: 'eth_getBalance', params: [ACCOUNT.address, 'latest'] };
  relayer.request(call).then(() => count('ok'), (e) => {
    count('fail');
    if (isBreakwaterError(e)) logEvent(`✘ ${call.method}: ${e.name} (${e.attempts} attempts)`);
  });
}, 100);

// ── endpoint cards ───────────────────────────────────────────────────────
const cards = {};
for (const name of NAMES) {
  const card = document.createElement('article');
  card.className = 'card';
  card.dataset.endpoint = name;
  card.innerHTML = `<h3>${name}<span class="state" data-state="closed">closed</span></h3>
    <div class="metrics">
      <span>latency <b class="latency">–</b></span><span>in flight <b class="inflight">0</b></span>
      <span>answered <b class="successes">0</b></span><span>failed <b class="failures">0</b></span>
      <span>slow-start share <b class="share">1</b></span><span>quota <b class="quota">${name === 'alpha' ? 'own' : 'sharedKey'}</b></span>
    </div>
    <div class="controls">${ACTIONS.map(([a, cls]) => `<button id="${a}-${name}" class="${cls}">${a}</button>`).join('')}</div>`;
  $('#endpoints').append(card);
  cards[name] = card;
  for (const [action] of ACTIONS) {
    card.querySelector(`#${action}-${name}`).addEventListener('click', async () => {
      await fetch(`./control/${name}/${action}`, { method: 'POST' });
      logEvent(`▶ you: ${action} ${name}`);
    });
  }
}

function render() {
  const stats = relayer.stats();
  for (const e of stats.endpoints) {
    const card = cards[e.endpoint];
    if (!card) continue;
    const state = card.querySelector('.state');
    state.dataset.state = e.state;
    state.textContent = e.state;
    const latencies = Object.values(e.latencyMs).filter((v) => v > 0);
    card.querySelector('.latency').textContent = latencies.length ? `${Math.max(...latencies).toFixed(0)} ms` : '–';
    card.querySelector('.inflight').textContent = e.inFlight;
    card.querySelector('.successes').textContent = e.successes;
    card.querySelector('.failures').textContent = e.failures;
    card.querySelector('.share').textContent = e.share.toFixed(2);
  }
  const group = stats.quotaGroups.find((g) => g.name === 'sharedKey');
  if (group) {
    const allowed = Number.isFinite(group.allowedCuPerSecond) ? group.allowedCuPerSecond : 0;
    $('#quota-bar').style.width = `${allowed ? Math.min(100, (100 * group.cuLastSecond) / allowed) : 0}%`;
    $('#quota-text').textContent = `${group.cuLastSecond.toFixed(0)} CU in the last second of ${allowed.toFixed(0)} allowed · `
      + `${group.rateLimited} × 429 · cooling ${group.cooldownMs.toFixed(0)} ms`;
  }
  const open = stats.endpoints.filter((e) => e.state !== 'closed').length;
  $('#status').textContent = open === 0 ? 'all endpoints healthy' : `${open} endpoint(s) not closed`;
  $('#totals').textContent = `answered ${totals.ok} · failed ${totals.fail} · retries ${totals.retry} · failovers ${totals.failover} · retry budget ${stats.retryBudget.toFixed(1)}`;
  document.body.dataset.answered = String(totals.ok);
}
setInterval(render, 250);

// ── chart ────────────────────────────────────────────────────────────────
function drawChart() {
  const canvas = $('#chart');
  const ctx = canvas.getContext('2d');
  const { width, height } = canvas;
  ctx.clearRect(0, 0, width, height);
  const max = Math.max(12, ...Object.values(series).flat());
  const colors = { ok: '#3ecf8e', fail: '#ff5d6c', retry: '#f5b942', failover: '#5aa9ff' };
  ctx.strokeStyle = '#1d2940';
  for (let y = 0; y <= 4; y += 1) {
    ctx.beginPath();
    ctx.moveTo(0, (height * y) / 4);
    ctx.lineTo(width, (height * y) / 4);
    ctx.stroke();
  }
  for (const [kind, values] of Object.entries(series)) {
    ctx.strokeStyle = colors[kind];
    ctx.lineWidth = 2;
    ctx.beginPath();
    values.forEach((v, i) => {
      const x = width - (values.length - 1 - i) * (width / (SECONDS - 1));
      const y = height - 6 - (v / max) * (height - 12);
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.stroke();
  }
}

// ── a transaction through a gas spike ────────────────────────────────────
const txLog = $('#tx-log');
const txStatus = $('#tx-status');
for (const type of ['txSubmitted', 'txUnknown', 'txRebroadcast', 'speedUp', 'txIncluded', 'txMined', 'replaced', 'reorg']) {
  relayer.on(type, (e) => {
    const fee = e.maxFeePerGas ? ` · maxFee ${(Number(e.maxFeePerGas) / 1e9).toFixed(2)} gwei` : '';
    logEvent(`${type} · nonce ${e.nonce ?? '–'} · ${e.hash ? `${e.hash.slice(0, 14)}…` : ''}${e.kind ? ` (${e.kind})` : ''}${fee}`, txLog);
  });
}
$('#send-tx').addEventListener('click', async () => {
  $('#send-tx').disabled = true;
  txStatus.textContent = 'sending…';
  try {
    const gasPrice = BigInt(await relayer.request({ method: 'eth_gasPrice' }));
    await fetch('./control/chain/hold', { method: 'POST' }); // no block until the spike
    const submitted = new Promise((resolve) => { relayer.once('txSubmitted', () => resolve()); });
    const sending = relayer.sendTransactionWithSpeedup(ACCOUNT, {
      to: '0x000000000000000000000000000000000000dEaD', value: 1n, chainId: config.chainId,
      maxFeePerGas: gasPrice + gasPrice / 10n, maxPriorityFeePerGas: gasPrice / 10n,
    }, 2);
    await Promise.race([submitted, sending]);
    await fetch('./control/chain/spike', { method: 'POST' });
    txStatus.textContent = 'pending through a 20× gas spike…';
    const outcome = await sending;
    txStatus.textContent = `${outcome.outcome} in block ${parseInt(outcome.blockNumber, 16)} · ${outcome.hashes.length} transaction(s) sent for nonce ${outcome.nonce}`;
    txStatus.dataset.outcome = outcome.outcome;
  } catch (e) {
    txStatus.textContent = `${e.name}: ${e.message}`;
    txStatus.dataset.outcome = 'error';
  } finally {
    await fetch('./control/chain/resume', { method: 'POST' }).catch(() => {});
    $('#send-tx').disabled = false;
  }
});
render();
