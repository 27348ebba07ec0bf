// Deletes connection requests nobody finished (they are useless after CONNECTION_REQUEST_TTL_MS).
import { sweepEvery } from '../shared/poll-loop.ts';
import type { BackgroundLoop } from '../worker/runtime.ts';
import { purgeExpiredRequests } from './storage.ts';

const PURGE_INTERVAL_MS = 10 * 60_000;

export const connectionLoops: BackgroundLoop[] = [
  {
    name: 'connections-cleanup',
    description: 'deletes expired social-connection requests',
    start: (ctx) => ({
      stop: sweepEvery(
        ctx,
        PURGE_INTERVAL_MS,
        () => purgeExpiredRequests(ctx.db, ctx.clock.now()),
        'connection request purge failed',
      ),
    }),
  },
];
