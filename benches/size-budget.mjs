// The size budget: what a page loads for a minimal read-only app (ours:
// the esbuild bundle plus the .wasm it fetches, gzip), against the figure
// committed in size-budget.json. Fails when it grows more than 5 % past
// it; `--write` commits the figure measured now (after a cut, or a growth
// that was decided on).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sizes } from './size.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const budgetFile = join(here, 'size-budget.json');
const SLACK = 0.05;

// Ours alone: the peers' bundles are for the comparison in size.mjs, not the budget.
const [ours] = await sizes(mkdtempSync(join(tmpdir(), 'bw-budget-')), ['breakwater-rpc']);
if (process.argv.includes('--write')) {
  writeFileSync(budgetFile, `${JSON.stringify({ minimalAppGzipBytes: ours.gz, rawBytes: ours.raw, measured: new Date().toISOString().slice(0, 10) }, null, 2)}\n`);
  console.log(`size budget written: ${ours.gz} bytes gzip`);
} else {
  const { minimalAppGzipBytes: budget } = JSON.parse(readFileSync(budgetFile, 'utf8'));
  const limit = Math.floor(budget * (1 + SLACK));
  const change = ((ours.gz / budget - 1) * 100).toFixed(1);
  console.log(`minimal app: ${ours.gz} bytes gzip (${change >= 0 ? '+' : ''}${change} % against the committed ${budget}; limit ${limit})`);
  // One script, then the .wasm: a chunk shared with the transaction module's glue (esbuild puts
  // its namespace helper there when both make namespace objects) is one more round trip first.
  if (ours.scripts !== 1) {
    console.error(`the minimal app loads ${ours.scripts} scripts before its .wasm, not 1: see pkg-template/src/entries/web.js`);
    process.exit(1);
  }
  // core's str slice panic, whose message formats a char with Debug and so brings Unicode's
  // printable tables (~5 KB gzip with what comes with it): src/text.rs searches and slices without it.
  const wasm = readFileSync(join(here, '../pkg/dist/breakwater_rpc_bg.wasm'));
  if (wasm.includes('is not a char boundary')) {
    console.error("the relayer's module holds core's str slice panic again (`&s[a..b]`, `str::find`/`contains`/`split_once`/`replace` with a &str): use src/text.rs");
    process.exit(1);
  }
  if (ours.gz > limit) {
    console.error(`size budget exceeded: ${ours.gz} > ${limit} bytes gzip. Cut it, or commit the growth with \`node benches/size-budget.mjs --write\`.`);
    process.exit(1);
  }
}
