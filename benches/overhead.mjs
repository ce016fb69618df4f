// Healthy-path overhead: requests/second and client CPU per request, at
// several concurrency levels, against a fast loopback node in another process.
//
// Fairness: every client is warmed up before anyone is measured (the first
// client measured in a process otherwise pays alone for undici's and V8's
// warm-up), and each level runs in two passes interleaved across clients;
// a client's figure is its better pass.
import { CLIENTS } from './clients.mjs';

async function measure(client, level, requests) {
  let next = 0;
  let failed = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: level }, async () => {
    while (next < requests) {
      const i = next++;
      await client.read(1000 + i).catch(() => { failed += 1; });
    }
  }));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return { rps: requests / seconds, cpuUs: (cpu.user + cpu.system) / requests, failed };
}

export async function overhead(fleet, { requests, levels, passes = 2 }) {
  const clients = [];
  for (const [name, spec] of Object.entries(CLIENTS)) {
    if (!spec.wellConfigured) clients.push({ name, client: await spec.make([fleet.urls[0]]) });
  }
  // Warm-up for everyone alike: connections, network detection, JIT (and
  // for us the wasm tier-up), so the table compares steady states.
  const warm = Math.min(500, requests);
  for (const { client } of clients) {
    for (let i = 0; i < warm; i += 8) {
      await Promise.all(Array.from({ length: 8 }, (_, k) => client.read(500000 + i + k).catch(() => {})));
    }
  }
  const rows = clients.map(({ name }) => ({ name }));
  for (const level of levels) {
    for (let pass = 0; pass < passes; pass += 1) {
      for (const [k, { client }] of clients.entries()) {
        const m = await measure(client, level, requests);
        if (!rows[k][level] || m.rps > rows[k][level].rps) rows[k][level] = m;
      }
    }
  }
  for (const { client } of clients) await client.close();
  return rows;
}

export function overheadTable(rows, levels) {
  const base = rows.find((r) => r.name === 'raw fetch');
  let out = `| client | ${levels.map((l) => `req/s @${l} (× raw fetch)`).join(' | ')} | CPU µs/req @${levels[levels.length - 1]} |\n`;
  out += `|---|${levels.map(() => '---').join('|')}|---|\n`;
  for (const r of rows) {
    const cells = levels.map((l) => `${r[l].rps.toFixed(0)} (${(r[l].rps / base[l].rps).toFixed(2)})${r[l].failed ? ` ⚠ ${r[l].failed} failed` : ''}`);
    out += `| ${r.name} | ${cells.join(' | ')} | ${r[levels[levels.length - 1]].cpuUs.toFixed(0)} |\n`;
  }
  return out;
}
