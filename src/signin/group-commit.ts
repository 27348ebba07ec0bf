// Group commit for the token endpoint's writes on SQLite. SQLite has one writer and pays for each
// commit (WAL frames written), so the writes of requests that arrive together run one after another
// inside ONE transaction: the result of each is exactly what it would be alone (later statements
// see earlier ones), only the commit is shared. If the shared transaction fails, each job is retried
// in its own transaction so one failure cannot fail the others.
//
// A job is a statement program: a generator that yields each statement and receives its result.
// That lets one definition run synchronously on SQLite's fast path (no promise per statement) and
// asynchronously through Kysely otherwise. PostgreSQL commits concurrently from its pool (and
// batching there could order row locks badly), so it runs each job in its own transaction.
import type { CompiledQuery, QueryResult } from 'kysely';
import type { AppContext } from '../context.ts';
import type { Tx } from '../db/index.ts';
import { TurnBatcher } from '../shared/turn-batcher.ts';

export type Program<T> = Generator<CompiledQuery, T, QueryResult<unknown>>;

type Job<T> = { program: () => Program<T>; resolve: (v: T) => void; reject: (e: unknown) => void };

/** Runs a program's statements synchronously with `run`. */
function runSync<T>(program: Program<T>, run: (q: CompiledQuery) => QueryResult<unknown>): T {
  let step = program.next();
  while (!step.done) step = program.next(run(step.value));
  return step.value;
}

/** Runs a program's statements through a Kysely transaction. */
async function runAsync<T>(program: Program<T>, tx: Tx): Promise<T> {
  let step = program.next();
  while (!step.done) step = program.next(await tx.executeQuery(step.value));
  return step.value;
}

type Runner = Pick<AppContext, 'sqlite' | 'db'>;

/** Runs a program in one transaction: SQLite's fast path when the connection is free, else Kysely. */
async function runTransaction<T>(ctx: Runner, program: () => Program<T>): Promise<T> {
  const fast = ctx.sqlite?.transaction((run) => runSync(program(), run));
  return fast ? fast.value : ctx.db.transaction().execute((tx) => runAsync(program(), tx));
}

/** One per context (AppContext.signinCommits): the jobs of one turn share one commit. */
export type GroupCommit = TurnBatcher<Job<unknown>>;

export function createGroupCommit(ctx: Runner): GroupCommit {
  return new TurnBatcher((jobs) => void flush(ctx, jobs));
}

async function flush(ctx: Runner, jobs: Job<unknown>[]): Promise<void> {
  let results: unknown[];
  try {
    // the batch is itself a program: each job's statements in turn, in one transaction
    results = await runTransaction(ctx, function* () {
      const out: unknown[] = [];
      for (const job of jobs) out.push(yield* job.program());
      return out;
    });
  } catch {
    for (const job of jobs) {
      try {
        job.resolve(await runTransaction(ctx, job.program));
      } catch (err) {
        job.reject(err);
      }
    }
    return;
  }
  jobs.forEach((job, i) => job.resolve(results[i]));
}

/** Runs `program` in a transaction, sharing the commit with concurrent callers on SQLite. It may run twice (retried alone). */
export function groupTransaction<T>(
  ctx: Pick<AppContext, 'dialect' | 'sqlite' | 'db' | 'signinCommits'>,
  program: () => Program<T>,
): Promise<T> {
  if (ctx.dialect !== 'sqlite') return runTransaction(ctx, program);
  return new Promise<T>((resolve, reject) => ctx.signinCommits.add({ program, resolve, reject } as Job<unknown>));
}
