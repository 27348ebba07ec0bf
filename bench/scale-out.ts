// Scale-out benchmark: 1, 2 and 4 `platform serve` processes (RUN_WORKER=false) and as many
// separate `platform worker` processes on one PostgreSQL, behind a round-robin client.
//
// For each configuration it measures:
//   - authenticated claim reads per second (GET /api/v0/claim/{id} with an API key), p50/p99;
//   - complete→resolved throughput on one hot claim, and on 100 claims in 100 collections;
//   - complete→resolved p50/p99 with one attempt at a time (light load);
//   - the database work per resolved attempt: statements (pg_stat_statements), transactions and
//     commits (pg_stat_database), write transactions (transaction ids handed out), WAL bytes
//     (pg_current_wal_lsn) and WAL flushes (pg_stat_wal), row locks waited (lock-wait log lines
//     and pg_stat_activity sampling);
//   - exactly-once at the end: every accepted attempt resolved once, no claim number twice
//     (a FAIL line and exit code 1 otherwise).
// docs/scale-out.md turns these inputs into the ceiling of one primary.
//
// The benchmark starts its own PostgreSQL cluster (initdb into .tmp/, a free port,
// pg_stat_statements, log_lock_waits with a 10 ms deadlock_timeout), so the counts and the WAL are
// this benchmark's alone. Without initdb (PG_BIN, else /usr/lib/postgresql/15/bin or pg_config's;
// PG_BIN=none forces this) it uses a schema per configuration in the database of TEST_DATABASE_URL
// and says what that costs (the server's counters then include other databases' work).
//
// Knobs: BENCH_CONFIGS (default 1,2,4: serve processes), BENCH_WORKERS (worker processes per
// configuration; default as many as serve processes), BENCH_N (attempts per throughput run,
// default 1000), BENCH_SECONDS (read phase, default 5), BENCH_LATENCY (samples, default 100),
// BENCH_CONCURRENCY (requests in flight, default 64), BENCH_VERBOSE=1 (the top statements per run).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { toPlatformAddress } from '../src/shared/addresses.ts';
import { fmt, percentile, ROOT } from './lib/harness.ts';
import { record } from './lib/record.ts';

