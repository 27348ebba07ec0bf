// The eligibility change log (migration 0024) is read by every answer; this loop, started with the
// capability's routes in each serving process, keeps the log short and reads it once a second, so
// that hosted-plugin results this process kept for an address whose balances a block changed are
// dropped even when no eligibility answer is asked for. (Not a worker loop: the results it drops
// live in the serving process, which may run no worker loops.)
import type { AppContext } from '../context.ts';
import { startPollLoop } from '../shared/poll-loop.ts';
import { dropChangedBalances } from './claim-index.ts';
import { pruneChanges } from './storage.ts';

/** Changes kept: a process further behind than this rebuilds its index from the claims. */
export const CHANGES_KEPT = 100_000;

export function startChangeReader(ctx: AppContext): void {
  let mark = -1;
  let rounds = 0;
  const loop = startPollLoop({
    async round() {
      mark = await dropChangedBalances(ctx, mark);
      if (++rounds % 60 === 0) await pruneChanges(ctx.db, CHANGES_KEPT);
      return 1000;
    },
    onError(err) {
      ctx.log.warn({ err }, 'eligibility change log read failed');
      return 1000;
    },
  });
  ctx.onClose.push(() => loop.stop());
}
