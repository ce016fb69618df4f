// A loopback JSON-RPC fleet in its own process (so its work does not skew
// the client being measured). Controlled over IPC by the bench harness:
//   { cmd: 'start', nodes }                → { ports }
//   { cmd: 'mode', node, mode }            modes: healthy | down | hang |
//        { brownout: p } | { quota: key } | wrongChain
//   { cmd: 'quota', key, rps }             a shared API key's limit
//   { cmd: 'reset', keepModes } / { cmd: 'counters' } → { requests, perNode, per100ms, limited,
//        reverts, servedWrongChain (non-chain-id answers from a wrong-chain node) }
// Every request is counted by the fleet: that is what amplification uses.
import http from 'node:http';

const nodes = [];
const keys = new Map(); // key → { rps, tokens, at }
let counters;
const resetCounters = () => {
  counters = { requests: 0, perNode: nodes.map(() => 0), per100ms: new Map(), limited: 0, reverts: 0, servedWrongChain: 0, start: Date.now() };
};

function take(key) {
  const k = keys.get(key);
  if (!k) return true;
  const now = Date.now();
  k.tokens = Math.min(k.rps, k.tokens + ((now - k.at) / 1000) * k.rps);
  k.at = now;
  if (k.tokens >= 1) { k.tokens -= 1; return true; }
  return false;
}

function answer(node, body) {
  const one = (req) => {
    if (!req || typeof req !== 'object') return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } };
    const { id, method } = req;
    if (method === 'eth_chainId') return { jsonrpc: '2.0', id, result: node.mode === 'wrongChain' ? '0x5' : '0x1' };
    if (node.mode === 'wrongChain' && method !== 'net_version') counters.servedWrongChain += 1;
    if (method === 'net_version') return { jsonrpc: '2.0', id, result: node.mode === 'wrongChain' ? '5' : '1' };
    if (method === 'eth_call') {
      counters.reverts += 1;
      return { jsonrpc: '2.0', id, error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } };
    }
    if (method === 'eth_blockNumber') return { jsonrpc: '2.0', id, result: `0x${(1000 + Math.floor(Date.now() / 1000) % 100000).toString(16)}` };
    if (method === 'eth_getBlockByNumber') {
      const n = 1000 + Math.floor(Date.now() / 1000) % 100000;
      return { jsonrpc: '2.0', id, result: { number: `0x${n.toString(16)}`, hash: `0x${'1'.repeat(64)}`, parentHash: `0x${'0'.repeat(64)}`, timestamp: `0x${Math.floor(Date.now() / 1000).toString(16)}`, baseFeePerGas: '0x3b9aca00', gasLimit: '0x1c9c380', gasUsed: '0x0', transactions: [], miner: `0x${'0'.repeat(40)}`, difficulty: '0x0', nonce: '0x0000000000000000', extraData: '0x', logsBloom: `0x${'0'.repeat(512)}`, sha3Uncles: `0x${'0'.repeat(64)}`, stateRoot: `0x${'0'.repeat(64)}`, receiptsRoot: `0x${'0'.repeat(64)}`, transactionsRoot: `0x${'0'.repeat(64)}`, size: '0x0', uncles: [], totalDifficulty: '0x0' } };
    }
    return { jsonrpc: '2.0', id, result: '0xde0b6b3a7640000' };
  };
  return Array.isArray(body) ? body.map(one) : one(body);
}

function handle(node, req, res) {
  if (req.method === 'OPTIONS') {
    // CORS preflight for browser clients: not a JSON-RPC request, not counted.
    res.writeHead(204, { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'POST, OPTIONS', 'access-control-allow-headers': 'content-type, accept' });
    return res.end();
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    counters.requests += 1;
    counters.perNode[node.index] += 1;
    const slot = Math.floor((Date.now() - counters.start) / 100);
    counters.per100ms.set(slot, (counters.per100ms.get(slot) || 0) + 1);
    res.setHeader('access-control-allow-origin', '*');
    if (node.mode === 'hang') return; // never answer
    if (node.mode && node.mode.brownout && Math.random() < node.mode.brownout) {
      res.writeHead(503, { 'content-type': 'text/html' });
      return res.end('<html>503 Service Unavailable</html>');
    }
    if (node.mode && node.mode.quota && !take(node.mode.quota)) {
      counters.limited += 1;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: 429, message: 'Too Many Requests' } }));
    }
    let body = null;
    try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* invalid */ }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer(node, body)));
  });
}

async function listen(node) {
  await new Promise((resolve) => node.server.listen(node.port || 0, '127.0.0.1', resolve));
  node.port = node.server.address().port;
}

async function setMode(node, mode) {
  const wasDown = node.mode === 'down';
  node.mode = mode;
  if (mode === 'down' && !wasDown) {
    for (const s of node.sockets) s.destroy();
    await new Promise((resolve) => node.server.close(() => resolve()));
  } else if (mode !== 'down' && wasDown) {
    await listen(node);
  }
}

process.on('message', async (msg) => {
  try {
    if (msg.cmd === 'start') {
      for (let i = 0; i < msg.nodes; i += 1) {
        const node = { index: i, mode: 'healthy', sockets: new Set() };
        node.server = http.createServer((req, res) => handle(node, req, res));
        node.server.keepAliveTimeout = 60000;
        node.server.on('connection', (s) => { node.sockets.add(s); s.on('close', () => node.sockets.delete(s)); });
        await listen(node);
        nodes.push(node);
      }
      resetCounters();
      process.send({ id: msg.id, ports: nodes.map((n) => n.port) });
    } else if (msg.cmd === 'mode') {
      await setMode(nodes[msg.node], msg.mode);
      process.send({ id: msg.id });
    } else if (msg.cmd === 'quota') {
      keys.set(msg.key, { rps: msg.rps, tokens: msg.rps, at: Date.now() });
      process.send({ id: msg.id });
    } else if (msg.cmd === 'reset') {
      if (!msg.keepModes) for (const n of nodes) if (n.mode !== 'healthy') await setMode(n, 'healthy');
      for (const n of nodes) for (const s of n.sockets) s.destroy();
      keys.clear();
      resetCounters();
      process.send({ id: msg.id });
    } else if (msg.cmd === 'counters') {
      process.send({ id: msg.id, counters: { ...counters, per100ms: [...counters.per100ms.entries()] } });
    } else if (msg.cmd === 'stop') {
      process.exit(0);
    }
  } catch (e) {
    process.send({ id: msg.id, error: String(e && e.stack || e) });
  }
});
