// Bad configuration, bad calls and hostile responses: every one ends in a
// typed error naming what is wrong, and the relayer keeps serving.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  FaultTolerantRelayer, isConfigError, isInvalidRequestError, isClosedError, isBreakwaterError, isRetryBudgetError,
} from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';

const node = useMockNodes(after);

const URL_OK = 'http://127.0.0.1:8545';

test('invalid configuration names the field at construction', () => {
  const cases = [
    [[], undefined, 'upstreams'],
    ['http://127.0.0.1:8545', undefined, 'upstreams'],
    [[42], undefined, 'upstreams[0]'],
    [[URL_OK, 'not a url'], undefined, 'upstreams[1]'],
    [['ftp://example.com'], undefined, 'upstreams[0]'],
    [[URL_OK], { maxRetries: -1 }, 'maxRetries'],
    [[URL_OK], { maxRetries: 2.5 }, 'maxRetries'],
    [[URL_OK], { maxRetries: '3' }, 'maxRetries'],
    [[URL_OK], { baseDelayMs: -5 }, 'baseDelayMs'],
    [[URL_OK], { baseDelayMs: 500, maxDelayMs: 100 }, 'maxDelayMs'],
    [[URL_OK], { maxDelayMs: Infinity }, 'maxDelayMs'],
    [[URL_OK], { backoff: 'random' }, 'backoff'],
    [[URL_OK], { attemptTimeoutMs: 0 }, 'attemptTimeoutMs'],
    [[URL_OK], { deadlineMs: NaN }, 'deadlineMs'],
    [[URL_OK], { budget: { ratio: -1 } }, 'budget.ratio'],
    [[URL_OK], { budget: 5 }, 'budget'],
    [[URL_OK], { classify: [{ code: 1 }] }, 'classify[0].class'],
    [[URL_OK], { classify: [{ class: 'fatal' }] }, 'classify[0]'],
    [[URL_OK], { maxRetrys: 3 }, 'maxRetrys'],
    [[URL_OK], 'fast', 'options'],
    [[{ url: 'nope' }], undefined, 'upstreams[0].url'],
    [[{ label: 'x' }], undefined, 'upstreams[0].url'],
    [[{ url: URL_OK, weight: -1 }], undefined, 'upstreams[0].weight'],
    [[{ url: URL_OK, wieght: 2 }], undefined, 'upstreams[0].wieght'],
    [[{ url: URL_OK, quotaGroup: 'missing' }], undefined, 'upstreams[0].quotaGroup'],
    [[{ url: URL_OK, headers: { 'x-api-key': 42 } }], undefined, 'upstreams[0].headers.x-api-key'],
    [[{ url: URL_OK, headers: { 'bad header': 'x' } }], undefined, 'upstreams[0].headers.bad header'],
    [[{ url: URL_OK, headers: { 'x-api-key': 'key€' } }], undefined, 'upstreams[0].headers.x-api-key'],
    [[{ url: URL_OK, methods: { allow: 'eth_call' } }], undefined, 'upstreams[0].methods.allow'],
    [[{ url: URL_OK, methods: { allow: [] } }], undefined, 'upstreams[0].methods.allow'],
    [[{ url: URL_OK, costs: { eth_call: -5 } }], undefined, 'upstreams[0].costs.eth_call'],
    [[{ url: URL_OK, maxConcurrency: 0 }], undefined, 'upstreams[0].maxConcurrency'],
    [[{ url: URL_OK, timeoutMs: -1 }], undefined, 'upstreams[0].timeoutMs'],
    [[URL_OK], { strategy: 'best' }, 'strategy'],
    [[URL_OK], { breaker: { probePermits: 0 } }, 'breaker.probePermits'],
    [[URL_OK], { breaker: { failureRate: 2 } }, 'breaker.failureRate'],
    [[URL_OK], { breaker: { openMs: 1000, openMaxMs: 10 } }, 'breaker.openMaxMs'],
    [[URL_OK], { slowStart: { floor: 0 } }, 'slowStart.floor'],
    [[URL_OK], { quota: { k: {} } }, 'quota.k.cuPerSecond'],
    [[URL_OK], { quota: { k: { cuPerSecond: 10, share: 3 } } }, 'quota.k.share'],
    [[URL_OK], { cache: { maxEntries: 0 } }, 'cache.maxEntries'],
    [[URL_OK], { chainId: -1 }, 'chainId'],
    [[URL_OK], { chainId: '0xzz' }, 'chainId'],
    [[URL_OK], { maxQueue: -1 }, 'maxQueue'],
    [[URL_OK], { headPollMs: 50 }, 'headPollMs'],
    [[URL_OK], { headPollMs: -1 }, 'headPollMs'],
    [[URL_OK], { dedup: 'yes' }, 'dedup'],
    [[URL_OK], { fleet: 'yes' }, 'fleet'],
    [[URL_OK], { fleet: { budget: { ratio: -0.1 } } }, 'fleet.budget.ratio'],
    [[URL_OK], { fleet: { budget: { burst: 0 } } }, 'fleet.budget.burst'],
    [[URL_OK], { fleet: { budget: 0.1 } }, 'fleet.budget'],
    [[URL_OK], { adaptiveTimeout: { multiplier: 0.5 } }, 'adaptiveTimeout.multiplier'],
    [[URL_OK], { adaptiveTimeout: { floorMs: -1 } }, 'adaptiveTimeout.floorMs'],
    [[URL_OK, 'http://127.0.0.1:8546', ` ${URL_OK} `], undefined, 'upstreams[2]'],
    [[URL_OK, { url: URL_OK }], undefined, 'upstreams[1]'],
    [[URL_OK, `${URL_OK}/`], undefined, 'upstreams[1]'],
    [['http://LOCALHOST:8545/rpc#a', 'http://localhost:8545/rpc'], undefined, 'upstreams[1]'],
  ];
  for (const [urls, options, field] of cases) {
    assert.throws(() => new FaultTolerantRelayer(urls, options), (e) => {
      assert.ok(isConfigError(e), `${JSON.stringify(options)} → ${e}`);
      assert.equal(e.field, field, `${JSON.stringify([urls, options])}`);
      assert.equal(e.name, 'ConfigError');
      assert.ok(e instanceof Error);
      return true;
    });
  }
});

