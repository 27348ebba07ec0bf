// Reading one block: the block (its raw txs give the order), the results of its txs, then the
// chain's own state of everything its events touched, pinned to that height
// (`x-cosmos-block-height`). Nothing is written here; the indexer commits the result.
import { isChainNotFound, type ChainClient } from './client.ts';
import { collectTouched } from './events.ts';
import type { AmountTrackerRecord, BalanceRecord, BlockWork, ChallengeRecord, CollectionRecord } from './model.ts';

/** Runs `fn` with at most `n` in flight (shared by all blocks of a batch). */
export function limiter(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((r) => queue.push(r));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      queue.shift()?.();
    }
  };
}

/** Reads one block and the chain state it touched, pinned to its height. Nothing is written. */
export async function readBlock(
  client: ChainClient,
  height: number,
  isKnown: (ids: string[]) => Promise<Set<string>>,
  run: <T>(fn: () => Promise<T>) => Promise<T>,
): Promise<BlockWork> {
  const block = await run(() => client.block(height));
  const results = await run(() => client.blockResults(height, block.txs));
  const touched = collectTouched(height, block.time, results);
  const pinned = { height };

  // collection documents: those a message changed, and those the read model has never seen
  const known = await isKnown([...touched.mentioned]);
  const toRead = new Map(touched.collections);
  for (const id of touched.mentioned) {
    if (!known.has(id) && !toRead.has(id)) {
      const tx = touched.activity.find((a) => a.collectionId === id)?.doc.txHash;
      toRead.set(id, typeof tx === 'string' ? tx : '');
    }
  }
  const collections: CollectionRecord[] = await Promise.all(
    [...toRead].map(async ([collectionId, txHash]) => ({
      collectionId,
      txHash,
      doc: await run(() => client.collection(collectionId, pinned)),
    })),
  );
  const gone = new Set(collections.filter((c) => c.doc === null).map((c) => c.collectionId));

  const balances: BalanceRecord[] = [];
  await Promise.all(
    [...touched.balances].map(async ([k, txHash]) => {
      const [collectionId, address] = k.split('\n');
      if (gone.has(collectionId)) return;
      try {
        balances.push({
          collectionId,
          address,
          txHash,
          store: await run(() => client.balance(collectionId, address, pinned)),
        });
      } catch (err) {
        // the collection vanished in this block without a message we recognise: confirm, then purge it
        if (isChainNotFound(err) && (await run(() => client.collection(collectionId, pinned))) === null) {
          if (!gone.has(collectionId)) {
            gone.add(collectionId);
            collections.push({ collectionId, txHash, doc: null });
          }
          return;
        }
        throw err;
      }
    }),
  );
  // deterministic order (concurrent reads finish in any order)
  balances.sort((a, b) => (a.collectionId + a.address < b.collectionId + b.address ? -1 : 1));

  const amountTrackers: AmountTrackerRecord[] = [];
  await Promise.all(
    [...touched.amountTrackers].map(async ([docId, key]) => {
      if (gone.has(key.collectionId)) return;
      const tracker = await run(() => client.approvalTracker(key, pinned));
      if (tracker) amountTrackers.push({ key, docId, tracker });
    }),
  );
  const challenges: ChallengeRecord[] = [];
  await Promise.all(
    [...touched.challenges].map(async ([docId, c]) => {
      if (gone.has(c.key.collectionId)) return;
      const used = await Promise.all(
        c.leaves.map(async (leaf) =>
          (await run(() => client.challengeTracker(c.key, leaf.leafIndex, pinned))) !== '0' ? leaf : null,
        ),
      );
      const leaves = used.filter((l): l is { leafIndex: string; usedBy: string } => l !== null);
      if (leaves.length) challenges.push({ key: c.key, docId, leaves });
    }),
  );

  return {
    height,
    time: block.time,
    activity: touched.activity,
    balances,
    collections,
    amountTrackers,
    challenges,
    txs: results.length,
    failedTxs: touched.failedTxs,
  };
}
