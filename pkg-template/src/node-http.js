// The HTTP exchange of one attempt in Node, on `node:http`/`node:https` with
// keep-alive agents instead of `fetch`: the same contract as http.js's
// `httpSender` (one call per attempt, one plain object delivered by slot
// number), at about half the CPU. Measured on loopback, one request at a
// time: fetch 2,130–2,326 req/s at 400–433 µs of CPU each, node:http
// 3,130–3,706 at 183–225 µs. undici's fetch runs each request through web
// streams and an AbortSignal; our own exchange needs neither.
//
// What fetch gave and this keeps: the attempt timer (also over the body
// read), the caller's AbortSignal, a size bound (declared length first,
// then counted as it streams, decompressed), compressed answers (gzip,
// deflate, br, as fetch asks for), keep-alive connections, and errors with
// the socket's `code` (ECONNREFUSED, ECONNRESET, ...), and what fetch
// does with a POST's method-keeping redirects: 307 and 308 are followed
// with the same body (at most MAX_HOPS, within the one attempt timer), never
// from https down to http, and the endpoint's own headers (an API key) are
// not sent to another origin. 301/302/303 are not followed: fetch would turn
// the POST into a GET, which no JSON-RPC node answers; the 3xx is the
// node's answer (classified `http.redirect`: use the URL it points to).
// Idle keep-alive sockets never hold the process open (Node's agent unrefs
// them).

import { onAbort } from './abort-watch.js';
import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import { attemptTimer, hasInexactNumber } from './http.js';

const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, scheduling: 'lifo' }),
};
const MODULES = { 'http:': http, 'https:': https };
const DECODERS = { gzip: zlib.createGunzip, 'x-gzip': zlib.createGunzip, deflate: zlib.createInflate, br: zlib.createBrotliDecompress };

/** An error as fetch would name it: `AbortError` for an abort (ours or the caller's). */
const abortError = () => Object.assign(new Error('the attempt was aborted'), { name: 'AbortError' });

/**
 * The sender for one URL endpoint (see http.js `httpSender`): returns the
 * exchange's controller, whose `abort()` the engine calls on an exchange it
 * abandons.
 */
export function nodeHttpSender(url, headers, maxBytes, deliver) {
  const target = new URL(url);
  const fixed = { 'accept-encoding': 'gzip, deflate, br', ...headers };
  return (body, timeoutMs, signal, slot) => {
    const send = (result) => {
      try {
        deliver(slot, result);
      } catch {
        // Only a dead wasm instance throws here; nothing is waiting any more.
      }
    };
    if (!MODULES[target.protocol]) {
      send({ error: new TypeError(`unsupported protocol ${target.protocol}`), timedOut: false });
      return { abort() {} };
    }
    return exchange(target, fixed, maxBytes, String(body), timeoutMs, signal, send);
  };
}

/** The most 307/308 redirects one attempt follows (fetch allows 20; a JSON-RPC endpoint needs one). */
export const MAX_HOPS = 5;

/** What `node:http` is asked for one hop to `target`. */
function requestOptions(target, headers, length) {
  return {
    protocol: target.protocol,
    hostname: target.hostname.replace(/^\[|\]$/g, ''),
    port: target.port || undefined,
    path: `${target.pathname}${target.search}`,
    method: 'POST',
    agent: AGENTS[target.protocol],
    headers: { ...headers, 'content-length': length },
  };
}

/**
 * Where a 307/308 from `from` leads, with the headers to send there; `null`
 * when it is not followed (no Location, not http(s), https down to http).
 * Another origin gets only the content headers: the endpoint's own headers
 * may carry its API key, and fetch drops credentials across origins too.
 */
function redirectTarget(from, location, headers) {
  let to;
  try {
    to = new URL(location, from);
  } catch {
    return null;
  }
  if (!MODULES[to.protocol] || (from.protocol === 'https:' && to.protocol === 'http:')) return null;
  if (to.origin === from.origin) return { to, headers };
  const kept = {};
  for (const [name, value] of Object.entries(headers)) {
    if (/^(content-type|accept-encoding|accept)$/i.test(name)) kept[name] = value;
  }
  return { to, headers: kept };
}

function exchange(first, firstHeaders, maxBytes, body, timeoutMs, signal, send) {
  let settled = false;
  let timedOut = false;
  let req = null;
  let unwatch = () => {};
  const finish = (result) => {
    if (settled) return;
    settled = true;
    clear();
    unwatch();
    send(result);
  };
  const abort = () => {
    if (settled) return;
    const error = abortError();
    if (req) req.destroy(error);
    finish({ error, timedOut });
  };
  const clear = attemptTimer(timeoutMs, () => {
    timedOut = true;
    abort();
  });
  if (signal) {
    if (signal.aborted) {
      abort();
      return { abort() {} };
    }
    unwatch = onAbort(signal, abort);
  }
  const length = Buffer.byteLength(body);
  let hops = 0;
  const go = (target, headers) => {
    req = MODULES[target.protocol].request(requestOptions(target, headers, length), (res) => answer(target, headers, res));
    req.on('error', (error) => finish({ error, timedOut }));
    req.end(body);
  };
  const answer = (target, headers, res) => {
    if (settled) {
      res.resume();
      return;
    }
    const status = res.statusCode;
    const location = res.headers.location;
    if ((status === 307 || status === 308) && location && hops < MAX_HOPS) {
      const next = redirectTarget(target, location, headers);
      if (next) {
        hops += 1;
        res.resume(); // the redirect's own body is not read; its socket goes back to the agent
        go(next.to, next.headers);
        return;
      }
    }
    const retryAfter = res.headers['retry-after'] ?? null;
    const declared = res.headers['content-length'];
    const tooLarge = () => {
      res.destroy();
      finish({ status, retryAfter, tooLarge: true });
    };
    const encoding = String(res.headers['content-encoding'] || '').trim().toLowerCase();
    const decoder = DECODERS[encoding];
    if (!decoder && declared !== undefined && /^\s*\d+\s*$/.test(declared) && Number(declared) > maxBytes) return tooLarge();
    const stream = decoder ? res.pipe(decoder()) : res;
    const chunks = [];
    let total = 0;
    stream.on('data', (chunk) => {
      total += chunk.length;
      if (total > maxBytes) {
        if (stream !== res) stream.destroy();
        tooLarge();
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => {
      if (settled) return;
      const text = (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8');
      if (text.length > maxBytes) return finish({ status, retryAfter, tooLarge: true });
      if (hasInexactNumber(text)) return finish({ status, retryAfter, inexact: true });
      return finish({ status, retryAfter, text });
    });
    stream.on('error', (error) => finish({ error, timedOut }));
    res.on('error', (error) => finish({ error, timedOut }));
    res.on('close', () => {
      if (!res.complete) finish({ error: Object.assign(new Error('the answer was cut short'), { code: 'ECONNRESET' }), timedOut });
    });
  };
  go(first, firstHeaders);
  return { abort };
}
