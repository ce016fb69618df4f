// EIP-1193 completeness: connect / disconnect from the pool's state, the
// pluggable logger (silent by default), and clear errors for misuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FaultTolerantRelayer, isConfigError, isInvalidRequestError, isClosedError } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';
import { after } from 'node:test';

const node = useMockNodes(after);

test('connect fires once a node answers; disconnect when every breaker is open; connect again on recovery', async () => {
  const a = await node([{ resultFor: { eth_chainId: '0x5' } }], { chainId: '0x5' });
  const b = await node([{ resultFor: { eth_chainId: '0x5' } }], { chainId: '0x5' });
  const relayer = new FaultTolerantRelayer([a.url, b.url], {
    baseDelayMs: 1, maxDelayMs: 2, maxRetries: 1, cache: false, breaker: { consecutiveFailures: 1, openMs: 50, openMaxMs: 50, jitter: 0, closeAfter: 1, observeMs: 10 },
  });
  const seen = [];
  const connected = new Promise((resolve) => relayer.on('connect', (e) => { seen.push(e); resolve(); }));
  relayer.on('disconnect', (e) => seen.push(e));
  await connected;
  assert.deepEqual(seen[0], { type: 'connect', chainId: '0x5' });
  a.setScript([{ status: 503 }]);
  b.setScript([{ status: 503 }]);
  await relayer.request({ method: 'eth_blockNumber' }).catch(() => {});
  const disconnect = seen.find((e) => e.type === 'disconnect');
  assert.ok(disconnect, JSON.stringify(seen));
  assert.equal(disconnect.code, 4900);
  assert.ok(isClosedError(disconnect.error));
  a.setScript([{ result: '0x2' }]);
  b.setScript([{ result: '0x2' }]);
  for (let i = 0; i < 40 && seen.filter((e) => e.type === 'connect').length < 2; i += 1) {
    await new Promise((r) => setTimeout(r, 20));
    await relayer.request({ method: 'eth_blockNumber' }).catch(() => {});
  }
  assert.equal(seen.filter((e) => e.type === 'connect').length, 2, 'reconnected after a probe succeeded');
  await relayer.close();
  assert.equal(seen.at(-1).type, 'disconnect', 'close() disconnects');
});

test('the logger gets one redacted line per event at its level; none by default; a throwing logger breaks nothing', async () => {
  const dead = await node([{ status: 503 }]);
  const good = await node([{ result: '0x7' }]);
  const lines = [];
  const events = [];
  const logger = {
    debug: (m) => lines.push(['debug', m]),
    info: (m, e) => { lines.push(['info', m]); events.push(e); },
    warn: (m) => { lines.push(['warn', m]); throw new Error('logger bug'); },
  };
  const keyed = `${dead.url}/v3/0123456789abcdef0123456789abcdef`;
  const relayer = new FaultTolerantRelayer([keyed, good.url], { logger, baseDelayMs: 1, maxDelayMs: 2, breaker: { consecutiveFailures: 1 } });
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x7');
  assert.ok(lines.some(([level, m]) => level === 'info' && m.startsWith('breakwater-rpc failover')), JSON.stringify(lines));
  assert.ok(lines.some(([level, m]) => level === 'warn' && m.includes('breaker') && m.includes('to=open')));
  assert.ok(lines.every(([, m]) => !m.includes('0123456789abcdef')), 'no key in any line');
  // The second argument is the event itself, as the types say.
  assert.ok(events.some((e) => e && e.type === 'failover' && typeof e.from === 'string'), JSON.stringify(events));
  assert.ok(events.every((e) => !JSON.stringify(e).includes('0123456789abcdef')), 'no key in any event');
  await relayer.close();
  assert.throws(() => new FaultTolerantRelayer([good.url], { logger: 'console' }), (e) => isConfigError(e) && e.field === 'logger');
});

test('misuse is a clear typed error: unknown event, calls after close', async () => {
  const good = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([good.url]);
  assert.throws(() => relayer.on('mesage', () => {}), (e) => isInvalidRequestError(e) && /unknown event/.test(e.message));
  await relayer.close();
  await assert.rejects(relayer.request({ method: 'eth_blockNumber' }), (e) => isClosedError(e) && e.code === 4900);
  await assert.rejects(relayer.sendTransactionWithSpeedup({ request: async () => ['0x0000000000000000000000000000000000000001'] },
    { to: '0x0000000000000000000000000000000000000002', chainId: 1, gas: 21000, maxFeePerGas: 2, maxPriorityFeePerGas: 1 }), (e) => isClosedError(e));
});

