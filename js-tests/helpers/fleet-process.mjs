// Runs one process of a bot fleet (fleet-worker.mjs) on the packed build; resolves with its report.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PKG = new URL('../../pkg/dist/node.mjs', import.meta.url).href;
const WORKER = fileURLToPath(new URL('./fleet-worker.mjs', import.meta.url));

/** One fleet process with `config` (fleet-worker.mjs reads it); resolves with its report line. */
export function fleetProcess(config) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [WORKER, JSON.stringify({ pkg: PKG, ...config })], { timeout: 60000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`${error.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}
