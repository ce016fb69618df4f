// One 'abort' listener per signal, however many calls wait on it: Node warns of a possible
// leak past ten listeners on one EventTarget, and an app that passes one AbortSignal to its
// calls (a page's or a job's) has many in flight at once (a new user saw the warning from six
// concurrent calls: each added its own listeners, one per call and one per HTTP exchange).

const watchers = new WeakMap();

/**
 * Calls `fn` when `signal` aborts (never if it already has: check `signal.aborted` first).
 * Returns the function that stops watching.
 */
export function onAbort(signal, fn) {
  let all = watchers.get(signal);
  if (!all) {
    const set = new Set();
    all = set;
    watchers.set(signal, set);
    signal.addEventListener('abort', () => {
      for (const w of [...set]) w();
      set.clear();
    }, { once: true });
  }
  all.add(fn);
  return () => all.delete(fn);
}
