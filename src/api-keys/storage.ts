// API keys: 32 random bytes shown once; only their SHA-256 is stored.

import type { DB } from '../db/index.ts';
import { randomHex, sha256Hex } from '../shared/crypto.ts';

export interface ApiKeyTable {
  id: string;
  label: string;
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export interface ApiKeyInfo {
  id: string;
  label: string;
  createdAt: number;
  revokedAt: number | null;
}

const info = (r: ApiKeyTable): ApiKeyInfo => ({ id: r.id, label: r.label, createdAt: r.created_at, revokedAt: r.revoked_at });

/** Creates a key; the plaintext is returned here and never again. */
export async function createApiKey(db: DB, label: string, now = Date.now()): Promise<ApiKeyInfo & { key: string }> {
  const key = randomHex(32);
  const row: ApiKeyTable = { id: `key_${randomHex(8)}`, label, key_hash: sha256Hex(key), created_at: now, revoked_at: null };
  await db.insertInto('api_keys').values(row).execute();
  return { ...info(row), key };
}

export async function listApiKeys(db: DB): Promise<ApiKeyInfo[]> {
  const rows = await db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(info);
}

/** Returns false when no key has that id. Revoking twice keeps the first revocation time. */
export async function revokeApiKey(db: DB, id: string, now = Date.now()): Promise<boolean> {
  const found = await db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst();
  if (!found) return false;
  await db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  return true;
}

/** The active key whose plaintext hashes to `keyHash`, if any. */
export async function findActiveApiKeyByHash(db: DB, keyHash: string): Promise<{ id: string } | undefined> {
  return db.selectFrom('api_keys').select('id').where('key_hash', '=', keyHash).where('revoked_at', 'is', null).executeTakeFirst();
}