test('a typo is refused with the option it most likely meant; a refused value is never repeated', () => {
  const refusal = (urls, options) => { try { new FaultTolerantRelayer(urls, options).close(); } catch (e) { return e; } return null; };
  const hints = [
    [{ maxRetrys: 3 }, 'maxRetrys', 'maxRetries'],
    [{ breaker: { openMS: 10 } }, 'breaker.openMS', 'openMs'],
    [{ quota: { main: { cuPerSecond: 5, burts: 2 } } }, 'quota.main.burts', 'burst'],
    [{ classify: [{ cod: 1, class: 'fatal' }] }, 'classify[0].cod', 'code'],
    [{ loger: console }, 'loger', 'logger'],
    [{ fleet: { budgte: { ratio: 0.1 } } }, 'fleet.budgte', 'budget'],
  ];
  for (const [options, field, meant] of hints) {
    const e = refusal([URL_OK], options);
    assert.ok(isConfigError(e), String(e));
    assert.equal(e.field, field);
    assert.match(e.message, new RegExp(`unknown option \\(did you mean \`${meant}\`\\?\\)`));
  }
  assert.doesNotMatch(refusal([URL_OK], { colour: 1 }).message, /did you mean/, 'nothing near: no guess');
  assert.match(refusal([URL_OK], { chainId: 10n ** 30n }).message, /chainId.*out of range/);
  // A secret in the wrong place is named by its path, never echoed.
  const secret = refusal([{ url: URL_OK, headers: { authorization: { token: 'sk-live-123' } } }]);
  assert.equal(secret.field, 'upstreams[0].headers.authorization');
  assert.doesNotMatch(secret.message, /sk-live-123/);
  const typed = refusal([URL_OK], { maxRetries: 'sk-live-123' });
  assert.equal(typed.field, 'maxRetries');
  assert.match(typed.message, /must be a number/);
  assert.doesNotMatch(typed.message, /sk-live-123/);
});

