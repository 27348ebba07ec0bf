// Bookmark pagination (SPEC §4.27), shared by every list route. A bookmark is an opaque keyset
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

function encode(keyring: Keyring, scope: string, values: Cursor): string {
  const payload = Buffer.from(JSON.stringify(values)).toString('base64url');
  return `${payload}.${keyring.sign(`${scope}|${payload}`)}`;
}

/** Decodes and verifies a bookmark; '' is the first page (null). Anything else invalid is a 400. */
export function decodeBookmark(keyring: Keyring, scope: string, bookmark: string | undefined, arity: number): Cursor | null {
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
  let q = opts.query as SelectQueryBuilder<any, any, Row>;
  if (cursor) {
    // (k0 op v0) OR (k0 = v0 AND k1 op v1) OR ..., plus the redundant bound k0 op= v0 in front:
    // it lets the planner seek the index to the cursor instead of scanning every earlier row
    // (SQLite does not derive a range from the OR), so deep pages cost what the first one does.
    q = q.where((eb) =>
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
  for (const key of keys) q = q.orderBy(sql.ref(key.column), key.direction);
  const rows = (await q.limit(pageSize + 1).execute()) as Row[];
  const hasMore = rows.length > pageSize;
  const docs = hasMore ? rows.slice(0, pageSize) : rows;
  const last = docs[docs.length - 1];
  const bookmark = hasMore && last ? encode(keyring, scope, keys.map((k) => last[field(k.column)] as string | number)) : '';
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
