// The read model's balance stores as ownership checks read them (plugins/mustOwnBadges.ts): one
// statement for an address's stores in several collections, and the parsed balances of each store
// kept per context, keyed by collection and address and checked against the stored text the
// statement returns anyway. A store the indexer rewrote (in this process or another one sharing
// the database) has another text, so it is parsed again: what the cache saves is only the parse
// (JSON, then every bound to a bigint), never the read.
import { CompiledQuery } from 'kysely';
import type { AppContext } from '../context.ts';
import { preparePostgres, type DB, type Tx } from '../db/index.ts';
import { balancesFromJson, type Balance } from '../shared/balances.ts';

interface ParsedStore {
  text: string;
  balances: Balance[];
}

/**
 * Parsed balance stores by address, then collection (`AppContext.balanceStores`). Bounded by
 * count and by the length of the texts it keeps; the addresses read least recently go first.
 */
export class ParsedBalanceStores {
  private readonly byAddress = new Map<string, Map<string, ParsedStore>>();
  private count = 0;
  private chars = 0;
  readonly maxEntries: number;
  readonly maxChars: number;

  constructor(maxEntries = 20_000, maxChars = 16_000_000) {
    this.maxEntries = maxEntries;
    this.maxChars = maxChars;
  }

  /** Stores kept, and the length of their texts. */
  get size(): { entries: number; chars: number } {
    return { entries: this.count, chars: this.chars };
  }

  /** The address's stores, as the next reads of it will look them up (most recently used last). */
  storesOf(address: string): Map<string, ParsedStore> {
    let stores = this.byAddress.get(address);
    if (stores) this.byAddress.delete(address);
    else stores = new Map();
    this.byAddress.set(address, stores);
    return stores;
  }

  /** The balances of the store whose text is `text`: parsed now unless it had that text last time. */
  balancesOf(stores: Map<string, ParsedStore>, collectionId: string, text: string): Balance[] {
    const kept = stores.get(collectionId);
    if (kept !== undefined && kept.text === text) return kept.balances;
    const balances = frozen(balancesFromJson((JSON.parse(text) as { balances?: [] }).balances ?? []));
    if (kept !== undefined) {
      this.count--;
      this.chars -= kept.text.length;
    }
    stores.set(collectionId, { text, balances });
    this.count++;
    this.chars += text.length;
    if (this.count > this.maxEntries || this.chars > this.maxChars) this.evict(stores);
    return balances;
  }

  /** Drops the least recently read addresses' stores until within bounds (`current`'s last). */
  private evict(current: Map<string, ParsedStore>): void {
    for (const [address, stores] of this.byAddress) {
      if (this.count <= this.maxEntries && this.chars <= this.maxChars) return;
      if (stores === current) continue;
      this.drop(address, stores);
    }
    // the address being read holds more than the bounds allow alone
    for (const [collectionId, kept] of current) {
      if (this.count <= this.maxEntries && this.chars <= this.maxChars) break;
      current.delete(collectionId);
      this.count--;
      this.chars -= kept.text.length;
    }
    if (current.size === 0)
      for (const [address, stores] of this.byAddress) if (stores === current) this.byAddress.delete(address);
  }

  private drop(address: string, stores: Map<string, ParsedStore>): void {
    this.byAddress.delete(address);
    for (const kept of stores.values()) {
      this.count--;
      this.chars -= kept.text.length;
    }
  }
}

/** Kept balances are shared by every later read: frozen, so that no reader can change them for the others. */
function frozen(balances: Balance[]): Balance[] {
  for (const b of balances) {
    for (const r of b.tokenIds) Object.freeze(r);
    for (const r of b.ownershipTimes) Object.freeze(r);
    Object.freeze(b.tokenIds);
    Object.freeze(b.ownershipTimes);
    Object.freeze(b);
  }
  return Object.freeze(balances) as Balance[];
}

// One text per dialect (SQLite: per number of collections); on PostgreSQL a named prepared statement.
const PG_STORES =
  'select "collection_id", "store_json" from "chain_balances" where "address" = $1 and "collection_id" = any($2::text[])';
preparePostgres(PG_STORES);
const sqliteStores = (n: number) =>
  `select "collection_id", "store_json" from "chain_balances" where "address" = ? and "collection_id" in (${'?, '.repeat(n - 1)}?)`;
// the texts of the usual sizes, made once (the statement cache finds a kept string faster: its hash is kept)
const sqliteTexts = Array.from({ length: 129 }, (_, n) => (n ? sqliteStores(n) : ''));

/**
 * The address's stored balances in these collections, by collection (a collection where the
 * indexer never saw the address touched is absent). One statement, on the SQLite fast path when
 * `db` is the deployment's own handle and Kysely is idle.
 */
export async function storedBalances(
  app: Pick<AppContext, 'db' | 'dialect' | 'sqlite' | 'balanceStores'>,
  db: DB | Tx,
  collectionIds: string[],
  address: string,
): Promise<Map<string, Balance[]>> {
  const out = new Map<string, Balance[]>();
  if (collectionIds.length === 0) return out;
  const query =
    app.dialect === 'postgres'
      ? CompiledQuery.raw(PG_STORES, [address, collectionIds])
      : CompiledQuery.raw(sqliteTexts[collectionIds.length] ?? sqliteStores(collectionIds.length), [
          address,
          ...collectionIds,
        ]);
  const rows = (
    (db === app.db ? app.sqlite?.run<{ collection_id: string; store_json: string }>(query) : null) ??
    (await db.executeQuery<{ collection_id: string; store_json: string }>(query))
  ).rows;
  const stores = rows.length ? app.balanceStores.storesOf(address) : null;
  for (const r of rows) out.set(r.collection_id, app.balanceStores.balancesOf(stores!, r.collection_id, r.store_json));
  return out;
}
