// News between realms: the engine says what another realm should not have to learn again with
// its own requests (a key's cooldown after a 429, a lowered plan, a breaker's opening, an
// endpoint's chain id; docs/coordination.md) and applies what it hears. This file only carries
// it: over one BroadcastChannel per realm to the tabs and workers of its origin (opened with the
// first relayer), and to any other outlet (the Redis store's pub/sub, redis-store.js).
// Messages are versioned: a realm ignores what it cannot read.

const CHANNEL = 'breakwater-rpc/news';
export const NEWS_VERSION = 1;

/** A realm's random id on a shared channel or store (16 hex digits): its own messages are known by it. */
export function realmId() {
  return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Whether a message heard from elsewhere has the shape of news (the engine judges its content). */
export function isNews(data) {
  return Boolean(data) && data.v === NEWS_VERSION && typeof data.kind === 'string'
    && typeof data.key === 'string' && typeof data.value === 'number';
}

/**
 * The realm's news: `open()` starts the BroadcastChannel once (where it exists; later calls do
 * nothing); `addOutlet(fn)` sends every piece of news to `fn(kind, key, value)` as well, until
 * the returned function is called.
 */
export function newsHub(wasm) {
  const outlets = new Set();
  let opened = false;
  const fanOut = (kind, key, value) => {
    for (const outlet of outlets) {
      try {
        outlet(kind, key, value);
      } catch {
        // a closing page or a broken outlet: the news is lost, which costs only what sharing saves
      }
    }
  };
  const open = () => {
    if (opened) return;
    opened = true;
    if (typeof wasm.setRealmNewsSink === 'function') wasm.setRealmNewsSink(fanOut);
    if (typeof BroadcastChannel !== 'function') return;
    // Made after the constructor's task, not in it: a BroadcastChannel costs a page about a
    // millisecond to make, and the first request (sent in the same task) need not wait for it.
    // News told meanwhile is held and sent once it is open.
    const held = [];
    let send = (kind, key, value) => held.push([kind, key, value]);
    outlets.add((kind, key, value) => send(kind, key, value));
    const timer = setTimeout(() => {
      let channel;
      try {
        channel = new BroadcastChannel(CHANNEL);
      } catch {
        send = () => {}; // e.g. an opaque origin
        return;
      }
      if (typeof channel.unref === 'function') channel.unref(); // Node: never keeps the process alive
      channel.onmessage = ({ data }) => {
        if (isNews(data)) wasm.hearRealmNews(data.kind, data.key, data.value);
      };
      send = (kind, key, value) => channel.postMessage({ v: NEWS_VERSION, kind, key, value });
      for (const news of held.splice(0)) send(...news);
    }, 0);
    if (typeof timer?.unref === 'function') timer.unref();
  };
  const addOutlet = (outlet) => {
    outlets.add(outlet);
    return () => outlets.delete(outlet);
  };
  return { open, addOutlet };
}
