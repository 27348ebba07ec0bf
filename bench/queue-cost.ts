// What one claim attempt costs on its way from complete to resolved, in one process (the domain
// functions, no HTTP), counted rather than timed: SQL statements and transactions per attempt, and
// CPU time. Built to run under `valgrind --tool=callgrind`, whose instruction counts do not depend
// on the machine's load: run it with two sizes and subtract, so start-up cancels out.
//
//   single: one attempt at a time, each followed by one worker pass (the latency path);
//   burst:  64 attempts accepted together, then the worker drains them (the hot-claim path).
//
// `node bench/queue-cost.ts [attempts=2000]` (BENCH_DB=sqlite|postgres; SQLite by default;
// BENCH_ONLY=single|burst; BENCH_STATEMENT_TIMES=1 prints the statements that took the most time).
// Instruction counts of the measured window only (start-up and warm-up not collected):
//   BENCH_CALLGRIND=1 valgrind --tool=callgrind --instr-atstart=no --smc-check=all-non-file \
//     node bench/queue-cost.ts 500
// The window switches collection on and off with callgrind_control; the total Ir / attempts is
// the figure (all threads: the WAL checkpointer and V8's helpers count too).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { createClaims } from '../src/claims/documents.ts';
import { attemptClaim } from '../src/claims/attempts.ts';
import { ClaimWorker } from '../src/claims/queue.ts';
import { toPlatformAddress } from '../src/shared/addresses.ts';
import { createTestDatabase } from '../test/helpers/app.ts';

const N = Number(process.argv[2] ?? 2000);
const kind = process.env.BENCH_DB === 'postgres' ? 'postgres' : 'sqlite';

// every statement better-sqlite3 runs, by its first word (begin, commit, select, insert, update)
const counts = new Map<string, number>();
const timed = new Map<string, { n: number; us: number }>();
{
  const probe = new SQLite(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, (...a: unknown[]) => unknown>;
  probe.close();
  for (const m of ['run', 'all', 'get', 'iterate']) {
    const orig = proto[m]!;
    proto[m] = function (this: { source: string }, ...args: unknown[]) {
      const word = this.source.trimStart().split(/\s/, 1)[0]!.toLowerCase();
      counts.set(word, (counts.get(word) ?? 0) + 1);
      if (!process.env.BENCH_STATEMENT_TIMES) return orig.apply(this, args);
      const t = performance.now();
      try {
        return orig.apply(this, args);
      } finally {
        const e = timed.get(this.source) ?? { n: 0, us: 0 };
        e.n++;
        e.us += (performance.now() - t) * 1000;
        timed.set(this.source, e);
      }
    };
  }
}

const database = createTestDatabase(kind);
const ctx = await createContext(loadConfig({ ...process.env, ...database.env, LOG_LEVEL: 'silent' }));
const numUses = { pluginId: 'numUses', instanceId: 'n', publicParams: { maxUses: 1_000_000_000 } };
await createClaims(ctx, { platformAddress: toPlatformAddress(randomBytes(20)) }, [
  { claimId: 'lat', plugins: [numUses] },
  { claimId: 'hot', plugins: [numUses] },
]);
const worker = new ClaimWorker(ctx, {});
const complete = (claimId: string) =>
  attemptClaim(ctx, claimId, toPlatformAddress(randomBytes(20)), { _expectedVersion: -1 }, null, true);

async function single(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await complete('lat');
    if ((await worker.pass()) !== 1) throw new Error('the attempt did not resolve in one pass');
  }
}
async function burst(n: number): Promise<void> {
  for (let i = 0; i < n; i += 64) {
    await Promise.all(Array.from({ length: Math.min(64, n - i) }, () => complete('hot')));
    let left = Math.min(64, n - i);
    while (left > 0) left -= await worker.pass();
  }
}

for (const [name, run] of [
  ['single', single],
  ['burst', burst],
] as const) {
  if (process.env.BENCH_ONLY && process.env.BENCH_ONLY !== name) continue;
  await run(200); // warm-up
  counts.clear();
  timed.clear();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const callgrind = (on: boolean) => {
    if (process.env.BENCH_CALLGRIND) execFileSync('callgrind_control', ['-i', on ? 'on' : 'off', String(process.pid)]);
  };
  callgrind(true);
  await run(N);
  callgrind(false);
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  const per = [...counts].map(([w, c]) => `${w} ${(c / N).toFixed(2)}`).join(', ');
  console.log(
    `${name.padEnd(6)} (${kind}) ${N} attempts: ${((cpu.user + cpu.system) / N).toFixed(0)} µs CPU and ${((wall * 1000) / N).toFixed(0)} µs wall per attempt; statements per attempt: ${per || '(PostgreSQL: not counted)'}`,
  );
  if (process.env.BENCH_STATEMENT_TIMES)
    for (const [q, e] of [...timed].sort((a, b) => b[1].us - a[1].us).slice(0, 12))
      console.log(`  ${(e.us / N).toFixed(1).padStart(7)} µs/attempt  ${(e.n / N).toFixed(2)}×  ${q.slice(0, 110)}`);
}
await ctx.close();
await database.drop();
