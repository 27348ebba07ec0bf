// Issue 2 benchmark: the cost of the real request pipeline (API-key gate with a database lookup,
// error model, validators) over a bare Fastify route with the same handler, measured in one run.
// Goal: the authenticated route keeps at least 70% of the bare route's request rate.
//
// The machine is small and often shared, so the servers are measured in alternating rounds (bare,
// same pipeline without a key, authenticated, bare, …); the ratio is the median of the per-round
// ratios. Server CPU per request (from /proc) is printed too: it is less sensitive to other load.
import { benchDatabases, cpuSeconds, fmt, load, median, startChild, type ChildServer } from './lib/harness.ts';
import { record } from './lib/record.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);

interface Target {
  name: string;
  server: ChildServer;
  url: string;
  headers?: Record<string, string>;
  rps: number[];
  cpuUs: number[];
  failed: number;
}

async function measure(t: Target) {
  const before = cpuSeconds(t.server.child.pid!);
  const r = await load({ url: t.url, headers: t.headers, seconds });
  const cpu = cpuSeconds(t.server.child.pid!) - before;
  t.rps.push(r.rps);
  t.cpuUs.push((cpu * 1e6) / (r.rps * seconds));
  t.failed += r.errors + r.non2xx;
}

console.log(
  `# foundation: authenticated GET vs bare Fastify (autocannon, 50 connections, ${rounds} alternating rounds of ${seconds}s)`,
);
for (const db of await benchDatabases()) {
  const database = db.make();
  const bareServer = await startChild('bench/lib/servers.ts', ['bare']);
  const gatedServer = await startChild('bench/lib/servers.ts', ['gated'], database.env);
  const targets: Target[] = [
    {
      name: 'bare Fastify route',
      server: bareServer,
      url: `http://127.0.0.1:${bareServer.port}/ping`,
      rps: [],
      cpuUs: [],
      failed: 0,
    },
    {
      name: `same pipeline, no API key (${db.name})`,
      server: gatedServer,
      url: `http://127.0.0.1:${gatedServer.port}/ping-public`,
      rps: [],
      cpuUs: [],
      failed: 0,
    },
    {
      name: `authenticated route (${db.name})`,
      server: gatedServer,
      url: `http://127.0.0.1:${gatedServer.port}/api/v0/ping`,
      headers: { 'x-api-key': gatedServer.extra[0] },
      rps: [],
      cpuUs: [],
      failed: 0,
    },
  ];
  for (const t of targets) await load({ url: t.url, headers: t.headers, seconds: 1 }); // warm-up
  for (let i = 0; i < rounds; i++) for (const t of targets) await measure(t);
  await bareServer.stop();
  await gatedServer.stop();
  await database.drop();
  for (const t of targets) {
    console.log(
      `${t.name.padEnd(32)} ${fmt(median(t.rps)).padStart(7)} req/s  server CPU ${fmt(median(t.cpuUs), 1)} µs/req${t.failed ? `  FAILED REQUESTS: ${t.failed}` : ''}`,
    );
  }
  const [bare, , gated] = targets;
  // Paired: each round's authenticated rate over the same round's bare rate (measured seconds
  // apart, so both see the same machine load); the median of those ratios is the figure.
  const paired = gated.rps.map((r, i) => r / bare.rps[i]);
  console.log(
    `ratio (${db.name}): rate ${fmt(median(paired), 2)} median of ${rounds} paired rounds [${paired.map((r) => fmt(r, 2)).join(' ')}]  (goal >= 0.85);  CPU per request ${fmt(median(gated.cpuUs) / median(bare.cpuUs), 2)}x the bare route`,
  );
  record(`authenticated GET / bare route, rate (${db.name})`, median(paired), { goal: 0.85 });
  record(`authenticated GET / bare route, CPU per request (${db.name})`, median(gated.cpuUs) / median(bare.cpuUs), {
    better: 'lower',
  });
}
