// Storage of dynamic stores. Membership is one row per (store, canonical address) keyed by
// both, so "is X in store S" is a primary-key probe and a store of a million addresses is never
// loaded as one value. Bulk edits send the addresses as ONE array parameter (json_each on
// SQLite, unnest/ANY on PostgreSQL), so a 10,000-address batch is one statement per kind.
import { PostgresAdapter, sql } from 'kysely';
import type { DB, Tx } from '../db/index.ts';

export interface DynamicStoreTable {
  dynamic_data_id: string;
  handler_id: string;
  label: string;
  /** dataSecret, encrypted at rest (keyring). */
  data_secret_enc: string;
  /** sha256 of dataSecret: compared in constant time, so checking a secret needs no decryption. */
  data_secret_hash: string;
  created_by: string;
  managed_by: string;
  public_use_in_claims: number;
  /** Number of member rows, maintained by every edit in the same transaction. */
  size: number;
  /** Last activity sequence number issued for this store. */
  activity_seq: number;
  created_at: number;
  last_updated: number;
}

export interface DynamicStoreMemberTable {
  dynamic_data_id: string;
  address: string;
}

export interface DynamicStoreActivityTable {
  dynamic_data_id: string;
  seq: number;
  updated_at: number;
  /** JSON array of the applied actions, addresses canonical. */
  actions: string;
}

/** Composed into the app's Database (src/db/schema.ts). */
export interface StoreTables {
  dynamic_stores: DynamicStoreTable;
  dynamic_store_members: DynamicStoreMemberTable;
  dynamic_store_activity: DynamicStoreActivityTable;
}

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends StoreTables {}
}

export type StoreRow = DynamicStoreTable;
type Db = DB | Tx;

const isPostgres = (db: Db) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function findStore(db: Db, dynamicDataId: string): Promise<StoreRow | undefined> {
  return db.selectFrom('dynamic_stores').selectAll().where('dynamic_data_id', '=', dynamicDataId).executeTakeFirst();
}

export async function insertStore(db: Db, row: StoreRow): Promise<void> {
  await db.insertInto('dynamic_stores').values(row).execute();
}

