// The events a relayer emits: their names, which come from the engine and
// which from the wrapper, and how the `logger` option writes them.

import { ConfigError } from './errors.js';

/**
 * Events the wasm engine emits (pipeline, then transactions). The core's own
 * list is `eventTypes()` in src/wasm/contract.rs; js-tests/contract.test.mjs
 * keeps the two equal.
 */
export const ENGINE_EVENTS = [
  'retry', 'failover', 'hedge', 'breaker', 'rateLimited', 'chainMismatch', 'overload',
  'txSubmitted', 'txAdopted', 'txUnknown', 'txRebroadcast', 'speedUp', 'cancel', 'txIncluded', 'reorg', 'txMined', 'replaced',
  'nonceResync', 'nonceGap',
];

/**
 * EIP-1193: `connect` { chainId } once a node answered, `disconnect` (a 4900 error) when every
 * endpoint's breaker is open, `connect` again when one recovers. `chainChanged` is accepted but never
 * fires: the relayer serves one chain (a node on another one is disabled: `chainMismatch`).
 * `fleetStore` { state: 'up' | 'down', reason? } when a Redis store's connection comes up or goes
 * down (a wrong password, Redis unreachable): requests never fail for it, so this is how to know.
 */
export const WRAPPER_EVENTS = ['connect', 'disconnect', 'chainChanged', 'fleetStore'];

/**
 * EIP-1193 events only a wallet can know: forwarded as they come from every EIP-1193 upstream that emits
 * them (`accountsChanged` gets the accounts array, `message` the { type, data } object), never invented.
 */
export const FORWARDED_EVENTS = new Set(['accountsChanged', 'message']);

/** Every event `on()` accepts. */
export const KNOWN_EVENTS = new Set([...ENGINE_EVENTS, ...WRAPPER_EVENTS, ...FORWARDED_EVENTS]);

/** The upstream objects that are event emitters (EIP-1193 wallets), bare or as `{ provider }`. */
export function emittingUpstreams(upstreams) {
  if (!Array.isArray(upstreams)) return [];
  return upstreams
    .map((u) => (u !== null && typeof u === 'object' && u.provider !== undefined ? u.provider : u))
    .filter((p) => p !== null && typeof p === 'object' && typeof p.on === 'function');
}

/** Log levels of events for the `logger` option (silent by default). */
export const LOG_LEVELS = {
  retry: 'debug', hedge: 'debug', failover: 'info', rateLimited: 'info', overload: 'warn', chainMismatch: 'error',
  txSubmitted: 'info', txUnknown: 'warn', txRebroadcast: 'debug', speedUp: 'info', cancel: 'info',
  txIncluded: 'debug', reorg: 'warn', txMined: 'info', replaced: 'info', nonceResync: 'warn', nonceGap: 'warn',
  connect: 'info', disconnect: 'warn',
};

// A store's event (one object, told to every relayer using the store) and the loggers that wrote
// it: a process of ten relayers on one Redis wrote ten warn lines for one outage.
const written = new WeakMap();

/** Whether `logger` is the first to write `event` (each store event is logged once per logger). */
export function firstToLog(event, logger) {
  let loggers = written.get(event);
  if (!loggers) written.set(event, (loggers = new WeakSet()));
  if (loggers.has(logger)) return false;
  loggers.add(logger);
  return true;
}

/** A one-line description of an event, for loggers (labels are already redacted). */
export function describe(event) {
  const fields = Object.entries(event).filter(([k]) => k !== 'type')
    .map(([k, v]) => `${k}=${typeof v === 'object' && v !== null ? JSON.stringify(v) : v}`);
  return `breakwater-rpc ${event.type}${fields.length ? ` ${fields.join(' ')}` : ''}`;
}

/** Checks the `logger` option: console-like, with any of debug/info/warn/error. */
export function checkLogger(logger) {
  if (logger === undefined) return undefined;
  const ok = logger !== null && typeof logger === 'object'
    && ['debug', 'info', 'warn', 'error'].some((level) => typeof logger[level] === 'function');
  if (!ok) {
    throw new ConfigError({ kind: 'config', code: -32602, field: 'logger',
      message: 'logger: must be an object with debug/info/warn/error functions (console works)' });
  }
  return logger;
}
