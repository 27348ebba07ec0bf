// Periodic deletion of sign-in rows that can no longer matter (signin/cleanup.ts).
import { sweepEvery } from '../shared/poll-loop.ts';
import type { BackgroundLoop } from '../worker/runtime.ts';
import { REQUEST_SWEEP_INTERVAL_MS, SWEEP_INTERVAL_MS, sweepSignin, sweepSigninRequests } from './cleanup.ts';

export const signinLoops: BackgroundLoop[] = [
  {
    name: 'signin-cleanup',
    description: 'deletes ended sign-in requests, codes and tokens',
    start(ctx) {
      const stops = [
        sweepEvery(ctx, SWEEP_INTERVAL_MS, () => sweepSignin(ctx), 'sign-in sweep failed'),
        // expired challenges go within a minute
        sweepEvery(ctx, REQUEST_SWEEP_INTERVAL_MS, () => sweepSigninRequests(ctx), 'sign-in request sweep failed'),
      ];
      return {
        stop() {
          for (const stop of stops) stop();
        },
      };
    },
  },
];
