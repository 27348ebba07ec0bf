// The eligibility change log (migration 0024) is read by every answer; this timer, started with the
// capability's routes in each serving process, keeps the log short and reads it once a second, so
// that hosted-plugin results this process kept for an address whose balances a block changed are
// dropped even when no eligibility answer is asked for. (Not a worker loop: the loop registry's
// import cycle may not grow; the results it drops live in the serving process anyway.)
import type { AppContext } from '../context.ts';
import { dropChangedBalances } from './claim-index.ts';
import { pruneChanges } from './storage.ts';

/** Changes kept: a process further behind than this rebuilds its index from the claims. */
export const CHANGES_KEPT = 100_000;

export function startChangeReader(ctx: AppContext): void {
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
  ctx.onClose.push(() => clearInterval(timer));
}