test('options are read as JS writes them: Maps, bigints, getters and class instances, nothing iterable', () => {
  const refusal = (urls, options) => { try { new FaultTolerantRelayer(urls, options).close(); } catch (e) { return e; } return null; };
  const stats = (urls, options) => { const r = new FaultTolerantRelayer(urls, options); try { return r.stats(); } finally { r.close(); } };
  // A Map is an object of entries (headers, costs, quota); a bigint within 64 bits is a number.
  assert.equal(refusal([{ url: URL_OK, headers: new Map([['x-key', 'abc']]) }]), null);
  assert.equal(refusal([{ url: URL_OK, costs: new Map([['eth_call', 3n]]) }]), null);
  assert.equal(refusal([URL_OK], { maxRetries: 2n, chainId: 2n ** 62n, checkChainId: false }), null);
  assert.equal(refusal([URL_OK], { quota: new Map([['k', { cuPerSecond: 5 }]]) })?.field, 'quota.k', 'read as a map: its group is named');
  // Getters and class instances are read by their own enumerable fields.
  class Settings { constructor() { this.openMs = 100; } }
  assert.equal(refusal([URL_OK], { breaker: new Settings() }), null);
  const withGetter = {};
  Object.defineProperty(withGetter, 'maxRetries', { get: () => 'x', enumerable: true });
  assert.equal(refusal([URL_OK], withGetter).field, 'maxRetries');
  // Sets, typed arrays and functions are not objects; a key that is not a string is not a map's.
  for (const [options, field, reason] of [
    [{ budget: new Set([1]) }, 'budget', /must be an object/],
    [{ breaker: new Uint8Array(2) }, 'breaker', /must be an object/],
    [{ cache: () => true }, 'cache', /must be a boolean or an object/],
    [{ classify: new Set() }, 'classify', /must be an array/],
    [{ quota: new Map([[1, { cuPerSecond: 5 }]]) }, 'quota', /must be an object/],
    [{ maxRetries: 2n ** 70n }, 'maxRetries', /bigint out of range/],
    [{ maxRetries: Symbol('x') }, 'maxRetries', /must be a number/],
  ]) {
    const e = refusal([URL_OK], options);
    assert.ok(isConfigError(e), `${field}: ${e}`);
    assert.equal(e.field, field);
    assert.match(e.message, reason);
  }
  // What the wrapper reads itself is never walked (a cycle or a throwing getter there is harmless).
  const logger = { debug() {}, info() {}, warn() {}, error() {} };
  logger.self = logger;
  Object.defineProperty(logger, 'boom', { get: () => { throw new Error('walked'); }, enumerable: true });
  assert.equal(refusal([URL_OK], { logger }), null);
  assert.equal(stats([URL_OK], { maxRetries: undefined, breaker: null }).endpoints.length, 1, 'null and undefined: the defaults');
});

test('switches that also take settings say both; duplicates name the twin', () => {
  for (const field of ['cache', 'hedge', 'adaptiveTimeout']) {
    const error = (() => { try { new FaultTolerantRelayer([URL_OK], { [field]: 'yes' }); } catch (e) { return e; } })();
    assert.equal(error.field, field);
    assert.match(error.message, /must be a boolean or an object/);
  }
  const twin = (() => { try { new FaultTolerantRelayer([URL_OK, URL_OK]); } catch (e) { return e; } })();
  assert.match(twin.message, /duplicate of upstreams\[0\]/);
  // The same URL with other headers or credentials (another key) is two endpoints, on purpose.
  new FaultTolerantRelayer([{ url: URL_OK, headers: { 'x-key': 'a' } }, { url: URL_OK, headers: { 'x-key': 'b' } }]).close();
  new FaultTolerantRelayer(['http://a:bbbb@127.0.0.1:8545', 'http://c:dddd@127.0.0.1:8545']).close();
  const provider = { request: async () => '0x1' };
  const twice = (() => { try { new FaultTolerantRelayer([provider, { provider }]); } catch (e) { return e; } })();
  assert.ok(isConfigError(twice) && twice.field === 'upstreams[1]', String(twice));
});

