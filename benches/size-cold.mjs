// Size and cold start alone (the last two tables of run.mjs, in one run,
// against a loopback node): `node benches/size-cold.mjs [--runs N]`. For a
// change that moves only what a page downloads; RESULTS.md stays run.mjs's.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sizes, sizeTable } from './size.mjs';
import { coldStart, coldTable } from './coldstart.mjs';
import { startMockNode } from '../js-tests/helpers/mock-node.mjs';

const at = process.argv.indexOf('--runs');
const runs = at > 0 ? Number(process.argv[at + 1]) : 21;
const node = await startMockNode([{ result: '0x10' }]);
try {
  const size = await sizes(mkdtempSync(join(tmpdir(), 'bw-size-')));
  const cold = await coldStart(node.url, size, runs);
  console.log(`${sizeTable(size)}\n\n## Cold start: import, or a page's load, to the first answered call (median of ${runs})\n\n${coldTable(cold)}`);
} finally {
  await node.close();
}
