// The fleet's nonce book and pending-transaction journal in IndexedDB, for the tabs and workers
// of one origin (`fleet: { indexedDB: true }`, docs/transactions.md "The journal"): the same
// contract as the Redis script in fleet-nonces.js (model: src/tx/fleet_nonce.rs and
// src/tx/fleet_nonce/journal.rs), the same replies, so the engine cannot tell them apart. Each call
// is one readwrite transaction on one object store: IndexedDB runs overlapping readwrite
// transactions one at a time, across tabs too, which makes every call atomic as a script is.
//
// One record per account (`account`: a hash of chain and address, never a secret):
//   { v, next, out: { n: { kind: 'r' | 'l', member, until } }, holes: [n…], journal: { n: { record, owner, until } } }
// Time is the page's clock (Date.now(): the tabs of one machine share it).
// Loaded on first use (relayer.js): a page imports it (dist/idb-nonces.js) only when a relayer
// asks for `fleet.indexedDB` and sends; Node bundles it.

const LAYOUT = 1;
const STORE = 'books';

function opened(name) {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(name, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB refused to open'));
    request.onblocked = () => reject(new Error('IndexedDB is blocked by another tab'));
  });
}

const bad = () => new Error('bad nonce call');

/** One call on `book` (the account's record, changed in place) at `now`; the script's reply. */
export function applyCall(book, now, op, member, n, record = '', owner = '', lease = 0) {
  if (!member || member.includes('|') || !Number.isSafeInteger(n) || n < 0) throw bad();
  if (book.v !== undefined && book.v !== LAYOUT) return ['layout', String(book.v)];
  let heldUntil = null;
  for (const [key, out] of Object.entries(book.out)) {
    if (out.kind !== 'r') continue;
    if (out.until <= now) {
      delete book.out[key];
      book.holes.push(Number(key));
    } else if (heldUntil === null || out.until < heldUntil) {
      heldUntil = out.until;
    }
  }
  book.holes.sort((a, b) => a - b);
  book.v = LAYOUT;
  const text = String(n);
  const out = book.out[text];
  const hole = (k) => { if (!book.holes.includes(k)) book.holes.push(k); book.holes.sort((a, b) => a - b); };
  const owned = () => book.journal[text] !== undefined && book.journal[text].owner === member;
  switch (op) {
    case 'allocate': {
      if (book.next === null) return ['init'];
      let nonce;
      if (book.holes.length > 0) nonce = book.holes.shift();
      else { nonce = book.next; book.next += 1; }
      book.out[String(nonce)] = { kind: 'r', member, until: now + n };
      return ['ok', String(nonce)];
    }
    case 'live': {
      const journaled = record !== '';
      if (journaled && (!owner || owner.includes('|') || !(lease > 0))) throw bad();
      if (!out || out.member !== member) return ['lost', text];
      book.out[text] = { kind: 'l', member };
      if (journaled) book.journal[text] = { record, owner, until: now + lease };
      return ['ok', text];
    }
    case 'write':
    case 'renew': {
      if (!(lease > 0) || (op === 'write' && record === '')) throw bad();
      if (!owned()) return ['lost', text];
      if (op === 'write') book.journal[text].record = record;
      book.journal[text].until = now + lease;
      return ['ok', text];
    }
    case 'orphans': {
      if (!(lease > 0)) throw bad();
      const reply = ['orphans'];
      for (const [key, kept] of Object.entries(book.journal)) {
        if (kept.until <= now || kept.owner === member) {
          kept.owner = member;
          kept.until = now + lease;
          reply.push(key, kept.record);
        }
      }
      return reply;
    }
    case 'release':
      if (out && out.kind === 'l') return ['live', text];
      if (out && out.kind === 'r' && out.member === member) {
        delete book.out[text];
        hole(n);
        return ['ok', text];
      }
      return ['lost', text];
    case 'abandon':
      delete book.journal[text];
      if (out && out.kind === 'l') {
        delete book.out[text];
        hole(n);
      }
      return ['ok', text];
    case 'settle':
      delete book.journal[text];
      delete book.out[text];
      book.holes = book.holes.filter((h) => h !== n);
      return ['ok', text];
    case 'resync': {
      if (heldUntil !== null) return ['busy', String(heldUntil - now)];
      const to = Math.max(book.next ?? n, n);
      book.next = to;
      book.holes = book.holes.filter((h) => h >= n);
      return ['ok', String(to)];
    }
    default:
      throw bad();
  }
}

/**
 * The book's call for the engine (`wasm.attachFleetNonces`), on the IndexedDB database `name`:
 * `(op, account, member, n, record, owner, leaseMs)` → a promise of the script's reply.
 */
export function indexedDbBook(name = 'breakwater-nonces') {
  let db = null;
  return async (op, account, member, n, record = '', owner = '', leaseMs = 0) => {
    db ??= opened(name);
    const handle = await db.catch((error) => { db = null; throw error; });
    return new Promise((resolve, reject) => {
      const tx = handle.transaction(STORE, 'readwrite');
      const store = tx.objectStore(STORE);
      let reply;
      const read = store.get(account);
      read.onsuccess = () => {
        const book = read.result ?? { next: null, out: {}, holes: [], journal: {} };
        try {
          reply = applyCall(book, Date.now(), op, member, Number(n), record, owner, Number(leaseMs));
        } catch (error) {
          tx.abort(); // a refused call changes nothing
          reject(error);
          return;
        }
        store.put(book, account);
      };
      tx.oncomplete = () => resolve(reply);
      tx.onerror = () => reject(tx.error ?? new Error('IndexedDB transaction failed'));
      tx.onabort = () => reject(tx.error ?? bad());
    });
  };
}
