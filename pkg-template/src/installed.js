// Whether an optional package (node-redis for a fleet on Redis) can be loaded from where the
// package sits, asked at construction so a missing one is a ConfigError, not a store that never
// comes up. Node only (`require` is the entry's); a package found by other means than require's
// (an ESM-only one whose exports name no `require`) counts as there: its import will tell.

/** `name` -> whether it resolves from the entry's `require`. */
export function installed(require) {
  const seen = new Map();
  return (name) => {
    if (!seen.has(name)) {
      let found = true;
      try {
        require.resolve(name);
      } catch (error) {
        found = !(error && error.code === 'MODULE_NOT_FOUND');
      }
      seen.set(name, found);
    }
    return seen.get(name);
  };
}
