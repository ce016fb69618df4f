// Signer adapters: an ethers v6 Signer, a viem local account or an
// EIP-1193 wallet becomes `{ address, sign(tx) }` for the engine. The
// engine hands over a fully decided transaction (nonce, gas, fees as 0x
// hex) and gets back signed bytes `{ raw }` or, from a wallet that sends
// by itself, `{ hash }`. Keys stay inside the caller's signer.

function invalidSigner(message) {
  return new InvalidSignerError({ kind: 'invalidSigner', code: -32602, message });
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
function knownSigner(signer) {
  return signer !== null && typeof signer === 'object' ? adaptedSigners.get(signer) : undefined;
}

/**
 * Adapts `signer` (cached per object for ethers signers and viem accounts). Throws InvalidSignerError for anything
 * that is none of the three kinds (before a nonce is taken).
 */
async function adaptSigner(signer) {
  if (signer === null || typeof signer !== 'object') {
    throw invalidSigner('the signer must be an ethers Signer, a viem local account or an EIP-1193 wallet');
  }
  const cached = adaptedSigners.get(signer);
  if (cached) return cached;
  if (typeof signer.signTransaction === 'function' && typeof signer.address === 'string' && signer.type === 'local') {
    const adapted = { address: signer.address, kind: 'viem', sign: async (tx) => checkedRaw(await signer.signTransaction(viemTx(tx))) };
    adaptedSigners.set(signer, adapted);
    return adapted;
  }
  if (typeof signer.signTransaction === 'function' && typeof signer.getAddress === 'function') {
    const address = await signer.getAddress();
    const adapted = { address, kind: 'ethers', sign: async (tx) => checkedRaw(await signer.signTransaction(ethersTx(tx))) };
    adaptedSigners.set(signer, adapted);
    return adapted;
  }
  if (typeof signer.request === 'function') {
    let address = typeof signer.address === 'string' ? signer.address : undefined;
    if (!address) {
      const accounts = await signer.request({ method: 'eth_accounts' });
      address = Array.isArray(accounts) ? accounts[0] : undefined;
    }
    if (typeof address !== 'string') throw invalidSigner('the EIP-1193 wallet has no account (eth_accounts is empty)');
    return {
      address,
      kind: 'wallet',
      sign: async (tx) => {
        const hash = await signer.request({ method: 'eth_sendTransaction', params: [walletTx(tx)] });
        if (typeof hash !== 'string') throw invalidSigner('the wallet returned no transaction hash');
        return { hash };
      },
    };
  }
  throw invalidSigner('the signer must be an ethers Signer (getAddress + signTransaction), a viem local account (address + signTransaction) or an EIP-1193 wallet (request)');
}
