// A new client's first answer from a node 100 ms away: how many round trips
// (and HTTP requests) before the caller has its block number. Each run
// starts a fresh loopback node that answers every HTTP request after
// `rttMs` (a batch as one request), so no client reuses what another
// learned (ours shares endpoint knowledge in a realm by URL).
//   node benches/first-answer.mjs [--runs N] [--rtt MS]
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

async function slowNode(rttMs) {
  const log = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body = null;
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* answered as null */ }
      const items = Array.isArray(body) ? body : [body];
      log.push(items.map((m) => m && m.method));
      const one = (m) => ({ jsonrpc: '2.0', id: m && m.id, result: m && m.method === 'eth_chainId' ? '0x1' : '0x1234' });
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(body) ? body.map(one) : one(body)));
      }, rttMs);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    log,
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}

/** Each client: make it for `url`, then its first block number. */
export async function clients() {
  const { FaultTolerantRelayer } = await import(join(here, '../pkg/dist/node.mjs'));
  const { createPublicClient, http: viemHttp, fallback } = await import('viem');
  const { mainnet } = await import('viem/chains');
  const { JsonRpcProvider, Network } = await import('ethers');
  const ours = (options) => async (url) => {
    const r = new FaultTolerantRelayer([url], options);
    try { await r.request({ method: 'eth_blockNumber' }); } finally { await r.close(); }
  };
  return {
    'breakwater-rpc': ours({}),
    'breakwater-rpc (chainId: 1)': ours({ chainId: 1 }),
    'viem http': (url) => createPublicClient({ chain: mainnet, transport: viemHttp(url) }).getBlockNumber({ cacheTime: 0 }),
    'viem fallback + http': (url) => createPublicClient({ chain: mainnet, transport: fallback([viemHttp(url)]) }).getBlockNumber({ cacheTime: 0 }),
    'ethers JsonRpcProvider': async (url) => {
      const p = new JsonRpcProvider(url);
      try { await p.getBlockNumber(); } finally { p.destroy(); }
    },
    'ethers JsonRpcProvider (staticNetwork)': async (url) => {
      const p = new JsonRpcProvider(url, 1, { staticNetwork: Network.from(1) });
      try { await p.getBlockNumber(); } finally { p.destroy(); }
    },
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median time to the first answer, in round trips, and the HTTP requests it took. */
export async function firstAnswer({ runs = 5, rttMs = 100 } = {}) {
  const rows = [];
  for (const [name, first] of Object.entries(await clients())) {
    const times = [];
    let requests = [];
    for (let i = 0; i < runs; i += 1) {
      const node = await slowNode(rttMs);
      const t0 = performance.now();
      await first(node.url);
      times.push((performance.now() - t0) / rttMs);
      requests = node.log.slice();
      await node.close();
    }
    rows.push({ name, rtt: median(times), requests: requests.length, sent: requests.map((r) => (r.length > 1 ? `[${r.join(', ')}]` : r[0])).join(' → ') });
  }
  return rows;
}

export function firstAnswerTable(rows, rttMs = 100) {
  return `| client | first answer (round trips of ${rttMs} ms, median) | HTTP requests | what was sent |\n|---|---|---|---|\n`
    + rows.map((r) => `| ${r.name} | ${r.rtt.toFixed(2)} | ${r.requests} | ${r.sent} |`).join('\n') + '\n';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, fallbackValue) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : fallbackValue;
  };
  const rttMs = arg('--rtt', 100);
  const rows = await firstAnswer({ runs: arg('--runs', 5), rttMs });
  console.log(firstAnswerTable(rows, rttMs));
}
