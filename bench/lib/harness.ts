// Shared benchmark plumbing: child servers, autocannon runs, percentiles, databases.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/app.ts';

export const ROOT = join(import.meta.dirname, '..', '..');
const require = createRequire(import.meta.url);

export interface ChildServer {
  port: number;
  /** Extra words printed after the port on the READY line. */
  extra: string[];
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `node <script> ...args` and waits for its "READY <port> ..." line. */
export function startChild(script: string, args: string[], env: Record<string, string> = {}): Promise<ChildServer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, script), ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buf = '';
    child.stdout!.on('data', (d) => {
      buf += d;
      const m = /READY (\d+)([^\n]*)\n/.exec(buf);
      if (m) {
        resolve({
          port: Number(m[1]),
          extra: m[2].trim().split(/\s+/).filter(Boolean),
          child,
          stop: () =>
            new Promise((r) => {
              child.once('close', () => r());
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('close', (code) => reject(new Error(`${script} exited with ${code} before READY`)));
  });
}

/**
 * A /proc `stat` line (of a process or a thread): its name and the CPU seconds (user + system) it
 * has used. The name is parenthesised and may hold spaces or ')', so fields count from the last ')'.
 */
function parseStat(stat: string): { name: string; cpuSeconds: number } {
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  // utime, stime in clock ticks (USER_HZ = 100)
  return {
    name: stat.slice(stat.indexOf('(') + 1, close),
    cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100,
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  try {
    const { readFileSync } = require('node:fs') as typeof import('node:fs');
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).cpuSeconds;
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds per thread name of a process so far (Linux /proc; threads of one name summed):
 * tells the main thread from V8's GC and compiler workers and SQLite's checkpoint thread.
 */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const { readdirSync, readFileSync } = require('node:fs') as typeof import('node:fs');
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const { name, cpuSeconds: s } = parseStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
        out.set(name, (out.get(name) ?? 0) + s);
      } catch {
        // the thread ended between the listing and the read
      }
    }
  } catch {
    // not Linux, or the process is gone
  }
  return out;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export async function load(opts: {
  url: string;
  headers?: Record<string, string>;
  method?: string;
  body?: string;
  seconds?: number;
  connections?: number;
  /** Each request's path, when it varies (else the url's). */
  path?: () => string;
  /** Headers of each request added to `headers`, when they vary. */
  requestHeaders?: () => Record<string, string>;
}): Promise<LoadResult> {
  const { path, requestHeaders } = opts;
  const setupRequest = (req: Record<string, unknown>) => ({
    ...req,
    ...(path ? { path: path() } : {}),
    ...(requestHeaders
      ? { headers: { ...opts.headers, ...(req.headers as Record<string, string> | undefined), ...requestHeaders() } }
      : {}),
  });
  const r = await autocannon({
    url: opts.url,
    method: (opts.method ?? 'GET') as 'GET',
    headers: opts.headers,
    body: opts.body,
    ...(path || requestHeaders ? { requests: [{ setupRequest }] } : {}),
    duration: opts.seconds ?? 5,
    connections: opts.connections ?? 50,
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The middle value (the upper of the two middle ones for an even count). */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Databases to benchmark: SQLite always, PostgreSQL when reachable (BENCH_DB=sqlite skips it). */
export async function benchDatabases(): Promise<Array<{ name: 'sqlite' | 'postgres'; make(): TestDatabase }>> {
  const out: Array<{ name: 'sqlite' | 'postgres'; make(): TestDatabase }> = [];
  const want = process.env.BENCH_DB;
  if (!want || want === 'sqlite') {
    out.push({ name: 'sqlite', make: () => withDb('sqlite') });
  }
  if (!want || want === 'postgres') {
    if (await postgresReachable()) out.push({ name: 'postgres', make: () => withDb('postgres') });
    else console.log('(PostgreSQL not reachable: skipping its figures)');
  }
  return out;
}

function withDb(kind: 'sqlite' | 'postgres'): TestDatabase {
  return createTestDatabase(kind);
}
async function postgresReachable(): Promise<boolean> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({
    connectionString: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    connectionTimeoutMillis: 2000,
  });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
