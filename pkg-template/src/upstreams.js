// Upstreams that are provider objects instead of URLs ("wrap my
// provider"): an EIP-1193 provider (`request({ method, params })`), an
// ethers v6 provider (`send(method, params)`), or an endpoint object
// `{ provider, label, quotaGroup, … }`. Each becomes a call function the
// engine uses instead of fetch, so the wrapped provider gets the same
// retry, breaker, quota and routing treatment as a URL. The function
// answers with the JSON text a node would have sent, or with an
// observation of the provider's failure, and enforces the attempt timeout
// (a provider call cannot be aborted, only abandoned).

import { ConfigError } from './errors.js';
import { observeProviderFailure } from './observe.js';

function isProviderObject(value) {
  return value !== null && typeof value === 'object' && value.url === undefined
    && (typeof value.request === 'function' || typeof value.send === 'function');
}

function providerCall(provider) {
  if (provider !== null && typeof provider === 'object' && typeof provider.request === 'function') {
    return (method, params) => provider.request({ method, params });
  }
  if (provider !== null && typeof provider === 'object' && typeof provider.send === 'function') {
    return (method, params) => provider.send(method, params);
  }
  return undefined;
}

function rpcReply(id, call) {
  return Promise.resolve()
    .then(() => call())
    .then((result) => ({ jsonrpc: '2.0', id, result: result === undefined ? null : result }), (error) => {
      const observation = observeProviderFailure(error);
      if (typeof observation.code !== 'number') throw Object.assign(new Error('provider failed'), { observation, foreign: error });
      const data = error && (error.data !== undefined ? error.data : error.info && error.info.error && error.info.error.data);
      const reply = { code: observation.code, message: observation.message || String((error && error.message) || '') };
      if (data !== undefined) reply.data = data;
      return { jsonrpc: '2.0', id, error: reply };
    });
}

function providerTransport(provider) {
  const call = providerCall(provider);
  return async (body, timeoutMs) => {
    let timer;
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => resolve({ observation: { transport: 'timeout' } }), timeoutMs);
    });
    const work = (async () => {
      try {
        const message = JSON.parse(body);
        const one = (m) => rpcReply(m.id, () => call(m.method, m.params === undefined ? [] : m.params));
        const reply = Array.isArray(message) ? await Promise.all(message.map(one)) : await one(message);
        return { text: JSON.stringify(reply, (_, v) => (typeof v === 'bigint' ? `0x${v.toString(16)}` : v)) };
      } catch (error) {
        // The provider's own error travels along: it becomes our error's `cause`.
        if (error && error.observation) return { observation: error.observation, error: error.foreign };
        return { observation: observeProviderFailure(error), error };
      }
    })();
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The upstream list with provider objects replaced by call functions. */
export function wrapUpstreams(upstreams) {
  if (!Array.isArray(upstreams)) return upstreams;
  const seen = new Map();
  upstreams.forEach((item, i) => {
    const provider = isProviderObject(item) ? item : item !== null && typeof item === 'object' ? item.provider : undefined;
    if (provider === null || typeof provider !== 'object') return;
    if (seen.has(provider)) {
      throw new ConfigError({ kind: 'config', code: -32602, field: `upstreams[${i}]`,
        message: `upstreams[${i}]: duplicate of upstreams[${seen.get(provider)}] (the same provider object)` });
    }
    seen.set(provider, i);
  });
  return upstreams.map((item) => {
    if (isProviderObject(item)) return { provider: providerTransport(item) };
    if (item !== null && typeof item === 'object' && item.provider !== undefined) {
      const call = providerCall(item.provider);
      // Anything else stays as given: the engine names the field in a ConfigError.
      return call ? { ...item, provider: providerTransport(item.provider) } : item;
    }
    return item;
  });
}
