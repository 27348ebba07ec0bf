// The indexer's lag, from the database alone (any process can report it): the chain head the
// indexer last saw minus the height it has committed.
import type { DB } from '../db/index.ts';
import { readIndexState } from './storage.ts';

export interface IndexerLag {
  indexedHeight: number;
  chainHeight: number;
  lag: number;
  updatedAt: number;
}

export async function indexerLag(db: DB, liveChainHeight?: number): Promise<IndexerLag | null> {
  const s = await readIndexState(db);
  if (!s) return null;
  const chainHeight = Math.max(s.chainHeight, liveChainHeight ?? 0);
  return { indexedHeight: s.height, chainHeight, lag: Math.max(0, chainHeight - s.height), updatedAt: s.updatedAt };
}
