// News between the realms of one origin (tabs and workers; worker threads in Node): the engine
// says what another realm should not have to learn again with its own requests (a key's cooldown
// after a 429, a breaker's opening, an endpoint's chain id; docs/coordination.md) and applies what
// it hears. This file only carries it, over one BroadcastChannel per realm, opened with the first
// relayer. Messages are versioned: a realm ignores what it cannot read.

const CHANNEL = 'breakwater-rpc/news';
const VERSION = 1;

/** Opens the realm's channel once (where BroadcastChannel exists); later calls do nothing. */
export function newsCarrier(wasm) {
  let opened = false;
  return () => {
    if (opened) return;
    opened = true;
    if (typeof BroadcastChannel !== 'function' || typeof wasm.setRealmNewsSink !== 'function') return;
    let channel;
    try {
      channel = new BroadcastChannel(CHANNEL);
    } catch {
      return; // e.g. an opaque origin
    }
    if (typeof channel.unref === 'function') channel.unref(); // Node: never keeps the process alive
    channel.onmessage = ({ data }) => {
      if (data && data.v === VERSION && typeof data.kind === 'string' && typeof data.key === 'string' && typeof data.value === 'number') {
        wasm.hearRealmNews(data.kind, data.key, data.value);
      }
    };
    wasm.setRealmNewsSink((kind, key, value) => {
      try {
        channel.postMessage({ v: VERSION, kind, key, value });
      } catch {
        // a closing page: the news is lost, which costs only what sharing saves
      }
    });
  };
}
