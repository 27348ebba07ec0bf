// The claim queue under a backlog: does the worker drain as fast with 50,000 attempts waiting as
// with 2,000? A backlog forms when completes outpace the worker (a drop) or when `platform worker`
// is down for a while; a worker whose passes get slower as the backlog grows falls further behind.
//
// Per database, in one process (the domain functions, no HTTP: the worker is what is measured):
//   1. steady state: 2,000 attempts queued and drained, then (PostgreSQL) ANALYZE, as autovacuum
//      would have run while almost nothing was queued;
//   2. small queue: 2,000 attempts queued with the worker stopped, then drained (three times; the
//      median drain counts);
//   3. backlog: BENCH_BACKLOG attempts (default 50,000; --full 200,000) queued, then drained;
//   4. small queue again, now on a table that holds the backlog's resolved attempts.
// Printed: attempts resolved per second in 2, 3 and 4, the backlog's passes (first, median, last)
// in ms, and the ratio backlog / (2) (goal ≈ 1: a pass costs the same with a long queue and a long
// history), split into its two factors: the queue's length, backlog / (4), and the tables' size,
// (4) / (2) (inserts into indexes keyed by random addresses touch more pages as tables grow).
//
// `node bench/backlog.ts` (BENCH_DB=sqlite|postgres for one; BENCH_ROUNDS rounds, default 3, each
// on fresh tables: the ratio printed is the median of the rounds', with each round's load average).
// BENCH_ANALYZE_BACKLOG=1 (PostgreSQL): also ANALYZE once the backlog is queued, as autovacuum would
// on a table whose rows changed that much, so the drain runs on statistics that describe a backlog.
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { benchDatabases, fmt, median } from './lib/harness.ts';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { createClaims } from '../src/claims/documents.ts';
import { attemptClaim } from '../src/claims/attempts.ts';
import { ClaimWorker } from '../src/claims/queue.ts';
import type { AppContext } from '../src/context.ts';
import { toPlatformAddress } from '../src/shared/addresses.ts';
import { record } from './lib/record.ts';

const FULL = process.argv.includes('--full');
const BASELINE = 2000;
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? (FULL ? 200_000 : 50_000));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ANALYZE_BACKLOG = process.env.BENCH_ANALYZE_BACKLOG === '1';
const loadNow = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

/** Queues `n` attempts (500 accepted at a time) while no worker runs. */
async function queue(ctx: AppContext, n: number): Promise<void> {
  for (let i = 0; i < n; i += 500) {
    const chunk = Math.min(500, n - i);
    await Promise.all(
      Array.from({ length: chunk }, () =>
        attemptClaim(ctx, 'drop', toPlatformAddress(randomBytes(20)), { _expectedVersion: -1 }, null, true),
      ),
    );
  }
}

/** Drains the queue with one worker's passes; attempts per second and each pass's duration. */
async function drain(ctx: AppContext, n: number): Promise<{ perSecond: number; passes: number[]; cpuUs: number }> {
  const worker = new ClaimWorker(ctx, {});
  const passes: number[] = [];
  let done = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  while (done < n) {
    const t = performance.now();
    const resolved = await worker.pass();
    if (resolved === 0) throw new Error(`the queue stopped draining at ${done} of ${n}`);
    done += resolved;
    passes.push(performance.now() - t);
  }
  const cpu = process.cpuUsage(cpu0);
  return { perSecond: n / ((performance.now() - t0) / 1000), passes, cpuUs: (cpu.user + cpu.system) / n };
}

async function main(): Promise<void> {
  console.log(
    `# backlog: draining ${fmt(BACKLOG)} queued attempts vs ${fmt(BASELINE)} (one claim, numUses; one worker, batches of 100)`,
  );
  for (const db of await benchDatabases()) {
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) ratios.push(await oneRound(db, round));
    const name = db.name.padEnd(8);
    const ratio = median(ratios);
    console.log(
      `median      (${name}) ${fmt(ratio, 2)} of ${ROUNDS} rounds (${ratios.map((r) => fmt(r, 2)).join(' ')}); goal >= 0.9: ${ratio >= 0.9 ? 'met' : 'NOT met'}; load now ${loadNow()}`,
    );
    record(`backlog of ${BACKLOG} / small queue (${db.name})`, ratio, { goal: 0.9 });
  }
}

