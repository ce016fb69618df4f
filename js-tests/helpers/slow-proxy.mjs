// A slow store: a TCP proxy on 127.0.0.1 to `port` that holds every chunk `lo`-`hi` ms (random,
// `hi` defaults to `lo`) each way, in order (a later chunk never overtakes an earlier one).
import net from 'node:net';

export async function slowProxy(port, lo, hi = lo) {
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    const relay = (from, to) => {
      let last = 0;
      from.on('data', (d) => {
        last = Math.max(last, Date.now() + lo + Math.random() * (hi - lo));
        setTimeout(() => to.writable && to.write(d), last - Date.now());
      });
    };
    relay(client, upstream);
    relay(upstream, client);
    const end = () => { client.destroy(); upstream.destroy(); };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { port: server.address().port, close: () => new Promise((r) => { server.close(r); }) };
}
