// A loopback proxy in front of anvil that can misbehave on
// eth_sendRawTransaction only: forward (default), swallow (answer with the
// right hash but never forward: a node that lies), or drop (forward, then
// cut the connection before answering: the outcome is unknown to the
// client). It records every raw transaction it sees, can hold all
// traffic while a test rearranges the chain, and can run a one-shot hook
// around the next send (eth_sendRawTransaction or a wallet's
// eth_sendTransaction) while the relayer waits for its answer.
import { createServer } from 'node:http';
import { keccak256 } from 'ethers';

export async function startTxProxy(upstream) {
  const raws = [];
  const methods = new Map();
  let mode = 'forward';
  let dropsLeft = 0;
  let gate = Promise.resolve();
  let sendHook = null;
  let open = () => {};
  // 'chaos': a seeded generator picks a fault per request (any method).
  let seed = 0x9e3779b9;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const faults = { forward: 0, drop: 0, delay: 0, slow: 0, duplicate: 0, error502: 0 };
  const forward = (body) => fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    .then(async (r) => ({ status: r.status, text: await r.text() }));
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    await gate;
    const body = Buffer.concat(chunks).toString('utf8');
    let call;
    try { call = JSON.parse(body); } catch { call = undefined; }
    if (call && !Array.isArray(call)) methods.set(call.method, (methods.get(call.method) || 0) + 1);
    const isSend = call && !Array.isArray(call) && call.method === 'eth_sendRawTransaction';
    if (isSend) raws.push(call.params[0]);
    const isAnySend = isSend || (call && !Array.isArray(call) && call.method === 'eth_sendTransaction');
    if (isAnySend && sendHook && mode !== 'swallow') {
      const hook = sendHook;
      sendHook = null;
      const answer = await hook(() => forward(body)).catch((e) => ({ status: 502, text: String(e) }));
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.text);
      return;
    }
    if (isSend && mode === 'swallow') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: keccak256(call.params[0]) }));
      return;
    }
    if (mode === 'chaos' && !(call && call.method === 'eth_chainId' && call.id === 0)) {
      const roll = random();
      try {
        if (roll < 0.1) { // forwarded, answer lost
          faults.drop += 1;
          await forward(body);
          res.socket.destroy();
          return;
        }
        if (roll < 0.2) { // forwarded, then a gateway error instead of the answer
          faults.error502 += 1;
          await forward(body);
          res.writeHead(502, { 'content-type': 'text/html' });
          res.end('<html>502 Bad Gateway</html>');
          return;
        }
        if (roll < 0.3) { // delivered twice (a retrying gateway); the second answer is returned
          faults.duplicate += 1;
          await forward(body);
          const second = await forward(body);
          res.writeHead(second.status, { 'content-type': 'application/json' });
          res.end(second.text);
          return;
        }
        if (roll < 0.4) { // slow, within the attempt timeout
          faults.delay += 1;
          await new Promise((r) => setTimeout(r, 150));
        } else if (roll < 0.45) { // slower than the attempt timeout
          faults.slow += 1;
          await new Promise((r) => setTimeout(r, 700));
        } else {
          faults.forward += 1;
        }
      } catch {
        res.socket.destroy();
        return;
      }
    }
    let answer;
    try {
      answer = await forward(body);
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
    faults,
    /** How many requests of `method` arrived (batches not counted). */
    count: (method) => methods.get(method) || 0,
    /** 'forward' | 'swallow' | 'drop' (the next `count` sends are forwarded, then cut) | 'chaos'. */
    setMode(next, count = Infinity) { mode = next; dropsLeft = count; },
    /**
     * Runs `hook(forward)` for the next send instead of forwarding it; the
     * hook forwards (when it wants) and returns `{ status, text }`, the answer.
     */
    onNextSend(hook) { sendHook = hook; },
    /** Holds every request until release(): the chain changes while the client cannot look. */
    hold() { gate = new Promise((r) => { open = r; }); },
    release() { open(); },
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
