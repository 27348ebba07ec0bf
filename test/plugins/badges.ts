// Shared steps of the must-own-badges tests: UintRanges and asset requirements as a claim's
// plugin takes them, and the read model's collection 7 that both files check against.
import type { DB } from '../../src/db/index.ts';
import { importSnapshot, parseSnapshot } from '../../src/chain/import.ts';
import { bal, balanceStore, collectionDoc } from '../helpers/fake-chain.ts';

type Balance = ReturnType<typeof bal>;

export const range = (start: number | string, end: number | string = start) => ({
  start: String(start),
  end: String(end),
});

/** One asset requirement: `ids` of the collection, owned in `amounts`, during `times` (none: now). */
export const asset = (
  collectionId: string,
  ids: [number, number],
  amounts: [string | number, string | number],
  times: Array<[number, number]> = [],
) => ({
  chain: 'BitBadges',
  collectionId,
  assetIds: [range(ids[0], ids[1])],
  ownershipTimes: times.map(([s, e]) => range(s, e)),
  mustOwnAmounts: range(amounts[0], amounts[1]),
});

/**
 * Imports collection 7 into the read model: `a` owns 5 of tokens 1-10, then `aAlso`, then 3 of
 * token 20 only during [1000, 2000]; `b` owns 9 of tokens 1-10.
 */
export async function importCollection7(db: DB, now: number, a: string, b: string, aAlso: Balance[] = []) {
  await importSnapshot(
    db,
    parseSnapshot({
      height: '1',
      blockTime: '2026-07-13T12:00:00Z',
      collections: [collectionDoc('7', a)],
      balances: [
        {
          collectionId: '7',
          address: a,
          balance: balanceStore([
            bal(5, 1, 10),
            ...aAlso,
            { amount: '3', tokenIds: [range(20)], ownershipTimes: [range(1000, 2000)] },
          ]),
        },
        { collectionId: '7', address: b, balance: balanceStore([bal(9, 1, 10)]) },
      ],
    }),
    now,
  );
}
