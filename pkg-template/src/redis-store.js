// The fleet's store on Redis (docs/coordination.md, "Redis"): asks carried to Redis as one Lua
// script per lease, the account nonce book, and news both ways over pub/sub. Loaded on first use
// (fleet-store.js): Node bundles it; a page imports it only when a relayer names `fleet.redis`,
// so an app that never does downloads neither this nor its scripts. It shares no state with the
// rest of the wrapper: what it needs is handed to `redisStore`.

import { isNews, NEWS_VERSION, realmId } from './realm-news.js';
import { NONCE_SCRIPT, nonceKeys } from './fleet-nonces.js';
import { LEASE_SCRIPT, leaseArguments } from './fleet-lease-script.js';
import { redisScript } from './redis-script.js';

const runLease = redisScript(LEASE_SCRIPT);
const runNonces = redisScript(NONCE_SCRIPT);

// The module name in a variable: bundlers of browser apps leave the import alone, and only a
// Node process that names a Redis URL needs the package.
const REDIS_PACKAGE = 'redis';
const ASK_GIVEN_UP_MS = 1000; // policy/lease.rs DEFAULT_PERIOD
// How long an ask goes unanswered before the store is told down: as long as the engine awaits a
// late answer (policy/lease.rs GIVE_UP_PERIODS periods). After one period, a Redis 300-600 ms
// away each way (round trips up to 1.2 s) was told down and up again 10 times a relayer in 35 s
// (a new user's fleet: 148 `fleetStore` events), though it answered every ask.
const SILENT_MS = 4000;

const quiet = () => {};

/** A store error's words for an event: no password, no credentials of a URL. */
function storeReason(error, options) {
  let words = String((error && (error.message || error.code)) || error || 'unreachable');
  words = words.replace(/(rediss?:\/\/)[^@/\s]*@/gi, '$1***@');
  for (const secret of [options && options.password, options && options.username]) {
    if (typeof secret === 'string' && secret.length >= 3) words = words.split(secret).join('***');
  }
  return words.slice(0, 200);
}

/**
 * The store on Redis for a realm's relayers: `spec` is what fleet-store.js read of `fleet.redis`
 * and `fleet.prefix`, `report(up, reason)` tells its state. Returns `close()`, and the ask and
 * nonce book it attached (`ask`, `book`), for asks and nonce calls made while it loaded.
 */
