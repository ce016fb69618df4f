// A loopback JSON-RPC node with scripted faults, for tests and the demo.
// Each node plays a list of behaviours (the last one repeats), counts every
// request it receives, and sends CORS headers so browser pages can use it.
// The relayer's chain-id check of a new endpoint (eth_chainId with id 0)
// is answered without consuming the script, so scripts describe only the
// requests under test: a node that fronts a real one (its script has had a
// `proxy`) forwards it there even while it plays a fault; others answer
// `chainId` (also when given explicitly or set with setChainId).
//
// Behaviours:
//   { result }                      JSON-RPC success
//   { error: { code, message, data } }
//   { status, headers?, body? }     raw HTTP reply (default body: an HTML page)
//   { hang: true }                  accept, never answer (until close)
//   { html: true }                  200 with an HTML page
//   { wrongId: true }               a result with somebody else's id
//   { raw: string | Buffer }        200 with exactly these bytes
//   { rawResult: string }           a success whose result is this JSON text as is (e.g. a huge number)
//   { delayMs, then }               wait, then behave like `then`
//   { resultFor: { method: value } } answer per method (others: '0x1')
//   { proxy: url }                  forward the request to a real node (anvil)
//   { batch: (items) => replies }   answer a batch body with custom replies
//   { …, chainCheckToo: true }      the chain-id check gets this behaviour too (a bad key refuses everything)
// A batch body (a JSON array) is answered item by item with the current
// result/error/resultFor behaviour; HTTP-level behaviours apply to the whole.
// The relayer's first read of a new endpoint rides behind the check in one
// batch (`[eth_chainId id 0, call]`): counted as that call and as a chain
// check (`batchedChecks()` says how many came that way), the check's item
// answered as a lone check would be, the call's by the script.
import http from 'node:http';

const HTML = '<html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>';

export async function startMockNode(script = [{ result: '0x1' }], { host = '127.0.0.1', port = 0, chainId: initialChain } = {}) {
  let chainId = initialChain;
  let behaviours = [...script];
  const frontedOf = (list) => (list.find((b) => b.proxy) || {}).proxy;
  let fronted = frontedOf(script);
  const chainAnswer = () => (chainId === undefined && fronted ? { proxy: fronted } : { result: chainId || '0x1' });
  const requests = [];
  const sockets = new Set();
  let aborted = 0;
  const server = http.createServer((req, res) => {
    res.on('close', () => { if (!res.writableEnded) aborted += 1; });
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
    res.setHeader('access-control-allow-headers', 'content-type, accept');
    if (req.method === 'OPTIONS') return res.end();
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body = null;
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* counted anyway */ }
      const isCheck = (m) => Boolean(m && m.method === 'eth_chainId' && m.id === 0);
      const chainCheck = isCheck(body);
      const checked = Array.isArray(body) && body.length === 2 && isCheck(body[0]) && !isCheck(body[1]);
      const call = checked ? body[1] : body;
      requests.push({
        method: call && call.method, params: call && call.params, batch: Array.isArray(call) ? call.length : null,
        url: req.url, at: Date.now(), chainCheck, batchedCheck: checked, headers: req.headers,
      });
      if (chainCheck && !behaviours[0].proxy && !behaviours[0].chainCheckToo) return respond(res, chainAnswer(), body, Buffer.concat(chunks));
      const behaviour = behaviours.length > 1 ? behaviours.shift() : behaviours[0];
      if (checked) return respondChecked(res, behaviour, body, Buffer.concat(chunks), chainAnswer);
      respond(res, behaviour, body, Buffer.concat(chunks));
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(port, host, resolve));
  const bound = server.address().port;
  const url = `http://${host}:${bound}`;
  const stop = () => new Promise((resolve) => {
    for (const s of sockets) s.destroy();
    server.close(() => resolve());
  });
  return {
    url,
    /**
     * Requests received, optionally only those of one JSON-RPC method. The
     * relayer's one-time chain-id check of a new endpoint is counted apart
     * (`chainChecks()`), unless asked for by method name.
     */
    count: (method) => requests.filter((r) => (method === undefined ? !r.chainCheck
      : r.method === method || (method === 'eth_chainId' && r.batchedCheck))).length,
    chainChecks: () => requests.filter((r) => r.chainCheck || r.batchedCheck).length,
    /** Chain checks that came in one batch with a call. */
    batchedChecks: () => requests.filter((r) => r.batchedCheck).length,
    /** HTTP requests received, chain checks included. */
    exchanges: () => requests.length,
    /** Requests the client gave up on (closed before an answer was sent). */
    aborts: () => aborted,
    requests,
    /** Replaces the script (a node dies or recovers). */
    setScript: (next) => { behaviours = [...next]; fronted = frontedOf(next) || fronted; },
    /** Answers later chain-id checks with another chain (a swapped backend). */
    setChainId: (next) => { chainId = next; },
    close: stop,
    /** Stops listening: clients now get "connection refused". */
    stop,
    /** Listens again on the same port. */
    restart: () => new Promise((resolve) => server.listen(bound, host, resolve)),
  };
}

