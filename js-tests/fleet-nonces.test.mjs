// The fleet nonce book's script on a real redis-server (pkg-template/src/fleet-nonces.js,
// docs/transactions.md "Across processes"): distinct nonces for workers on one account, holes
// handed out first, a reservation recycled only if it never became live, a resync refused
// while an unbroadcast nonce is held, and malformed calls refused.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { NONCE_SCRIPT, nonceKeys } from '../pkg-template/src/fleet-nonces.js';
import { startRedis } from './helpers/redis.mjs';

const stops = [];
after(async () => { for (const stop of stops.reverse()) await stop(); });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let books = 0;
async function book() {
  if (!book.redis) {
    book.redis = await startRedis();
    stops.push(book.redis.stop);
  }
  const client = createClient({ url: book.redis.url });
  await client.connect();
  stops.push(() => client.close());
  books += 1;
  const keys = nonceKeys('test:', `acct${books}`);
  const call = (op, member, n) => client.eval(NONCE_SCRIPT, { keys, arguments: [op, member, String(n)] });
  return { client, keys, call, url: book.redis.url };
}

test('workers take distinct nonces from one book, a released one is handed out first', async () => {
  const { call } = await book();
  assert.deepEqual(await call('allocate', 'a', 5000), ['init'], 'no next yet: resync with the chain first');
  assert.deepEqual(await call('resync', 'a', 1200), ['ok', '1200']);
  assert.deepEqual(await call('allocate', 'a', 5000), ['ok', '1200']);
  assert.deepEqual(await call('allocate', 'b', 5000), ['ok', '1201']);
  assert.deepEqual(await call('allocate', 'a', 5000), ['ok', '1202']);
  assert.deepEqual(await call('release', 'b', 1200), ['lost', '1200'], 'only its own reservation');
  assert.deepEqual(await call('release', 'b', 1201), ['ok', '1201'], 'b\'s signer failed');
  assert.deepEqual(await call('allocate', 'a', 5000), ['ok', '1201'], 'the hole first: no gap stays');
  assert.deepEqual(await call('allocate', 'b', 5000), ['ok', '1203']);
  assert.deepEqual(await call('live', 'a', 1200), ['ok', '1200']);
  assert.deepEqual(await call('live', 'a', 1200), ['ok', '1200'], 'live again: idempotent');
  assert.deepEqual(await call('release', 'a', 1200), ['live', '1200'], 'a live nonce is never given back');
  assert.deepEqual(await call('live', 'b', 1202), ['lost', '1202'], 'another member\'s reservation');
});

test('a reservation whose worker died before marking it live is recycled; a live one never is', async () => {
  const { call } = await book();
  await call('resync', 'a', 7);
  assert.deepEqual(await call('allocate', 'dies', 150), ['ok', '7']);
  assert.deepEqual(await call('allocate', 'broadcast', 150), ['ok', '8']);
  assert.deepEqual(await call('live', 'broadcast', 8), ['ok', '8']);
  await sleep(250);
  assert.deepEqual(await call('allocate', 'b', 5000), ['ok', '7'], 'the lapsed reservation is a hole again');
  assert.deepEqual(await call('allocate', 'b', 5000), ['ok', '9'], 'the live one is not');
  assert.deepEqual(await call('live', 'dies', 7), ['lost', '7'], 'too late: it must not broadcast');
  assert.deepEqual(await call('abandon', 'x', 8), ['ok', '8'], 'no node has it: a hole');
  assert.deepEqual(await call('allocate', 'b', 5000), ['ok', '8']);
  assert.deepEqual(await call('settle', 'b', 9), ['ok', '9']);
});

test('a resync waits while an unbroadcast nonce is held, then never moves the book back', async () => {
  const { call } = await book();
  await call('resync', 'a', 100);
  assert.deepEqual(await call('allocate', 'a', 2000), ['ok', '100']);
  const [busy, ms] = await call('resync', 'b', 105);
  assert.equal(busy, 'busy', 'a holds 100, not broadcast yet: someone else\'s count may not count it');
  assert.ok(Number(ms) > 0 && Number(ms) <= 2000, ms);
  await call('live', 'a', 100);
  assert.deepEqual(await call('allocate', 'a', 2000), ['ok', '101']);
  await call('release', 'a', 101);
  assert.deepEqual(await call('resync', 'b', 105), ['ok', '105'], 'another sender used 101-104: the hole below goes');
  assert.deepEqual(await call('allocate', 'b', 2000), ['ok', '105']);
  await call('live', 'b', 105);
  assert.deepEqual(await call('resync', 'b', 90), ['ok', '106'], 'a node behind: never backwards');
});