export function redisStore(wasm, news, txModule, { prefix, client: given, options }, report = () => {}) {
  const channel = `${prefix}news`;
  const from = realmId();
  let client = given;
  let subscriber = null;
  let closed = false;
  // Group keys with an ask at Redis, since when: never a second one (nothing queues). An ask
  // older than the engine's lease period was given up there; its promise may never settle (a
  // command in flight when the connection died), so it no longer blocks the next.
  const asking = new Map();
  const busy = (key) => asking.has(key) && Date.now() - asking.get(key) < ASK_GIVEN_UP_MS;
  let silence = false; // an ask went unanswered for a period (see sendAsk)

  // The first connection's asks wait for it (as long as the engine awaits an answer, SILENT_MS):
  // a relayer made just before is then coordinated from its first lease instead of spending alone
  // until a retry, and the engine counts the ask's round trip from the connection (the store
  // back). Four workers starting together on two cores took over a second to load the client and
  // connect: their first asks, failed at one second, ended the start's cold share (each then
  // spent the whole plan: 20-37 429s). An error first (refused, unreachable) fails them at once.
  // Once the first connection is up or has failed, asks wait for nobody: those made while the
  // connection is down fail; once it is back (the client's `isReady` is true only after its
  // 'ready' listeners ran), the leases are asked again.
  let beforeFirst = new Map(); // group key -> { at, args }; null after the first connection
  let settleFirst;
  const first = new Promise((resolve) => { settleFirst = resolve; });
  const firstSettled = (up) => {
    settleFirst();
    const waiting = beforeFirst;
    beforeFirst = null;
    for (const [key, { at, args }] of waiting || []) {
      if (up && !closed && Date.now() - at < SILENT_MS) sendAsk(...args);
      else failLater(key);
    }
  };
  // A first connection not ready in that time (a Redis that accepts connections and never
  // answers, a handshake that hangs) is a store that is down, told as such: a new user's relayer
  // beside one stayed at its start's quarter of the plan for 4 s with no word of why.
  const firstGiveUp = setTimeout(() => {
    if (!closed) report(false, 'the fleet store (Redis) did not get ready in 4 s: it accepts no connection, or does not answer');
    firstSettled(false);
  }, SILENT_MS);
  firstGiveUp.unref?.();
  const down = (error) => {
    if (closed) return;
    report(false, storeReason(error, options));
    // The leases fall now, not at each group's next charge (an idle relayer's stats() read
    // 'leased' for seconds after Redis died).
    wasm.realmStoreDown();
    if (beforeFirst) {
      clearTimeout(firstGiveUp);
      firstSettled(false);
    }
  };
  const storeBack = () => setTimeout(() => {
    if (closed) return;
    report(true);
    clearTimeout(firstGiveUp);
    firstSettled(true);
    wasm.realmStoreBack();
  }, 0);
  const connect = async () => {
    if (!client) {
      // Left alone by bundlers (webpack warned "Critical dependency" for every browser build).
      const { createClient } = await import(/* webpackIgnore: true */ /* @vite-ignore */ REDIS_PACKAGE);
      // Reconnects (yours, or ours: 50 ms doubling to 2 s) stop once the store is closed: some
      // node-redis versions keep a client that was closed mid-reconnect retrying, and its ref'd
      // timer kept the process alive after close() (redis 5.12 with Redis unreachable).
      const theirs = options.socket?.reconnectStrategy;
      const reconnectStrategy = (retries, cause) => {
        if (closed) return false;
        if (typeof theirs === 'function') return theirs(retries, cause);
        return theirs ?? Math.min(50 * 2 ** retries, 2000);
      };
      const socket = { connectTimeout: 1000, ...(options.socket || {}), reconnectStrategy };
      // Commands while disconnected fail at once instead of queueing: an ask then fails and the
      // engine spends from its own bucket.
      // No CLIENT SETINFO at connect (a library tag Redis shows in CLIENT LIST): node-redis
      // awaits it before the client is ready, a round trip before the first lease. Yours to set.
      client = createClient({ disableOfflineQueue: true, disableClientInfo: true, ...options, socket });
      client.on('error', down); // the client reconnects by itself; the relayers hear it is down
      client.on('ready', storeBack);
      if (closed) return;
      client.unref?.();
      await client.connect();
    }
    if (given) {
      // The caller's client tells its state as ours does: its errors are the store going down
      // (a `fleetStore` event; and a node-redis client with no 'error' listener would crash the
      // process when Redis dies), its 'ready' the store coming back.
      given.on?.('error', down);
      given.on?.('ready', storeBack);
      // A client of the caller's still not connected a moment later is connected here (and
      // never closed here); one the caller connects meanwhile is left to the caller.
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (!given.isOpen && typeof given.connect === 'function') await given.connect().catch(quiet);
      if (given.isReady) storeBack();
    }
    subscriber = client.duplicate();
    subscriber.on('error', quiet);
    subscriber.unref?.();
    await subscriber.connect();
    if (closed) return;
    await subscriber.subscribe(channel, (message) => {
      let data;
      try {
        data = JSON.parse(message);
      } catch {
        return;
      }
      if (isNews(data) && data.from !== from) wasm.hearRealmNews(data.kind, data.key, data.value);
    });
  };
  // Down at start: the first asks fail, and later ones until the client's reconnect succeeds.
  connect().catch((error) => {
    down(error);
    firstSettled(false);
  });

  const failLater = (key) => queueMicrotask(() => wasm.realmLeaseFailed(key));
  const ask = (...args) => {
    const key = args[0];
    if (!closed && beforeFirst && !(client && client.isReady)) return void beforeFirst.set(key, { at: Date.now(), args });
    sendAsk(...args);
  };
  wasm.attachRealmStore(ask);
  function sendAsk(key, want, rate, burst, held, holdMs, least, released = 0, demand = -1, alone = 0, window = 0, ages = null, waited = -1, line = -1) {
    if (closed || !client || !client.isReady || busy(key)) return failLater(key);
    const started = Date.now();
    asking.set(key, started);
    const done = () => { if (asking.get(key) === started) asking.delete(key); };
    const bucket = `${prefix}q:{${key}}`;
    const ask = runLease(client, {
      keys: [bucket, `${bucket}:holds`, `${bucket}:queue`],
      // ARGV[9] the need (-1: unsaid), ARGV[10] what was spent alone, ARGV[11] the one-second
      // window, each sent only when it or one after it says something; ARGV[12] what was spent
      // alone by tenth of a second of age, when there is a window and some was (else empty, when
      // ARGV[13] follows); ARGV[13] how long the oldest read has waited (ms), when it or ARGV[14]
      // is said (-1: unsaid); ARGV[14] what the reads waiting for the plan cost (CU), when said.
      arguments: leaseArguments([want, rate, burst, held, holdMs, least], from, released, demand, alone, window, ages, waited, line),
    });
    // A store that keeps its connection but stops answering (a paused or overloaded Redis) sends
    // no 'error': an ask unanswered for SILENT_MS is the sign, told as `fleetStore` down; the next
    // answer tells it up again.
    const silent = setTimeout(() => { if (!closed) { silence = true; report(false, 'the fleet store (Redis) does not answer: an ask went unanswered for 4 s'); } }, SILENT_MS);
    silent.unref?.();
    const heard = () => {
      clearTimeout(silent);
      if (silence && !closed) { silence = false; report(true); }
    };
    Promise.resolve(ask).then(
      (reply) => {
        heard();
        done();
        const [granted, shortMs, fleetRate, share, othersNeed, windowed, othersLine] = Array.isArray(reply) ? reply.map(Number) : [NaN, NaN, NaN, NaN, NaN];
        wasm.realmLeaseGranted(key, want, granted, shortMs, fleetRate, share, othersNeed, windowed, othersLine ?? -1);
      },
      () => {
        clearTimeout(silent);
        done();
        wasm.realmLeaseFailed(key);
      },
    );
  }
  // The account nonce book (fleet-nonces.js) for relayers that named this store: a send waits
  // for the first connection, then needs the store up; never a guessed nonce.
  const book = async (op, account, member, n, record = '', owner = '', leaseMs = 0) => {
    // The store's connections never keep a process alive (unref'd), but a send waiting on its
    // nonce must: its caller awaits it.
    const alive = setInterval(() => {}, 60000);
    try {
      if (!closed && beforeFirst) await first;
      if (closed || !client || !client.isReady) throw new Error('the fleet store (Redis) is not connected');
      const call = { keys: nonceKeys(prefix, account), arguments: [op, member, String(n), record, owner, String(leaseMs)] };
      return await runNonces(client, call).catch((error) => { throw new Error(storeReason(error, options)); });
    } finally {
      clearInterval(alive);
    }
  };
  txModule.attachBook(book);
  const removeOutlet = news.addOutlet((kind, key, value) => {
    if (!closed && client && client.isReady) {
      Promise.resolve(client.publish(channel, JSON.stringify({ v: NEWS_VERSION, kind, key, value, from }))).catch(quiet);
    }
  });

  return {
    ask,
    book,
    close() {
      closed = true;
      clearTimeout(firstGiveUp);
      removeOutlet();
      wasm.detachRealmStore(); // groups still leasing fall back to their own buckets
      txModule.detachBook(); // shared sends fail from now on: no guessed nonce
      const end = (c) => { if (c) Promise.resolve().then(() => (c.isReady ? c.close() : c.destroy?.())).catch(quiet); };
      end(subscriber);
      if (!given) end(client);
      else {
        given.off?.('error', down);
        given.off?.('ready', storeBack);
      }
    },
  };
}
