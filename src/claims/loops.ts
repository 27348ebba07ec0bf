// The claim queue: resolves queued attempts in order (claims/queue.ts); and the guess-window sweep.
import { sweepEvery } from '../shared/poll-loop.ts';
import type { BackgroundLoop } from '../worker/runtime.ts';
import { GUESS_MINUTE_MS, sweepGuessBuckets } from './guess-throttle.ts';
import { ClaimWorker } from './queue.ts';

export const claimLoops: BackgroundLoop[] = [
  {
    name: 'claim-queue',
    description: 'resolves queued claim attempts',
    start: (ctx) => new ClaimWorker(ctx).start(),
  },

  // Guess-throttle buckets (claims/guess-throttle.ts) idle for an hour are deleted; per-claim totals stay.
  {
    name: 'guess-window-sweep',
    description: 'deletes idle failed-guess buckets',
    start: (ctx) => ({
      stop: sweepEvery(ctx, GUESS_MINUTE_MS, () => sweepGuessBuckets(ctx), 'guess bucket sweep failed'),
    }),
  },
];