test('four workers × 50 nonces at once: exactly the 200 expected, none twice', async () => {
  const workers = await Promise.all([1, 2, 3, 4].map(() => book()));
  // One account: every worker's client on the same keys.
  const keys = workers[0].keys;
  const calls = workers.map((w, i) => (op, n) => w.client.eval(NONCE_SCRIPT, { keys, arguments: [op, `w${i}`, String(n)] }));
  await calls[0]('resync', 1000);
  const got = await Promise.all(calls.map(async (call) => {
    const mine = [];
    for (let k = 0; k < 50; k += 1) {
      const [status, n] = await call('allocate', 5000);
      assert.equal(status, 'ok');
      mine.push(Number(n));
      assert.deepEqual(await call('live', n), ['ok', n]);
    }
    return mine;
  }));
  for (const mine of got) assert.deepEqual(mine, [...mine].sort((a, b) => a - b), 'in call order per worker');
  const all = got.flat().sort((a, b) => a - b);
  assert.deepEqual(all, Array.from({ length: 200 }, (_, i) => 1000 + i));
});

test('a malformed call is refused, and a book of another layout is never reset', async () => {
  const { call, client, keys } = await book();
  for (const [op, member, n] of [['allocate', '', 1], ['allocate', 'a|b', 1], ['live', 'a', -1], ['live', 'a', 1.5], ['live', 'a', 'x'], ['steal', 'a', 1]]) {
    await assert.rejects(call(op, member, n), /bad nonce call/, `${op} ${member} ${n}`);
  }
  await client.hSet(keys[0], { v: '9', next: '5' });
  assert.deepEqual(await call('allocate', 'a', 1000), ['layout', '9']);
  assert.equal(await client.hGet(keys[0], 'next'), '5', 'untouched');
});

test('the journal: a record goes in with live, only its owner renews or rewrites it, a lapsed owner\'s records are taken over once', async () => {
  const { client, keys } = await book();
  const j = (op, member, n, record = '', owner = '', lease = 0) => client.eval(NONCE_SCRIPT, { keys, arguments: [op, member, String(n), record, owner, String(lease)] });
  await j('resync', 'a', 40);
  assert.deepEqual(await j('allocate', 'a-1', 5000), ['ok', '40']);
  assert.deepEqual(await j('live', 'b-1', 40, 'j1|stolen', 'b', 300), ['lost', '40'], 'not b\'s reservation: nothing journaled');
  assert.deepEqual(await j('live', 'a-1', 40, 'j1|first', 'a', 300), ['ok', '40']);
  assert.deepEqual(await client.hGet(keys[3], '40'), 'j1|first', 'journaled in the same step as live');
  assert.deepEqual(await j('orphans', 'b', 0, '', 'b', 300), ['orphans'], 'a\'s lease runs');
  assert.deepEqual(await j('write', 'b', 40, 'j1|b', 'b', 300), ['lost', '40'], 'only the owner rewrites');
  assert.deepEqual(await j('renew', 'b', 40, '', 'b', 300), ['lost', '40'], 'or renews');
  await sleep(200);
  assert.deepEqual(await j('write', 'a', 40, 'j1|sped-up', 'a', 300), ['ok', '40'], 'a replacement, journaled before its broadcast');
  await sleep(200);
  assert.deepEqual(await j('orphans', 'b', 0, '', 'b', 300), ['orphans'], 'renewed by the write at 200 ms');
  await sleep(200);
  assert.deepEqual(await j('orphans', 'b', 0, '', 'b', 5000), ['orphans', '40', 'j1|sped-up'], 'lapsed: b takes it over, the newest record');
  assert.deepEqual(await j('orphans', 'c', 0, '', 'c', 5000), ['orphans'], 'taken once');
  assert.deepEqual(await j('orphans', 'b', 0, '', 'b', 5000), ['orphans', '40', 'j1|sped-up'], 'its own, to the owner in a new life');
  assert.deepEqual(await j('renew', 'a', 40, '', 'a', 300), ['lost', '40'], 'the old owner may not broadcast any more');
  assert.deepEqual(await j('release', 'a-1', 40), ['live', '40'], 'still live in the book');
  assert.deepEqual(await j('settle', 'b', 40), ['ok', '40']);
  assert.equal(await client.hLen(keys[3]), 0, 'settled: the journal entry is gone');
  await assert.rejects(j('orphans', 'b', 0, '', 'b', 0), /bad nonce call/, 'an orphans call without a lease');
  assert.deepEqual(await j('allocate', 'a-2', 5000), ['ok', '41']);
  await assert.rejects(j('live', 'a-2', 41, 'j1|x', 'a|b', 300), /bad nonce call/, 'an owner with a separator');
  assert.deepEqual(await j('release', 'a-2', 41), ['ok', '41'], 'the refused call changed nothing: still a reservation');
});
