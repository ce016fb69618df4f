// A tiny loopback static file server for browser tests and the demo page.
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.css': 'text/css',
};

/** Serves `routes` ({ '/prefix': '/abs/dir' }) plus in-memory `pages` ({ '/path': html }). */
export async function startStaticServer({ routes = {}, pages = {} } = {}) {
  const server = http.createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (pages[path] !== undefined) {
      res.writeHead(200, { 'content-type': TYPES[extname(path)] || TYPES['.html'] });
      return res.end(pages[path]);
    }
    for (const [prefix, dir] of Object.entries(routes)) {
      if (!path.startsWith(prefix + '/')) continue;
      const rel = normalize(path.slice(prefix.length + 1));
      if (rel.startsWith('..')) break;
      try {
        const body = await readFile(join(dir, rel));
        res.writeHead(200, { 'content-type': TYPES[extname(rel)] || 'application/octet-stream' });
        return res.end(body);
      } catch {
        break;
      }
    }
    res.writeHead(404);
    res.end('not found');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
