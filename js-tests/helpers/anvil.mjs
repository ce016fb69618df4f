// Starts and stops a real local Ethereum node: anvil from the npm package
// @foundry-rs/anvil, run by its binary (not through npx, whose wrapper
// would leave anvil orphaned) and stopped by PID.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const ANVIL_BIN = join(root, 'node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// Every anvil still running, killed by one exit handler if this process dies first.
const running = new Set();
process.once('exit', () => { for (const child of running) if (child.exitCode === null) child.kill('SIGKILL'); });

/**
 * Starts anvil on 127.0.0.1; `args` are extra flags (e.g. ['--block-time', '1']); `head` blocks are mined
 * at once first (anvil_mine), so the chain starts far past block 0 as every real chain is.
 */
export async function startAnvil(args = [], { head = 0 } = {}) {
  if (!existsSync(ANVIL_BIN)) throw new Error(`anvil not found at ${ANVIL_BIN}; run scripts/setup.sh`);
  const port = await freePort();
  const child = spawn(ANVIL_BIN, ['--host', '127.0.0.1', '--port', String(port), '--silent', ...args], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  // If this process dies (an uncaught error), anvil must not outlive it.
  running.add(child);
  child.once('exit', () => running.delete(child));
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil exited with ${child.exitCode}`);
    try {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' });
      if (r.ok) break;
    } catch { /* not up yet */ }
    if (Date.now() - started > 15000) { await stop(); throw new Error('anvil did not start within 15 s'); }
    await new Promise((r) => setTimeout(r, 50));
  }
  if (head > 0) {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: [`0x${head.toString(16)}`] }) });
    if (!r.ok) { await stop(); throw new Error(`anvil_mine failed: ${r.status}`); }
  }
  return { url, pid: child.pid, stop };
}
