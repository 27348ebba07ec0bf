// must-own-badges (hosted): the address meets `ownershipRequirements` (plugins/ownership.ts).
// Balances come from the chain read model when the indexer holds the collection (a warm read is
// one primary-key probe; a simulation reads it on a read replica when one is configured:
// `readModel`), else from the chain itself; a chain that cannot be read fails the check with a
// clear text, never a pass. With `combineLinkedWallets: true` the balances of the wallets
// linked to the claimer (plugins/linked.ts) are summed per token and time before the check.
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';
import { chainClientFor } from '../chain/client.ts';
import { storedBalances } from '../chain/stored-balances.ts';
import { balancesFromJson, sumBalances, type Balance } from '../shared/balances.ts';
import { afterMicrotasks } from '../shared/turn-batcher.ts';
import { definePlugin } from './define.ts';
import { COMBINE_FIELD, holdersOf, LINKED_ELSEWHERE } from './linked.ts';
import {
  checkKnownBalances,
  checkRequirement,
  collectionsOf,
  parseRequirement,
  requirementToJson,
  type BalanceReader,
  type Requirement,
} from './ownership.ts';

interface Pub {
  ownershipRequirements: unknown;
  combineLinkedWallets?: boolean;
}

class UnreadableBalance extends Error {}

/** An address's balances in a collection: read model first (with the collection's defaults for an address never touched), then the chain. */
export async function readBalances(
  app: AppContext,
  db: DB | Tx,
  collectionId: string,
  address: string,
): Promise<Balance[]> {
  const row = await db
    .selectFrom('chain_balances')
    .select('store_json')
    .where('collection_id', '=', collectionId)
    .where('address', '=', address)
    .executeTakeFirst();
  if (row) return app.balanceStores.balancesOf(app.balanceStores.storesOf(address), collectionId, row.store_json);
  const collection = await db
    .selectFrom('chain_collections')
    .select('doc_json')
    .where('collection_id', '=', collectionId)
    .executeTakeFirst();
  if (collection)
    return balancesFromJson(
      (JSON.parse(collection.doc_json) as { defaultBalances?: { balances?: [] } }).defaultBalances?.balances ?? [],
    );
  const client = chainClientFor(app);
  if (!client)
    throw new UnreadableBalance(
      `Collection ${collectionId} is not indexed by this service and no chain is configured to read it from.`,
    );
  try {
    return balancesFromJson((await client.balance(collectionId, address)).balances);
  } catch (err) {
    throw new UnreadableBalance(
      `Could not read balances of collection ${collectionId} from the chain: ${(err as Error).message}`,
    );
  }
}

/**
 * The address's stored balance stores in these collections, by collection: one query, run on the
 * SQLite fast path when Kysely is idle (the project's way for hot reads, db/index.ts). Reads of one
 * address through one handle that start together (the claims of one eligibility answer, evaluated
 * at once) are one query over all their collections.
 */
async function indexedBalances(
  app: AppContext,
  db: DB | Tx,
  collectionIds: string[],
  address: string,
): Promise<Map<string, Balance[]>> {
  let byAddress = pendingBalances.get(db);
  if (!byAddress) pendingBalances.set(db, (byAddress = new Map()));
  let batch = byAddress.get(address);
  if (!batch) {
    const fresh: BalanceBatch = { collections: new Set(), stores: null };
    fresh.stores = new Promise((resolve, reject) => {
      const flush = () => {
        byAddress.delete(address);
        if (byAddress.size === 0) pendingBalances.delete(db);
        storedBalances(app, db, [...fresh.collections], address).then(resolve, reject);
      };
      // SQLite: the claims answered together advance through microtasks alone (the statements are
      // synchronous), so the reads they start together have all been asked for once those ran,
      // without waiting for the next turn; PostgreSQL: the next turn, which also gathers the
      // claims woken by the other replies of this one (a round trip dwarfs the wait)
      if (app.dialect === 'postgres') setImmediate(flush);
      else afterMicrotasks(flush);
    });
    byAddress.set(address, (batch = fresh));
  }
  for (const id of collectionIds) batch.collections.add(id);
  return batch.stores!;
}
interface BalanceBatch {
  collections: Set<string>;
  stores: Promise<Map<string, Balance[]>> | null;
}
const pendingBalances = new WeakMap<DB | Tx, Map<string, BalanceBatch>>();

