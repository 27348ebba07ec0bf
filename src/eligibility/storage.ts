// Eligibility storage: the change log the triggers of migration 0024 write (what changed, by whom
// ever wrote it), and the reads of one address's footprint: the collections it has a balance
// store in, the stores it is a member of, its claim numbers, its username. Each is one indexed
// query. And the claim state the engine reads, many (claim, instance, key) at once.
import type { Generated } from 'kysely';
import { usernamesOf } from '../accounts/storage.ts';
import { ADDRESS_NUMBERS, runHot } from '../claims/hot-sql.ts';
import type { DB, SqliteFastPath } from '../db/index.ts';

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
  /** The address's username (username-set reads it), or null. */
  username: string | null;
}

export async function readFootprint(db: DB, address: string): Promise<Footprint> {
  const [balances, stores, numbers, usernames] = await Promise.all([
    db.selectFrom('chain_balances').select('collection_id').where('address', '=', address).execute(),
    db.selectFrom('dynamic_store_members').select('dynamic_data_id').where('address', '=', address).execute(),
    runHot<{ claim_id: string; claim_number: number }>(db, ADDRESS_NUMBERS, [address]),
    usernamesOf(db, [address]),
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
    username: usernames.get(address) ?? null,
  };
}

/** One state value the engine reads: claim, instance, key. */
export interface StateKey {
  claimId: string;
  instanceId: string;
  key: string;
}

const stateKey = (k: StateKey) => `${k.claimId}\0${k.instanceId}\0${k.key}`;

/**
 * Stored state values (JSON text) of many (claim, instance, key) at once, by `claimId\0instanceId\0key`
 * (on SQLite's fast path, db/index.ts, when given and Kysely is idle);
 * absent keys are missing. One query per 256 claims, on all three columns of the primary key (each
 * a list: a few more rows than asked may come back, dropped here). The lists are padded to a power of two so that SQLite reuses a
 * few prepared statements.
 */
export async function readStateValues(db: DB, keys: StateKey[], fast?: SqliteFastPath): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (keys.length === 0) return out;
  const wanted = new Set(keys.map(stateKey));
  const claimIds = [...new Set(keys.map((k) => k.claimId))];
  const instances = pad([...new Set(keys.map((k) => k.instanceId))]);
  const names = pad([...new Set(keys.map((k) => k.key))]);
  for (let i = 0; i < claimIds.length; i += 256) {
    const query = db
      .selectFrom('claim_state')
      .select(['claim_id', 'instance_id', 'key', 'value'])
      .where('claim_id', 'in', pad(claimIds.slice(i, i + 256)))
      .where('instance_id', 'in', instances)
      .where('key', 'in', names)
      .compile();
    type Row = { claim_id: string; instance_id: string; key: string; value: string };
    const rows = (fast?.run<Row>(query) ?? (await db.executeQuery<Row>(query))).rows;
    for (const r of rows) {
      const k = stateKey({ claimId: r.claim_id, instanceId: r.instance_id, key: r.key });
      if (wanted.has(k)) out.set(k, r.value);
    }
  }
  return out;
}

/** The list, its last item repeated up to the next power of two. */
function pad(xs: string[]): string[] {
  let n = 1;
  while (n < xs.length) n *= 2;
  return xs.length === n ? xs : [...xs, ...Array<string>(n - xs.length).fill(xs[xs.length - 1])];
}

/**
 * The engine's state reads of one eligibility answer, gathered: reads asked for while the claims
 * answered together start are sent as one query (readStateValues) once they have all asked. Each
 * caller gets its own parsed value, as `readStateValue` gives it.
 */
export function batchedStateReader(
  db: DB,
  fast?: SqliteFastPath,
): (claimId: string, instanceId: string, key: string) => Promise<unknown> {
  let pending: Array<StateKey & { resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    try {
      const values = await readStateValues(db, batch, fast);
      for (const p of batch) {
        const v = values.get(stateKey(p));
        p.resolve(v === undefined ? undefined : (JSON.parse(v) as unknown));
      }
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  };
  return (claimId, instanceId, key) =>
    new Promise((resolve, reject) => {
      if (pending.length === 0) setImmediate(() => void flush());
      pending.push({ claimId, instanceId, key, resolve, reject });
    });
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
