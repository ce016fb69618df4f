// Signer adapters: an ethers v6 Signer, a viem local account or an
// EIP-1193 wallet becomes `{ address, sign(tx) }` for the engine. The
// engine hands over a fully decided transaction (nonce, gas, fees as 0x
// hex) and gets back signed bytes `{ raw }` or, from a wallet that sends
// by itself, `{ hash }`. Keys stay inside the caller's signer.
//
// It imports nothing: a page loads it with the transaction module
// (dist/tx-signers.js, on the first transaction call), and the error
// classes it throws are the entry's own, given by `bindErrors` (a copy of
// errors.js here would make errors that fail `instanceof`).

/** The entry's error classes: `{ InvalidSignerError, isBreakwaterError }`, bound before any adapter runs. */
let errors = null;

/** Binds the error classes this module throws (the first binding stays). */
export function bindErrors(classes) {
  errors ??= classes;
}

function invalidSigner(message, cause) {
  return new errors.InvalidSignerError({ kind: 'invalidSigner', code: -32602, message }, cause);
}

const big = (hex) => BigInt(hex);

function viemTx(tx) {
  const common = {
    chainId: tx.chainId, nonce: tx.nonce, to: tx.to ?? undefined, value: big(tx.value),
    data: tx.data === '0x' ? undefined : tx.data, gas: big(tx.gas),
  };
  return tx.type === 2
    ? { ...common, type: 'eip1559', maxFeePerGas: big(tx.maxFeePerGas), maxPriorityFeePerGas: big(tx.maxPriorityFeePerGas) }
    : { ...common, type: 'legacy', gasPrice: big(tx.gasPrice) };
}

function ethersTx(tx) {
  const common = {
    chainId: tx.chainId, nonce: tx.nonce, from: tx.from, to: tx.to, value: big(tx.value), data: tx.data, gasLimit: big(tx.gas),
  };
  return tx.type === 2
    ? { ...common, type: 2, maxFeePerGas: big(tx.maxFeePerGas), maxPriorityFeePerGas: big(tx.maxPriorityFeePerGas) }
    : { ...common, type: 0, gasPrice: big(tx.gasPrice) };
}

function walletTx(tx) {
  const hex = (n) => `0x${n.toString(16)}`;
  const out = {
    from: tx.from, nonce: hex(tx.nonce), value: tx.value, data: tx.data, gas: tx.gas, chainId: hex(tx.chainId),
  };
  if (tx.to) out.to = tx.to;
  if (tx.type === 2) Object.assign(out, { type: '0x2', maxFeePerGas: tx.maxFeePerGas, maxPriorityFeePerGas: tx.maxPriorityFeePerGas });
  else Object.assign(out, { type: '0x0', gasPrice: tx.gasPrice });
  return out;
}

function checkedRaw(raw) {
  if (typeof raw !== 'string' || !/^0x[0-9a-fA-F]+$/.test(raw)) throw invalidSigner('the signer returned something that is not signed 0x hex bytes');
  return { raw };
}

// Adapted ethers signers and viem accounts, by object: a second call with
// the same signer (a cancel after a send) knows the address at once.
// Wallets are not cached: their selected account can change.
const adaptedSigners = new WeakMap();

/** The adapter made earlier for this signer object, if any (synchronous). */
export function knownSigner(signer) {
  return signer !== null && typeof signer === 'object' ? adaptedSigners.get(signer) : undefined;
}

