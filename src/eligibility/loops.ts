// The eligibility change log (migration 0024) is read by every process at each answer; this loop
// keeps it short, and reads it once a second so that hosted-plugin results kept for an address
// whose balances a block changed are dropped even when no eligibility answer is asked for.
import { registerLoop } from '../worker/runtime.ts';
import { dropChangedBalances } from './claim-index.ts';
import { pruneChanges } from './storage.ts';

/** Changes kept: a process further behind than this rebuilds its index from the claims. */
export const CHANGES_KEPT = 100_000;

registerLoop({
  name: 'eligibility-changes',
  description: 'drops cached balance checks a committed block made stale; prunes the eligibility change log',
  start(ctx) {
    let busy = false;
    let mark = -1;
    let ticks = 0;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      (async () => {
        mark = await dropChangedBalances(ctx, mark);
        if (++ticks % 60 === 0) await pruneChanges(ctx.db, CHANGES_KEPT);
      })()
        .catch((err) => ctx.log.warn({ err }, 'eligibility change log read failed'))
        .finally(() => {
          busy = false;
        });
    }, 1000);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  },
});