/** One round on fresh tables: the backlog / small-queue ratio. */
async function oneRound(db: Awaited<ReturnType<typeof benchDatabases>>[number], round: number): Promise<number> {
  const database = db.make();
  const ctx = await createContext(loadConfig({ ...process.env, ...database.env, LOG_LEVEL: 'silent' }));
  try {
    const actor = { platformAddress: toPlatformAddress(randomBytes(20)) };
    await createClaims(ctx, actor, [
      {
        claimId: 'drop',
        plugins: [{ pluginId: 'numUses', instanceId: 'n', publicParams: { maxUses: 1_000_000_000 } }],
      },
    ]);
    await queue(ctx, BASELINE);
    await drain(ctx, BASELINE);
    if (ctx.dialect === 'postgres') await sql`analyze claim_attempts`.execute(ctx.db);
    const base = async () => {
      // a short drain (~0.1–0.5 s): the median of three
      const runs: Array<{ perSecond: number; passes: number[]; cpuUs: number }> = [];
      for (let i = 0; i < 3; i++) {
        await queue(ctx, BASELINE);
        runs.push(await drain(ctx, BASELINE));
      }
      return runs.sort((a, b) => a.perSecond - b.perSecond)[1]!;
    };
    const before = await base();
    const tq = performance.now();
    await queue(ctx, BACKLOG);
    const queuedIn = (performance.now() - tq) / 1000;
    if (ANALYZE_BACKLOG && ctx.dialect === 'postgres') await sql`analyze claim_attempts`.execute(ctx.db);
    const big = await drain(ctx, BACKLOG);
    const after = await base();
    const p = big.passes;
    const name = db.name.padEnd(8);
    console.log(
      `round ${round + 1}/${ROUNDS} (${name}, load ${loadNow()})${ANALYZE_BACKLOG && ctx.dialect === 'postgres' ? ', ANALYZE during the backlog' : ''}`,
    );
    console.log(
      `small queue (${name}) ${fmt(before.perSecond)} resolved/s draining ${fmt(BASELINE)} (pass median ${fmt(median(before.passes), 1)} ms; ${fmt(before.cpuUs)} µs CPU per attempt) on a small table`,
    );
    console.log(
      `backlog     (${name}) ${fmt(big.perSecond)} resolved/s draining ${fmt(BACKLOG)} (queued in ${fmt(queuedIn, 1)} s; passes: first ${fmt(p[0]!, 1)} ms, median ${fmt(median(p), 1)} ms, last ${fmt(p[p.length - 1]!, 1)} ms; ${fmt(big.cpuUs)} µs CPU per attempt)`,
    );
    console.log(
      `small queue (${name}) ${fmt(after.perSecond)} resolved/s draining ${fmt(BASELINE)} (pass median ${fmt(median(after.passes), 1)} ms; ${fmt(after.cpuUs)} µs CPU per attempt) on the table after the backlog`,
    );
    console.log(
      `ratio       (${name}) ${fmt(big.perSecond / before.perSecond, 2)} backlog / small queue on a small table (goal ≈ 1) = queue length ${fmt(big.perSecond / after.perSecond, 2)} × table size ${fmt(after.perSecond / before.perSecond, 2)}`,
    );
    // the process's CPU (all threads) per attempt, which a loaded machine disturbs less than the rates
    console.log(
      `CPU ratio   (${name}) ${fmt(before.cpuUs / big.cpuUs, 2)} small queue / backlog CPU per attempt (goal ≈ 1) = queue length ${fmt(after.cpuUs / big.cpuUs, 2)} × table size ${fmt(before.cpuUs / after.cpuUs, 2)}`,
    );
    return big.perSecond / before.perSecond;
  } finally {
    await ctx.close();
    await database.drop();
  }
}

await main();
