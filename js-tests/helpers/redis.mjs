// A redis-server of the test's own on 127.0.0.1 (a free port, no persistence), stopped by PID.
// Never a system service: each test file starts, kills and restarts its own.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { createClient } from 'redis';

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const until = async (ok, ms, what) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
};

const answers = (port) => new Promise((resolve) => {
  const socket = net.connect(port, '127.0.0.1');
  socket.once('connect', () => { socket.write('PING\r\n'); });
  // Up is any answer: a server with a password answers PING with NOAUTH.
  socket.once('data', (d) => { socket.destroy(); resolve(/^(\+PONG|-NOAUTH)/.test(d.toString())); });
  socket.once('error', () => resolve(false));
});

/**
 * Starts redis-server; `stop()` kills it (SIGKILL: a crash, not a shutdown) and `start()` brings
 * a new, empty one up on the same port. `url` stays the same across restarts.
 */
export async function startRedis({ port, password } = {}) {
  port = port || await freePort();
  const auth = password ? ['--requirepass', password] : [];
  let child = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...auth],
      { stdio: 'ignore' });
    await until(() => answers(port), 10000, `redis-server on ${port}`);
  };
  const stop = async () => {
    if (!child) return;
    const dying = child;
    child = null;
    const exited = new Promise((r) => dying.once('exit', r));
    dying.kill('SIGKILL');
    await exited;
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, start, stop, pid: () => child && child.pid };
}

/**
 * How many Lua scripts the Redis server at `url` has run, by digest (EVALSHA) and whole (EVAL):
 * the fleet's store round trips. `kinds`: `{ eval, evalsha }` instead of their sum.
 */
export async function scriptCalls(url, kinds = false) {
  const admin = createClient({ url });
  await admin.connect();
  const info = await admin.info('commandstats');
  await admin.close();
  const count = (name) => Number((new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info) || [0, 0])[1]);
  const calls = { eval: count('eval'), evalsha: count('evalsha') };
  return kinds ? calls : calls.eval + calls.evalsha;
}

/**
 * Watches every command the Redis server at `port` runs (MONITOR on a raw socket: what the
 * processes under test really sent). `scripts()`: each Lua script call seen so far as
 * `{ keys, args }` (strings), in order; `stop()` closes the watch.
 */
export async function monitor(port) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  let text = '';
  socket.on('data', (d) => { text += d.toString(); });
  socket.on('error', () => {});
  socket.write('MONITOR\r\n');
  await until(() => text.startsWith('+OK'), 2000, 'MONITOR');
  const scripts = () => text.split('\r\n')
    .map((line) => [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]))
    .filter((words) => /^(eval|evalsha)$/i.test(words[0] || ''))
    .map((words) => {
      const n = Number(words[2]);
      return { keys: words.slice(3, 3 + n), args: words.slice(3 + n) };
    });
  return { scripts, stop: () => socket.destroy() };
}
