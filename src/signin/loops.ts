// Periodic deletion of sign-in rows that can no longer matter (signin/cleanup.ts).
import type { BackgroundLoop } from '../worker/runtime.ts';
import { REQUEST_SWEEP_INTERVAL_MS, SWEEP_INTERVAL_MS, sweepSignin, sweepSigninRequests } from './cleanup.ts';

export const signinLoops: BackgroundLoop[] = [
  {
    name: 'signin-cleanup',
    description: 'deletes ended sign-in requests, codes and tokens',
    start(ctx) {
      const timer = setInterval(() => {
        sweepSignin(ctx).catch((err) => ctx.log.warn({ err }, 'sign-in sweep failed'));
      }, SWEEP_INTERVAL_MS);
      timer.unref();
      // expired challenges go within a minute
      const requests = setInterval(() => {
        sweepSigninRequests(ctx).catch((err) => ctx.log.warn({ err }, 'sign-in request sweep failed'));
      }, REQUEST_SWEEP_INTERVAL_MS);
      requests.unref();
      return {
        stop() {
          clearInterval(timer);
          clearInterval(requests);
        },
      };
    },
  },
];