test('on() returns the provider, removeListener/off/once work, subscribe() returns a disposer', async () => {
  const good = await node([{ delayMs: 1, then: { result: '0x1' } }]);
  const relayer = new FaultTolerantRelayer([good.url, (await node([{ status: 503 }])).url], { baseDelayMs: 1, maxDelayMs: 2, hedge: false, strategy: 'priority', cache: false });
  const seen = [];
  const a = (e) => seen.push(['a', e.type]);
  const b = (e) => seen.push(['b', e.type]);
  assert.equal(relayer.on('retry', a), relayer, 'EIP-1193 / EventEmitter: on() returns the emitter');
  assert.equal(relayer.once('retry', b), relayer);
  const stop = relayer.subscribe('failover', (e) => seen.push(['s', e.type]));
  assert.equal(typeof stop, 'function');
  // A 503 on the preferred endpoint: one retry and one failover per request.
  const bad = await node([{ status: 503 }]);
  const r2 = new FaultTolerantRelayer([bad.url, good.url], { baseDelayMs: 1, maxDelayMs: 2, hedge: false, cache: false, dedup: false });
  r2.on('retry', a).once('retry', b);
  const off = r2.subscribe('failover', (e) => seen.push(['s', e.type]));
  await r2.request({ method: 'eth_blockNumber' });
  off();
  r2.off('retry', a);
  await r2.request({ method: 'eth_blockNumber' });
  assert.deepEqual(seen, [['a', 'retry'], ['b', 'retry'], ['s', 'failover']], 'once fired once; off and the disposer unsubscribed');
  stop();
  await relayer.close();
  await r2.close();
});

test('accountsChanged and message are forwarded from an EIP-1193 wallet upstream, never invented', async () => {
  const { EventEmitter } = await import('node:events');
  const wallet = Object.assign(new EventEmitter(), { request: async ({ method }) => (method === 'eth_chainId' ? '0x1' : '0x5') });
  const plain = await node([{ result: '0x5' }]);
  const relayer = new FaultTolerantRelayer([{ provider: wallet, label: 'wallet' }, plain.url], { chainId: 1 });
  const accounts = [];
  const messages = [];
  relayer.on('accountsChanged', (a) => accounts.push(a)).on('message', (m) => messages.push(m));
  wallet.emit('accountsChanged', ['0x00000000000000000000000000000000000000aa']);
  wallet.emit('message', { type: 'eth_subscription', data: { subscription: '0x1', result: {} } });
  assert.deepEqual(accounts, [['0x00000000000000000000000000000000000000aa']]);
  assert.deepEqual(messages, [{ type: 'eth_subscription', data: { subscription: '0x1', result: {} } }]);
  assert.equal(wallet.listenerCount('accountsChanged'), 1, 'one forwarding subscription, however many listeners');
  // A relayer over URLs only never fires them.
  const urls = new FaultTolerantRelayer([plain.url]);
  let fired = 0;
  urls.on('accountsChanged', () => { fired += 1; });
  await urls.request({ method: 'eth_blockNumber' });
  assert.equal(fired, 0);
  await urls.close();
  await relayer.close();
  assert.equal(wallet.listenerCount('accountsChanged'), 0, 'close() unsubscribes from the wallet');
  assert.equal(wallet.listenerCount('message'), 0);
});

test('relayers of one realm on the same nodes share their breakers, and each hears disconnect and connect, not only the one whose attempt tripped them', async () => {
  const a = await node([{ resultFor: { eth_chainId: '0x5' } }], { chainId: '0x5' });
  const b = await node([{ resultFor: { eth_chainId: '0x5' } }], { chainId: '0x5' });
  const options = {
    baseDelayMs: 1, maxDelayMs: 2, maxRetries: 1, cache: false, breaker: { consecutiveFailures: 1, openMs: 50, openMaxMs: 50, jitter: 0, closeAfter: 1, observeMs: 10 },
  };
  const busy = new FaultTolerantRelayer([a.url, b.url], options);
  const idle = new FaultTolerantRelayer([a.url, b.url], options); // makes no request of its own after connecting
  const heard = { busy: [], idle: [] };
  for (const [name, relayer] of [['busy', busy], ['idle', idle]]) {
    relayer.on('disconnect', (e) => heard[name].push(e.type));
  }
  await Promise.all([busy, idle].map((r, i) => new Promise((resolve) => r.on('connect', (e) => { heard[i ? 'idle' : 'busy'].push(e.type); resolve(); }))));
  a.setScript([{ status: 503 }]);
  b.setScript([{ status: 503 }]);
  await busy.request({ method: 'eth_blockNumber' }).catch(() => {});
  assert.deepEqual(heard, { busy: ['connect', 'disconnect'], idle: ['connect', 'disconnect'] }, 'the idle relayer heard the outage too');
  a.setScript([{ result: '0x2' }]);
  b.setScript([{ result: '0x2' }]);
  for (let i = 0; i < 40 && heard.idle.length < 3; i += 1) {
    await new Promise((r) => setTimeout(r, 20));
    await busy.request({ method: 'eth_blockNumber' }).catch(() => {});
  }
  assert.deepEqual(heard.idle, ['connect', 'disconnect', 'connect'], 'and the recovery');
  await Promise.all([busy.close(), idle.close()]);
});