test('bad calls are typed errors, not crashes inside WASM', async () => {
  const a = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([a.url]);
  for (const args of [undefined, null, 'eth_blockNumber', {}, { method: '' }, { method: 5 }, { method: 'x', params: 'nope' }]) {
    await assert.rejects(relayer.request(args), (e) => isInvalidRequestError(e));
  }
  await assert.rejects(relayer.request({ method: 'eth_call', params: [10n] }), (e) => isInvalidRequestError(e) && /JSON/.test(e.message));
  await assert.rejects(relayer.executeRpcWithRetry('not a function'), (e) => isInvalidRequestError(e));
  assert.throws(() => relayer.on('explode', () => {}), (e) => isInvalidRequestError(e) && /explode/.test(e.message));
  assert.equal(a.count(), 0, 'nothing reached the network');
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x1');
});

test('garbage responses never kill the instance: each is a typed error, then the next request is served', async () => {
  const deep = '['.repeat(100000) + ']'.repeat(100000);
  const garbage = [
    { raw: '' }, { raw: 'null' }, { raw: '42' }, { raw: '"str"' }, { raw: '[]' }, { raw: '[{"id":1}]' },
    { raw: '{"jsonrpc":"2.0"}' }, { raw: '{"jsonrpc":"2.0","id":1,"result":"0x1","error":{"code":1}}' },
    { raw: '{"id":null,"error":"a string error"}' }, { raw: '{"id":null,"error":{"code":"nan","message":7}}' },
    { raw: '{"id":null,"error":{"code":1e400,"message":"x"}}' }, { raw: Buffer.from([0xff, 0xfe, 0x00, 0x81]) },
    { raw: deep }, { raw: '{"id":' }, { status: 500, body: '{"unterminated' }, { status: 999 },
    { status: 204 }, { status: 301, headers: { location: 'http://127.0.0.1:1/' } },
    { status: 429, headers: { 'retry-after': 'Thu, 99 Foo 9999 99:99:99 GMT' } },
    { status: 503, headers: { 'retry-after': '-1' } },
  ];
  const hostile = await node(garbage);
  // A breaker that never trips, so the same hostile node must keep being handled.
  const relayer = new FaultTolerantRelayer([hostile.url], {
    baseDelayMs: 0, maxDelayMs: 0, maxRetries: 0, maxRetryAfterMs: 0, cache: false,
    breaker: { consecutiveFailures: 1000000, minSamples: 1000000 },
  });
  for (let i = 0; i < garbage.length; i += 1) {
    const outcome = await relayer.request({ method: 'eth_blockNumber' }).then((v) => ({ v }), (e) => ({ e }));
    if (outcome.e) assert.ok(isBreakwaterError(outcome.e), `garbage #${i}: ${outcome.e}`);
  }
  hostile.setScript([{ result: '0x99' }]);
  assert.equal(await relayer.request({ method: 'eth_blockNumber' }), '0x99');
  const stats = relayer.stats();
  assert.equal(stats.endpoints[0].inFlight, 0, 'every reservation was given back');
  assert.equal(stats.waiting, 0);
});

test('API keys in URLs never appear in errors, events or stats', async () => {
  const key = '9aa3d95b3bc440fa88ea12eaa4456161';
  const a = await node([{ status: 503 }]);
  const b = await node([{ error: { code: -32603, message: `upstream ${a.url}/v3/${key} failed` } }]);
  const relayer = new FaultTolerantRelayer([`${a.url}/v3/${key}`, `${b.url}/?apikey=${key}`], { ...{ baseDelayMs: 1, maxDelayMs: 2 }, maxRetries: 2 });
  const seen = [];
  for (const name of ['retry', 'failover', 'rateLimited']) relayer.on(name, (e) => seen.push(e));
  const err = await relayer.request({ method: 'eth_blockNumber' }).catch((e) => e);
  const dump = JSON.stringify({ err, message: err.message, stack: err.stack, cause: err.cause, seen, stats: relayer.stats(), endpoints: relayer.endpoints });
  assert.ok(!dump.includes(key), dump);
  assert.match(dump, /\/v3\/\*\*\*/);
});

test('secrets in headers never leak, even when a node echoes them', async () => {
  const token = 'Bearer sk_live_0123456789abcdefXYZ';
  const a = await node([{ error: { code: -32603, message: `auth ${token} rejected` } }]);
  const relayer = new FaultTolerantRelayer([{ url: a.url, headers: { authorization: token } }], { baseDelayMs: 1, maxDelayMs: 1, maxRetries: 1 });
  const events = [];
  relayer.on('retry', (e) => events.push(e));
  const err = await relayer.request({ method: 'eth_blockNumber' }).catch((e) => e);
  const dump = JSON.stringify({ err, message: err.message, events, stats: relayer.stats() });
  assert.ok(!dump.includes('sk_live_0123456789abcdefXYZ'), dump);
});

