// Healthy-path overhead: requests/second and client CPU per request, at
// several concurrency levels, against a fast loopback node in another process.
//
// Each client is measured in a fresh Node process of its own (this file run
// as a script), so no client inherits another's heap, timers or JIT state:
// sharing one process, the order in which clients ran moved a client's
// figure by up to 30 %. In that process the client is warmed up (connections,
// network detection, JIT; for us the wasm tier-up), then every level runs
// twice and the better pass counts.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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

/** One client in this process: `{ [level]: { rps, cpuUs, failed } }`. */
async function measureHere(name, url, requests, levels, passes = 2) {
  const { CLIENTS } = await import('./clients.mjs');
  const client = await CLIENTS[name].make([url]);
  const warm = Math.min(500, requests);
  for (let i = 0; i < warm; i += 8) {
    await Promise.all(Array.from({ length: 8 }, (_, k) => client.read(500000 + i + k).catch(() => {})));
  }
  const row = {};
  for (const level of levels) {
    for (let pass = 0; pass < passes; pass += 1) {
      const m = await measure(client, level, requests);
      if (!row[level] || m.rps > row[level].rps) row[level] = m;
    }
  }
  await client.close();
  return row;
}

export async function overhead(fleet, { requests, levels }) {
  const { CLIENTS } = await import('./clients.mjs');
  const rows = [];
  for (const [name, spec] of Object.entries(CLIENTS)) {
    if (spec.wellConfigured) continue;
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), name, fleet.urls[0], String(requests), levels.join(',')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    rows.push({ name, ...JSON.parse(out.trim().split('\n').pop()) });
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [name, url, requests, levels] = process.argv.slice(2);
  const row = await measureHere(name, url, Number(requests), levels.split(',').map(Number));
  console.log(JSON.stringify(row));
  process.exit(0);
}
