// A JSON-RPC node in another process that answers every call after 20 ms
// and counts them (POST /count, /reset): the healthy upstream of the queue
// and burst benches, so its latency is real and the client's process is
// not the one answering.
import { spawn } from 'node:child_process';

const NODE = `
const http = require('node:http');
let calls = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body; try { body = JSON.parse(Buffer.concat(chunks)); } catch { body = {}; }
    if (req.url === '/count') { res.end(String(calls)); return; }
    if (req.url === '/reset') { calls = 0; res.end('0'); return; }
    calls += 1;
    const result = body.method === 'eth_chainId' ? '0x1' : '0x64';
    setTimeout(() => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result })); }, 20);
  });
});
server.keepAliveTimeout = 60000;
server.maxConnections = 0;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

export async function startSlowNode() {
  const child = spawn(process.execPath, ['-e', NODE], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    calls: async () => Number(await (await fetch(`${url}/count`, { method: 'POST' })).text()),
    reset: () => fetch(`${url}/reset`, { method: 'POST' }).then((r) => r.text()),
    stop: () => child.kill(),
  };
}
