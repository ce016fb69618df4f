// The fleet's store across the tabs and workers of one origin (docs/coordination.md, "Tabs"):
// relayers of every page on one API key send, together, what one relayer would. The tab that
// holds a Web Lock is the leader: it keeps the buckets in its engine (tabBucketAsk, the same
// contract as the Redis script) and answers every tab's lease asks over a BroadcastChannel; when
// it closes or crashes, the browser hands the lock to the next tab waiting, which starts the
// buckets afresh. An ask the leader does not answer (none yet, or a frozen page) is given up by
// the engine after its lease period, and that tab spends from its own bucket meanwhile, as alone.
// Only where both Web Locks and BroadcastChannel exist (browsers, their workers); elsewhere the
// realm keeps news only (realm-news.js).

import { realmId } from './realm-news.js';

const CHANNEL = 'breakwater-rpc/leases';
const LOCK = 'breakwater-rpc/lease-leader';
const VERSION = 1;

const quiet = () => {};

/** Whether this realm can lease from its origin's tabs. */
export function tabsCanLease() {
  return typeof BroadcastChannel === 'function' && typeof navigator === 'object' && navigator !== null
    && typeof navigator.locks?.request === 'function';
}

/** Reads `fleet.tabs`: `true` (the default), or `false` to keep this realm's buckets its own. */
export function tabsWanted(fleet, invalid) {
  if (fleet === false) return false;
  if (fleet === null || typeof fleet !== 'object' || fleet.tabs === undefined) return true;
  if (typeof fleet.tabs !== 'boolean') throw invalid('fleet.tabs', 'must be a boolean');
  return fleet.tabs;
}

const isAsk = (d) => d.t === 'ask' && typeof d.from === 'string' && typeof d.key === 'string'
  && typeof d.id === 'number' && Array.isArray(d.n) && (d.n.length === 6 || d.n.length === 7) && d.n.every((x) => typeof x === 'number');
const isGrant = (d) => d.t === 'grant' && typeof d.key === 'string' && typeof d.id === 'number'
  && (d.r === null || (Array.isArray(d.r) && d.r.every((x) => typeof x === 'number')));

/** Attaches the realm to its origin's tab store; `close()` detaches it. */
export function tabStore(wasm) {
  const from = realmId();
  // Opened after the constructor's task (`open` below): until then asks wait in `pending`.
  let channel = null;
  let leader = false;
  let closed = false;
  let stepDown = quiet;
  let nextId = 0;
  const pending = new Map(); // group key -> the ask out at the leader: { id, want, numbers }

  // `demand`: what the asking tab needs (CU/s), `alone`: what it spent alone in the last
  // second (CU), `window`: the most the tabs may send in one second (CU), `waited`: how long
  // its oldest read has waited (ms; the leader serves the longest first), and `line`: what its
  // reads waiting for the plan cost (CU; the leader tells each tab the others'), numbers apart from
  // `numbers` (a leader of an earlier version reads six or seven of those, and ignores them).
  const serve = (key, member, numbers, demand, alone, window, ages, waited, line) => {
    const said = Float64Array.from([demand, alone, window, waited, line], (x) => (typeof x === 'number' ? x : NaN));
    const byAge = Array.isArray(ages) && ages.length === 10 && ages.every((a) => typeof a === 'number') ? Float64Array.from(ages) : undefined;
    const reply = wasm.tabBucketAsk(key, member, Float64Array.from(numbers), said, byAge);
    return reply.length >= 5 ? Array.from(reply) : null;
  };
  // A leader of an earlier version answers four to six numbers: the others' need and lines are
  // then unknown, and no window was kept.
  const answer = (key, want, reply) => {
    if (closed) return;
    if (reply) wasm.realmLeaseGranted(key, want, reply[0], reply[1], reply[2], reply[3], reply[4] ?? -1, reply[5] ?? 0, reply[6] ?? -1);
    else wasm.realmLeaseFailed(key);
  };

  const post = (key, { id, numbers, demand, alone, window, ages, waited, line }) => {
    channel.postMessage({ v: VERSION, t: 'ask', from, id, key, n: numbers, d: demand, a: alone, w: window, ag: ages, wt: waited, ln: line });
  };

  wasm.attachRealmStore((key, want, rate, burst, held, holdMs, least, released = 0, demand = -1, alone = 0, window = 0, aloneAges = null, waited = -1, line = -1) => {
    const ages = aloneAges ? Array.from(aloneAges) : undefined;
    // What is given back goes as a seventh number only when there is some (a leader of an
    // earlier version reads six).
    const numbers = released > 0 ? [want, rate, burst, held, holdMs, least, released] : [want, rate, burst, held, holdMs, least];
    if (closed) return queueMicrotask(() => wasm.realmLeaseFailed(key));
    if (leader) {
      const reply = serve(key, from, numbers, demand, alone, window, ages, waited, line);
      return queueMicrotask(() => answer(key, want, reply));
    }
    nextId += 1;
    const ask = { id: nextId, want, numbers, demand, alone, window, ages, waited, line };
    pending.set(key, ask); // a later ask replaces one the engine gave up
    if (channel) post(key, ask);
  });

  // The channel and the lock, after the constructor's task: a BroadcastChannel costs a page about
  // a millisecond to make, and the first request (sent in the same task) need not wait for it.
  // Asks made meanwhile go out once it is open.
  const open = () => {
    if (closed) return;
    channel = new BroadcastChannel(CHANNEL);
    channel.unref?.();
    channel.onmessage = ({ data }) => {
      if (closed || data === null || typeof data !== 'object' || data.v !== VERSION) return;
      if (leader && isAsk(data)) {
        const r = serve(data.key, data.from, data.n, data.d, data.a, data.w, data.ag, data.wt, data.ln);
        channel.postMessage({ v: VERSION, t: 'grant', to: data.from, id: data.id, key: data.key, r });
      } else if (data.to === from && isGrant(data) && pending.get(data.key)?.id === data.id) {
        const { want } = pending.get(data.key);
        pending.delete(data.key);
        answer(data.key, want, data.r);
      }
    };
    for (const [key, ask] of pending) post(key, ask);
    // Queued behind the current leader; granted when it goes. Held until close().
    navigator.locks.request(LOCK, () => new Promise((resolve) => {
      if (closed) return resolve();
      leader = true;
      stepDown = resolve;
      // Asks made before this tab led (the first tab asks before its lock is granted; the others'
      // leader may just have gone) are answered here now, then groups that failed ask again.
      const asked = [...pending];
      pending.clear();
      for (const [key, { want, numbers, demand, alone, window, ages, waited, line }] of asked) answer(key, want, serve(key, from, numbers, demand, alone, window, ages, waited, line));
      wasm.realmStoreBack();
    })).catch(quiet);
  };
  const timer = setTimeout(open, 0);
  timer.unref?.();

  return {
    close() {
      closed = true;
      leader = false;
      clearTimeout(timer);
      stepDown();
      channel?.close();
      wasm.detachRealmStore();
    },
  };
}

/**
 * A name for this tab's relayers that survives a reload of the page (sessionStorage is the tab's):
 * the journal then gives a reloaded page its own pending nonces back at once. Where there is no
 * sessionStorage (a worker), a fresh random one.
 */
export function tabMember(index, random) {
  let id = null;
  try {
    id = globalThis.sessionStorage?.getItem('breakwater-tab');
    if (!id) {
      id = random();
      globalThis.sessionStorage?.setItem('breakwater-tab', id);
    }
  } catch {
    id = null; // storage refused (sandboxed frame): a fresh name
  }
  return `${id ?? random()}-${index}`;
}
