// Healthy-path overhead: requests/second and client CPU per request, at
// several concurrency levels, against a fast loopback node in another process.
import { CLIENTS } from './clients.mjs';

export async function overhead(fleet, { requests, levels }) {
  const rows = [];
  for (const [name, spec] of Object.entries(CLIENTS)) {
    if (spec.wellConfigured) continue;
    const client = await spec.make([fleet.urls[0]]);
    // Warm-up for everyone alike: connections, network detection, JIT (and
    // for us the wasm tier-up), so the table compares steady states.
    const warm = Math.min(500, requests);
    for (let i = 0; i < warm; i += 8) {
      await Promise.all(Array.from({ length: 8 }, (_, k) => client.read(500000 + i + k).catch(() => {})));
    }
    const row = { name };
    for (const level of levels) {
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
      row[level] = { rps: requests / seconds, cpuUs: (cpu.user + cpu.system) / requests, failed };
    }
    await client.close();
    rows.push(row);
  }
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
