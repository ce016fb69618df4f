// The dashboard's loopback world: anvil (a real chain, one block a second),
// three faulty proxies in front of it (alpha, bravo, charlie; bravo and
// charlie share one "API key"), the built page, and a small control API the
// page's buttons call to kill, slow down, rate-limit and revive nodes, or
// spike the gas price.
//
//   node examples-web/server.mjs [--port 5173]      (after the Vite build: npm run dashboard)
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAnvil } from '../js-tests/helpers/anvil.mjs';
import { startMockNode } from '../js-tests/helpers/mock-node.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.svg': 'image/svg+xml' };

/** Starts everything; resolves to `{ url, stop }`. `dist` is the Vite build output. */
export async function startDashboard({ port = 0, dist = join(here, 'dist') } = {}) {
  const anvil = await startAnvil(['--block-time', '1'], { head: 1200 }); // far past block 0, like a real chain
  const healthy = () => [{ proxy: anvil.url }];
  const nodes = {};
  const alive = {};
  for (const name of ['alpha', 'bravo', 'charlie']) {
    nodes[name] = await startMockNode(healthy());
    alive[name] = true;
  }
  const rpc = async (method, params = []) => {
    const r = await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    return (await r.json()).result;
  };
  const actions = {
    kill: async (n) => { if (alive[n]) { await nodes[n].stop(); alive[n] = false; } },
    revive: async (n) => { if (!alive[n]) { await nodes[n].restart(); alive[n] = true; } nodes[n].setScript(healthy()); },
    slow: async (n) => nodes[n].setScript([{ delayMs: 1500, then: { proxy: anvil.url } }]),
    brownout: async (n) => nodes[n].setScript([{ status: 502 }, { proxy: anvil.url }, { status: 503 }, { proxy: anvil.url }, { html: true }, { proxy: anvil.url }]),
    ratelimit: async (n) => nodes[n].setScript([{ status: 429, headers: { 'retry-after': '2' } }]),
  };
  const server = http.createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const send = (status, body, type = 'application/json') => { res.writeHead(status, { 'content-type': type }); res.end(body); };
    try {
      if (path === '/config') {
        return send(200, JSON.stringify({ chainId: 31337, nodes: Object.fromEntries(Object.entries(nodes).map(([n, m]) => [n, m.url])) }));
      }
      const control = path.match(/^\/control\/(\w+)\/(\w+)$/);
      if (control && req.method === 'POST') {
        const [, target, action] = control;
        // hold → (send a transaction) → spike: no block can be mined between the
        // send and the spike, so the transaction meets it whatever the timing
        // (a block every second used to take it first, now and then).
        if (target === 'chain' && action === 'hold') {
          await rpc('evm_setIntervalMining', [0]);
          return send(200, JSON.stringify({ ok: true }));
        }
        if (target === 'chain' && action === 'spike') {
          const base = BigInt(await rpc('eth_gasPrice'));
          await rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(base * 20n).toString(16)}`]);
          await rpc('evm_setIntervalMining', [1]);
          return send(200, JSON.stringify({ ok: true, baseFee: String(base * 20n) }));
        }
        if (target === 'chain' && action === 'resume') {
          await rpc('evm_setIntervalMining', [1]);
          return send(200, JSON.stringify({ ok: true }));
        }
        if (!nodes[target] || !actions[action]) return send(404, JSON.stringify({ error: 'unknown control' }));
        await actions[action](target);
        return send(200, JSON.stringify({ ok: true, node: target, action }));
      }
      const rel = normalize(path === '/' ? 'index.html' : path.slice(1));
      if (rel.startsWith('..')) return send(404, 'not found', 'text/plain');
      return send(200, await readFile(join(dist, rel)), TYPES[extname(rel)] || 'application/octet-stream');
    } catch (error) {
      return send(error.code === 'ENOENT' ? 404 : 500, String(error.message), 'text/plain');
    }
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const stop = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await Promise.all(Object.values(nodes).map((n) => n.close().catch(() => {})));
    await anvil.stop();
  };
  return { url, stop };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--port');
  const { url, stop } = await startDashboard({ port: i > 0 ? Number(process.argv[i + 1]) : 5173 });
  console.log(`breakwater-rpc dashboard: ${url}  (Ctrl-C to stop)`);
  const quit = async () => { await stop(); process.exit(0); };
  process.on('SIGINT', quit);
  process.on('SIGTERM', quit);
}
