// Periodic deletion of sign-in rows that can no longer matter (signin/cleanup.ts).
import { registerLoop } from '../worker/runtime.ts';
import { SWEEP_INTERVAL_MS, sweepSignin } from './cleanup.ts';

registerLoop({
  name: 'signin-cleanup',
  description: 'deletes ended sign-in requests, codes and tokens',
  start(ctx) {
    const timer = setInterval(() => {
      sweepSignin(ctx).catch((err) => ctx.log.warn({ err }, 'sign-in sweep failed'));
    }, SWEEP_INTERVAL_MS);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  },
});
