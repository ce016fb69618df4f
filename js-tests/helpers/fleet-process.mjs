// Runs one worker process of a fleet on the packed build; resolves with its report (its last
// stdout line, JSON). fleet-worker.mjs reads, tx-fleet-worker.mjs sends transactions.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PKG = new URL('../../pkg/dist/node.mjs', import.meta.url).href;
const worker = (name) => fileURLToPath(new URL(`./${name}`, import.meta.url));

/** Runs helpers/`name` with `config` (plus the package's path); resolves with its report. */
export function runWorker(name, config, timeoutMs = 60000) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [worker(name), JSON.stringify({ pkg: PKG, ...config })], { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (process.env.TRACE) process.stderr.write(stderr);
      if (error) return reject(new Error(`${error.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

/** One reading process (fleet-worker.mjs). */
export const fleetProcess = (config) => runWorker('fleet-worker.mjs', config);

/** One process sending from an account (tx-fleet-worker.mjs). */
export const txProcess = (config) => runWorker('tx-fleet-worker.mjs', config, 300000);
