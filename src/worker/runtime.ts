// One worker runtime for all background work. Each capability declares its loops in its own folder
// (`<capability>/loops.ts`) and in its Capability object (src/capabilities.ts). `serve` runs every loop unless
// RUN_WORKER=false; `platform worker` runs them without HTTP. A loop must be safe with several
// processes on one PostgreSQL: whatever it claims, it claims through the database (row leases,
// `for update skip locked`, advisory locks), never through process memory.
import type { AppContext } from '../context.ts';

export interface LoopHandle {
  /** Stops taking new work and finishes (or abandons safely) what is in flight. */
  stop(): Promise<void> | void;
}

export interface BackgroundLoop {
  /** Stable name, used by `platform worker --only` and in logs. */
  name: string;
  description: string;
  start(ctx: AppContext): LoopHandle;
}

/**
 * Starts the named loops of `all` (every one when `only` is absent); each is stopped when the
 * context closes. An unknown name is an error naming the known ones.
 */
export async function startLoops(
  ctx: AppContext,
  all: readonly BackgroundLoop[],
  only?: readonly string[],
): Promise<string[]> {
  if (only) {
    const unknown = only.filter((n) => !all.some((l) => l.name === n));
    if (unknown.length)
      throw new Error(
        `unknown background loop ${unknown.map((n) => `"${n}"`).join(', ')}; known: ${all.map((l) => l.name).join(', ')}`,
      );
  }
  const chosen = only ? all.filter((l) => only.includes(l.name)) : all;
  for (const loop of chosen) {
    const handle = loop.start(ctx);
    ctx.onClose.push(() => handle.stop());
  }
  return chosen.map((l) => l.name);
}

/**
 * A command that runs loops (`platform worker`, `platform indexer`): starts them, then waits for
 * SIGTERM or SIGINT and closes the context, which stops each loop as it allows. A failed start
 * closes the context too. `says` are the log lines of the start and of the stop.
 */
export async function runLoopsUntilSignal(
  ctx: AppContext,
  all: readonly BackgroundLoop[],
  only: readonly string[] | undefined,
  says: { started: string; stopping: string },
): Promise<void> {
  try {
    const started = await startLoops(ctx, all, only);
    ctx.log.info({ loops: started }, says.started);
  } catch (err) {
    await ctx.close();
    throw err;
  }
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  ctx.log.info(says.stopping);
  await ctx.close();
}
