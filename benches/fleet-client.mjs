// The harness side of the fleet process: start, control, read counters.
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export async function startFleet(nodes) {
  const child = fork(join(here, 'fleet.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let next = 1;
  const waiting = new Map();
  child.on('message', (m) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error) w.reject(new Error(m.error)); else w.resolve(m);
  });
  const call = (msg) => new Promise((resolve, reject) => {
    const id = next++;
    waiting.set(id, { resolve, reject });
    child.send({ ...msg, id });
  });
  const { ports } = await call({ cmd: 'start', nodes });
  return {
    urls: ports.map((p) => `http://127.0.0.1:${p}`),
    mode: (node, mode) => call({ cmd: 'mode', node, mode }),
    quota: (key, rps) => call({ cmd: 'quota', key, rps }),
    reset: (options = {}) => call({ cmd: 'reset', keepModes: Boolean(options.keepModes) }),
    counters: async () => (await call({ cmd: 'counters' })).counters,
    stop: () => { child.kill('SIGKILL'); },
  };
}
