// Bookmark pagination (docs/api.md), shared by every list route. A bookmark is an opaque keyset
// cursor: the sort-key values of the last row returned, signed so it cannot be forged or edited,
// and bound to the list it came from. `''` asks for the first page; `hasMore` is exact because
// one row beyond the page is fetched, so a client never gets a trailing empty page.
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Keyring } from './crypto.ts';
import { badRequest } from './errors.ts';

export const DEFAULT_PAGE_SIZE = 25;

export interface SortKey {
  /** Column as written in the query (`t.created_at`); the row must expose it by its last segment. */
  column: string;
  direction: 'asc' | 'desc';
}

export interface Page<Row> {
  docs: Row[];
  bookmark: string;
  hasMore: boolean;
}

type Cursor = (string | number)[];

/** Newest first by `created_at`, ties broken by the unique column `id` (the last key must be unique). */
export const newestFirst = (id: string, idDirection: SortKey['direction'] = 'desc'): SortKey[] => [
  { column: 'created_at', direction: 'desc' },
  { column: id, direction: idDirection },
];

/** The same page, each row turned into what the list answers. */
export const mapPage = <Row, Doc>(page: Page<Row>, fn: (row: Row) => Doc): Page<Doc> => ({
  docs: page.docs.map(fn),
  bookmark: page.bookmark,
  hasMore: page.hasMore,
});

/** A bookmark for a list that pages in memory (its scope binds it to that list). */
export const encodeBookmark = (keyring: Keyring, scope: string, values: Cursor): string =>
  encode(keyring, scope, values);

function encode(keyring: Keyring, scope: string, values: Cursor): string {
  const payload = Buffer.from(JSON.stringify(values)).toString('base64url');
  return `${payload}.${keyring.sign(`${scope}|${payload}`)}`;
}

/** Decodes and verifies a bookmark; '' is the first page (null). Anything else invalid is a 400. */
export function decodeBookmark(
  keyring: Keyring,
  scope: string,
  bookmark: string | undefined,
  arity: number,
): Cursor | null {
  if (bookmark === undefined || bookmark === '') return null;
  const [payload, sig, extra] = bookmark.split('.');
  if (!payload || !sig || extra !== undefined || !keyring.verify(`${scope}|${payload}`, sig)) {
    throw badRequest('Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.');
  }
  const values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
  if (!Array.isArray(values) || values.length !== arity) throw badRequest('Invalid bookmark');
  return values as Cursor;
}

const field = (column: string) => column.slice(column.lastIndexOf('.') + 1);

/** Rows strictly after `cursor` in the order of `keys` (all rows when null). */
function afterCursor<Row>(
  query: SelectQueryBuilder<any, any, Row>,
  keys: SortKey[],
  cursor: Cursor | null,
): SelectQueryBuilder<any, any, Row> {
  if (!cursor) return query;
  // (k0 op v0) OR (k0 = v0 AND k1 op v1) OR ..., plus the redundant bound k0 op= v0 in front:
  // it lets the planner seek the index to the cursor instead of scanning every earlier row
  // (SQLite does not derive a range from the OR), so deep pages cost what the first one does.
  return query.where((eb) =>
    eb.and([
      eb(sql.ref(keys[0].column), keys[0].direction === 'asc' ? '>=' : '<=', cursor[0]),
      eb.or(
        keys.map((key, i) =>
          eb.and([
            ...keys.slice(0, i).map((prev, j) => eb(sql.ref(prev.column), '=', cursor[j])),
            eb(sql.ref(key.column), key.direction === 'asc' ? '>' : '<', cursor[i]),
          ]),
        ),
      ),
    ]),
  );
}

