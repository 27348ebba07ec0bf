// One background loop that polls: run a round, wait, run the next, until stopped. Each round says
// how long to wait after it (0: go on at once, it left work behind); a wake() cuts the wait short,
// and one during a round skips the wait after it, so work signalled meanwhile is never left for a
// whole interval. stop() ends the wait and resolves once the round in flight has finished.
import type { FastifyBaseLogger } from 'fastify';

export interface PollLoop {
  /** Aborted when stop() is called: rounds check it to end early. */
  readonly signal: AbortSignal;
  wake(): void;
  stop(): Promise<void>;
}

export interface PollRounds {
  /** One round; resolves to the milliseconds to wait before the next. */
  round(): Promise<number>;
  /** A round threw (not after stop()): log it and return the milliseconds to wait before retrying. */
  onError(err: unknown): number;
}

export function startPollLoop(rounds: PollRounds): PollLoop {
  const abort = new AbortController();
  const { signal } = abort;
  let woken = false;
  let endWait: (() => void) | null = null;
  const done = (async () => {
    while (!signal.aborted) {
      woken = false;
      let waitMs: number;
      try {
        waitMs = await rounds.round();
      } catch (err) {
        if (signal.aborted) break;
        waitMs = rounds.onError(err);
      }
      if (signal.aborted) break;
      if (waitMs <= 0 || woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(finish, waitMs);
        function finish() {
          clearTimeout(timer);
          endWait = null;
          resolve();
        }
        endWait = finish;
      });
    }
  })();
  return {
    signal,
    wake() {
      woken = true;
      endWait?.();
    },
    async stop() {
      abort.abort();
      endWait?.();
      await done;
    },
  };
}

/**
 * A sweep on a fixed interval, for a background loop: `sweep` runs every `intervalMs` without
 * keeping the process alive; a failed run is logged (warn, `failed`) and the next one goes on.
 * Returns the function that stops it.
 */
export function sweepEvery(
  ctx: { log: Pick<FastifyBaseLogger, 'warn'> },
  intervalMs: number,
  sweep: () => Promise<unknown>,
  failed: string,
): () => void {
  const timer = setInterval(() => {
    sweep().catch((err) => ctx.log.warn({ err }, failed));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
