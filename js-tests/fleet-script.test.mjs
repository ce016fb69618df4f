// The lease script on a real redis-server (pkg-template/src/fleet-store.js) keeps the fleet
// bucket's contract (src/policy/fleet_bucket.rs, docs/coordination.md): what members hold is part
// of the burst, each member holds at most its share, a short member queues for the refill (the member whose oldest read has waited longest first;
// one that says nothing of it, by what was granted less lately), and a
// broken ask is an error, not quota. Redis runs on its own clock, so the checks allow for
// the milliseconds between two asks.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { LEASE_SCRIPT, leaseArguments } from '../pkg-template/src/fleet-lease-script.js';
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
    async ask(member, { want, rate = 100, burst = 50, held = 0, hold = 2000, least = 1, released, demand, alone, window, ages, waited, line }) {
      const said = waited !== undefined || line !== undefined;
      const tail = demand === undefined && alone === undefined && window === undefined && !said ? [] : [String(demand ?? -1)];
      if (alone !== undefined || window !== undefined || said) tail.push(String(alone ?? 0));
      if (window !== undefined || said) tail.push(String(window ?? 0));
      if (ages !== undefined || said) tail.push((ages ?? []).join(','));
      if (said) tail.push(String(waited ?? -1));
      if (line !== undefined) tail.push(String(line));
      const reply = await client.eval(LEASE_SCRIPT, {
        keys: [bucket(), `${bucket()}:holds`, `${bucket()}:queue`],
        arguments: [want, rate, burst, held, hold, least].map(String).concat(member,
          released === undefined && tail.length === 0 ? [] : [String(released ?? 0)], tail),
      });
      const [granted, shortMs, fleetRate, share, othersNeed, windowed, othersLine] = reply.map(Number);
      return { granted, shortMs, fleetRate, share, othersNeed, windowed, othersLine };
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

test('a shortage queues: the refill goes to the members short first; a large charge is held whole', async () => {
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
  // 24 are there, held by nobody: a part of the call would pay nothing (whole charges only), so g
  // queues; the others spend what they hold, get nothing while g waits, and g gets the whole call.
  assert.equal(big.granted, 0, `no part of a 26-CU call: ${big.granted}`);
  for (const m of ['a', 'b', 'c', 'd', 'e', 'f']) {
    const other = await s.ask(m, { want: 1, burst: 30, least: 1 });
    assert.ok(other.granted < 1e-9, `${m}: nothing while g waits: ${other.granted}`);
  }
  await new Promise((r) => setTimeout(r, big.shortMs + 20));
  const whole = await s.ask('g', { want: 26, burst: 30, least: 26 });
  assert.equal(whole.granted, 26, 'a member with a 26-CU call holds more than the share');
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

test('the refill goes first to the short member whose oldest read has waited longest; unsaid, as before', async () => {
  const s = await store();
  const ask = (member, want, waited) => s.ask(member, { want, rate: 100, burst: 30, waited });
  s.fresh();
  // Granted alike lately (16 and 14: by that alone b would go first); a's oldest read has waited
  // 900 ms, b's 100 ms.
  await ask('a', 16, 0);
  await ask('b', 14, 0);
  const b = await ask('b', 10, 100);
  const a = await ask('a', 10, 900);
  assert.ok(a.granted < 1 && b.granted < 1, 'both short');
  // 120 ms refill 12 CU: a's claim of 10 first, b takes what is past it.
  await new Promise((r) => setTimeout(r, 120));
  const bTurn = await ask('b', 10, 220);
  assert.ok(bTurn.granted < 6, `a's read is older: b waits behind its claim (granted ${bTurn.granted})`);
  assert.equal((await ask('a', 10, 1020)).granted, 10, "a's turn");
  // Granted more lately (past SERVED_ALIKE), a member goes after whatever its reads: a granted 30,
  // b nothing; a's read is the older.
  s.fresh();
  await ask('a', 30, 0);
  await ask('a', 10, 900);
  await ask('b', 10, 100);
  await new Promise((r) => setTimeout(r, 120));
  const aBack = await ask('a', 10, 1020);
  assert.ok(aBack.granted < 6, `b, granted less, first (a granted ${aBack.granted})`);
  assert.equal((await ask('b', 10, 220)).granted, 10);
  // c says nothing of its waits (an older member): granted nothing lately, it goes before a.
  s.fresh();
  await ask('a', 30, 0);
  await ask('a', 10, 900);
  await ask('c', 10, undefined);
  await new Promise((r) => setTimeout(r, 120));
  const aTurn = await ask('a', 10, 1020);
  assert.ok(aTurn.granted < 6, `c, granted less lately, first (a granted ${aTurn.granted})`);
  assert.equal((await ask('c', 10, undefined)).granted, 10);
  // The script keeps a claim's since with the claim, and only when said.
  const kept = await s.client.hGetAll(s.bucket());
  assert.ok(kept['o:a'] !== undefined && kept['o:c'] === undefined, `a's since kept, c's unsaid: ${JSON.stringify(kept)}`);
});

test('the script tells each member what the other members\' lines cost, while every one said its own', async () => {
  const s = await store();
  s.fresh();
  assert.equal((await s.ask('a', { want: 1, line: 5 })).othersLine, 0, 'alone: nobody else waits');
  assert.equal((await s.ask('b', { want: 1, line: 3 })).othersLine, 5);
  assert.equal((await s.ask('c', { want: 1, line: 0 })).othersLine, 8);
  assert.equal((await s.ask('c', { want: 1, line: 2 })).othersLine, 8, 'its own replaced, not added');
  assert.equal((await s.ask('a', { want: 1, line: 5 })).othersLine, 5, 'b and c: 3 and 2');
  assert.equal((await s.ask('d', { want: 1 })).othersLine, 10, 'a member of an older version asks');
  assert.equal((await s.ask('a', { want: 1, line: 5 })).othersLine, -1, 'it said none: unknown');
  const kept = await s.client.hGetAll(s.bucket());
  assert.ok(kept['l:a'] === '5' && kept['l:d'] === undefined, `a's line kept, d's unsaid: ${JSON.stringify(kept)}`);
});

test('leaseArguments sends the optional tail only as far as its last value said', () => {
  assert.deepEqual(leaseArguments([1, 2, 3, 0, 500, 1], 'm', 0, -1, 0, 0, null, -1, 6),
    ['1', '2', '3', '0', '500', '1', 'm', '0', '-1', '0', '0', '', '-1', '6'], 'a line said, its wait not');
  assert.deepEqual(leaseArguments([1, 2, 3, 0, 500, 1], 'm', 0, -1, 0, 0, null, 250, 6).slice(12), ['250', '6']);
  assert.deepEqual(leaseArguments([1, 2, 3, 0, 500, 1], 'm', 0, -1, 0, 0, null, -1), ['1', '2', '3', '0', '500', '1', 'm', '0']);
  assert.deepEqual(leaseArguments([1, 2, 3, 0, 500, 1], 'm', 0, 4, 0, 0, null, -1), ['1', '2', '3', '0', '500', '1', 'm', '0', '4']);
  assert.deepEqual(leaseArguments([1, 2, 3, 0, 500, 1], 'm', 0, -1, 0, 0, null, 250),
    ['1', '2', '3', '0', '500', '1', 'm', '0', '-1', '0', '0', '', '250']);
  const ages = new Float64Array(10).fill(1);
  assert.deepEqual(leaseArguments([1, 2, 3, 0, 500, 1], 'm', 0, 4, 10, 30, ages, NaN).slice(8),
    ['4', '10', '30', '1,1,1,1,1,1,1,1,1,1']);
});

test('a charge above the burst is still held once the bucket is full (eth_getBalance at 19 CU, burst 10)', async () => {
  const s = await store();
  s.fresh();
  const big = { want: 19, rate: 20, burst: 10, least: 19 };
  const first = await s.ask('a', big);
  assert.equal(first.granted, 0, 'a new bucket holds its burst, 10: a part of the call, which pays nothing');
  assert.ok(first.shortMs >= 440 && first.shortMs <= 460, `told when the whole call is there: ${first.shortMs} ms`);
  await new Promise((r) => setTimeout(r, 500));
  // Capped at the burst, the member held 10 of a 19-CU call forever and the call waited out its deadline.
  const whole = await s.ask('a', big);
  assert.equal(whole.granted, 19, 'refilled up to one charge, never above it');
});

test('only whole charges are handed out: members holding parts of a charge never fill the burst', async () => {
  const s = await store();
  s.fresh();
  const call = { want: 26, rate: 100, burst: 30, least: 26 };
  assert.equal((await s.ask('a', { ...call, want: 20, least: 1 })).granted, 20, 'a holds 20 of the 30');
  // 10 left: with parts handed out, b held 10 of its 26 and a's next part filled the burst for both.
  const b = await s.ask('b', call);
  assert.equal(b.granted, 0, 'b gets no part of its call');
  assert.ok(b.shortMs > 0, 'b queues for the whole of it');
  const [tokens] = (await s.client.hmGet(s.bucket(), ['tokens'])).map(Number);
  assert.ok(tokens >= 10 - 1e-6, `the 10 stay in the bucket for a whole charge: ${tokens}`);
  // a spent 1 and gives the other 19 back (they cannot pay its next 26-CU call): b's call is there.
  const back = await s.ask('a', { ...call, held: 0, released: 19 });
  assert.ok(back.granted <= 3 + 1e-6, `b's claim comes first: ${back.granted}`);
  const turn = await s.ask('b', call);
  assert.equal(turn.granted, 26, 'b gets its whole call from what a gave back');
});

test('what a member gives back is counted up to its hold, never more', async () => {
  const s = await store();
  s.fresh();
  const call = { want: 30, rate: 100, burst: 30, least: 1 };
  assert.equal((await s.ask('a', call)).granted, 30);
  const b = await s.ask('b', { ...call, want: 10, released: 1000 });
  assert.ok(b.granted < 1e-6, `b held nothing: its 1000 given back count for nothing: ${b.granted}`);
  const a = await s.ask('a', { ...call, want: 10, held: 0, released: 1000 });
  const [tokens, held] = (await s.client.hmGet(s.bucket(), ['tokens', 'held'])).map(Number);
  assert.ok(tokens + held <= 30 + 1e-6, `at most a's 30 came back: tokens ${tokens} + held ${held}; a got ${a.granted}`);
  await assert.rejects(s.ask('a', { ...call, released: -1 }), /bad lease ask/);
  await assert.rejects(s.ask('a', { ...call, released: 'x' }), /bad lease ask/);
});

test('an unknown plan is granted and counted; a broken ask is an error, never quota', async () => {
  const s = await store();
  s.fresh();
  const unknown = await s.ask('a', { want: 500, rate: 0, burst: 1 });
  assert.deepEqual([unknown.granted, unknown.share], [500, 0]);
  // Counted from the bucket's birth (never over less than a second): 500 CU in the first second is
  // 500 CU/s, not the 50 a ten-second window would make of it (policy::fleet_bucket::fleet_rate).
  assert.ok(Math.abs(unknown.fleetRate - 500) < 1, `what the fleet takes is counted: ${unknown.fleetRate}`);
  for (const bad of [{ want: -1 }, { want: 'x' }, { want: 1, held: -1 }, { want: 1, hold: 'soon' }]) {
    await assert.rejects(s.ask('a', bad), /bad lease ask/, JSON.stringify(bad));
  }
  await assert.rejects(s.ask('', { want: 1 }), /bad lease ask/, 'a member with no id');
});

test('a member that only reports (hold 0) counts among the members for two seconds after its last report', async () => {
  const s = await store();
  s.fresh();
  await s.ask('r1', { want: 5, hold: 0 });
  await s.ask('r2', { want: 5, hold: 0 });
  const leasing = await s.ask('l', { want: 5 });
  assert.ok(Math.abs(leasing.share - 50 / 3) < 1e-9, `the burst over three members: ${leasing.share}`);
  const again = await s.ask('r1', { want: 5, hold: 0 });
  assert.ok(Math.abs(again.share - 50 / 3) < 1e-9, `a reporter counts the others too: ${again.share}`);
  const [held] = (await s.client.hmGet(s.bucket(), ['held'])).map(Number);
  assert.equal(held, 5, 'reporters hold nothing');
  await new Promise((resolve) => setTimeout(resolve, 2100));
  const alone = await s.ask('l', { want: 5, held: 5 });
  assert.equal(alone.share, 50, 'their reports stopped: alone again');
});

test('a report of what a member spent alone (hold 0) is counted in full, below zero if need be, and holds nothing', async () => {
  const s = await store();
  s.fresh();
  const report = await s.ask('slow', { want: 80, hold: 0, least: 80 }); // 80 CU spent alone, burst 50
  assert.equal(report.granted, 80, 'counted in full');
  assert.ok(Math.abs(report.fleetRate - 80) < 1, `the fleet's rate counts it: ${report.fleetRate}`);
  const [tokens, held] = (await s.client.hmGet(s.bucket(), ['tokens', 'held'])).map(Number);
  assert.ok(tokens <= -30 + 1e-6 && held === 0, `taken from the tokens (${tokens}), nothing held (${held})`);
  // A member still leasing waits for what the slow one spent: 30 CU below zero at 100 CU/s.
  const leasing = await s.ask('fast', { want: 20 });
  assert.equal(leasing.granted, 0);
  assert.ok(leasing.shortMs >= 400, `short until the bucket is back above zero: ${leasing.shortMs} ms`);
});

test('an answer sums what the other members need, and says -1 while one of them said nothing', async () => {
  const s = await store();
  s.fresh();
  assert.equal((await s.ask('r', { want: 5, hold: 0, demand: 100 })).othersNeed, 0, 'alone: nobody else needs');
  await s.ask('l', { want: 5, demand: 50 });
  // A reporter's need and a leasing member's both count; never the asker's own.
  assert.equal((await s.ask('m', { want: 5, demand: 7 })).othersNeed, 150);
  assert.equal((await s.ask('m', { want: 5, demand: 9 })).othersNeed, 150, 'its own replaced, not added');
  // A member of an older version sends no ninth argument: the others' need is unknown.
  await s.ask('old', { want: 5, hold: 300 });
  assert.equal((await s.ask('m', { want: 5, demand: 9 })).othersNeed, -1);
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal((await s.ask('m', { want: 5, demand: 9 })).othersNeed, 150, 'its hold over, it no longer counts');
  assert.equal((await s.ask('m', { want: 5, demand: 'x' })).othersNeed, 150, 'a senseless need is unsaid, not an error');
  assert.equal((await s.ask('l', { want: 5, demand: 50 })).othersNeed, -1, 'm said a senseless need: unknown');
  // A need in the hash that is not a number (another writer on the prefix) is unknown, not an error.
  await s.client.hSet(s.bucket(), 'd:m', 'junk');
  assert.equal((await s.ask('l', { want: 5, demand: 50 })).othersNeed, -1);
  await new Promise((resolve) => setTimeout(resolve, 2300));
  assert.equal((await s.ask('l', { want: 5, demand: 50 })).othersNeed, 0, 'the others gone');
});

test('what a member spent alone is taken from the tokens, even below zero; a report or nonsense is not', async () => {
  const s = await store();
  s.fresh();
  // Four workers spent 30 CU alone before the store first answered: a new bucket does not pay its
  // burst of 50 on top (src/policy/fleet_bucket.rs, lease/spent_alone.rs).
  const first = await s.ask('a', { want: 30, alone: 30 });
  assert.equal(first.granted, 20, 'the burst less what was spent alone');
  const second = await s.ask('b', { want: 10, alone: 25 });
  assert.equal(second.granted, 0, 'the window is full');
  assert.ok(second.shortMs >= 340 && second.shortMs <= 360, `25 below zero and 10 wanted at 100 CU/s: ${second.shortMs} ms`);
  const [tokens] = (await s.client.hmGet(s.bucket(), ['tokens'])).map(Number);
  assert.ok(tokens < -20, `below zero: ${tokens}`);
  s.fresh();
  for (const [i, weird] of ['-5', 'nan', 'inf', 'x'].entries()) {
    const got = await s.ask(`w${i}`, { want: 1, alone: weird });
    assert.equal(got.granted, 1, `"${weird}" spent alone is nothing`);
  }
  s.fresh();
  const report = await s.ask('r', { want: 5, hold: 0, alone: 40 });
  assert.equal(report.granted, 5, 'a report counts its own spending only');
  const [left] = (await s.client.hmGet(s.bucket(), ['tokens'])).map(Number);
  assert.ok(Math.abs(left - 45) < 1, `the report's 5 of 50, nothing more: ${left}`);
});

test('a plan kept per second: what was spent in the last second and everything held stay within the window', async () => {
  const s = await store();
  s.fresh();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // A refill fast enough that the window alone binds (policy/fleet_bucket/tests.rs, the same asks).
  const windowed = { rate: 1000, burst: 100, window: 100 };
  const first = await s.ask('a', { want: 60, ...windowed });
  assert.deepEqual([first.granted, first.windowed], [60, 1], 'the window is said to be kept');
  await sleep(100);
  // a spent all 60 (it holds none): counted from now, for a second.
  const second = await s.ask('a', { want: 60, ...windowed });
  assert.ok(Math.abs(second.granted - 40) < 1e-9, `60 spent + 40 held: the plan (${second.granted})`);
  assert.ok(second.shortMs >= 950 && second.shortMs <= 1040, `the rest when the 60 leave the window: ${second.shortMs} ms`);
  await sleep(500);
  const held = await s.ask('a', { want: 60, ...windowed });
  assert.equal(held.granted, 0, 'the 60 and the 40 still count');
  await sleep(second.shortMs - 500 + 30);
  const later = await s.ask('a', { want: 60, ...windowed });
  assert.ok(Math.abs(later.granted - 60) < 1e-9, `the 60 left: ${later.granted}`);
  // What another member holds counts whole; a hold that ends unasked counts as spent when it ends.
  s.fresh();
  assert.equal((await s.ask('b', { want: 30, hold: 300, ...windowed })).granted, 30);
  assert.equal((await s.ask('a', { want: 100, ...windowed })).granted, 50, '70 within the window, 50 its share');
  s.fresh();
  assert.equal((await s.ask('b', { want: 30, hold: 300, ...windowed })).granted, 30);
  await sleep(400);
  assert.equal((await s.ask('a', { want: 100, ...windowed })).granted, 70, "b's 30 ended unasked: counted as spent");
  // No window (token-bucket terms, or a member of an older version): the tokens alone, and not said kept.
  s.fresh();
  const plain = { rate: 1000, burst: 100 };
  assert.equal((await s.ask('a', { want: 60, ...plain })).granted, 60);
  await sleep(100);
  const again = await s.ask('a', { want: 60, ...plain });
  assert.deepEqual([again.granted, again.windowed], [60, 0]);
  const slots = await s.client.hGet(s.bucket(), 'win');
  assert.ok(slots === '' || slots === null || slots.split(',').length <= 51, `the window keeps a second at most: ${slots}`);
});

test('with a window, what a member spent alone counts where it fell (by age), not from its ask', async () => {
  const s = await store();
  s.fresh();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const windowed = { rate: 30, burst: 6, window: 30 };
  // The whole plan spent alone in the last second, evenly (a Redis restart), told by age.
  const back = await s.ask('a', { want: 6, alone: 30, ages: Array(10).fill(3), ...windowed });
  assert.equal(back.granted, 0, "the provider's second is full");
  await sleep(500);
  const half = await s.ask('a', { want: 6, ...windowed });
  assert.equal(half.granted, 6, 'half a second on, what it spent before then has left');
  // Told with no ages: counted from the ask, for a second.
  s.fresh();
  assert.equal((await s.ask('a', { want: 6, alone: 30, ...windowed })).granted, 0);
  await sleep(500);
  assert.equal((await s.ask('a', { want: 6, ...windowed })).granted, 0);
});
