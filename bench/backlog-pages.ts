// The claim queue under a backlog, in pages rather than time (SQLite): how many database pages each
// of the worker's passes writes, with a small queue on a small table and while it drains a backlog.
// A page a commit dirties is one WAL frame, so the count needs no quiet machine: the rates of
// bench/backlog.ts move 2–3× between runs at this machine's loads, these counts by a few percent.
// Random-keyed indexes written inside the batch (one entry per resolved attempt, at a place set by
// a random address) make a pass dirty more pages as the tables grow; the goal is a flat count.
//
// One process, the domain functions, without the background checkpointer (db/index.ts): 2,000 attempts queued and drained (warm-up); two small queues
// of 2,000; a backlog of BENCH_BACKLOG (default 50,000); two small queues again. The WAL is
// checkpointed (TRUNCATE) before each drain and not checkpointed during it (wal_autocheckpoint = 0),
// so the frames added during the drain are the pages it wrote. Printed: pages per pass (batches of
// 100) and the process's CPU per attempt of each drain, and the ratio backlog / small queue (the mean of the two before it).
//   node bench/backlog-pages.ts
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { attemptClaim } from '../src/claims/attempts.ts';
import { createClaims } from '../src/claims/documents.ts';
import { ClaimWorker } from '../src/claims/queue.ts';
import { loadConfig } from '../src/config.ts';
import { type AppContext, createContext } from '../src/context.ts';
import { toPlatformAddress } from '../src/shared/addresses.ts';
import { createTestDatabase } from '../test/helpers/app.ts';
import { fmt } from './lib/harness.ts';
import { record } from './lib/record.ts';

const SMALL = 2000;
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 50_000);

async function queue(ctx: AppContext, n: number): Promise<void> {
  for (let i = 0; i < n; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, n - i) }, () =>
        attemptClaim(ctx, 'drop', toPlatformAddress(randomBytes(20)), { _expectedVersion: -1 }, null, true),
      ),
    );
  }
}

async function main(): Promise<void> {
  const database = createTestDatabase('sqlite');
  // no background checkpoints: their thread's connection would restart the WAL during a drain
  const ctx = await createContext(loadConfig({ ...process.env, ...database.env, LOG_LEVEL: 'silent' }), {
    backgroundCheckpoints: false,
  });
  try {
    const rows = await sql<{ name: string; file: string }>`pragma database_list`.execute(ctx.db);
    const file = rows.rows.find((r) => r.name === 'main')!.file;
    const page = Number((await sql<{ page_size: number }>`pragma page_size`.execute(ctx.db)).rows[0]!.page_size);
    await sql`pragma wal_autocheckpoint = 0`.execute(ctx.db);
    // a WAL file holds a 32-byte header, then one frame (24-byte header + page) per page written
    const walSize = () => Math.max(32, statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    const drain = async (n: number) => {
      // a checkpoint that meets a reader cannot empty the WAL: tried again until it has
      for (let i = 0; walSize() > 32; i++) {
        await sql`pragma wal_checkpoint(TRUNCATE)`.execute(ctx.db);
        if (i === 100) throw new Error('the WAL could not be emptied before a drain');
        if (walSize() > 32) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const worker = new ClaimWorker(ctx, {});
      const cpu0 = process.cpuUsage();
      let done = 0;
      let passes = 0;
      while (done < n) {
        const resolved = await worker.pass();
        if (resolved === 0) throw new Error(`the queue stopped draining at ${done} of ${n}`);
        done += resolved;
        passes++;
      }
      const cpu = process.cpuUsage(cpu0);
      const frames = (walSize() - 32) / (page + 24);
      return { pages: frames / passes, cpuUs: (cpu.user + cpu.system) / n };
    };
    const small = async () => {
      const out = [];
      for (let i = 0; i < 2; i++) {
        await queue(ctx, SMALL);
        out.push(await drain(SMALL));
      }
      return out;
    };
    await createClaims(ctx, { platformAddress: toPlatformAddress(randomBytes(20)) }, [
      {
        claimId: 'drop',
        plugins: [{ pluginId: 'numUses', instanceId: 'n', publicParams: { maxUses: 1_000_000_000 } }],
      },
    ]);
    await queue(ctx, SMALL);
    await drain(SMALL);
    const before = await small();
    await queue(ctx, BACKLOG);
    const big = await drain(BACKLOG);
    const after = await small();
    const line = (name: string, runs: Array<{ pages: number; cpuUs: number }>) =>
      console.log(
        `${name.padEnd(34)} ${runs.map((r) => fmt(r.pages, 1)).join(', ')} pages per pass; ${runs.map((r) => fmt(r.cpuUs)).join(', ')} µs CPU per attempt`,
      );
    console.log(
      `# backlog-pages (sqlite): pages written per pass of 100 attempts; load ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
    line(`small queue (${fmt(SMALL)}), small table`, before);
    line(`backlog (${fmt(BACKLOG)})`, [big]);
    line(`small queue after the backlog`, after);
    const ratio = big.pages / ((before[0]!.pages + before[1]!.pages) / 2);
    console.log(`ratio (sqlite) ${fmt(ratio, 2)} backlog / small queue pages per pass (goal ≈ 1)`);
    record('backlog pages per pass / small queue (sqlite)', ratio, { better: 'lower' });
  } finally {
    await ctx.close();
    await database.drop();
  }
}

await main();
