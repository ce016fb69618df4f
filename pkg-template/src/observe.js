// Reads a foreign error — thrown by a wrapped provider used as an upstream,
// or inside an executeRpcWithRetry operation — into the plain
// "observation" the wasm classifier understands, by the signals real
// providers give (checked against ethers 6 and viem 2 failing for real):
//   - our own errors carry their observation;
//   - a JSON-RPC error with a numeric code (EIP-1193 ProviderRpcError,
//     viem's RpcRequestError / RpcError family, ethers' info.error);
//   - an HTTP status (viem HttpRequestError.status, ethers SERVER_ERROR's
//     info.responseStatus, including ethers' "599 … (429 Too Many Requests;
//     exceeded maximum retry limit)" after its own throttle retries);
//   - timeouts (viem TimeoutError, ethers TIMEOUT, undici timeouts);
//   - Node socket codes anywhere in the cause chain (ECONNREFUSED,
//     ECONNRESET, ETIMEDOUT, ENOTFOUND…: ethers puts them on the error
//     itself, viem two causes down);
//   - ethers NETWORK_ERROR, BAD_DATA, CALL_EXCEPTION.
// Anything unrecognised is `unknown`: an operation's unknown error is not
// retried (probably a bug in the operation, and retrying a bug only
// repeats it); a wrapped provider's is a network failure (fail over).

import { isBreakwaterError, isTransportError } from './errors.js';

const ETHERS_CODES = {
  NETWORK_ERROR: { transport: 'network' },
  BAD_DATA: { body: 'malformed' },
};

// Node/undici socket error codes → transport failure kinds.
const SOCKET_CODES = {
  ECONNREFUSED: 'refused',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ECONNABORTED: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_CLOSED: 'reset',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
};

const MAX_DEPTH = 6;

/** The errors nested in `error` (cause chain, ethers' `error` and `info.error`). */
function inner(error) {
  return [error.cause, error.error, error.info && error.info.error].filter((e) => e !== null && typeof e === 'object');
}

/** A socket error code anywhere in the cause chain, as a transport kind. */
function socketKind(error, depth = 0) {
  if (error === null || typeof error !== 'object' || depth > MAX_DEPTH) return undefined;
  if (typeof error.code === 'string' && SOCKET_CODES[error.code]) return SOCKET_CODES[error.code];
  for (const e of inner(error)) {
    const found = socketKind(e, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The status in ethers' `info.responseStatus` ("503 Service Unavailable", "599 … (429 Too Many Requests; …)"). */
function ethersStatus(error) {
  const text = String((error.info && error.info.responseStatus) || '');
  const escalated = /\((\d{3})\b/.exec(text);
  const status = Number(escalated ? escalated[1] : text.slice(0, 3));
  return status >= 100 && status <= 599 ? status : 500;
}

function retryAfterOf(error) {
  const headers = error.headers;
  const value = headers && typeof headers.get === 'function' ? headers.get('retry-after') : undefined;
  return typeof value === 'string' ? value : undefined;
}

export function observe(error, depth = 0, unknown = { transport: 'aborted' }) {
  if (error === null || typeof error !== 'object' || depth > MAX_DEPTH) return unknown;
  if (error.observation && isBreakwaterError(error)) return error.observation;
  if (isTransportError(error)) return { transport: error.transport };
  for (const e of inner(error)) {
    const found = findOurs(e, depth + 1);
    if (found) return found;
  }
  if (error.name === 'AbortError') return { transport: 'aborted' };
  if (error.name === 'TimeoutError' || error.code === 'TIMEOUT') return { transport: 'timeout' };
  // viem wraps what it cannot name (code -1): the cause says more.
  if (error.name === 'UnknownRpcError' && error.cause) return observe(error.cause, depth + 1, unknown);
  const rpc = error.info && error.info.error && typeof error.info.error.code === 'number' ? error.info.error : null;
  if (rpc) return { code: rpc.code, message: String(rpc.message || '') };
  if (typeof error.code === 'number') {
    // viem keeps the node's own words in `details` (its shortMessage is generic, e.g. "An internal error was received.").
    const words = typeof error.details === 'string' && error.shortMessage ? error.details : (error.shortMessage || error.message);
    return { code: error.code, message: String(words || '') };
  }
  if (typeof error.status === 'number' && error.status >= 100 && error.status <= 599) {
    const observation = { status: error.status, body: 'malformed' };
    const retryAfter = retryAfterOf(error);
    if (retryAfter !== undefined) observation.retryAfter = retryAfter;
    return observation;
  }
  if (error.code === 'SERVER_ERROR') return { status: ethersStatus(error), body: 'malformed' };
  const socket = socketKind(error);
  if (socket) return { transport: socket };
  if (typeof error.code === 'string' && ETHERS_CODES[error.code]) return ETHERS_CODES[error.code];
  if (error.code === 'CALL_EXCEPTION') return { code: 3, message: 'execution reverted' };
  // viem's HttpRequestError without a status, Node's "fetch failed": no answer came back.
  if (error.name === 'HttpRequestError' || (error.name === 'TypeError' && /fetch/i.test(String(error.message)))) {
    return { transport: 'network' };
  }
  return unknown;
}

/**
 * A wrapped provider's failure: anything unrecognised is a network failure
 * (fail over). Its message is not carried (a provider's message may hold
 * its URL and key, which our redactor does not know); the error itself
 * becomes the `cause` of ours.
 */
export function observeProviderFailure(error) {
  const name = error && typeof error === 'object' ? String(error.name || 'Error') : typeof error;
  const code = error && typeof error.code === 'string' ? ` ${error.code}` : '';
  const observation = observe(error, 0, { transport: 'network' });
  if (observation.transport === 'network') observation.message = `${name}${code} from a wrapped provider`;
  return observation;
}

function findOurs(error, depth) {
  if (depth > MAX_DEPTH || error === null || typeof error !== 'object') return null;
  if (error.observation && isBreakwaterError(error)) return error.observation;
  return findOurs(error.cause, depth + 1) || findOurs(error.error, depth + 1);
}
