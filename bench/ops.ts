// Issue 15 benchmark: what the operability features cost per request on the authenticated route
// of bench/foundation.ts: Prometheus metrics (METRICS_TOKEN: one histogram observation per
// request), shared rate limits (per key and per IP in the database, leased in blocks), and both,
// each against the same pipeline without them, in alternating rounds of one run (paired ratios).
// BENCH_SECONDS (default 2) and BENCH_ROUNDS (default 3) size it; BENCH_DB=sqlite|postgres picks one.
import { benchDatabases, cpuSeconds, fmt, load, startChild, type ChildServer } from './lib/harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// limits high enough never to refuse: what is measured is the counting
const LIMITS = { RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_IP_PER_MINUTE: '10000000', RATE_LIMIT_STORE: 'database' };
const METRICS = { METRICS_TOKEN: 'bench-metrics-token-0123456789' };

interface Target {
  name: string;
  server: ChildServer;
  rps: number[];
  cpuUs: number[];
  failed: number;
}

console.log(`# ops: per-request cost of metrics and shared rate limits on the authenticated route (autocannon, 50 connections, ${rounds} alternating rounds of ${seconds}s)`);
for (const db of await benchDatabases()) {
  const database = db.make();
  const variants: Array<[string, Record<string, string>]> = [
    ['baseline (neither)', {}],
    ['metrics on', METRICS],
    ['shared rate limits on', LIMITS],
    ['metrics + rate limits', { ...METRICS, ...LIMITS }],
  ];
  const targets: Target[] = [];
  for (const [name, env] of variants) {
    targets.push({ name: `${name} (${db.name})`, server: await startChild('bench/lib/servers.ts', ['gated'], { ...database.env, ...env }), rps: [], cpuUs: [], failed: 0 });
  }
  const url = (t: Target) => `http://127.0.0.1:${t.server.port}/api/v0/ping`;
  const headers = (t: Target) => ({ 'x-api-key': t.server.extra[0] });
  for (const t of targets) await load({ url: url(t), headers: headers(t), seconds: 1 }); // warm-up
  for (let i = 0; i < rounds; i++) {
    for (const t of targets) {
      const before = cpuSeconds(t.server.child.pid!);
      const r = await load({ url: url(t), headers: headers(t), seconds });
      t.cpuUs.push(((cpuSeconds(t.server.child.pid!) - before) * 1e6) / (r.rps * seconds));
      t.rps.push(r.rps);
      t.failed += r.errors + r.non2xx;
    }
  }
  for (const t of targets) await t.server.stop();
  await database.drop();
  const [base] = targets;
  for (const t of targets) {
    const paired = t.rps.map((r, i) => r / base.rps[i]);
    console.log(
      `${t.name.padEnd(36)} ${fmt(median(t.rps)).padStart(7)} req/s  server CPU ${fmt(median(t.cpuUs), 1).padStart(5)} µs/req` +
        (t === base ? '' : `  rate ${fmt(median(paired), 2)}x baseline [${paired.map((r) => fmt(r, 2)).join(' ')}], CPU +${fmt(median(t.cpuUs) - median(base.cpuUs), 1)} µs/req`) +
        (t.failed ? `  FAILED REQUESTS: ${t.failed}` : ''),
    );
  }
}
