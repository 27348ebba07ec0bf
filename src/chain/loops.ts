// The chain indexer as a background loop (indexer.ts): started by `serve` (unless RUN_WORKER=false),
// `platform worker` and `platform indexer`. Safe with several processes: one holds the lease.
import type { AppContext } from '../context.ts';
import type { BackgroundLoop } from '../worker/runtime.ts';
import { chainClientFor } from './client.ts';
import { ChainIndexer } from './indexer.ts';

export const CHAIN_INDEXER_LOOP = 'chain-indexer';

export function createIndexer(ctx: AppContext): ChainIndexer | null {
  const client = chainClientFor(ctx);
  if (!client) return null;
  const c = ctx.config.chain;
  return new ChainIndexer(ctx, client, {
    startHeight: c.startHeight,
    pollIntervalMs: c.pollIntervalMs,
    batchSize: c.batchSize,
    leaseMs: c.leaseMs,
  });
}

export const chainLoops: BackgroundLoop[] = [
  {
    name: CHAIN_INDEXER_LOOP,
    description: 'follows chain blocks into the collections read model',
    start(ctx) {
      const indexer = createIndexer(ctx);
      if (!indexer) {
        ctx.log.info('chain indexer: CHAIN_REST_URL is not set; not indexing');
        return { stop: () => {} };
      }
      return indexer.start();
    },
  },
];
