// The claim queue: resolves queued attempts in order (claims/queue.ts); and the guess-window sweep.
import { registerLoop } from '../worker/runtime.ts';
import { GUESS_WINDOW_MS, sweepGuessWindows } from './guess-throttle.ts';
import { ClaimWorker } from './queue.ts';

registerLoop({
  name: 'claim-queue',
  description: 'resolves queued claim attempts',
  start: (ctx) => new ClaimWorker(ctx).start(),
});

// Ended guess-throttle windows (claims/guess-throttle.ts): deleted after an hour; per-claim totals stay.
registerLoop({
  name: 'guess-window-sweep',
  description: 'deletes ended failed-guess windows',
  start(ctx) {
    const timer = setInterval(() => {
      sweepGuessWindows(ctx).catch((err) => ctx.log.warn({ err }, 'guess window sweep failed'));
    }, GUESS_WINDOW_MS);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  },
});
