// The transaction module (docs/architecture.md): the engine is its own wasm
// instance, loaded on a relayer's first transaction call, so an app that
// only reads never downloads it. Each entry point gives its loader, which
// gives `{ tx, signers }`: the module's glue and the signer adapters
// (signers.js; a page downloads them with the module). Node loads them
// synchronously (the first call goes on at once), pages import them (the
// first call waits for them; later calls find them loaded).

/**
 * The module of one entry point, loaded at most once, and the fleet's
 * nonce book (`attachFleetNonces`), which a store may attach before the
 * module is loaded: it is handed over when it is.
 */
export function txModuleHub(load, synchronous = false) {
  let module = null;
  let loading = null;
  let book = null;
  const loaded = (m) => {
    module = m;
    if (book) m.tx.attachFleetNonces(book);
    return m;
  };
  return {
    /** The module if it is loaded, or loads synchronously (Node); else `null`, and nothing starts. */
    now() {
      return module ?? (synchronous ? this.load() : null);
    },
    /** The module (loaded now), or a promise of it. */
    load() {
      if (module) return module;
      if (!loading) {
        const got = load();
        if (typeof got?.then !== 'function') return loaded(got);
        loading = got.then(loaded);
        loading.catch(() => { loading = null; }); // a failed import is tried again by the next call
      }
      return loading;
    },
    /** A store's nonce book: shared sends take their nonces from it. */
    attachBook(call) {
      book = call;
      module?.tx.attachFleetNonces(call);
    },
    /** The store closed: shared sends fail from now on (never a guessed nonce). */
    detachBook() {
      book = null;
      module?.tx.detachFleetNonces();
    },
  };
}