/** A chain id from a number, bigint or 0x/decimal string; undefined when unreadable. */
function chainNumber(value) {
  try {
    const n = Number(typeof value === 'string' || typeof value === 'bigint' ? BigInt(value) : value);
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The chain an ethers signer's provider is on, for the cross-check; undefined
 * when it has no provider or the provider cannot say within 2 s (a provider
 * whose node is down keeps retrying its network detection: never wait on it).
 */
async function ethersChain(signer) {
  const provider = signer.provider;
  if (!provider || typeof provider.getNetwork !== 'function') return undefined;
  let timer;
  const giveUp = new Promise((resolve) => { timer = setTimeout(resolve, 2000); });
  try {
    const network = await Promise.race([Promise.resolve(provider.getNetwork()).catch(() => undefined), giveUp]);
    return network ? chainNumber(network.chainId) : undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `value` is a viem client (WalletClient, or any client extended with wallet actions). */
function isViemClient(value) {
  return typeof value.request === 'function' && typeof value.extend === 'function' && typeof value.transport === 'object'
    && typeof value.uid === 'string';
}

function walletSender(request, address, chainId, kind) {
  return {
    address,
    kind,
    chainId,
    sign: async (tx) => {
      const hash = await request({ method: 'eth_sendTransaction', params: [walletTx(tx)] });
      if (typeof hash !== 'string') throw invalidSigner('the wallet returned no transaction hash');
      return { hash };
    },
  };
}

/**
 * A viem client signs with its own `account`: a local account signs here and
 * we broadcast the bytes; a JSON-RPC account means the wallet behind the
 * client sends. Never the node's `eth_accounts`: a client's transport may be
 * a plain node with unlocked accounts of its own.
 */
function adaptViemClient(client) {
  const account = client.account;
  const chainId = client.chain ? chainNumber(client.chain.id) : undefined;
  if (!account || typeof account.address !== 'string') {
    throw invalidSigner('the viem client has no account: create it with `account` (a local account or an address)');
  }
  if (account.type === 'local' && typeof account.signTransaction === 'function') {
    return { address: account.address, kind: 'viem', chainId,
      sign: async (tx) => checkedRaw(await account.signTransaction(viemTx(tx))) };
  }
  if (account.type === 'json-rpc') return walletSender((args) => client.request(args), account.address, chainId, 'wallet');
  throw invalidSigner(`the viem client's account is of type \`${account.type}\`; a local or JSON-RPC account is needed`);
}

async function adaptUncached(signer) {
  if (isViemClient(signer)) return adaptViemClient(signer);
  if (typeof signer.signTransaction === 'function' && typeof signer.address === 'string' && signer.type === 'local') {
    return { address: signer.address, kind: 'viem', sign: async (tx) => checkedRaw(await signer.signTransaction(viemTx(tx))) };
  }
  if (typeof signer.signTransaction === 'function' && typeof signer.getAddress === 'function') {
    const [address, chainId] = await Promise.all([signer.getAddress(), ethersChain(signer)]);
    return { address, kind: 'ethers', chainId, sign: async (tx) => checkedRaw(await signer.signTransaction(ethersTx(tx))) };
  }
  if (typeof signer.request === 'function') {
    const request = (args) => signer.request(args);
    // The account and the chain in one round trip's time (wallets are asked on every send).
    const [accounts, chainId] = await Promise.all([
      typeof signer.address === 'string' ? [signer.address] : request({ method: 'eth_accounts' }),
      request({ method: 'eth_chainId' }).then(chainNumber, () => undefined),
    ]);
    const address = Array.isArray(accounts) ? accounts[0] : undefined;
    if (typeof address !== 'string') throw invalidSigner('the EIP-1193 wallet has no account (eth_accounts is empty)');
    return walletSender(request, address, chainId, 'wallet');
  }
  throw invalidSigner('the signer must be an ethers Signer (getAddress + signTransaction), a viem local account (address + signTransaction), a viem WalletClient with an account, or an EIP-1193 wallet (request)');
}

/**
 * Adapts `signer` (cached per object, except EIP-1193 wallets whose selected
 * account can change). Rejects with InvalidSignerError for anything that is
 * none of the known kinds, or whose address cannot be read (before a nonce
 * is taken).
 */
export async function adaptSigner(signer) {
  if (signer === null || typeof signer !== 'object') {
    throw invalidSigner('the signer must be an ethers Signer, a viem local account or WalletClient, or an EIP-1193 wallet');
  }
  const cached = adaptedSigners.get(signer);
  if (cached) return cached;
  let adapted;
  try {
    adapted = await adaptUncached(signer);
  } catch (error) {
    if (errors.isBreakwaterError(error)) throw error;
    throw invalidSigner(`the signer's address or chain could not be read: ${error && error.message}`, { cause: error });
  }
  if (adapted.kind !== 'wallet') adaptedSigners.set(signer, adapted);
  return adapted;
}
