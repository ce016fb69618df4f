// The clients under test, each behind one tiny interface:
//   const c = await make(urls);  c.read(i) → Promise;  c.revert(i) → Promise;  c.close()
// `read(i)` is eth_getBalance of a distinct address (no client may serve it
// from a cache); `revert(i)` is an eth_call the fleet always reverts.
// Peers use their documented defaults; where a default is obviously unfair
// (ethers' FallbackProvider asks two backends per call), a second,
// well-configured entry is added and named as such.
import { createPublicClient, http, fallback } from 'viem';
import { ethers } from 'ethers';
import { retry, circuitBreaker, timeout, wrap, handleWhen, ConsecutiveBreaker, ExponentialBackoff, TimeoutStrategy } from 'cockatiel';
import { FaultTolerantRelayer } from '../pkg/dist/node.mjs';

const address = (i) => `0x${(0x100000 + (i % 0xffffff)).toString(16).padStart(40, '0')}`;
const CALL = { to: '0x0000000000000000000000000000000000000001', data: '0x12345678' };

function rawFetch(url) {
  let id = 0;
  const rpc = async (method, params) => {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) });
    const j = await r.json();
    if (j.error) throw Object.assign(new Error(j.error.message), { code: j.error.code });
    return j.result;
  };
  return rpc;
}

function relayer(urls, options) {
  const r = new FaultTolerantRelayer(urls, options);
  return {
    read: (i) => r.request({ method: 'eth_getBalance', params: [address(i), 'latest'] }),
    revert: () => r.request({ method: 'eth_call', params: [CALL, 'latest'] }),
    close: () => r.close(),
  };
}

export const CLIENTS = {
  'breakwater-rpc': { multi: true, make: (urls) => relayer(urls) },
  'breakwater-rpc (chainId: 1)': { multi: true, wellConfigured: true, make: (urls) => relayer(urls, { chainId: 1 }) },
  // The healthy path without auto-batching (issue #17's unbatched row): overhead only.
  'breakwater-rpc (batch: false)': { multi: false, make: (urls) => relayer(urls, { batch: false }) },
  'raw fetch': {
    multi: false,
    make: (urls) => {
      const rpc = rawFetch(urls[0]);
      return { read: (i) => rpc('eth_getBalance', [address(i), 'latest']), revert: () => rpc('eth_call', [CALL, 'latest']), close: () => {} };
    },
  },
  'viem http': {
    multi: false,
    make: (urls) => {
      const c = createPublicClient({ transport: http(urls[0]) });
      return { read: (i) => c.getBalance({ address: address(i) }), revert: () => c.call(CALL), close: () => {} };
    },
  },
  'viem fallback': {
    multi: true,
    make: (urls) => {
      const c = createPublicClient({ transport: fallback(urls.map((u) => http(u))) });
      return { read: (i) => c.getBalance({ address: address(i) }), revert: () => c.call(CALL), close: () => {} };
    },
  },
  'ethers JsonRpcProvider': {
    multi: false,
    make: (urls) => {
      const p = new ethers.JsonRpcProvider(urls[0]);
      return { read: (i) => p.getBalance(address(i)), revert: () => p.call(CALL), close: () => p.destroy() };
    },
  },
  'ethers FallbackProvider': {
    multi: true,
    make: (urls) => {
      const p = new ethers.FallbackProvider(urls.map((u) => new ethers.JsonRpcProvider(u, 1, { staticNetwork: true })), 1);
      return { read: (i) => p.getBalance(address(i)), revert: () => p.call(CALL), close: () => p.destroy() };
    },
  },
  'ethers FallbackProvider (quorum 1)': {
    multi: true,
    wellConfigured: true,
    make: (urls) => {
      const p = new ethers.FallbackProvider(urls.map((u) => new ethers.JsonRpcProvider(u, 1, { staticNetwork: true })), 1, { quorum: 1 });
      return { read: (i) => p.getBalance(address(i)), revert: () => p.call(CALL), close: () => p.destroy() };
    },
  },
  'cockatiel (hand-made)': {
    multi: true,
    wellConfigured: true,
    make: (urls) => {
      // A typical hand-made setup: per endpoint timeout + 2 tries with
      // exponential backoff + a consecutive breaker; failover in list order.
      const fatal = (e) => e && e.code === 3;
      const policies = urls.map((url) => ({
        rpc: rawFetch(url),
        policy: wrap(
          retry(handleWhen((e) => !fatal(e)), { maxAttempts: 1, backoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 2000 }) }),
          circuitBreaker(handleWhen((e) => !fatal(e)), { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(3) }),
          timeout(2000, TimeoutStrategy.Aggressive),
        ),
      }));
      const run = async (method, params) => {
        let last;
        for (const { rpc, policy } of policies) {
          try {
            return await policy.execute(() => rpc(method, params));
          } catch (e) {
            if (fatal(e)) throw e;
            last = e;
          }
        }
        throw last;
      };
      return { read: (i) => run('eth_getBalance', [address(i), 'latest']), revert: () => run('eth_call', [CALL, 'latest']), close: () => {} };
    },
  },
};
