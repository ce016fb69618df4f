// The fleet's store across processes and machines (docs/coordination.md, "Redis"): `fleet: {
// redis }` names one, and relayers of every process on it send, together, what one relayer
// would. The engine decides what to ask and what an answer means (policy/lease.rs); this file
// reads the store's options and keeps one store per realm: the origin's tabs (tab-store.js), or
// Redis (redis-store.js, loaded on first use), which carries asks as one Lua script per lease
// and news both ways over pub/sub. The store is never on a request's critical path: an ask the
// store cannot take at once is answered "failed" (the engine then spends from its own bucket),
// so Redis down, slow or restarted empty costs what sharing saves and never a request. One
// store per realm; it closes with the last relayer that uses it.

import { ConfigError } from './errors.js';
import { tabStore, tabsCanLease, tabsWanted } from './tab-store.js';

// The package a Redis store needs (redis-store.js imports it by this name).
const REDIS_PACKAGE = 'redis';
const DEFAULT_PREFIX = 'breakwater:';

/** A Redis URL's scheme (node-redis takes redis:// and rediss://). */
const REDIS_URL = /^rediss?:\/\//;
const invalidStore = (field, message) => new ConfigError({ kind: 'config', code: -32602, field, message: `${field}: ${message}` });

const TABS = { tabs: true, identity: 'tabs' };

/**
 * Splits the wrapper's part of `fleet` from the engine's: `store` is the store this relayer
 * names (`fleet.redis`, `fleet.prefix`), else its origin's tabs where they can lease and
 * `fleet.tabs` is not `false`, else `null`; `named` says whether the relayer named it; `fleet`
 * is what the engine reads.
 */
export function splitFleetOptions(fleet) {
  // A store's URL given as the whole option (a new user's first try): say where it goes. Printed
  // as given would leak its password; the scheme is enough to recognise it.
  if (typeof fleet === 'string' && REDIS_URL.test(fleet)) {
    throw invalidStore('fleet', "must be a boolean or an object: a Redis URL goes in fleet.redis (fleet: { redis: 'redis://…' })");
  }
  const named = readStoreOptions(fleet);
  const store = named || (tabsWanted(fleet, invalidStore) && tabsCanLease() ? TABS : null);
  if (fleet === null || typeof fleet !== 'object') return { store, named: Boolean(named), fleet, indexedDB: false };
  const { redis, prefix, tabs, indexedDB = false, ...engine } = fleet;
  if (typeof indexedDB !== 'boolean') throw invalidStore('fleet.indexedDB', 'must be true or false');
  if (indexedDB && named) throw invalidStore('fleet.indexedDB', 'names a second home for nonces beside fleet.redis: choose one');
  if (indexedDB && typeof globalThis.indexedDB === 'undefined') throw invalidStore('fleet.indexedDB', 'IndexedDB is not available here');
  return { store, named: Boolean(named), fleet: engine, indexedDB };
}

