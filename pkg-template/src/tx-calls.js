// The transaction calls of a relayer (the public methods in relayer.js
// delegate here): argument checks, then the engine of the transaction
// module (tx-module.js) and its signer adapters (signers.js), made on the
// first call. Errors are typed as the relayer's own (descriptors.js).

import { InvalidSignerError, NonceStateError, isBreakwaterError } from './errors.js';
import { engineCall, raise } from './descriptors.js';
import { invalid } from './calls.js';

/**
 * The transaction side of `relayer` (its `WasmRelayer`): its engine, made on the first call,
 * hears `listener` and the relayer's `transactions` option (checked by the relayer already).
 */
export function txSideFor(hub, relayer, listener, options) {
  const transactions = options !== null && typeof options === 'object' ? options.transactions : undefined;
  return new TxSide(hub, (m) => engineCall(() => new m.tx.WasmTxEngine(relayer, listener, transactions)),
    (address) => engineCall(() => relayer.checkTxAddress(address)));
}

/** One relayer's transaction engine, made on its first transaction call by `make(module)`. */
export class TxSide {
  #hub;
  #make;
  #checkAddress;
  #engine = null;
  #signers = null; // signers.js, loaded with the module
  #pending = null;
  #members = [];

  /**
   * `make(module)` builds the engine;
   * `checkAddress(address)` throws what the engine would for a bad account address.
   */
  constructor(hub, make, checkAddress) {
    this.#hub = hub;
    this.#make = make;
    this.#checkAddress = checkAddress;
  }

  /** The engine if it is made or can be made now (its module loaded, or loading synchronously); else `null`. */
  sync() {
    if (this.#engine) return this.#engine;
    const module = this.#hub.now();
    return module ? this.#build(module) : null;
  }

  /** This relayer's sends take their nonces from the store's book, under `member`. */
  shareNonces(member) {
    this.#members.push(member);
    this.#engine?.shareNonces(member);
  }

  /**
   * `use(engine, signers)`: at once when the engine is made or its module
   * loads synchronously, else once it has loaded. Calls waiting for the
   * load run in the order they were made (an account's nonces follow call
   * order).
   */
  with(use) {
    if (this.#engine) return use(this.#engine, this.#signers);
    const got = this.#hub.load();
    if (typeof got?.then !== 'function') return use(this.#build(got), this.#signers);
    if (!this.#pending) {
      this.#pending = got.then((m) => this.#engine ?? this.#build(m));
      this.#pending.catch(() => { this.#pending = null; }); // a failed load is tried again by the next call
    }
    return this.#pending.then((engine) => use(engine, this.#signers));
  }

  /**
   * sendTransactionWithSpeedup: not async, so the engine takes this call's place in the account's
   * nonce order now (or, while the module loads, in the order of the calls waiting for it).
   */
  send(signer, tx, maxWaitBlockCount, options) {
    try {
      return engineCall(() => this.with((engine, signers) => {
        const adapted = signers.adaptSigner(signer);
        adapted.catch(() => {}); // the engine may refuse the request before it awaits the signer
        return engine.sendTransaction(adapted, tx, maxWaitBlockCount, options);
      }));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** cancelTransaction. */
  async cancel(signer, target, options) {
    if (target === null || typeof target !== 'object') throw invalid('cancelTransaction() takes { nonce } or { hash }', 'target');
    // Hand the cancel to the nonce's watcher before anything awaits, so a
    // speed-up being signed right now is dropped unsent and the cancel wins.
    const early = this.#signers?.knownSigner(signer);
    if (early && Number.isSafeInteger(target.nonce)) {
      this.#engine?.requestCancel(early.address, target.nonce, target.chainId ?? Number.NaN);
    }
    const adapted = await this.with((_, signers) => signers.adaptSigner(signer));
    let chainId = target.chainId;
    if (chainId === undefined) chainId = await engineCall(() => this.with((engine) => engine.signingChain()));
    let { nonce } = target;
    if (nonce === undefined && typeof target.hash === 'string') {
      const wanted = target.hash.toLowerCase();
      const entry = (await this.with(() => this.pending(chainId, adapted.address))).find((p) => p.hashes.includes(wanted));
      if (!entry) {
        throw new NonceStateError({ kind: 'nonceState', code: -32602, hash: target.hash,
          message: `no pending transaction with hash ${target.hash} is tracked by this relayer` });
      }
      nonce = entry.nonce;
    }
    if (!Number.isSafeInteger(nonce) || nonce < 0) throw invalid('`nonce` must be a non-negative integer', 'nonce');
    return engineCall(() => this.with((engine) => engine.cancelTransaction(adapted, chainId, nonce, options)));
  }

  /** submitRaw. */
  async submitRaw(raw) {
    if (typeof raw !== 'string') throw invalid('submitRaw() takes signed 0x hex bytes', 'raw');
    return engineCall(() => this.with((engine) => engine.submitRaw(raw)));
  }

  /** waitForReceipt. */
  async waitForReceipt(hash, options = {}) {
    if (typeof hash !== 'string') throw invalid('waitForReceipt() takes a transaction hash', 'hash');
    if (options === null || typeof options !== 'object') throw invalid('options must be an object', 'options');
    const { timeoutMs = 0, ...rest } = options;
    if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)) throw invalid('`timeoutMs` must be a non-negative number', 'timeoutMs');
    return engineCall(() => this.with((engine) => engine.waitForReceipt(hash, rest, timeoutMs)));
  }

  /** resumeTransactions. */
  async resume(account, options = {}) {
    if (options === null || typeof options !== 'object') throw invalid('options must be an object', 'options');
    const { chainId = Number.NaN, maxWaitBlockCount = 3, ...rest } = options;
    const target = typeof account === 'string' ? { address: account } : await this.with((_, signers) => signers.adaptSigner(account));
    const found = await engineCall(() => this.with((engine) => engine.resumeTransactions(target, chainId, maxWaitBlockCount, rest)));
    for (const entry of found.adopted) {
      entry.outcome = entry.outcome.then(undefined, raise);
      entry.outcome.catch(() => {}); // the caller may never ask
    }
    return found;
  }

  /** waitForTransaction. */
  async waitForTransaction(target) {
    if (target === null || typeof target !== 'object') throw invalid('waitForTransaction() takes { nonce, from } or { hash }', 'target');
    return engineCall(() => this.with((engine) => engine.waitForTransaction(target)));
  }

  /** pendingTransactions: synchronous; a page before its first transaction call has nothing pending. */
  pending(chainId, address) {
    const engine = this.sync();
    if (engine) return engineCall(() => engine.pendingTransactions(chainId, address));
    this.#checkAddress(address); // the engine's own rules (EIP-55 included), from the relayer's module
    return [];
  }

  #build(module) {
    module.signers.bindErrors({ InvalidSignerError, isBreakwaterError });
    this.#signers = module.signers;
    const engine = this.#make(module);
    for (const member of this.#members) engine.shareNonces(member);
    this.#engine = engine;
    return engine;
  }
}
