// A relayer's EIP-1193 connection state, from its breakers: `connect` { chainId } once a node
// answered, `disconnect` (a 4900 ClosedError) when every endpoint's breaker is open or the relayer
// closes, `connect` again when one closes after an outage. Relayers of one realm on the same nodes
// share their breakers, and an attempt that flips one tells only its own relayer: a breaker event
// makes the realm's other connections read their breakers again (`realm.changed`).
import { ClosedError } from './errors.js';

const disconnect = (message) => {
  const error = new ClosedError({ kind: 'closed', code: 4900, message });
  return { type: 'disconnect', error, code: 4900, message };
};

/** The connections of one realm (a wasm instance), held weakly. */
export function connectionRealm() {
  const members = new Set();
  return {
    join(connection) {
      const ref = new WeakRef(connection);
      members.add(ref);
      return () => members.delete(ref);
    },
    /** `from` saw a breaker change: the others look at theirs. */
    changed(from) {
      for (const ref of members) {
        const other = ref.deref();
        if (other === undefined) members.delete(ref);
        else if (other !== from) other.lookAgain();
      }
    },
  };
}

export class Connection {
  #emit;
  #endpointCount;
  #breakerStates;
  #chainId;
  #connected = false;
  #down = false; // every breaker open: disconnect was emitted, connect not yet again
  #open = new Set();
  #closed = false;

  /**
   * `emit(event)` delivers `connect` / `disconnect`; `endpointCount()` and `breakerStates()` (each
   * endpoint's breaker state, in order) read the engine.
   */
  constructor(emit, endpointCount, breakerStates) {
    this.#emit = emit;
    this.#endpointCount = endpointCount;
    this.#breakerStates = breakerStates;
  }

  get connected() {
    return this.#connected;
  }

  /** A node told the chain id: `connect`, unless connected already, closed, or every breaker open. */
  markConnected(chainId) {
    if (typeof chainId === 'string') this.#chainId = chainId;
    if (this.#connected || this.#closed || this.#down || this.#chainId === undefined) return;
    this.#connected = true;
    this.#emit({ type: 'connect', chainId: this.#chainId });
  }

  /** One of this relayer's breaker events. */
  onBreaker(event) {
    if (event.to === 'open') this.#open.add(event.endpoint);
    else this.#open.delete(event.endpoint);
    this.#settle(event.to === 'closed');
  }

  /** Another relayer of the realm saw a breaker change: ours may be shared, so read them. */
  lookAgain() {
    if (this.#closed) return;
    const states = this.#breakerStates();
    const open = new Set(states.flatMap((state, i) => (state === 'open' ? [i] : [])));
    if (open.size === this.#open.size && [...open].every((i) => this.#open.has(i))) return;
    const oneClosed = [...this.#open].some((i) => !open.has(i) && states[i] === 'closed');
    this.#open = open;
    this.#settle(oneClosed);
  }

  /** The relayer closes: `disconnect` if it was connected; nothing after. */
  close() {
    if (this.#connected) this.#emit(disconnect('the relayer is closed'));
    this.#connected = false;
    this.#closed = true;
  }

  #settle(oneClosed) {
    const all = this.#open.size > 0 && this.#open.size >= this.#endpointCount();
    // Whether or not anyone listened for `connect` first: an app that only
    // listens for `disconnect` must hear about a total outage.
    if (all && !this.#down) {
      this.#down = true;
      this.#connected = false;
      if (!this.#closed) this.#emit(disconnect('every endpoint is unreachable (all breakers open)'));
    } else if (!all && oneClosed) {
      this.#down = false;
      this.markConnected(this.#chainId);
    }
  }
}
