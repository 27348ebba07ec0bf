// Deletes connection requests nobody finished (they are useless after CONNECTION_REQUEST_TTL_MS).
import type { BackgroundLoop } from '../worker/runtime.ts';
import { purgeExpiredRequests } from './storage.ts';

const PURGE_INTERVAL_MS = 10 * 60_000;

export const connectionLoops: BackgroundLoop[] = [
  {
    name: 'connections-cleanup',
    description: 'deletes expired social-connection requests',
    start(ctx) {
      const timer = setInterval(() => {
        purgeExpiredRequests(ctx.db, ctx.clock.now()).catch((err) =>
          ctx.log.warn({ err }, 'connection request purge failed'),
        );
      }, PURGE_INTERVAL_MS);
      timer.unref();
      return { stop: () => clearInterval(timer) };
    },
  },
];