function respond(res, b, body, rawBody) {
  if (b.delayMs) {
    setTimeout(() => respond(res, b.then || { result: '0x1' }, body, rawBody), b.delayMs);
    return;
  }
  if (b.proxy) {
    fetch(b.proxy, { method: 'POST', headers: { 'content-type': 'application/json' }, body: rawBody })
      .then(async (upstream) => {
        res.writeHead(upstream.status, { 'content-type': 'application/json' });
        res.end(Buffer.from(await upstream.arrayBuffer()));
      })
      .catch(() => { res.writeHead(502); res.end('upstream unreachable'); });
    return;
  }
  if (b.hang) return; // never answer
  const id = body && body.id !== undefined ? body.id : null;
  const json = (status, payload, headers = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(payload));
  };
  if (b.status !== undefined) {
    res.writeHead(b.status, { 'content-type': b.body ? 'application/json' : 'text/html', ...(b.headers || {}) });
    return res.end(b.body === undefined ? HTML : (typeof b.body === 'string' ? b.body : JSON.stringify(b.body)));
  }
  if (b.html) { res.writeHead(200, { 'content-type': 'text/html' }); return res.end(HTML); }
  if (b.raw !== undefined) { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(b.raw); }
  if (Array.isArray(body)) {
    if (b.batch) return json(200, b.batch(body));
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(`[${body.map((m) => itemReply(b, m)).join(',')}]`);
  }
  if (b.rawResult !== undefined) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${b.rawResult}}`);
  }
  if (b.wrongId) return json(200, { jsonrpc: '2.0', id: 987654321, result: '0xdead' });
  if (b.error) return json(200, { jsonrpc: '2.0', id, error: b.error });
  if (b.resultFor) {
    const method = body && body.method;
    return json(200, { jsonrpc: '2.0', id, result: method in b.resultFor ? b.resultFor[method] : '0x1' });
  }
  return json(200, { jsonrpc: '2.0', id, result: b.result === undefined ? '0x1' : b.result });
}

/** One item of a batch reply, as JSON text, by behaviour `b` (error, wrongId, rawResult, resultFor, result). */
function itemReply(b, m) {
  if (b.error) return JSON.stringify({ jsonrpc: '2.0', id: m.id, error: b.error });
  if (b.wrongId) return JSON.stringify({ jsonrpc: '2.0', id: 987654321, result: '0xdead' });
  if (b.rawResult !== undefined) return `{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":${b.rawResult}}`;
  const result = b.resultFor ? (m.method in b.resultFor ? b.resultFor[m.method] : '0x1') : b.result === undefined ? '0x1' : b.result;
  return JSON.stringify({ jsonrpc: '2.0', id: m.id, result });
}

// `[eth_chainId, call]`: HTTP-level behaviours (status, hang, html, raw,
// proxy, a custom batch) answer the whole body; others answer the call's
// item, and the check's item is answered as a lone check would be (or by
// the behaviour too, with `chainCheckToo`).
function respondChecked(res, b, body, rawBody, chainAnswer) {
  if (b.delayMs) {
    setTimeout(() => respondChecked(res, b.then || { result: '0x1' }, body, rawBody, chainAnswer), b.delayMs);
    return;
  }
  if (b.proxy || b.hang || b.status !== undefined || b.html || b.raw !== undefined || b.batch) {
    return respond(res, b, body, rawBody);
  }
  const [check, call] = body;
  const send = (checkReply) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`[${checkReply},${itemReply(b, call)}]`);
  };
  const answer = chainAnswer();
  if (b.chainCheckToo || !answer.proxy) return send(itemReply(b.chainCheckToo ? b : answer, check));
  // A node fronting a real one while it plays a fault: the real node answers the check.
  fetch(answer.proxy, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(check) })
    .then((upstream) => upstream.text())
    .then(send, () => { res.writeHead(502); res.end('upstream unreachable'); });
}

let deadUrls = 0;

/**
 * A loopback URL on which nothing listens (connection refused). Its path is
 * new on every call: relayers in one process share what they learn about a
 * URL (its breaker), and the kernel may hand a closed port out again, so an
 * earlier test's dead URL, its breaker open, would otherwise come back as a
 * fresh one (seen once: a test's second dead endpoint skipped twice).
 */
export async function deadUrl() {
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  deadUrls += 1;
  return `http://127.0.0.1:${port}/dead-${deadUrls}`;
}

/**
 * For a test file: returns `node(script, options)`, which starts a mock
 * node that is closed when the file's tests are done.
 */
export function useMockNodes(after) {
  const started = [];
  after(() => Promise.all(started.map((n) => n.close())));
  return async (script, options) => {
    const n = await startMockNode(script, options);
    started.push(n);
    return n;
  };
}
