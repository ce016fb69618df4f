// Reads a foreign error (thrown inside an executeRpcWithRetry operation)
// into the plain "observation" the wasm classifier understands. Our own
// errors carry their observation; ethers v6 and viem errors are read by
// their documented fields; anything unrecognised is not retried (it is
// probably a bug in the operation, and retrying a bug only repeats it).

const ETHERS_CODES = {
  TIMEOUT: { transport: 'timeout' },
  NETWORK_ERROR: { transport: 'network' },
  BAD_DATA: { body: 'malformed' },
};

function observe(error, depth = 0) {
  if (error === null || typeof error !== 'object' || depth > 6) return { transport: 'aborted' };
  if (error.observation && isBreakwaterError(error)) return error.observation;
  if (isTransportError(error)) return { transport: error.transport };
  for (const inner of [error.cause, error.error, error.info && error.info.error]) {
    if (inner && typeof inner === 'object') {
      const found = findOurs(inner, depth + 1);
      if (found) return found;
    }
  }
  if (error.name === 'AbortError') return { transport: 'aborted' };
  if (error.name === 'TimeoutError') return { transport: 'timeout' };
  const rpc = error.info && error.info.error && typeof error.info.error.code === 'number' ? error.info.error : null;
  if (rpc) return { code: rpc.code, message: String(rpc.message || '') };
  if (typeof error.code === 'number') {
    return { code: error.code, message: String(error.shortMessage || error.message || '') };
  }
  if (typeof error.code === 'string' && ETHERS_CODES[error.code]) return ETHERS_CODES[error.code];
  if (error.code === 'SERVER_ERROR') {
    const status = Number((error.info && error.info.responseStatus || '').toString().slice(0, 3));
    return { status: status >= 100 && status <= 599 ? status : 500, body: 'malformed' };
  }
  if (error.code === 'CALL_EXCEPTION') return { code: 3, message: 'execution reverted' };
  if (typeof error.status === 'number') return { status: error.status, body: 'malformed' };
  return { transport: 'aborted' };
}

function findOurs(error, depth) {
  if (depth > 6 || error === null || typeof error !== 'object') return null;
  if (error.observation && isBreakwaterError(error)) return error.observation;
  return findOurs(error.cause, depth + 1) || findOurs(error.error, depth + 1);
}
