// Which optional packages the Node entries treat as installed (a fleet on
// Redis asks for node-redis at construction): every way require.resolve
// answers, on real packages laid out in a temporary node_modules.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installed } from '../pkg-template/src/installed.js';

const dir = mkdtempSync(join(tmpdir(), 'bw-installed-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function pkg(name, manifest, files) {
  const at = join(dir, 'node_modules', name);
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, 'package.json'), JSON.stringify({ name, version: '1.0.0', ...manifest }));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(at, file), text);
}

pkg('plain', { main: 'index.js' }, { 'index.js': 'module.exports = 1;' });
// ESM only: its exports name no `require`, so require.resolve throws ERR_PACKAGE_PATH_NOT_EXPORTED.
pkg('esm-only', { type: 'module', exports: { import: './index.js' } }, { 'index.js': 'export default 1;' });

test('a package require can resolve is installed; one nowhere is not', () => {
  const has = installed(createRequire(join(dir, 'app.js')));
  assert.equal(has('plain'), true);
  assert.equal(has('absent-package'), false);
});

test('an ESM-only package (resolve refuses it, not for want of it) counts as installed: its import will tell', () => {
  const require = createRequire(join(dir, 'app.js'));
  assert.throws(() => require.resolve('esm-only'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
  assert.equal(installed(require)('esm-only'), true);
});

test('each name is resolved once per entry', () => {
  let asked = 0;
  const require = createRequire(join(dir, 'app.js'));
  const counting = { resolve: (name) => { asked += 1; return require.resolve(name); } };
  const has = installed(counting);
  assert.equal(has('absent-package'), false);
  assert.equal(has('absent-package'), false);
  assert.equal(has('plain'), true);
  assert.equal(asked, 2);
});