test('absurd Retry-After values and hostile numbers never break the pool\'s accounting', async () => {
  const a = await node([
    { status: 429, headers: { 'retry-after': '99999999999999999999' } },
    { status: 503, headers: { 'retry-after': '-5' } },
    { status: 429, headers: { 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' } },
    { error: { code: 1e308, message: 'x'.repeat(100000) } },
    { raw: '{"jsonrpc":"2.0","id":1,"result":"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"}' },
    { result: '0x1' },
  ]);
  const relayer = new FaultTolerantRelayer([a.url], {
    baseDelayMs: 0, maxDelayMs: 0, maxRetries: 0, maxRetryAfterMs: 20, cache: false,
    breaker: { consecutiveFailures: 1000, minSamples: 1000 }, quota: {},
  });
  const limited = [];
  relayer.on('rateLimited', (e) => limited.push(e.cooldownMs));
  for (let i = 0; i < 6; i += 1) {
    await relayer.request({ method: 'eth_blockNumber' }).catch((e) => assert.ok(isBreakwaterError(e)));
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(limited.every((ms) => ms <= 20), `cooldowns capped: ${limited}`);
  const s = relayer.stats();
  assert.equal(s.endpoints[0].inFlight, 0);
  assert.equal(s.waiting, 0);
  assert.equal(await relayer.request({ method: 'eth_chainId', params: [] }), '0x1');
});

test('a closed relayer rejects with a ClosedError', async () => {
  const a = await node([{ result: '0x1' }]);
  const relayer = new FaultTolerantRelayer([a.url]);
  await relayer.close();
  await assert.rejects(relayer.request({ method: 'eth_blockNumber' }), (e) => isClosedError(e) && e.code === 4900);
  assert.equal(a.count(), 0);
});

test('close() ends requests waiting in a backoff at once, with a ClosedError', async () => {
  const a = await node([{ status: 503 }]);
  const relayer = new FaultTolerantRelayer([a.url], { baseDelayMs: 20000, maxDelayMs: 20000, backoff: 'fixed', deadlineMs: 60000 });
  const pending = relayer.request({ method: 'eth_blockNumber' }).catch((e) => e);
  while (a.count() === 0) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 20));
  const t0 = Date.now();
  await relayer.close();
  const err = await pending;
  assert.ok(isClosedError(err), err);
  assert.ok(Date.now() - t0 < 1000, 'not after the 20 s backoff');
  assert.equal(a.count(), 1);
});

test('budget exhaustion is a RetryBudgetError, distinct from running out of attempts', async () => {
  const a = await node([{ status: 503 }]);
  const relayer = new FaultTolerantRelayer([a.url], { baseDelayMs: 1, maxDelayMs: 1, budget: { ratio: 0, minPerSecond: 0, burst: 1 } });
  const first = await relayer.request({ method: 'eth_blockNumber' }).catch((e) => e);
  assert.ok(isRetryBudgetError(first), first);
  assert.equal(first.attempts, 2);
  // The message says what the node's last failure was, not only that the budget ran out.
  assert.match(first.message, /^retry budget exhausted after 2 attempt\(s\); the last: HTTP 503 from /);
  const second = await relayer.request({ method: 'eth_blockNumber' }).catch((e) => e);
  assert.ok(isRetryBudgetError(second));
  assert.equal(second.attempts, 1);
  assert.equal(second.cause.status, 503);
  assert.equal(a.count(), 3);
  // A node that is gone: the refused connection is in the message.
  const gone = await node([{ result: '0x1' }]);
  await gone.stop();
  const lone = new FaultTolerantRelayer([gone.url], { baseDelayMs: 1, maxDelayMs: 1, budget: { ratio: 0, minPerSecond: 0, burst: 1 } });
  const refused = await lone.request({ method: 'eth_blockNumber' }).catch((e) => e);
  assert.ok(isRetryBudgetError(refused), refused);
  assert.match(refused.message, /; the last: connection refused from /);
  lone.close();
});
