// Issue 15 benchmark: what the operability features cost per request on the authenticated route
// of bench/foundation.ts: Prometheus metrics (METRICS_TOKEN), shared rate limits (per key and per
// IP, RATE_LIMIT_STORE=database, leased in blocks; on SQLite also the in-memory store), and both,
// each against the same pipeline without them, measured in one run.
//
// Default: CPU time per request in one process (Fastify's inject): process CPU time is what these
// features add. The variants take turns in many short rounds (in a rotating order), and each
// variant's ratio is the median over rounds of its CPU per request against the baseline's in the
// same round: on a shared machine the load drifts within seconds, and a ratio of neighbours in time
// moves far less than one of long rounds minutes apart. Statements sent to the database per request
// are counted too (pg's and better-sqlite3's calls, wrapped in this process only).
// `--http`: request rates over real sockets (autocannon, 50 connections) in alternating rounds.
// BENCH_ROUNDS (default 5; in process 40), BENCH_REQUESTS (inject: per round, default 250),
// BENCH_SECONDS (--http, default 2).
import { benchDatabases, cpuSeconds, fmt, load, median, startChild, type ChildServer } from './lib/harness.ts';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { buildApp } from '../src/server.ts';
import { createApiKey } from '../src/api-keys/storage.ts';
import { record } from './lib/record.ts';
import { loadavg } from 'node:os';
import pg from 'pg';
import Database from 'better-sqlite3';

const http = process.argv.includes('--http');
const rounds = Number(process.env.BENCH_ROUNDS ?? (http ? 5 : 40));
const requests = Number(process.env.BENCH_REQUESTS ?? 250);
const seconds = Number(process.env.BENCH_SECONDS ?? 2);

// limits high enough never to refuse: what is measured is the counting
const LIMITS = { RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_IP_PER_MINUTE: '10000000' };
const METRICS = { METRICS_TOKEN: 'bench-metrics-token-0123456789' };

function variants(db: 'sqlite' | 'postgres'): Array<[string, Record<string, string>]> {
  return [
    ['baseline (neither)', {}],
    ['metrics on', METRICS],
    ...(db === 'sqlite'
      ? [['rate limits, memory store', { ...LIMITS, RATE_LIMIT_STORE: 'memory' }] as [string, Record<string, string>]]
      : []),
    ['rate limits, database store', { ...LIMITS, RATE_LIMIT_STORE: 'database' }],
    ['metrics + database rate limits', { ...METRICS, ...LIMITS, RATE_LIMIT_STORE: 'database' }],
  ];
}

/** Statements sent to either database from this process, counted by wrapping the drivers' calls. */
let statements = 0;
function countStatements() {
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    statements++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, (...a: unknown[]) => unknown>;
  probe.close();
  for (const name of ['run', 'get', 'all', 'iterate']) {
    const original = proto[name];
    proto[name] = function (this: unknown, ...args: unknown[]) {
      statements++;
      return original.apply(this, args);
    };
  }
}