/** Reads `fleet.redis` and `fleet.prefix`; `null` when no store is named. */
function readStoreOptions(fleet) {
  if (fleet === null || typeof fleet !== 'object' || fleet.redis === undefined) {
    if (fleet && typeof fleet === 'object' && fleet.prefix !== undefined) {
      throw invalidStore('fleet.prefix', 'only means something with fleet.redis');
    }
    return null;
  }
  const { redis, prefix = DEFAULT_PREFIX } = fleet;
  if (typeof prefix !== 'string' || prefix.length > 64 || /[\s\0]/.test(prefix)) {
    throw invalidStore('fleet.prefix', 'must be a string of at most 64 characters without spaces');
  }
  if (typeof redis === 'string') {
    if (!REDIS_URL.test(redis)) throw invalidStore('fleet.redis', 'a URL must start with redis:// or rediss://');
    return { prefix, client: null, options: { url: redis }, identity: `${redis}\n${prefix}` };
  }
  if (redis === null || typeof redis !== 'object') {
    throw invalidStore('fleet.redis', 'must be a redis:// URL, createClient options, or a node-redis client');
  }
  if (typeof redis.eval === 'function' && typeof redis.duplicate === 'function') {
    // What the store uses of a node-redis client; anything else failed later, told only as a
    // TypeError in a fleetStore event.
    const lacks = ['on', 'connect', 'publish'].find((m) => typeof redis[m] !== 'function');
    if (lacks) throw invalidStore('fleet.redis', `a client must be node-redis's (createClient from the npm package \`redis\`): this one has no \`${lacks}\` method`);
    return { prefix, client: redis, options: null, identity: redis };
  }
  if (redis.url !== undefined && (typeof redis.url !== 'string' || !REDIS_URL.test(redis.url))) {
    throw invalidStore('fleet.redis.url', 'must start with redis:// or rediss://');
  }
  // Options that say nowhere to connect would reach node-redis's default, localhost:6379 (perhaps
  // another application's Redis): a misspelt `url` must not land there.
  if (redis.url === undefined && (redis.socket === null || typeof redis.socket !== 'object')) {
    const hint = ['uri', 'URL', 'href', 'host', 'address'].find((k) => redis[k] !== undefined);
    throw invalidStore('fleet.redis', `createClient options need \`url\` or \`socket\` (where to connect)${hint ? `: did you mean \`url\` for \`${hint}\`?` : ''}`);
  }
  return { prefix, client: null, options: redis, identity: `${JSON.stringify(redis.url)}\n${prefix}` };
}

/**
 * The realm's store (at most one): `use(spec, named)` joins a relayer to it and returns its
 * release. A store the relayer did not name (its origin's tabs, the default) is joined only
 * when the realm has no other; the realm's groups lease from whichever is attached.
 */
export function fleetStores(wasm, news, txModule, installed = () => true, loadRedisStore) {
  let current = null;
  return {
    use(spec, named = true, onState = null) {
      // A page or a browser worker has no Redis (its entry gives no store loader): said at once,
      // not as a store down after downloading the store's code (a new user's page).
      if (!spec.tabs && !loadRedisStore) {
        throw invalidStore('fleet.redis', 'a page or browser worker cannot reach Redis (it takes Node and the npm package `redis`): relayers of one origin share through its tabs instead (fleet.tabs, on by default)');
      }
      // A URL or options need node-redis to connect: missing, every worker would run uncoordinated
      // with only a `fleetStore` event to say why (a new user expected a ConfigError).
      if (!spec.tabs && !spec.client && !installed(REDIS_PACKAGE)) {
        throw invalidStore('fleet.redis', 'needs the npm package `redis` (npm install redis), and it is not installed beside breakwater-rpc');
      }
      if (current && current.identity !== spec.identity) {
        if (!named) return null;
        if (current.identity === TABS.identity) {
          throw invalidStore('fleet.redis', 'this realm already leases from its origin\'s tabs: set fleet.tabs to false on every relayer of the page or worker to use a Redis store');
        }
        throw invalidStore('fleet.redis', 'this realm already uses another store (one per process, page or worker: fleet.redis and fleet.prefix must be the same as the first relayer\'s)');
      }
      if (!current) {
        const watchers = new Set();
        const state = { last: null };
        // The store's connection going down or up, told to every relayer using it (a late
        // joiner hears the state at once): a wrong password or an unreachable Redis is a
        // `fleetStore` event, never a failed request.
        const report = (up, reason) => {
          if (state.last && state.last.state === (up ? 'up' : 'down')) return;
          state.last = up ? { type: 'fleetStore', state: 'up' } : { type: 'fleetStore', state: 'down', reason };
          for (const watch of [...watchers]) watch(state.last);
        };
        const store = spec.tabs ? tabStore(wasm) : loadedRedisStore(loadRedisStore, wasm, news, txModule, spec, report);
        current = { identity: spec.identity, users: 0, store, watchers, state };
      }
      current.users += 1;
      const mine = current;
      if (onState) {
        mine.watchers.add(onState);
        if (mine.state.last) {
          const last = mine.state.last;
          queueMicrotask(() => { if (mine.watchers.has(onState)) onState(last); });
        }
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (onState) mine.watchers.delete(onState);
        mine.users -= 1;
        if (mine.users === 0 && current === mine) {
          current = null;
          mine.store.close();
        }
      };
    },
  };
}

/**
 * The Redis store (redis-store.js), its code loaded by `load()`: at once in Node (the module, or
 * it is bundled), or a promise of it in a page, which never downloads it unless a relayer names
 * `fleet.redis`. While a page loads it, each group's latest ask is held and sent when it is
 * here (as the store holds asks until its first connection), and nonce calls wait; a load that
 * fails is the store down (asks fail, the engine spends from its own buckets; sends that share
 * nonces fail, never a guessed nonce).
 */
function loadedRedisStore(load, wasm, news, txModule, spec, report) {
  const got = load();
  if (typeof got?.then !== 'function') return got.redisStore(wasm, news, txModule, spec, report);
  let store = null;
  let closed = false;
  const held = new Map(); // group key -> its latest ask's arguments
  wasm.attachRealmStore((...args) => void held.set(args[0], args));
  const here = got.then((module) => {
    if (closed) return;
    store = module.redisStore(wasm, news, txModule, spec, report); // attaches its own ask and book
    for (const args of held.values()) store.ask(...args);
    held.clear();
  });
  const failed = (error) => `the fleet store's code did not load: ${String((error && error.message) || error).slice(0, 200)}`;
  here.catch((error) => {
    if (closed) return;
    report(false, failed(error));
    wasm.attachRealmStore((key) => queueMicrotask(() => wasm.realmLeaseFailed(key)));
    for (const key of held.keys()) queueMicrotask(() => wasm.realmLeaseFailed(key));
    held.clear();
  });
  txModule.attachBook(async (...call) => {
    await here.catch((error) => { throw new Error(failed(error)); });
    if (!store) throw new Error('the fleet store (Redis) is not connected');
    return store.book(...call);
  });
  return {
    close() {
      closed = true;
      if (store) return store.close();
      wasm.detachRealmStore();
      txModule.detachBook();
    },
  };
}
