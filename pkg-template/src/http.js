// The HTTP exchange of one attempt, for URL upstreams. The engine (wasm)
// decides everything about an attempt — which endpoint, which body, how
// long it may take, what the reply means — and calls this once per
// attempt to do the I/O: one `fetch` under an `AbortController` cut at the
// attempt's timeout (the timer also covers reading the body), the caller's
// `AbortSignal` forwarded, and the body read with a size bound.
//
// Why in JS: doing the same from wasm took ~25 boundary crossings and five
// wasm closures (each a promise hop and a finalizer registration) per
// attempt; measured in Node, that cost more than the whole policy layer
// (benches/README.md). One call in; one plain object back, delivered to
// the engine by slot number (no promise for wasm to await):
//   { status, retryAfter, text }       the body as text (the engine parses it)
//   { status, retryAfter, tooLarge }   the body passed maxBytes (not read further)
//   { status, retryAfter, inexact }    a JSON number in it cannot be held exactly by a JS number
//   { error, timedOut }                fetch or the body read failed

import { onAbort } from './abort-watch.js';
const utf8 = new TextDecoder();

// A number token that may not survive JSON.parse: 16+ digits (2^53 has 16),
// or a 3-digit exponent. Only a cheap filter; `hasInexactNumber` decides.
const SUSPECT_NUMBER = /[:,[]\s*-?(?:\d{16,}|\d+(?:\.\d+)?[eE][+-]?\d{3,})/;

/** Whether a JSON number token parses to a double that is not what it says. */
function inexactToken(token) {
  const value = Number(token);
  if (!Number.isFinite(value)) return true; // 1e400 → Infinity
  if (!/^-?\d+$/.test(token)) return false;
  return !Number.isSafeInteger(value) && BigInt(token) !== BigInt(value);
}

/**
 * Whether a JSON text holds a number JSON.parse would silently round
 * (beyond 2^53, or out of range): such a result is rejected, never
 * delivered rounded. Strings are skipped (a hash or a message may hold
 * digits); the scan runs only when the filter above matched.
 */
export function hasInexactNumber(text) {
  if (!SUSPECT_NUMBER.test(text)) return false;
  const n = text.length;
  for (let i = 0; i < n;) {
    const c = text.charCodeAt(i);
    if (c === 34) { // a string: skip to its closing quote
      for (i += 1; i < n; i += 1) {
        const d = text.charCodeAt(i);
        if (d === 92) i += 1;
        else if (d === 34) break;
      }
      i += 1;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + 1;
      for (; j < n; j += 1) {
        const d = text.charCodeAt(j);
        if (!((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45)) break;
      }
      if (inexactToken(text.slice(i, j))) return true;
      i = j;
    } else {
      i += 1;
    }
  }
  return false;
}

/**
 * Reads a body without a declared length chunk by chunk and gives up (and
 * cancels the stream) as soon as it passes `max` bytes: a node streaming
 * gigabytes costs at most `max` bytes of memory. `null` means too large.
 */
async function readBounded(response, max) {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return utf8.decode(chunks[0]);
  const all = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return utf8.decode(all);
}

/**
 * The sender for one URL endpoint: `(body, timeoutMs, signal, slot)` starts
 * one exchange, hands its result (one of the shapes above) to
 * `deliver(slot, result)` when done, and returns its `AbortController`
 * (the engine aborts an exchange it abandons, e.g. a hedge race it lost).
 * `headers` is a plain object built once per endpoint (fetch copies it).
 */
export function httpSender(url, headers, maxBytes, deliver) {
  return (body, timeoutMs, signal, slot) => {
    const controller = new AbortController();
    httpExchange(url, headers, maxBytes, body, timeoutMs, signal, controller).then((result) => {
      try {
        deliver(slot, result);
      } catch {
        // Only a dead wasm instance throws here; nothing is waiting any more.
      }
    });
    return controller;
  };
}

// A timer this late (ms, or a quarter of its delay) means the event loop was blocked.
const LATE_FLOOR_MS = 20;

/**
 * The attempt's timer: `onTimeout()` after `timeoutMs`. It measures the node,
 * not us: when it fires late because the event loop was blocked (a burst of
 * synchronous work), the answer may be sitting unread in the socket, so the
 * blocked time is given back, at most twice, before the attempt times out.
 * Returns its `clear()`.
 */
export function attemptTimer(timeoutMs, onTimeout) {
  let due = performance.now() + timeoutMs;
  let grace = 2;
  let timer;
  const fire = () => {
    const late = performance.now() - due;
    if (grace > 0 && late > Math.max(LATE_FLOOR_MS, timeoutMs / 4)) {
      grace -= 1;
      const extra = Math.min(late, timeoutMs);
      due = performance.now() + extra;
      timer = setTimeout(fire, extra);
      return;
    }
    onTimeout();
  };
  timer = setTimeout(fire, timeoutMs);
  return () => clearTimeout(timer);
}

async function httpExchange(url, headers, maxBytes, body, timeoutMs, signal, controller) {
  let timedOut = false;
  const clear = attemptTimer(timeoutMs, () => {
    timedOut = true;
    controller.abort();
  });
  let unwatch = () => {};
  if (signal) {
    if (signal.aborted) controller.abort();
    else unwatch = onAbort(signal, () => controller.abort());
  }
  try {
    const response = await fetch(url, { method: 'POST', headers, body, signal: controller.signal });
    const status = response.status;
    const retryAfter = response.headers.get('retry-after');
    const declared = response.headers.get('content-length');
    let text;
    if (declared !== null && /^\s*\d+\s*$/.test(declared)) {
      if (Number(declared) > maxBytes) {
        controller.abort();
        return { status, retryAfter, tooLarge: true };
      }
      text = await response.text();
    } else {
      text = await readBounded(response, maxBytes);
      if (text === null) {
        controller.abort();
        return { status, retryAfter, tooLarge: true };
      }
    }
    if (text.length > maxBytes) return { status, retryAfter, tooLarge: true };
    if (hasInexactNumber(text)) return { status, retryAfter, inexact: true };
    return { status, retryAfter, text };
  } catch (error) {
    return { error, timedOut };
  } finally {
    clear();
    unwatch();
  }
}
