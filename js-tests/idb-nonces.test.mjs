// The IndexedDB nonce book and journal (pkg-template/src/idb-nonces.js) keeps the Redis script's
// contract (fleet-nonces.js): the same calls get the same replies. Checked against the script on
// a real redis-server with random call sequences of several members; the timed parts (holds and
// leases running out) on an explicit clock. The IndexedDB transactions themselves run in
// Chromium (browser.test.mjs, a page reloaded with a transaction pending).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { NONCE_SCRIPT, nonceKeys } from '../pkg-template/src/fleet-nonces.js';
import { applyCall } from '../pkg-template/src/idb-nonces.js';
import { startRedis } from './helpers/redis.mjs';

const stops = [];
after(async () => { for (const stop of stops.reverse()) await stop(); });
const fresh = () => ({ next: null, out: {}, holes: [], journal: {} });

/** A small deterministic generator (the sequences are reproducible from their seed). */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
}

// Orphans in any order (a Redis hash has none); a 'busy' wait to the second (two clocks).
const normal = (reply) => (reply[0] === 'orphans'
  ? ['orphans', ...Array.from({ length: (reply.length - 1) / 2 }, (_, i) => `${reply[1 + 2 * i]}=${reply[2 + 2 * i]}`).sort()]
  : reply[0] === 'busy' ? ['busy', Math.round(Number(reply[1]) / 1000)] : reply);

test('random call sequences of three members get the same replies from IndexedDB\'s book as from the Redis script', async () => {
  const redis = await startRedis();
  stops.push(redis.stop);
  const client = createClient({ url: redis.url });
  await client.connect();
  stops.push(() => client.close());
  const ops = ['allocate', 'allocate', 'live', 'live', 'release', 'abandon', 'settle', 'resync', 'write', 'renew', 'orphans'];
  let compared = 0;
  const kinds = new Set();
  for (let seed = 1; seed <= 12; seed += 1) {
    const next = rng(seed);
    const pick = (list) => list[Math.floor(next() * list.length)];
    const keys = nonceKeys('parity:', `s${seed}`);
    const book = fresh();
    const taken = []; // [nonce, member] of the allocations so far: most calls are about them
    for (let i = 0; i < 80; i += 1) {
      const op = pick(ops);
      const ours = taken.length > 0 && next() < 0.75 ? pick(taken) : null;
      const member = ours ? ours[1] : pick(['a', 'b', 'c']);
      const n = op === 'allocate' ? 60000 : op === 'resync' ? Math.floor(next() * 6) : ours ? ours[0] : Math.floor(next() * 8);
      const journaled = op === 'live' ? next() < 0.7 : ['write', 'renew', 'orphans'].includes(op);
      const record = journaled && op !== 'renew' && op !== 'orphans' ? `j1|${seed}|${i}` : '';
      const owner = op === 'live' && journaled ? member : '';
      const lease = journaled ? 60000 : 0;
      const args = [op, member, String(n), record, owner, String(lease)];
      const fromRedis = await client.eval(NONCE_SCRIPT, { keys, arguments: args }).then((r) => r, (e) => `error: ${/bad nonce call/.test(e.message)}`);
      if (op === 'allocate' && fromRedis[0] === 'ok') taken.push([Number(fromRedis[1]), member]);
      if (fromRedis[0]) kinds.add(`${op}:${fromRedis[0]}${fromRedis.length > 2 && fromRedis[0] === 'orphans' ? '+' : ''}`);
      let fromIdb;
      try {
        fromIdb = applyCall(book, Date.now(), op, member, n, record, owner, lease);
      } catch (e) {
        fromIdb = `error: ${/bad nonce call/.test(e.message)}`;
      }
      assert.deepEqual(typeof fromIdb === 'string' ? fromIdb : normal(fromIdb), typeof fromRedis === 'string' ? fromRedis : normal(fromRedis), `seed ${seed}, call ${i}: ${args.join(' ')}`);
      compared += 1;
    }
  }
  assert.equal(compared, 960);
  for (const kind of ['live:ok', 'live:lost', 'write:ok', 'write:lost', 'renew:ok', 'orphans:orphans+', 'release:ok', 'release:live', 'resync:busy', 'allocate:init']) {
    assert.ok(kinds.has(kind), `the sequences reach ${kind}: ${[...kinds].sort()}`);
  }
});

test('holds and leases run out on the book\'s clock as in the script: a lapsed reservation is a hole, a lapsed owner\'s record is taken over once', () => {
  const book = fresh();
  assert.deepEqual(applyCall(book, 0, 'allocate', 'a-1', 500), ['init']);
  assert.deepEqual(applyCall(book, 0, 'resync', 'a-1', 40), ['ok', '40']);
  assert.deepEqual(applyCall(book, 0, 'allocate', 'dies', 500), ['ok', '40']);
  assert.deepEqual(applyCall(book, 0, 'allocate', 'a-2', 500), ['ok', '41']);
  assert.deepEqual(applyCall(book, 100, 'resync', 'x', 45), ['busy', '400'], 'a reservation is held unbroadcast');
  assert.deepEqual(applyCall(book, 100, 'live', 'a-2', 41, 'j1|r', 'a', 15000), ['ok', '41']);
  assert.deepEqual(applyCall(book, 500, 'live', 'dies', 40), ['lost', '40'], 'its hold ran out');
  assert.deepEqual(applyCall(book, 500, 'allocate', 'b-1', 500), ['ok', '40'], 'a hole again');
  assert.deepEqual(applyCall(book, 15099, 'orphans', 'b', 0, '', 'b', 15000), ['orphans'], 'a\'s lease still runs');
  assert.deepEqual(applyCall(book, 15100, 'orphans', 'b', 0, '', 'b', 15000), ['orphans', '41', 'j1|r']);
  assert.deepEqual(applyCall(book, 15101, 'renew', 'a', 41, '', 'a', 15000), ['lost', '41'], 'taken over');
  assert.deepEqual(applyCall(book, 15102, 'orphans', 'b', 0, '', 'b', 15000), ['orphans', '41', 'j1|r'], 'its own, in a new life (a reloaded page)');
  assert.throws(() => applyCall(book, 0, 'live', 'a|b', 1), /bad nonce call/);
  assert.deepEqual(applyCall({ ...fresh(), v: 2 }, 0, 'allocate', 'a', 1), ['layout', '2'], 'a book of another layout is never touched');
});
