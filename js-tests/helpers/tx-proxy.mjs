// A loopback proxy in front of anvil that can misbehave on
// eth_sendRawTransaction only: forward (default), swallow (answer with the
// right hash but never forward: a node that lies), or drop (forward, then
// cut the connection before answering: the outcome is unknown to the
// client). It records every raw transaction it sees, and can hold all
// traffic while a test rearranges the chain.
import { createServer } from 'node:http';
import { keccak256 } from 'ethers';

export async function startTxProxy(upstream) {
  const raws = [];
  let mode = 'forward';
  let dropsLeft = 0;
  let gate = Promise.resolve();
  let open = () => {};
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    await gate;
    const body = Buffer.concat(chunks).toString('utf8');
    let call;
    try { call = JSON.parse(body); } catch { call = undefined; }
    const isSend = call && !Array.isArray(call) && call.method === 'eth_sendRawTransaction';
    if (isSend) raws.push(call.params[0]);
    if (isSend && mode === 'swallow') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: keccak256(call.params[0]) }));
      return;
    }
    let answer;
    try {
      const r = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      answer = { status: r.status, text: await r.text() };
    } catch {
      res.socket.destroy();
      return;
    }
    if (isSend && mode === 'drop' && dropsLeft > 0) {
      dropsLeft -= 1;
      res.socket.destroy(); // forwarded, never answered
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.text);
  });
  server.keepAliveTimeout = 1;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    raws,
    /** 'forward' | 'swallow' | 'drop' (the next `count` sends are forwarded, then cut). */
    setMode(next, count = Infinity) { mode = next; dropsLeft = count; },
    /** Holds every request until release(): the chain changes while the client cannot look. */
    hold() { gate = new Promise((r) => { open = r; }); },
    release() { open(); },
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
