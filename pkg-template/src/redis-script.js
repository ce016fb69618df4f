// A Lua script sent to Redis by its SHA-1 (EVALSHA) instead of whole (EVAL): the lease script
// is about 4 KB and goes out with about one ask per refill a relayer uses, so sending it whole
// was most of the fleet's bytes to Redis. A Redis that does not know the script yet (the first
// ask, a restart, SCRIPT FLUSH) answers NOSCRIPT; that one call is sent whole, and Redis keeps
// the script for the next. A client's first call is sent whole at once: a fresh worker would
// otherwise wait a round trip for NOSCRIPT before its first lease (with a Redis 300–600 ms away,
// most of a second that the worker spends alone at the whole plan).

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');

/** `run(client, { keys, arguments })` runs `source` on a node-redis client, by digest where it can. */
export function redisScript(source) {
  let digest = null; // a promise of the hex SHA-1, or of null where WebCrypto is missing
  const sha = () => {
    digest ??= globalThis.crypto?.subtle
      ? globalThis.crypto.subtle.digest('SHA-1', new TextEncoder().encode(source)).then(hex, () => null)
      : Promise.resolve(null);
    return digest;
  };
  const sent = new WeakSet(); // clients that ran the script once (Redis keeps it until a restart)
  return async function run(client, call) {
    const id = await sha();
    if (id && typeof client.evalSha === 'function' && sent.has(client)) {
      try {
        return await client.evalSha(id, call);
      } catch (error) {
        if (!/NOSCRIPT/.test(String(error && (error.message || error)))) throw error;
      }
    }
    const answer = await client.eval(source, call);
    sent.add(client);
    return answer;
  };
}
