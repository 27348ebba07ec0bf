// Group commit for the token endpoint's writes on SQLite. SQLite has one writer and pays for each
// commit (WAL frames, and the periodic checkpoint's fsync), so the writes of requests that arrive
// together are run one after another inside ONE transaction: the result of each is exactly what it
// would be alone (later statements see earlier ones), only the commit is shared. If the shared
// transaction fails, each job is retried in its own transaction so one failure cannot fail the others.
// PostgreSQL commits concurrently from its pool (and batching there could order row locks badly),
// so it runs each job in its own transaction.
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';

type Job<T> = { run: (tx: Tx) => Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void };

const queues = new WeakMap<DB, { jobs: Job<unknown>[]; scheduled: boolean }>();

async function flush(db: DB): Promise<void> {
  const q = queues.get(db)!;
  const jobs = q.jobs;
  q.jobs = [];
  q.scheduled = false;
  let results: unknown[];
  try {
    results = await db.transaction().execute(async (tx) => {
      const out: unknown[] = [];
      for (const job of jobs) out.push(await job.run(tx));
      return out;
    });
  } catch {
    for (const job of jobs) {
      try {
        job.resolve(await db.transaction().execute((tx) => job.run(tx)));
      } catch (err) {
        job.reject(err);
      }
    }
    return;
  }
  jobs.forEach((job, i) => job.resolve(results[i]));
}

/** Runs `run` in a transaction, sharing the commit with concurrent callers on SQLite. `run` may run twice (retry alone). */
export function groupTransaction<T>(ctx: AppContext, run: (tx: Tx) => Promise<T>): Promise<T> {
  if (ctx.dialect !== 'sqlite') return ctx.db.transaction().execute(run);
  let q = queues.get(ctx.db);
  if (!q) queues.set(ctx.db, (q = { jobs: [], scheduled: false }));
  return new Promise<T>((resolve, reject) => {
    q.jobs.push({ run, resolve, reject } as Job<unknown>);
    if (!q.scheduled) {
      q.scheduled = true;
      setImmediate(() => void flush(ctx.db));
    }
  });
}