/**
 * Like `paginate`, for a list whose membership a SQL filter cannot express (a token id inside a
 * JSON balance list, a regular expression): rows are read in order, in batches, and `keep`
 * decides. A page holds `pageSize` kept rows and `hasMore` is exact, except that one request
 * reads at most `maxScan` rows: past that it answers the rows kept so far (possibly none) with a
 * bookmark at the last row read, so every request is bounded and paging still covers every row
 * exactly once (a bookmark is a position in the order, whether or not its row was kept).
 */
export async function paginateFiltered<DB, TB extends keyof DB, Row extends Record<string, unknown>>(opts: {
  query: SelectQueryBuilder<DB, TB, Row>;
  keys: SortKey[];
  bookmark: string | undefined;
  keyring: Keyring;
  scope: string;
  keep: (row: Row) => boolean;
  pageSize?: number;
  batchSize?: number;
  maxScan?: number;
}): Promise<Page<Row>> {
  const { keys, keyring, scope } = opts;
  const pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
  const batchSize = opts.batchSize ?? 200;
  const maxScan = opts.maxScan ?? 5000;
  const position = (row: Row): Cursor => keys.map((k) => row[field(k.column)] as string | number);
  let cursor = decodeBookmark(keyring, scope, opts.bookmark, keys.length);
  const kept: Row[] = [];
  let scanned = 0;
  for (;;) {
    let q = afterCursor(opts.query as SelectQueryBuilder<any, any, Row>, keys, cursor);
    for (const key of keys) q = q.orderBy(sql.ref(key.column), key.direction);
    const rows = (await q.limit(batchSize).execute()) as Row[];
    for (const row of rows) {
      scanned++;
      cursor = position(row);
      if (!opts.keep(row)) {
        if (scanned >= maxScan) return { docs: kept, bookmark: encode(keyring, scope, cursor), hasMore: true };
        continue;
      }
      if (kept.length === pageSize)
        return { docs: kept, bookmark: encode(keyring, scope, position(kept[kept.length - 1])), hasMore: true };
      kept.push(row);
      if (scanned >= maxScan && kept.length < pageSize)
        return { docs: kept, bookmark: encode(keyring, scope, cursor), hasMore: true };
    }
    if (rows.length < batchSize) return { docs: kept, bookmark: '', hasMore: false };
  }
}

/**
 * Runs `query` one page at a time in the order of `keys` (the last key must be unique, e.g. an
 * id, so the order is total). `scope` names the list (route plus its filters) so a bookmark from
 * one list is refused by another.
 */
export async function paginate<DB, TB extends keyof DB, Row extends Record<string, unknown>>(opts: {
  query: SelectQueryBuilder<DB, TB, Row>;
  keys: SortKey[];
  bookmark: string | undefined;
  keyring: Keyring;
  scope: string;
  pageSize?: number;
}): Promise<Page<Row>> {
  const { keys, keyring, scope } = opts;
  const pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
  const cursor = decodeBookmark(keyring, scope, opts.bookmark, keys.length);
  let q = afterCursor(opts.query as SelectQueryBuilder<any, any, Row>, keys, cursor);
  for (const key of keys) q = q.orderBy(sql.ref(key.column), key.direction);
  const rows = (await q.limit(pageSize + 1).execute()) as Row[];
  const hasMore = rows.length > pageSize;
  const docs = hasMore ? rows.slice(0, pageSize) : rows;
  const last = docs[docs.length - 1];
  const bookmark =
    hasMore && last
      ? encode(
          keyring,
          scope,
          keys.map((k) => last[field(k.column)] as string | number),
        )
      : '';
  return { docs, bookmark, hasMore };
}

/**
 * A list this service keeps no data for (marketplace listings, floor prices, points): always one
 * empty page. A bookmark is still checked, so one this list never issued is refused like any
 * other list's (it issues none: every bookmark but '' is foreign).
 */
export function emptyPage<Row>(keyring: Keyring, scope: string, bookmark: string | undefined): Page<Row> {
  decodeBookmark(keyring, scope, bookmark, 1);
  return { docs: [], bookmark: '', hasMore: false };
}
