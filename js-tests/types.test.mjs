// The published types compile under `tsc --strict` in a consumer project
// that uses every public API (ESM and CommonJS resolution).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

function check(moduleKind, fileName, packageType, extra = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'breakwater-types-'));
  try {
    mkdirSync(join(dir, 'node_modules'), { recursive: true });
    cpSync(join(root, 'pkg'), join(dir, 'node_modules/breakwater-rpc'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: packageType }));
    cpSync(join(root, 'js-tests/types/consumer.ts'), join(dir, fileName));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, module: moduleKind, moduleResolution: moduleKind, target: 'es2022',
        lib: ['es2022', 'dom'], types: [], skipLibCheck: false, noUncheckedIndexedAccess: true, ...extra,
      },
      files: [fileName],
    }));
    return execFileSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    assert.fail(`tsc (${moduleKind}, ${fileName}) failed:\n${e.stdout}${e.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('types compile under --strict for an ESM consumer', () => {
  check('node16', 'consumer.mts', 'module');
});

test('types compile under --strict for a CommonJS consumer', () => {
  check('node16', 'consumer.ts', 'commonjs');
});

test('types compile under --exactOptionalPropertyTypes (an unset environment variable, null options)', () => {
  check('node16', 'consumer.mts', 'module', { exactOptionalPropertyTypes: true });
});

test('ethers v6 and viem types fit the relayer both ways under --strict', () => {
  // Inside the repository, so `ethers` and `viem` resolve to the workspace's real packages.
  const dir = join(root, 'js-tests/.tmp/types-interop');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  try {
    cpSync(join(root, 'pkg'), join(dir, 'node_modules/breakwater-rpc'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'interop', private: true, type: 'module' }));
    cpSync(join(root, 'js-tests/types/interop.mts'), join(dir, 'interop.mts'));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, module: 'node16', moduleResolution: 'node16', target: 'es2022',
        lib: ['es2022', 'dom'], types: [], skipLibCheck: true,
      },
      files: ['interop.mts'],
    }));
    execFileSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    assert.fail(`tsc (interop) failed:\n${e.stdout}${e.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