export async function updateStoreRow(
  db: Db,
  dynamicDataId: string,
  set: Partial<Omit<StoreRow, 'dynamic_data_id'>>,
): Promise<StoreRow | undefined> {
  return db
    .updateTable('dynamic_stores')
    .set(set)
    .where('dynamic_data_id', '=', dynamicDataId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Starts an edit: takes the store's row lock (PostgreSQL; SQLite write transactions are already
 * exclusive), so edits of one store apply one after another, and issues the next activity numbers.
 */
export async function beginEdit(
  tx: Tx,
  dynamicDataId: string,
  activityRows: number,
  now: number,
): Promise<StoreRow | undefined> {
  return tx
    .updateTable('dynamic_stores')
    .set((eb) => ({ activity_seq: eb('activity_seq', '+', activityRows), last_updated: now }))
    .where('dynamic_data_id', '=', dynamicDataId)
    .returningAll()
    .executeTakeFirst();
}

export async function adjustSize(tx: Tx, dynamicDataId: string, delta: number): Promise<void> {
  if (delta === 0) return;
  await tx
    .updateTable('dynamic_stores')
    .set((eb) => ({ size: eb('size', '+', delta) }))
    .where('dynamic_data_id', '=', dynamicDataId)
    .execute();
}

/** Deletes the store, its members and its history; false when there was no such store. */
export async function deleteStoreRows(tx: Tx, dynamicDataId: string): Promise<boolean> {
  const r = await tx.deleteFrom('dynamic_stores').where('dynamic_data_id', '=', dynamicDataId).executeTakeFirst();
  await tx.deleteFrom('dynamic_store_members').where('dynamic_data_id', '=', dynamicDataId).execute();
  await tx.deleteFrom('dynamic_store_activity').where('dynamic_data_id', '=', dynamicDataId).execute();
  return Number(r.numDeletedRows) > 0;
}

/** The membership probe: one primary-key lookup. */
export async function hasMember(db: Db, dynamicDataId: string, address: string): Promise<boolean> {
  const row = await db
    .selectFrom('dynamic_store_members')
    .select('address')
    .where('dynamic_data_id', '=', dynamicDataId)
    .where('address', '=', address)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * A store and whether the address is a member. Lookups through one handle that start together
 * (the whitelist claims of one eligibility answer, evaluated at once) are read with two queries
 * for all of them (the stores, then the memberships) instead of one each.
 */
export function findStoreAndMember(
  db: Db,
  dynamicDataId: string,
  address: string,
): Promise<{ public_use_in_claims: number; data_secret_hash: string; member: boolean } | undefined> {
  let batch = pendingMembers.get(db);
  if (!batch) {
    const fresh: MemberBatch = { keys: [], result: null };
    fresh.result = new Promise((resolve, reject) => {
      setImmediate(() => {
        pendingMembers.delete(db);
        readStoresAndMembers(db, fresh.keys).then(resolve, reject);
      });
    });
    pendingMembers.set(db, (batch = fresh));
  }
  batch.keys.push({ dynamicDataId, address });
  return batch.result!.then((r) => {
    const store = r.stores.get(dynamicDataId);
    return (
      store && {
        public_use_in_claims: store.public_use_in_claims,
        data_secret_hash: store.data_secret_hash,
        member: r.members.has(`${dynamicDataId}\0${address}`),
      }
    );
  });
}
interface MemberBatch {
  keys: Array<{ dynamicDataId: string; address: string }>;
  result: Promise<{
    stores: Map<string, { public_use_in_claims: number; data_secret_hash: string }>;
    members: Set<string>;
  }> | null;
}
const pendingMembers = new WeakMap<Db, MemberBatch>();

async function readStoresAndMembers(db: Db, keys: Array<{ dynamicDataId: string; address: string }>) {
  if (keys.length === 1) {
    // one lookup: one round trip
    const [{ dynamicDataId, address }] = keys;
    const row = await db
      .selectFrom('dynamic_stores as s')
      .leftJoin('dynamic_store_members as m', (join) =>
        join.onRef('m.dynamic_data_id', '=', 's.dynamic_data_id').on('m.address', '=', address),
      )
      .select(['s.dynamic_data_id', 's.public_use_in_claims', 's.data_secret_hash', 'm.address'])
      .where('s.dynamic_data_id', '=', dynamicDataId)
      .executeTakeFirst();
    return {
      stores: new Map(row ? [[row.dynamic_data_id, row]] : []),
      members: new Set(row && row.address !== null ? [`${dynamicDataId}\0${address}`] : []),
    };
  }
  const ids = [...new Set(keys.map((k) => k.dynamicDataId))];
  const addresses = [...new Set(keys.map((k) => k.address))];
  const stores = await db
    .selectFrom('dynamic_stores')
    .select(['dynamic_data_id', 'public_use_in_claims', 'data_secret_hash'])
    .where('dynamic_data_id', 'in', ids)
    .execute();
  const members = await db
    .selectFrom('dynamic_store_members')
    .select(['dynamic_data_id', 'address'])
    .where('dynamic_data_id', 'in', ids)
    .where('address', 'in', addresses)
    .execute();
  return {
    stores: new Map(stores.map((r) => [r.dynamic_data_id, r])),
    members: new Set(members.map((r) => `${r.dynamic_data_id}\0${r.address}`)),
  };
}

const CHUNK = 50_000;

/** Adds canonical addresses (duplicates and present ones ignored); returns how many were new. */
export async function addMembers(db: Db, dynamicDataId: string, addresses: string[]): Promise<number> {
  let added = 0;
  for (let i = 0; i < addresses.length; i += CHUNK) {
    const part = addresses.slice(i, i + CHUNK);
    const q = isPostgres(db)
      ? sql`insert into dynamic_store_members (dynamic_data_id, address)
            select ${dynamicDataId}, a from unnest(${part}::text[]) as a
            on conflict do nothing`
      : // `where true` resolves SQLite's parse ambiguity between SELECT … ON and an upsert clause
        sql`insert into dynamic_store_members (dynamic_data_id, address)
            select ${dynamicDataId}, value from json_each(${JSON.stringify(part)}) where true
            on conflict do nothing`;
    const r = await q.execute(db);
    added += Number(r.numAffectedRows ?? 0n);
  }
  return added;
}

/** Removes canonical addresses (absent ones ignored); returns how many were removed. */
export async function removeMembers(db: Db, dynamicDataId: string, addresses: string[]): Promise<number> {
  let removed = 0;
  for (let i = 0; i < addresses.length; i += CHUNK) {
    const part = addresses.slice(i, i + CHUNK);
    const q = isPostgres(db)
      ? sql`delete from dynamic_store_members where dynamic_data_id = ${dynamicDataId} and address = any(${part}::text[])`
      : sql`delete from dynamic_store_members where dynamic_data_id = ${dynamicDataId}
            and address in (select value from json_each(${JSON.stringify(part)}))`;
    const r = await q.execute(db);
    removed += Number(r.numAffectedRows ?? 0n);
  }
  return removed;
}

/** The first `limit` members in address order (the inline `data` of a store document). */
export async function firstMembers(db: Db, dynamicDataId: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('dynamic_store_members')
    .select('address')
    .where('dynamic_data_id', '=', dynamicDataId)
    .orderBy('address')
    .limit(limit)
    .execute();
  return rows.map((r) => r.address);
}

export async function insertActivity(tx: Tx, rows: DynamicStoreActivityTable[]): Promise<void> {
  if (rows.length) await tx.insertInto('dynamic_store_activity').values(rows).execute();
}
