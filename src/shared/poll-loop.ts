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
      const wait = wakeableWait(waitMs, () => (endWait = null));
      endWait = wait.wake;
      await wait.done;
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

/** A wait of `ms` that wake() ends early. */
export interface WakeableWait {
  readonly done: Promise<void>;
  wake(): void;
}

/**
 * The one way to wait for a wake-up, with a poll as the fallback: the poll loop's wait between
 * rounds, and a request's wait for a turn (claims/queue-wakeup.ts `waitForWake`). `onEnd` runs
 * synchronously when the wait ends (by wake() or by the timer), once.
 */
export function wakeableWait(ms: number, onEnd?: () => void): WakeableWait {
  let wake!: () => void;
  const done = new Promise<void>((resolve) => {
    let ended = false;
    const timer = setTimeout(finish, ms);
    function finish() {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      onEnd?.();
      resolve();
    }
    wake = finish;
  });
  return { done, wake };
}

/** A fallback poll's interval in round `round` of a wait: `firstMs`, doubling every round up to `longestMs`. */
export function backoffMs(round: number, firstMs: number, longestMs: number): number {
  return Math.min(longestMs, firstMs * 2 ** Math.min(round, 30));
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
