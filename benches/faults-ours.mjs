// The fault scenarios of benches/faults.mjs for breakwater-rpc alone, with the same load
// (20 independent instances × 10 req/s × 6 s against 3 loopback nodes in their own process):
// a quick check of our own rows between full runs of `node benches/run.mjs`, which measures
// every peer too. Prints the table and writes it to benches/FAULTS.md.
//
//   node benches/faults-ours.mjs
import { writeFileSync } from 'node:fs';
import { startFleet } from './fleet-client.mjs';
import { faults, faultsTable } from './faults.mjs';

const fleet = await startFleet(3);
try {
  const results = await faults(fleet, { clients: 20, rate: 10, seconds: 6, grace: 12000 }, ['breakwater-rpc', 'breakwater-rpc (chainId: 1)']);
  const table = faultsTable(results);
  console.log(table);
  const when = new Date().toISOString().slice(0, 10);
  writeFileSync(new URL('./FAULTS.md', import.meta.url), `# Faults, breakwater-rpc alone\n\n\`node benches/faults-ours.mjs\`, run of ${when} on this repository's 2-core machine (Node ${process.version}); the same scenarios and load as the faults table of RESULTS.md (\`node benches/run.mjs\`, every peer).\n\n${table}`);
} finally {
  await fleet.stop?.();
}
process.exit(0);