/** Balances for one requirement and address: one read model query, then defaults or the chain per collection. */
function requirementReader(
  app: AppContext,
  db: DB | Tx,
  indexed: Map<string, Balance[]>,
  address: string,
): (collectionId: string) => Promise<Balance[]> {
  return async (collectionId) => indexed.get(collectionId) ?? readBalances(app, db, collectionId, address);
}

/** Several addresses' balances summed per collection (linked wallets counted together). */
async function combinedReader(
  app: AppContext,
  db: DB | Tx,
  req: Requirement,
  addresses: string[],
): Promise<BalanceReader> {
  const readers: Array<(collectionId: string) => Promise<Balance[]>> = [];
  for (const a of addresses)
    readers.push(requirementReader(app, db, await indexedBalances(app, db, collectionsOf(req), a), a));
  return async (collectionId) => {
    const lists: Balance[][] = [];
    for (const read of readers) lists.push(await read(collectionId));
    return sumBalances(lists);
  };
}

/**
 * The plugin's verdict: null when the address meets the requirement, else why (an unreadable chain
 * is a failure). `holders`: whose balances count, summed (the address alone by default).
 */
async function verdict(
  app: AppContext,
  db: DB | Tx,
  req: Requirement,
  address: string,
  now: number,
  holders: string[] = [address],
): Promise<string | null> {
  try {
    if (holders.length === 1 && holders[0] === address) {
      const indexed = await indexedBalances(app, db, collectionsOf(req), address);
      // every store the verdict needs was in the read model: no further read, nothing to wait for
      const known = checkKnownBalances(req, address, now, indexed);
      if (known !== undefined) return known;
      return await checkRequirement(req, address, now, requirementReader(app, db, indexed, address));
    }
    return await checkRequirement(req, address, now, await combinedReader(app, db, req, holders));
  } catch (err) {
    if (err instanceof UnreadableBalance) return err.message;
    throw err;
  }
}

export interface OwnershipGroupResult {
  /** Where the group is in the requirement, e.g. `assetOwnershipRequirements.$or[1]`. */
  group: string;
  success: boolean;
  error?: string;
}

/**
 * `POST /api/v0/verifyOwnershipRequirements`: the must-own-badges evaluation for an address and a
 * requirement, with the verdict of each top-level group ($and / $or member, or the requirement
 * itself when it is one group of assets). Invalid requirements are the plugin's 400s.
 */
export async function verifyOwnershipRequirements(
  app: AppContext,
  address: string,
  requirement: unknown,
  path: string,
): Promise<{ success: boolean; errorMessage?: string; groups: OwnershipGroupResult[] }> {
  const req = parseRequirement(requirement, path);
  const now = app.clock.now();
  const members: Array<[string, Requirement]> =
    '$and' in req
      ? req.$and.map((r, i) => [`${path}.$and[${i}]`, r])
      : '$or' in req
        ? req.$or.map((r, i) => [`${path}.$or[${i}]`, r])
        : [[path, req]];
  const groups = await Promise.all(
    members.map(async ([group, r]) => {
      const why = await verdict(app, app.db, r, address, now);
      return why === null ? { group, success: true } : { group, success: false, error: why };
    }),
  );
  const why = await verdict(app, app.db, req, address, now);
  return why === null ? { success: true, groups } : { success: false, errorMessage: why, groups };
}

// parsed requirements, once per stored params object
const parsed = new WeakMap<object, Requirement>();

export const mustOwnBadges = definePlugin<Pub>({
  id: 'must-own-badges',
  params: {
    public: [
      {
        key: 'ownershipRequirements',
        type: 'ownershipRequirements',
        required: true,
        parse: (v, path) => requirementToJson(parseRequirement(v, path)),
      },
      COMBINE_FIELD,
    ],
  },
  async evaluate(ctx) {
    let req = parsed.get(ctx.publicParams);
    if (!req)
      parsed.set(
        ctx.publicParams,
        (req = parseRequirement(ctx.publicParams.ownershipRequirements, 'ownershipRequirements')),
      );
    const holders = await holdersOf(ctx);
    if (!holders) return { success: false, error: LINKED_ELSEWHERE };
    // the read model: a replica in a simulation, the primary (or the transaction) otherwise
    const why = await verdict(ctx.app, ctx.readModel ?? ctx.db, req, ctx.platformAddress, ctx.now, holders);
    return why ? { success: false, error: why } : { success: true };
  },
});
