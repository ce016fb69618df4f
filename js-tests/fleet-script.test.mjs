// The lease script on a real redis-server (pkg-template/src/fleet-store.js) keeps the fleet
// bucket's contract (src/policy/fleet_bucket.rs, docs/coordination.md): what members hold is part
// of the burst, each member holds at most its share, a short member queues for the refill (the members granted less lately first), and a
// broken ask is an error, not quota. Redis runs on its own clock, so the checks allow for
// the milliseconds between two asks.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { LEASE_SCRIPT } from '../pkg-template/src/fleet-store.js';
import { startRedis } from './helpers/redis.mjs';

const stops = [];
after(async () => { for (const stop of stops.reverse()) await stop(); });

async function store() {
  const redis = await startRedis();
  stops.push(redis.stop);
  const client = createClient({ url: redis.url });
  await client.connect();
  stops.push(() => client.close());
  let n = 0;
  const bucket = () => `t${n}:q:{k}`;
  return {
    fresh: () => { n += 1; },
    client,
    bucket,
    /** One ask; resolves with the numbers the script returned. */
    async ask(member, { want, rate = 100, burst = 50, held = 0, hold = 2000, least = 1 }) {
      const reply = await client.eval(LEASE_SCRIPT, {
        keys: [bucket(), `${bucket()}:holds`, `${bucket()}:queue`],
        arguments: [want, rate, burst, held, hold, least].map(String).concat(member),
      });
      const [granted, shortMs, fleetRate, share] = reply.map(Number);
      return { granted, shortMs, fleetRate, share };
    },
  };
}

test('what members hold is part of the burst: a second member gets what the first left, never a fresh burst', async () => {
  const s = await store();
  const a = await s.ask('a', { want: 40 });
  assert.deepEqual([a.granted, a.share], [40, 50], 'alone: the whole burst is its share');
  await new Promise((r) => setTimeout(r, 500)); // the bucket alone would be full again
  const b = await s.ask('b', { want: 40 });
  assert.equal(b.share, 25, 'two members hold: half the burst each');
  assert.ok(b.granted <= 10 + 1e-9, `the 40 a holds are not there again: ${b.granted}`);
  assert.ok(b.shortMs > 0, 'short of its share: told to wait');
  const again = await s.ask('a', { want: 40, held: 40 });
  assert.deepEqual([again.granted, again.shortMs], [0, 0], 'a already holds more than its share: nothing, and no shortage');
  const [tokens, held] = (await s.client.hmGet(s.bucket(), ['tokens', 'held'])).map(Number);
  assert.ok(tokens + held <= 50 + 1e-9, `tokens ${tokens} + held ${held} within the burst`);
  assert.ok(Math.abs(held - (40 + b.granted)) < 1e-6, `everything held is counted: ${held}`);
});

test('holds end after their time, and a member that spent what it held gets its share again', async () => {
  const s = await store();
  s.fresh();
  await s.ask('a', { want: 50, hold: 150 });
  const blocked = await s.ask('b', { want: 10, hold: 150 });
  assert.ok(blocked.granted < 1, `a holds the whole burst: ${blocked.granted}`);
  await new Promise((r) => setTimeout(r, 400)); // both holds ended; 40 CU refilled
  const alone = await s.ask('b', { want: 50, hold: 150 });
  assert.equal(alone.share, 50, 'the ended holds no longer count as members');
  assert.ok(alone.granted >= 40 - 1e-6, `the burst is there again: ${alone.granted}`);
});

test('a shortage queues: the refill goes to the members short first; a large charge may still be held', async () => {
  const s = await store();
  s.fresh();
  await s.ask('a', { want: 30, burst: 30 });
  const b = await s.ask('b', { want: 5, burst: 30 });
  const c = await s.ask('c', { want: 5, burst: 30 });
  assert.ok(b.granted < 1 && c.granted < 1, 'a holds the burst: b and c are short');
  assert.ok(c.shortMs > b.shortMs, `c waits behind b's claim: ${b.shortMs} < ${c.shortMs} ms`);
  // a spent its 30 and asks again at once: what refilled is kept for b and c.
  const eager = await s.ask('a', { want: 5, burst: 30 });
  assert.ok(eager.granted < 1e-9, `nothing for a while b and c wait: ${eager.granted}`);
  await new Promise((r) => setTimeout(r, c.shortMs + 20));
  const [bTurn, cTurn] = [await s.ask('b', { want: 5, burst: 30 }), await s.ask('c', { want: 5, burst: 30 })];
  assert.deepEqual([bTurn.granted, cTurn.granted], [5, 5], 'each gets its turn');
  s.fresh();
  for (const m of ['a', 'b', 'c', 'd', 'e', 'f']) await s.ask(m, { want: 1, burst: 30, least: 1 });
  const big = await s.ask('g', { want: 26, burst: 30, least: 26 });
  assert.ok(big.share < 26);
  assert.ok(big.granted >= 24 - 1e-6, `a member with a 26-CU call holds more than the share: ${big.granted}`);
});

test('the refill goes first to the short member granted less lately, not the one that queued first', async () => {
  const s = await store();
  s.fresh();
  await s.ask('a', { want: 30, burst: 30 });
  // a spent its 30 and is short first; b, granted nothing yet, queues after it.
  const a = await s.ask('a', { want: 5, burst: 30 });
  const b = await s.ask('b', { want: 5, burst: 30 });
  assert.ok(a.granted < 1 && b.granted < 1, 'both short');
  assert.ok(b.shortMs <= 55, `b waits for its own 5 CU (50 ms), not behind a's claim (100 ms): ${b.shortMs} ms`);
  await new Promise((r) => setTimeout(r, b.shortMs + 10));
  // By arrival alone, a's claim (5) came first and b got what refilled past it (a member beside
  // the store, asking the moment it may, took every refill that way: 150/150/66/61 in CI).
  const bTurn = await s.ask('b', { want: 5, burst: 30 });
  assert.equal(bTurn.granted, 5, 'b, granted less lately, is served first');
});

test('a charge above the burst is still held once the bucket is full (eth_getBalance at 19 CU, burst 10)', async () => {
  const s = await store();
  s.fresh();
  const big = { want: 19, rate: 20, burst: 10, least: 19 };
  assert.equal((await s.ask('a', big)).granted, 10, 'a new bucket holds its burst');
  await new Promise((r) => setTimeout(r, 500));
  // Capped at the burst, the member held 10 of a 19-CU call forever and the call waited out its deadline.
  const rest = await s.ask('a', { ...big, held: 10 });
  assert.equal(rest.granted, 9, 'refilled up to one charge');
});

test('an unknown plan is granted and counted; a broken ask is an error, never quota', async () => {
  const s = await store();
  s.fresh();
  const unknown = await s.ask('a', { want: 500, rate: 0, burst: 1 });
  assert.deepEqual([unknown.granted, unknown.share], [500, 0]);
  assert.ok(unknown.fleetRate > 0, 'what the fleet takes is counted');
  for (const bad of [{ want: -1 }, { want: 'x' }, { want: 1, held: -1 }, { want: 1, hold: 'soon' }]) {
    await assert.rejects(s.ask('a', bad), /bad lease ask/, JSON.stringify(bad));
  }
  await assert.rejects(s.ask('', { want: 1 }), /bad lease ask/, 'a member with no id');
});