async function inProcess() {
  countStatements();
  console.log(
    `# ops: server CPU per authenticated request, in process (inject; ${rounds} rounds of ${requests} requests per variant, variants in turn; ratio: median of per-round ratios to the baseline)`,
  );
  console.log(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const db of await benchDatabases()) {
    const apps: Array<{
      name: string;
      app: Awaited<ReturnType<typeof buildApp>>;
      ctx: Awaited<ReturnType<typeof createContext>>;
      key: string;
      database: ReturnType<typeof db.make>;
      cpuUs: number[];
      ratios: number[];
      statements: number;
    }> = [];
    for (const [name, env] of variants(db.name)) {
      // each variant on its own database (schema or directory): no shared rows between them
      const database = db.make();
      const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0', RUN_WORKER: 'false', ...database.env, ...env });
      const ctx = await createContext(config);
      const app = await buildApp(ctx, { extend: (a) => a.get('/api/v0/ping', async () => ({ pong: true })) });
      const { key } = await createApiKey(ctx.db, 'bench', Date.now());
      apps.push({ name, app, ctx, key, database, cpuUs: [], ratios: [], statements: 0 });
    }
    const run = async (a: (typeof apps)[number], n: number) => {
      const statementsBefore = statements;
      const before = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        const res = await a.app.inject({ method: 'GET', url: '/api/v0/ping', headers: { 'x-api-key': a.key } });
        if (res.statusCode !== 200) throw new Error(`${a.name}: ${res.statusCode} ${res.body}`);
        // inject can complete without the event loop turning, and each request leaves a socket
        // clean-up in setImmediate: without a turn now and then they pile up (10 KB a request,
        // found by a heap snapshot; 100,000 requests in a row ran out of memory), as a server's
        // loop never lets them
        if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
      }
      const used = process.cpuUsage(before);
      a.statements += statements - statementsBefore;
      return (used.user + used.system) / n;
    };
    for (const a of apps) await run(a, 500); // warm-up
    for (const a of apps) a.statements = 0;
    for (let r = 0; r < rounds; r++) {
      const round = new Map<(typeof apps)[number], number>();
      for (let i = 0; i < apps.length; i++) {
        const a = apps[(r + i) % apps.length];
        round.set(a, await run(a, requests));
      }
      for (const [a, us] of round) {
        a.cpuUs.push(us);
        a.ratios.push(us / round.get(apps[0])!);
      }
    }
    const base = median(apps[0].cpuUs);
    for (const a of apps) {
      const m = median(a.cpuUs);
      const ratio = median(a.ratios);
      const perRequest = a.statements / (rounds * requests);
      console.log(
        `${`${a.name} (${db.name})`.padEnd(44)} ${fmt(m, 1).padStart(6)} µs/req` +
          (a === apps[0] ? '' : `  ${m - base >= 0 ? '+' : ''}${fmt(m - base, 1)} µs (${fmt(ratio, 2)}x baseline)`) +
          `  ${perRequest.toFixed(4)} statements/req`,
      );
      if (a !== apps[0]) record(`${a.name} / baseline, CPU per request (${db.name})`, ratio, { better: 'lower' });
    }
    console.log(
      `load average at end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    for (const a of apps) {
      await a.app.close();
      await a.ctx.close();
      await a.database.drop();
    }
  }
}

interface Target {
  name: string;
  server: ChildServer;
  rps: number[];
  cpuUs: number[];
  failed: number;
}

async function overHttp() {
  console.log(
    `# ops --http: authenticated GET over sockets (autocannon, 50 connections, ${rounds} alternating rounds of ${seconds}s)`,
  );
  for (const db of await benchDatabases()) {
    const database = db.make();
    const targets: Target[] = [];
    for (const [name, env] of variants(db.name)) {
      targets.push({
        name: `${name} (${db.name})`,
        server: await startChild('bench/lib/servers.ts', ['gated'], { ...database.env, ...env }),
        rps: [],
        cpuUs: [],
        failed: 0,
      });
    }
    const url = (t: Target) => `http://127.0.0.1:${t.server.port}/api/v0/ping`;
    const headers = (t: Target) => ({ 'x-api-key': t.server.extra[0] });
    for (const t of targets) await load({ url: url(t), headers: headers(t), seconds: 1 });
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
        `${t.name.padEnd(44)} ${fmt(median(t.rps)).padStart(7)} req/s  server CPU ${fmt(median(t.cpuUs), 1).padStart(5)} µs/req` +
          (t === base ? '' : `  rate ${fmt(median(paired), 2)}x baseline [${paired.map((r) => fmt(r, 2)).join(' ')}]`) +
          (t.failed ? `  FAILED REQUESTS: ${t.failed}` : ''),
      );
      if (t !== base) record(`${t.name} / baseline, rate over HTTP`, median(paired));
    }
  }
}

await (http ? overHttp() : inProcess());
process.exit(0);