const CONFIGS = (process.env.BENCH_CONFIGS ?? '1,2,4')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const WORKERS = process.env.BENCH_WORKERS ? Number(process.env.BENCH_WORKERS) : null;
const N = Number(process.env.BENCH_N ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const VERBOSE = process.env.BENCH_VERBOSE === '1';
/** An idle backend reports its transaction counts at most 10 s after its last transaction (PostgreSQL 15). */
const STATS_SETTLE_MS = 11_000;
const MULTI = Array.from({ length: 100 }, (_, i) => `multi${i}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const randomAddress = (): string => toPlatformAddress(randomBytes(20));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The database server: a private cluster, or the shared server as the fallback.

interface Cluster {
  /** Superuser URL of a database the benchmark's own queries use (not measured). */
  adminUrl: string;
  /** A fresh database for one configuration: its URL, the name its statistics go by, and its removal. */
  create(name: string): Promise<{ url: string; datname: string; drop(): Promise<void> }>;
  /** The server log, for lock-wait lines (private cluster only). */
  logFile: string | null;
  private: boolean;
  statements: boolean;
  stop(): void;
}

function findPgBin(): string | null {
  // PG_BIN, when set, is the only place looked at (PG_BIN=none uses the TEST_DATABASE_URL server)
  if (process.env.PG_BIN) return existsSync(join(process.env.PG_BIN, 'initdb')) ? process.env.PG_BIN : null;
  const candidates = ['/usr/lib/postgresql/15/bin'];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { stdio: 'pipe' }).toString().trim());
  } catch {
    // no pg_config on PATH
  }
  for (const dir of candidates) if (existsSync(join(dir, 'initdb'))) return dir;
  return null;
}

async function privateCluster(bin: string): Promise<Cluster> {
  const root = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    execFileSync(root ? 'runuser' : join(bin, cmd), root ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args, {
      stdio: 'pipe',
    });
  const dir = join(ROOT, '.tmp', `scale-out-pg-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  const owner = root ? Number(execFileSync('id', ['-u', 'postgres']).toString().trim()) : null;
  if (owner !== null) chownSync(dir, owner, Number(execFileSync('id', ['-g', 'postgres']).toString().trim()));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const port = await freePort();
  const conf = [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    'max_connections = 300',
    "shared_preload_libraries = 'pg_stat_statements'",
    'pg_stat_statements.track = top',
    'log_lock_waits = on',
    "deadlock_timeout = '10ms'",
    // the statement that waited, after each lock-wait line
    "log_min_error_statement = 'log'",
  ];
  writeFileSync(
    join(data, 'postgresql.conf'),
    `${readFileSync(join(data, 'postgresql.conf'), 'utf8')}\n${conf.join('\n')}\n`,
  );
  run('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '120', 'start']);
  const base = `postgres://postgres@127.0.0.1:${port}`;
  let stopped = false;
  const cluster: Cluster = {
    adminUrl: `${base}/postgres`,
    async create(name) {
      await sql(`${base}/postgres`, `create database ${name}`);
      return {
        url: `${base}/${name}`,
        datname: name,
        drop: async () => void (await sql(`${base}/postgres`, `drop database if exists ${name} with (force)`)),
      };
    },
    logFile,
    private: true,
    statements: true,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await sql(cluster.adminUrl, 'create extension if not exists pg_stat_statements');
  return cluster;
}

async function sharedServer(): Promise<Cluster> {
  const url = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  url.search = '';
  let statements = false;
  try {
    await sql(url.toString(), 'create extension if not exists pg_stat_statements');
    await sql(url.toString(), 'select 1 from pg_stat_statements limit 1');
    statements = true;
  } catch {
    // not loaded (shared_preload_libraries): no statement counts
  }
  // a schema per configuration in that database (its statistics are the whole database's)
  const datname = url.pathname.slice(1);
  const create = async (name: string) => {
    const u = new URL(url);
    u.searchParams.set('schema', name);
    return {
      url: u.toString(),
      datname,
      drop: async () => void (await sql(url.toString(), `drop schema if exists "${name}" cascade`)),
    };
  };
  return { adminUrl: url.toString(), create, logFile: null, private: false, statements, stop() {} };
}

/** A client of an application database URL, which may name its schema (`?schema=`, as DATABASE_URL does). */
function appClient(url: string): pg.Client {
  const u = new URL(url);
  const schema = u.searchParams.get('schema');
  u.searchParams.delete('schema');
  return new pg.Client({
    connectionString: u.toString(),
    ...(schema ? { options: `-c search_path="${schema}"` } : {}),
  });
}

async function sql<T = Record<string, any>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, values)).rows as T[];
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------------------------------------
// The application: a database per configuration, its claims, and the child processes.

const SECRET_KEY = randomBytes(32).toString('hex');
const LEAF_SIGNER_KEY = randomBytes(32).toString('hex');

/** Migrates database `url`, creates the benchmark's claims and an API key; returns the key. */
async function setUp(url: string, dataDir: string): Promise<string> {
  const { loadConfig } = await import('../src/config.ts');
  const { createContext } = await import('../src/context.ts');
  const { createApiKey } = await import('../src/api-keys/storage.ts');
  const { createClaims } = await import('../src/claims/documents.ts');
  const ctx = await createContext(
    loadConfig({ ...appEnv(url, dataDir), LOG_LEVEL: 'silent', PORT: '0', RUN_WORKER: 'false' }),
  );
  try {
    const { key } = await createApiKey(ctx.db, 'scale-out bench');
    const actor = { platformAddress: randomAddress() };
    const numUses = { pluginId: 'numUses', instanceId: 'n', publicParams: { maxUses: 1_000_000_000 } };
    await createClaims(ctx, actor, [
      { claimId: 'hot', plugins: [numUses] },
      { claimId: 'lat', plugins: [numUses] },
      { claimId: 'read', plugins: [numUses], metadata: { name: 'read me' } },
    ]);
    await createClaims(
      ctx,
      actor,
      MULTI.map((claimId, i) => ({ claimId, collectionId: `${1000 + i}`, plugins: [numUses] })),
    );
    return key;
  } finally {
    await ctx.close();
  }
}

function appEnv(url: string, dataDir: string): Record<string, string> {
  return { DATABASE_URL: url, DATA_DIR: dataDir, SECRET_KEY, LEAF_SIGNER_KEY };
}

interface Proc {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `node bin/platform.js <args>`; resolves once `ready(output)` holds (or rejects if it exits first). */
function startProcess(args: string[], env: Record<string, string>, ready: () => Promise<boolean>): Promise<Proc> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'platform.js'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const proc: Proc = {
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
  return (async () => {
    const deadline = Date.now() + 180_000;
    while (!(await ready())) {
      if (exited) throw new Error(`platform ${args.join(' ')} exited before it was ready:\n${stderr}`);
      if (Date.now() > deadline) {
        await proc.stop();
        throw new Error(`platform ${args.join(' ')} was not ready after 180 s:\n${stderr}`);
      }
      await sleep(100);
    }
    return proc;
  })();
}

async function healthy(port: number): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/healthz`);
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}

/** Worker processes are ready when their database connections LISTEN for enqueues (the queue's wake-up). */
async function listeners(adminUrl: string, db: string): Promise<number> {
  const [r] = await sql<{ n: number }>(
    adminUrl,
    `select count(*)::int as n from pg_stat_activity where datname = $1 and query ilike 'listen%'`,
    [db],
  );
  return r.n;
}

// ---------------------------------------------------------------------------------------------
// The client: round-robin over the serve processes, keep-alive connections (an undici Pool each).

class Client {
  private next = 0;
  readonly accepted = new Set<string>();
  readonly pools: Pool[];
  private readonly key: string;
  constructor(pools: Pool[], key: string) {
    this.pools = pools;
    this.key = key;
  }
  private pool(): Pool {
    return this.pools[this.next++ % this.pools.length]!;
  }
  async request(method: 'GET' | 'POST', path: string, body?: unknown, pool = this.pool()) {
    const r = await pool.request({
      method,
      path,
      headers: { 'x-api-key': this.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.statusCode, json: (await r.body.json()) as any };
  }
  /** complete: the attempt's id when accepted (200), else null. */
  async complete(claimId: string, pool?: Pool): Promise<string | null> {
    const r = await this.request(
      'POST',
      `/api/v0/claims/complete/${claimId}/${randomAddress()}`,
      { _expectedVersion: -1 },
      pool,
    );
    if (r.status !== 200) return null;
    this.accepted.add(r.json.claimAttemptId);
    return r.json.claimAttemptId;
  }
  async resolved(id: string, pool?: Pool): Promise<boolean> {
    const r = await this.request('GET', `/api/v0/claims/status/${id}`, undefined, pool);
    return r.json.success !== undefined;
  }
  close() {
    return Promise.all(this.pools.map((p) => p.close()));
  }
}

async function runPool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function reads(c: Client): Promise<{ perSecond: number; p50: number; p99: number; failed: number }> {
  const phase = async (seconds: number) => {
    const end = performance.now() + seconds * 1000;
    const samples: number[] = [];
    let failed = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < end) {
          const t0 = performance.now();
          const r = await c.request('GET', '/api/v0/claim/read');
          if (r.status === 200) samples.push(performance.now() - t0);
          else failed++;
        }
      }),
    );
    samples.sort((a, b) => a - b);
    return { perSecond: samples.length / seconds, p50: percentile(samples, 50), p99: percentile(samples, 99), failed };
  };
  await phase(1); // warm-up
  return phase(SECONDS);
}

/** Completes `n` attempts over `claimIds` (round robin over claims and over processes); attempts resolved per second. */
async function throughput(
  c: Client,
  claimIds: string[],
  n: number,
  queued: () => Promise<boolean>,
): Promise<{ perSecond: number; accepted: number; rejected: number; p50: number; p99: number }> {
  let rejected = 0;
  const samples: number[] = [];
  const jobs = Array.from({ length: n }, (_, i) => claimIds[i % claimIds.length]!);
  const t0 = performance.now();
  await runPool(jobs, CONCURRENCY, async (claimId) => {
    const s = performance.now();
    const id = await c.complete(claimId);
    samples.push(performance.now() - s);
    if (id === null) rejected++;
  });
  // done when nothing is left queued: asked of the database (one cheap statement every 10 ms, taken
  // off the counts), not by polling attempts' status over HTTP, which would add reads of its own
  while (await queued()) await sleep(10);
  samples.sort((a, b) => a - b);
  return {
    perSecond: (n - rejected) / ((performance.now() - t0) / 1000),
    accepted: n - rejected,
    rejected,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
  };
}

async function latency(c: Client, n: number): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const pool = c.pools[i % c.pools.length]!;
    const t0 = performance.now();
    const id = await c.complete('lat', pool);
    if (id === null) throw new Error('complete failed under light load');
    while (!(await c.resolved(id, pool))) await new Promise((r) => setImmediate(r));
    samples.push(performance.now() - t0);
    await sleep(5); // one attempt at a time, with gaps
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

// ---------------------------------------------------------------------------------------------
// What the database did during a run.

interface Work {
  statements: number | null;
  transactions: number;
  commits: number;
  writeTransactions: number;
  walBytes: number;
  walFlushes: number;
  lockWaitsLogged: number | null;
  lockWaitMs: number | null;
  /** Waits over 10 ms by lock and by the statement that waited (the first words of it). */
  lockWaitsBy: Map<string, number>;
  lockWaitersAvg: number;
  lockWaitersMax: number;
  /** Statements that insert accepted attempts (a group commit inserts several in one). */
  acceptInserts: number | null;
  /** Statements that resolve attempts: one per batch of a lane (up to 200 attempts). */
  resolveUpdates: number | null;
  /** Lane lock tries (pg_try_advisory_xact_lock): a batch, or a lane another worker holds. */
  laneTries: number | null;
  /** Wake-up NOTIFYs sent as statements (and transactions) of their own, not inside an accepting insert. */
  ownNotifies: number | null;
  /** The statements run most often during the run (calls, not per attempt). */
  top: Array<{ calls: number; query: string }>;
}

const COUNTERS = ['statements', 'transactions', 'commits', 'writeTransactions', 'walBytes', 'walFlushes'] as const;
type Counter = (typeof COUNTERS)[number];
/** Counted when they happen: read at the end of a run. The others reach the statistics late. */
const IMMEDIATE = new Set<Counter>(['statements', 'writeTransactions', 'walBytes']);

/** The server's counters at one moment: cumulative, so two snapshots give what happened in between. */
interface Snap {
  at: number;
  counters: Record<Counter, number>;
  /** pg_stat_statements calls by query id (null without the extension). */
  byQuery: Map<string, { calls: number; query: string }> | null;
}

const TX_CONTROL = /^\s*(begin|commit|rollback|start transaction)\b/i;

async function snapshot(admin: pg.Client, db: string, statements: boolean): Promise<Snap> {
  await admin.query('select pg_stat_clear_snapshot()');
  const [row] = (
    await admin.query(
      `select (d.xact_commit + d.xact_rollback)::float8 as transactions, d.xact_commit::float8 as commits,
              pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 as "walBytes",
              pg_snapshot_xmax(pg_current_snapshot())::text::float8 as "writeTransactions",
              (select wal_sync::float8 from pg_stat_wal) as "walFlushes"
         from pg_stat_database d where d.datname = $1`,
      [db],
    )
  ).rows;
  let byQuery: Snap['byQuery'] = null;
  let total = 0;
  if (statements) {
    byQuery = new Map();
    const rows = (
      await admin.query(
        `select s.queryid::text as id, s.calls::float8 as calls, regexp_replace(s.query, '\\s+', ' ', 'g') as query
           from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = $1`,
        [db],
      )
    ).rows as Array<{ id: string; calls: number; query: string }>;
    for (const r of rows) {
      byQuery.set(r.id, { calls: r.calls, query: r.query });
      if (!TX_CONTROL.test(r.query)) total += r.calls;
    }
  }
  return { at: performance.now(), counters: { ...row, statements: total }, byQuery };
}

/**
 * What the database did during `fn`. Transaction counts reach pg_stat_database when a backend
 * reports them, which an idle backend does up to 10 s late (PostgreSQL 15), so the counters are
 * read STATS_SETTLE_MS after the run; the processes' idle work (the queue's poll every 250 ms per
 * worker, the other loops) during that wait is `idle` per second, and is taken off.
 */
async function measured<T extends { accepted: number }>(
  cluster: Cluster,
  admin: pg.Client,
  db: string,
  idle: Record<Counter, number>,
  fn: (countQuery: () => void) => Promise<T>,
): Promise<{ result: T; work: Work }> {
  const before = await snapshot(admin, db, cluster.statements);
  const logStart = cluster.logFile ? statSync(cluster.logFile).size : 0;
  let sampling = true;
  let samples = 0;
  let waiting = 0;
  let maxWaiting = 0;
  const sampler = (async () => {
    const s = new pg.Client({ connectionString: cluster.adminUrl });
    await s.connect();
    while (sampling) {
      const r = await s.query(
        "select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'",
        [db],
      );
      waiting += r.rows[0].n;
      maxWaiting = Math.max(maxWaiting, r.rows[0].n);
      samples++;
      await sleep(20);
    }
    await s.end();
  })();
  // the benchmark's own queries on the measured database (is anything still queued?), to subtract
  let own = 0;
  const result = await fn(() => own++);
  // statements, transaction ids and WAL positions count at once; pg_stat_database and pg_stat_wal late
  const end = await snapshot(admin, db, cluster.statements);
  sampling = false;
  await sampler;
  await sleep(STATS_SETTLE_MS);
  const after = await snapshot(admin, db, cluster.statements);
  const settle = (after.at - end.at) / 1000;
  const d = (k: Counter) =>
    IMMEDIATE.has(k)
      ? end.counters[k] - before.counters[k]
      : Math.max(0, after.counters[k] - before.counters[k] - idle[k] * settle);
  let lockWaitsLogged: number | null = null;
  let lockWaitMs: number | null = null;
  const lockWaitsBy = new Map<string, number>();
  if (cluster.logFile) {
    const log = readFileSync(cluster.logFile).subarray(logStart).toString('utf8');
    lockWaitsLogged = (log.match(/still waiting for \w+ on /g) ?? []).length;
    // "[pid] LOG:  process pid still waiting for ShareLock on transaction 2 after 10.1 ms", then the
    // same pid's DETAIL and STATEMENT lines
    const lines = log.split('\n');
    lines.forEach((line, i) => {
      const m = /\[(\d+)\] LOG:\s+process \d+ still waiting for (\w+) on (advisory lock|\w+)/.exec(line);
      if (!m) return;
      const statement = lines
        .slice(i + 1, i + 6)
        .map((l) => new RegExp(`\\[${m[1]}\\] STATEMENT:\\s+(.*)`).exec(l)?.[1])
        .find(Boolean);
      const key = `${m[2]} on ${m[3]}: ${(statement ?? '?').replace(/\s+/g, ' ').slice(0, 90)}`;
      lockWaitsBy.set(key, (lockWaitsBy.get(key) ?? 0) + 1);
    });
    lockWaitMs = 0;
    for (const m of log.matchAll(/acquired \w+ on .*? after ([\d.]+) ms/g)) lockWaitMs += Number(m[1]);
  }
  const top: Work['top'] = [];
  const calls = (re: RegExp) => {
    if (!end.byQuery || !before.byQuery) return null;
    let n = 0;
    for (const [id, q] of end.byQuery) if (re.test(q.query)) n += q.calls - (before.byQuery.get(id)?.calls ?? 0);
    return n;
  };
  if (end.byQuery && before.byQuery) {
    for (const [id, q] of end.byQuery)
      top.push({ calls: q.calls - (before.byQuery.get(id)?.calls ?? 0), query: q.query });
    top.sort((a, b) => b.calls - a.calls);
    top.length = Math.min(top.length, 10);
  }
  return {
    result,
    work: {
      statements: cluster.statements ? d('statements') - own : null,
      transactions: d('transactions') - own,
      commits: d('commits') - own,
      writeTransactions: d('writeTransactions'),
      walBytes: d('walBytes'),
      walFlushes: d('walFlushes'),
      lockWaitsLogged,
      lockWaitMs,
      lockWaitsBy,
      lockWaitersAvg: samples ? waiting / samples : 0,
      lockWaitersMax: maxWaiting,
      // the accept's insert, alone or with the wake-up's pg_notify in the same statement
      acceptInserts: calls(/^(with \w+ as \()?insert into "?claim_attempts"?/),
      resolveUpdates: calls(/^update claim_attempts\s+set status/),
      laneTries: calls(/pg_try_advisory_xact_lock/),
      ownNotifies: calls(/^select pg_notify/),
      top,
    },
  };
}

/** The processes' background work per second while no request arrives (after the counters have settled). */
async function idleRates(
  admin: pg.Client,
  db: string,
  statements: boolean,
): Promise<{ rates: Record<Counter, number> }> {
  await sleep(STATS_SETTLE_MS);
  const a = await snapshot(admin, db, statements);
  await sleep(STATS_SETTLE_MS);
  const b = await snapshot(admin, db, statements);
  const seconds = (b.at - a.at) / 1000;
  const rates = Object.fromEntries(
    COUNTERS.map((k) => [k, Math.max(0, b.counters[k] - a.counters[k]) / seconds]),
  ) as Record<Counter, number>;
  return { rates };
}

function workLine(w: Work, resolved: number, cluster: Cluster): string {
  const per = (x: number, digits: number) => fmt(x / resolved, digits);
  // the whole server's counters: on a shared server other databases' writes count too
  const bound = cluster.private ? '' : '≤ ';
  return (
    [
      w.statements === null ? 'statements n/a' : `${per(w.statements, 2)} statements`,
      `${per(w.transactions, 2)} transactions`,
      `${per(w.commits, 2)} commits`,
      `${bound}${per(w.writeTransactions, 2)} write transactions`,
      `${bound}${per(w.walFlushes, 3)} WAL flushes`,
      `${bound}${per(w.walBytes, 0)} WAL bytes`,
      w.lockWaitsLogged === null
        ? `lock waiters ${fmt(w.lockWaitersAvg, 2)} avg`
        : `row/lock waits > 10 ms: ${w.lockWaitsLogged} (${fmt(w.lockWaitMs ?? 0, 0)} ms in all), waiters ${fmt(w.lockWaitersAvg, 2)} avg / ${w.lockWaitersMax} max`,
    ].join(', ') +
    (w.acceptInserts && w.resolveUpdates && w.laneTries !== null
      ? `\n  batching: ${fmt(resolved / w.acceptInserts, 1)} attempts per accepting insert, ${fmt(resolved / w.resolveUpdates, 1)} per resolving batch; ` +
        `${fmt(w.laneTries / w.resolveUpdates, 2)} lane lock tries per batch` +
        (w.ownNotifies === null ? '' : `; ${per(w.ownNotifies, 3)} wake-up NOTIFYs of their own (n)`)
      : '')
  );
}

/** Every accepted attempt resolved once; no claim number used twice; nothing resolved that was not accepted. */
export async function exactlyOnce(url: string, accepted: Set<string>): Promise<{ ok: boolean; line: string }> {
  const c = appClient(url);
  await c.connect();
  try {
    const rows = (await c.query('select claim_attempt_id as id, status from claim_attempts')).rows as Array<{
      id: string;
      status: string;
    }>;
    const byId = new Map(rows.map((r) => [r.id, r.status]));
    const missing = [...accepted].filter((id) => !byId.has(id)).length;
    const unresolved = [...accepted].filter((id) => {
      const s = byId.get(id);
      return s !== undefined && s !== 'success' && s !== 'failure';
    }).length;
    const unknown = rows.filter((r) => !accepted.has(r.id)).length;
    const failures = rows.filter((r) => r.status === 'failure').length;
    const [dupNumbers] = (
      await c.query(
        `select count(*)::int as n from (select claim_id, claim_number from claim_attempts where status = 'success'
           group by claim_id, claim_number having count(*) > 1) x`,
      )
    ).rows;
    const [dupLedger] = (
      await c.query(
        'select count(*)::int as n from (select claim_attempt_id from claim_numbers group by 1 having count(*) > 1) x',
      )
    ).rows;
    const [ledger] = (
      await c.query(
        `select (select count(*)::int from claim_numbers) as numbers,
                (select count(*)::int from claim_attempts where status = 'success') as successes,
                (select count(*)::int from claim_numbers n join claim_attempts a on a.claim_attempt_id = n.claim_attempt_id
                   and a.claim_number = n.claim_number and a.status = 'success') as matching`,
      )
    ).rows;
    const ok =
      missing === 0 &&
      unresolved === 0 &&
      unknown === 0 &&
      failures === 0 &&
      dupNumbers.n === 0 &&
      dupLedger.n === 0 &&
      ledger.numbers === ledger.successes &&
      ledger.matching === ledger.successes;
    const line = ok
      ? `pass: ${fmt(accepted.size)} accepted attempts, each resolved once (success); ${fmt(ledger.numbers)} claim numbers, none twice`
      : `FAIL: ${fmt(accepted.size)} accepted; ${missing} missing, ${unresolved} not resolved, ${unknown} recorded without a 200 to the client, ` +
        `${failures} failed; claim numbers used twice: ${dupNumbers.n}; attempts with two ledger rows: ${dupLedger.n}; ` +
        `ledger rows ${ledger.numbers}, successes ${ledger.successes}, matching ${ledger.matching}`;
    return { ok, line };
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------------------------------------

interface ConfigResult {
  serve: number;
  workers: number;
  reads: Awaited<ReturnType<typeof reads>>;
  hot: { perSecond: number; accepted: number; p50: number; p99: number; work: Work };
  multi: { perSecond: number; accepted: number; p50: number; p99: number; work: Work };
  lat: { p50: number; p99: number };
  once: { ok: boolean; line: string };
  idle: Record<Counter, number>;
}

async function runConfig(cluster: Cluster, serveCount: number): Promise<ConfigResult> {
  const workerCount = WORKERS ?? serveCount;
  const name = `scale_${serveCount}_${randomBytes(3).toString('hex')}`;
  const database = await cluster.create(name);
  const { url, datname: db } = database;
  const dataDir = join(ROOT, '.tmp', `${name}-data`);
  mkdirSync(dataDir, { recursive: true });
  const procs: Proc[] = [];
  let client: Client | null = null;
  const queueClient = appClient(url);
  const admin = new pg.Client({ connectionString: cluster.adminUrl });
  try {
    const key = await setUp(url, dataDir);
    const env = { ...appEnv(url, dataDir), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    const ports: number[] = [];
    const starting: Array<Promise<Proc>> = [];
    for (let i = 0; i < serveCount; i++) {
      const port = await freePort();
      ports.push(port);
      starting.push(startProcess(['serve'], { ...env, RUN_WORKER: 'false', PORT: String(port) }, () => healthy(port)));
    }
    for (let i = 0; i < workerCount; i++)
      starting.push(startProcess(['worker'], env, async () => (await listeners(cluster.adminUrl, db)) >= i + 1));
    // started one after another: each worker's readiness counts the listeners before it
    for (const p of starting) procs.push(await p);
    const pools = ports.map(
      (p) => new Pool(`http://127.0.0.1:${p}`, { connections: Math.ceil(CONCURRENCY / serveCount), pipelining: 1 }),
    );
    client = new Client(pools, key);
    const c = client;
    await queueClient.connect();
    const queuedNow =
      (count: () => void = () => {}) =>
      async () => {
        count();
        const r = await queueClient.query("select 1 from claim_attempts where status = 'queued' limit 1");
        return r.rows.length > 0;
      };

    const r = await reads(c);
    await throughput(c, ['hot'], Math.min(300, N), queuedNow()); // warm-up
    await throughput(c, MULTI, Math.min(300, N), queuedNow());
    const lat = await latency(c, LATENCY_SAMPLES);
    await admin.connect();
    const idle = await idleRates(admin, db, cluster.statements);
    const hot = await measured(cluster, admin, db, idle.rates, (count) => throughput(c, ['hot'], N, queuedNow(count)));
    const multi = await measured(cluster, admin, db, idle.rates, (count) => throughput(c, MULTI, N, queuedNow(count)));
    // the warm-ups' last attempts may have resolved after their lane's last; all are done by now
    while (await queuedNow()()) await sleep(10);
    const once = await exactlyOnce(url, c.accepted);
    return {
      serve: serveCount,
      workers: workerCount,
      reads: r,
      hot: { ...hot.result, work: hot.work },
      multi: { ...multi.result, work: multi.work },
      lat,
      once,
      idle: idle.rates,
    };
  } finally {
    await queueClient.end().catch(() => undefined);
    await admin.end().catch(() => undefined);
    await client?.close();
    await Promise.all(procs.map((p) => p.stop()));
    await database.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const load = loadavg();
  console.log(
    `# scale-out: ${CONFIGS.join(', ')} serve processes (RUN_WORKER=false) + ${WORKERS ?? 'as many'} worker processes on one PostgreSQL; ` +
      `${N} attempts per throughput run, ${CONCURRENCY} in flight, reads for ${SECONDS} s; ` +
      `${cpus().length} cores, load average ${load.map((l) => l.toFixed(1)).join(' ')}`,
  );
  if (cpus().length <= 2)
    console.log('  (2 cores: past 2 processes the figures show contention for the cores, not scale)');
  const bin = findPgBin();
  let cluster: Cluster;
  if (bin) {
    cluster = await privateCluster(bin);
    console.log(`  private PostgreSQL cluster (${bin}): pg_stat_statements loaded, lock waits logged after 10 ms`);
  } else {
    cluster = await sharedServer();
    console.log(
      `  initdb not found (set PG_BIN): using the server of TEST_DATABASE_URL; write transactions, WAL flushes and WAL bytes count other databases too (upper bounds), ` +
        `lock waits are sampled only${cluster.statements ? '' : ', no statement counts (pg_stat_statements not loaded)'}`,
    );
  }
  const stop = () => cluster.stop();
  process.once('SIGINT', () => {
    stop();
    process.exit(130);
  });
  const results: ConfigResult[] = [];
  try {
    for (const n of CONFIGS) {
      const r = await runConfig(cluster, n);
      results.push(r);
      const tag = `${r.serve} serve + ${r.workers} worker${r.workers === 1 ? '' : 's'}`;
      console.log(`\n## ${tag} (load average ${loadavg()[0]!.toFixed(1)})`);
      console.log(
        `authenticated reads      ${fmt(r.reads.perSecond)} req/s  p50 ${fmt(r.reads.p50, 1)} ms  p99 ${fmt(r.reads.p99, 1)} ms${r.reads.failed ? `  FAILED ${r.reads.failed}` : ''}`,
      );
      for (const [label, t] of [
        ['hot claim    ', r.hot],
        ['100 claims   ', r.multi],
      ] as const) {
        console.log(
          `${label}            ${fmt(t.perSecond)} resolved/s  (complete p50 ${fmt(t.p50, 1)} ms, p99 ${fmt(t.p99, 1)} ms)${t.accepted < N ? `  REJECTED ${N - t.accepted}` : ''}`,
        );
        console.log(`  per resolved attempt: ${workLine(t.work, t.accepted, cluster)}`);
        for (const [what, n] of t.work.lockWaitsBy) console.log(`    ${String(n).padStart(4)} lock waits: ${what}`);
        if (VERBOSE)
          for (const s of t.work.top)
            console.log(`    ${fmt(s.calls / t.accepted, 3).padStart(6)} × ${s.query.slice(0, 150)}`);
      }
      console.log(
        `complete→resolved        p50 ${fmt(r.lat.p50, 1)} ms  p99 ${fmt(r.lat.p99, 1)} ms  (one attempt at a time)`,
      );
      console.log(`exactly-once             ${r.once.line}`);
      console.log(
        `idle background work     ${fmt(r.idle.statements, 1)} statements/s, ${fmt(r.idle.transactions, 1)} transactions/s, ` +
          `${fmt(r.idle.writeTransactions, 2)} write transactions/s, ${fmt(r.idle.walBytes)} WAL bytes/s (taken off the figures above for the ${STATS_SETTLE_MS / 1000} s statistics wait)`,
      );
    }
  } finally {
    stop();
  }

  const base = results[0]!;
  console.log('\n## summary (ratios to the first configuration of this run)');
  for (const r of results) {
    const per = (w: Work, k: keyof Work, acc: number) => (w[k] as number) / acc;
    console.log(
      `${r.serve}+${r.workers}: reads ×${fmt(r.reads.perSecond / base.reads.perSecond, 2)}, hot ×${fmt(r.hot.perSecond / base.hot.perSecond, 2)}, ` +
        `100 claims ×${fmt(r.multi.perSecond / base.multi.perSecond, 2)}; write transactions per attempt hot ${fmt(per(r.hot.work, 'writeTransactions', r.hot.accepted), 3)}, ` +
        `100 claims ${fmt(per(r.multi.work, 'writeTransactions', r.multi.accepted), 3)}; exactly-once ${r.once.ok ? 'pass' : 'FAIL'}`,
    );
    const tag = `${r.serve} serve + ${r.workers} workers`;
    record(`authenticated reads/s (${tag})`, r.reads.perSecond, { unit: 'req/s' });
    record(`authenticated reads, ratio to ${base.serve} serve (${tag})`, r.reads.perSecond / base.reads.perSecond);
    record(`authenticated reads p99 (${tag})`, r.reads.p99, { better: 'lower', unit: 'ms' });
    record(`complete→resolved p50 (${tag})`, r.lat.p50, { better: 'lower', unit: 'ms' });
    record(`complete→resolved p99 (${tag})`, r.lat.p99, { better: 'lower', unit: 'ms' });
    record(`exactly-once (${tag})`, r.once.ok ? 1 : 0, { goal: 1 });
    for (const [label, t] of [
      ['hot claim', r.hot],
      ['100 claims', r.multi],
    ] as const) {
      const b = label === 'hot claim' ? base.hot : base.multi;
      record(`${label} resolved/s (${tag})`, t.perSecond, { unit: '/s' });
      record(`${label} resolved, ratio to ${base.serve} serve (${tag})`, t.perSecond / b.perSecond);
      const lower = { better: 'lower' as const };
      if (t.work.statements !== null)
        record(`${label} statements per resolved attempt (${tag})`, t.work.statements / t.accepted, lower);
      record(`${label} transactions per resolved attempt (${tag})`, t.work.transactions / t.accepted, lower);
      record(`${label} commits per resolved attempt (${tag})`, t.work.commits / t.accepted, lower);
      record(`${label} write transactions per resolved attempt (${tag})`, t.work.writeTransactions / t.accepted, lower);
      record(`${label} WAL bytes per resolved attempt (${tag})`, t.work.walBytes / t.accepted, { ...lower, unit: 'B' });
      if (t.work.resolveUpdates)
        record(`${label} attempts per resolving batch (${tag})`, t.accepted / t.work.resolveUpdates);
      if (t.work.acceptInserts)
        record(`${label} attempts per accepting insert (${tag})`, t.accepted / t.work.acceptInserts);
      if (t.work.lockWaitsLogged !== null)
        record(`${label} lock waits over 10 ms (${tag})`, t.work.lockWaitsLogged, lower);
    }
  }
  console.log(
    `\nload average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const failed = results.filter((r) => !r.once.ok);
  if (failed.length) {
    console.log(`exactly-once FAILED for ${failed.map((r) => `${r.serve} serve`).join(', ')}`);
    return 1;
  }
  return 0;
}

// imported (for its exactly-once check), it runs nothing
if (import.meta.main) process.exitCode = await main();
