// Eligibility storage: the change log the triggers of migration 0024 write (what changed, by whom
// ever wrote it), and the reads of one address's footprint: the collections it has a balance
// store in, the stores it is a member of, its claim numbers. Each is one indexed query.
import type { Generated } from 'kysely';
import type { DB } from '../db/index.ts';

export interface EligibilityChangeTable {
  seq: Generated<number>;
  /** 'claim' | 'store' | 'collection' | 'balance'. */
  kind: string;
  /** Claim id, dynamic data id, collection id, or the address of a balance. */
  k1: string;
  /** The collection of a balance; '' otherwise. */
  k2: string;
}

export interface EligibilityTables {
  eligibility_changes: EligibilityChangeTable;
}
declare module '../db/schema.ts' {
  interface Database extends EligibilityTables {}
}

export interface Change {
  seq: number;
  kind: string;
  k1: string;
  k2: string;
}

/** Changes after `after` (inclusive of nothing before it), oldest first, at most `limit`. */
export async function changesAfter(db: DB, after: number, limit: number): Promise<Change[]> {
  const rows = await db
    .selectFrom('eligibility_changes')
    .select(['seq', 'kind', 'k1', 'k2'])
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

export async function latestChange(db: DB): Promise<number> {
  const row = await db
    .selectFrom('eligibility_changes')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

/** Keeps the newest `keep` changes (a process further behind rebuilds its index). */
export async function pruneChanges(db: DB, keep: number): Promise<void> {
  const latest = await latestChange(db);
  if (latest > keep)
    await db
      .deleteFrom('eligibility_changes')
      .where('seq', '<=', latest - keep)
      .execute();
}

export async function oldestChange(db: DB): Promise<number> {
  const row = await db
    .selectFrom('eligibility_changes')
    .select((eb) => eb.fn.min('seq').as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

export interface Footprint {
  /** Collections in which the address has a balance store of its own (else it holds the defaults). */
  collections: string[];
  /** Stores the address is a member of. */
  stores: string[];
  /** Claim numbers by claim id. */
  claimNumbers: Map<string, number[]>;
}

export async function readFootprint(db: DB, address: string): Promise<Footprint> {
  const [balances, stores, numbers] = await Promise.all([
    db.selectFrom('chain_balances').select('collection_id').where('address', '=', address).execute(),
    db.selectFrom('dynamic_store_members').select('dynamic_data_id').where('address', '=', address).execute(),
    db
      .selectFrom('claim_numbers')
      .select(['claim_id', 'claim_number'])
      .where('platform_address', '=', address)
      .orderBy('claim_id')
      .orderBy('claim_number')
      .execute(),
  ]);
  const claimNumbers = new Map<string, number[]>();
  for (const r of numbers) {
    const list = claimNumbers.get(r.claim_id);
    if (list) list.push(r.claim_number);
    else claimNumbers.set(r.claim_id, [r.claim_number]);
  }
  return {
    collections: balances.map((r) => r.collection_id),
    stores: stores.map((r) => r.dynamic_data_id),
    claimNumbers,
  };
}

/** Per-address state keys (`a:<address>`) of these claims, by claim id. */
export async function addressStateKeys(db: DB, claimIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (let i = 0; i < claimIds.length; i += 500) {
    const rows = await db
      .selectFrom('claim_state')
      .select(['claim_id', 'key'])
      .where('claim_id', 'in', claimIds.slice(i, i + 500))
      .where('key', 'like', 'a:%')
      .execute();
    for (const r of rows) {
      const list = out.get(r.claim_id);
      if (list) list.push(r.key.slice(2));
      else out.set(r.claim_id, [r.key.slice(2)]);
    }
  }
  return out;
}
