// Loopback JSON-RPC nodes behind one rate-limited API key, the way a provider's key limits every
// URL it is used on: `startLimitedKey({ perSecond, urls })` serves `urls` nodes that share one
// counter of requests per second (fixed one-second windows); beyond it, a 429 with
// `Retry-After: 1` (`sliding`: any 1,000 ms instead). Every request counts, chain checks included, each item of a batch as one
// (CORS preflights do not); counts are per outcome. `chainIdMs` delays the answers to `eth_chainId` (counted on arrival), the
// way a cold provider answers the first request slowly.
import http from 'node:http';

export async function startLimitedKey({ perSecond, urls = 2, retryAfter = '1', chainIdMs = 0, sliding = false }) {
  const counts = { served: 0, limited: 0, chainChecks: 0 };
  // `sliding`: the key keeps any 1,000 ms within `perSecond` (what it served, by arrival), as
  // many providers do; else fixed one-second windows, which let up to twice through across an edge.
  const recent = [];
  let window = 0;
  let inWindow = 0;
  let windows = [];
  const servers = [];
  for (let i = 0; i < urls; i += 1) {
    const server = http.createServer((req, res) => {
      // Pages fetch it across origins: CORS, and preflights are not requests the key counts.
      res.setHeader('access-control-allow-origin', '*');
      res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
      res.setHeader('access-control-allow-headers', 'content-type, accept');
      res.setHeader('access-control-expose-headers', 'retry-after');
      res.setHeader('access-control-max-age', '600');
      if (req.method === 'OPTIONS') return res.end();
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        let body = null;
        try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* counted anyway */ }
        // A batch's items count one each, as providers count them.
        const items = Array.isArray(body) ? body : [body];
        const second = Math.floor(Date.now() / 1000);
        if (second !== window) { window = second; inWindow = 0; windows.push({ at: second, served: 0, limited: 0 }); }
        inWindow += items.length;
        const now = Date.now();
        while (recent.length > 0 && recent[0] <= now - 1000) recent.shift();
        if (sliding ? recent.length + items.length > perSecond : inWindow > perSecond) {
          counts.limited += items.length;
          windows.at(-1).limited += items.length;
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter });
          return res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: 429, message: 'Too Many Requests' } }));
        }
        for (let k = 0; k < items.length; k += 1) recent.push(now);
        counts.served += items.length;
        windows.at(-1).served += items.length;
        const chainId = items.some((m) => m && m.method === 'eth_chainId');
        if (chainId) counts.chainChecks += 1;
        const answer = () => {
          const reply = (m) => ({ jsonrpc: '2.0', id: m && m.id, result: '0x1' });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(Array.isArray(body) ? body.map(reply) : reply(body)));
        };
        if (chainId && chainIdMs > 0) setTimeout(answer, chainIdMs);
        else answer();
      });
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
  }
  return {
    urls: servers.map((s) => `http://127.0.0.1:${s.address().port}/`),
    counts: () => ({ ...counts, total: counts.served + counts.limited }),
    /** Served and limited per one-second window, oldest first (seconds since the first window). */
    windows: () => windows.map((w) => ({ ...w, at: w.at - (windows[0]?.at ?? 0) })),
    reset: () => { counts.served = 0; counts.limited = 0; counts.chainChecks = 0; windows = []; window = 0; },
    close: () => Promise.all(servers.map((s) => new Promise((r) => { s.closeAllConnections?.(); s.close(r); }))),
  };
}
