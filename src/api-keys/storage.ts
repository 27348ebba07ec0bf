// API keys: 32 random bytes shown once; only their SHA-256 is stored.

import type { Generated, Selectable } from 'kysely';
import type { DB } from '../db/index.ts';
import { randomHex, sha256Hex } from '../shared/crypto.ts';

export interface ApiKeyTable {
  id: string;
  label: string;
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
  /** platformAddress of the console user who created the key; null for operator (CLI) keys. */
  owner: string | null;
  /** Last time the gate verified the key (written at most once a minute per key). */
  last_used_at: number | null;
  /** 1: the caller is a trusted backend that names its end user's IP in x-end-user-ip (set by the operator only). */
  trusted_backend: Generated<number>;
}

/** A rate-limit window's count (rate-limit.ts), shared by the processes on one database. */
export interface RateLimitWindowTable {
  bucket: string;
  window_start: number;
  taken: number;
}

export interface ApiKeyTables {
  api_keys: ApiKeyTable;
  rate_limit_windows: RateLimitWindowTable;
}

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends ApiKeyTables {}
}

export interface ApiKeyInfo {
  id: string;
  label: string;
  createdAt: number;
  revokedAt: number | null;
  trustedBackend: boolean;
}

const info = (r: Selectable<ApiKeyTable>): ApiKeyInfo => ({
  id: r.id,
  label: r.label,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  trustedBackend: Number(r.trusted_backend) === 1,
});

/**
 * Creates a key; the plaintext is returned here and never again. `owner`: the console user creating
 * it. `trustedBackend`: only for operator keys (the CLI), see docs/security.md "Guess throttle".
 */
export async function createApiKey(
  db: DB,
  label: string,
  now = Date.now(),
  owner: string | null = null,
  opts: { trustedBackend?: boolean } = {},
): Promise<ApiKeyInfo & { key: string }> {
  const key = randomHex(32);
  const row: Selectable<ApiKeyTable> = {
    id: `key_${randomHex(8)}`,
    label,
    key_hash: sha256Hex(key),
    created_at: now,
    revoked_at: null,
    owner,
    last_used_at: null,
    trusted_backend: opts.trustedBackend ? 1 : 0,
  };
  await db.insertInto('api_keys').values(row).execute();
  return { ...info(row), key };
}

export async function listApiKeys(db: DB): Promise<ApiKeyInfo[]> {
  const rows = await db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(info);
}

/**
 * Revokes the key `id` (of `owner` when given, else of anyone); false when there is no such key.
 * Revoking twice keeps the first revocation time.
 */
async function revoke(db: DB, id: string, owner: string | undefined, now: number): Promise<boolean> {
  let query = db.selectFrom('api_keys').select('id').where('id', '=', id);
  if (owner !== undefined) query = query.where('owner', '=', owner);
  if (!(await query.executeTakeFirst())) return false;
  await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
  return true;
}

/** Returns false when no key has that id. Revoking twice keeps the first revocation time. */
export const revokeApiKey = (db: DB, id: string, now = Date.now()): Promise<boolean> => revoke(db, id, undefined, now);

/** The active key whose plaintext hashes to `keyHash`, if any. */
export async function findActiveApiKeyByHash(
  db: DB,
  keyHash: string,
): Promise<{ id: string; last_used_at: number | null; trusted_backend: number } | undefined> {
  return db
    .selectFrom('api_keys')
    .select(['id', 'last_used_at', 'trusted_backend'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** Records a use; callers throttle (LAST_USE_RESOLUTION_MS) so a busy key is not a write per request. */
export const LAST_USE_RESOLUTION_MS = 60_000;
export async function touchApiKey(db: DB, id: string, now: number): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', id).execute();
}

// Keys owned by a console user (created in the console).

export interface OwnedApiKey {
  id: string;
  label: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const owned = (r: Pick<ApiKeyTable, 'id' | 'label' | 'created_at' | 'last_used_at' | 'revoked_at'>): OwnedApiKey => ({
  id: r.id,
  label: r.label,
  createdAt: String(r.created_at),
  lastUsedAt: r.last_used_at === null ? null : String(r.last_used_at),
  revokedAt: r.revoked_at === null ? null : String(r.revoked_at),
});

export async function listOwnedApiKeys(db: DB, owner: string): Promise<OwnedApiKey[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(['id', 'label', 'created_at', 'last_used_at', 'revoked_at'])
    .where('owner', '=', owner)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map(owned);
}

export async function countActiveOwnedApiKeys(db: DB, owner: string): Promise<number> {
  const r = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('owner', '=', owner)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Revokes a key of `owner`; false when `owner` has no key with that id. */
export const revokeOwnedApiKey = (db: DB, id: string, owner: string, now: number): Promise<boolean> =>
  revoke(db, id, owner, now);
