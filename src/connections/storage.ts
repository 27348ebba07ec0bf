// Storage of the connections flow: pending requests keyed by the hash of their state, and links.
import type { DB, Tx } from '../db/index.ts';
import type { ProviderId, SocialIdentity } from './providers.ts';

export interface ConnectionRequestTable {
  state_hash: string;
  provider: string;
  platform_address: string;
  /** PKCE verifier, encrypted with the keyring (null for providers without PKCE). */
  code_verifier_enc: string | null;
  expires_at: number;
}

export interface SocialConnectionTable {
  platform_address: string;
  provider: string;
  provider_user_id: string;
  username: string;
  linked_at: number;
}

export interface ConnectionTables {
  connection_requests: ConnectionRequestTable;
  social_connections: SocialConnectionTable;
}

export interface SocialConnection extends SocialIdentity {
  provider: ProviderId;
  linkedAt: number;
}

export async function insertRequest(db: DB, row: ConnectionRequestTable): Promise<void> {
  await db.insertInto('connection_requests').values(row).execute();
}

/** Takes a pending request (one use: it is deleted in the same statement's transaction). */
export async function takeRequest(db: DB, stateHash: string): Promise<ConnectionRequestTable | null> {
  return db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('connection_requests').selectAll().where('state_hash', '=', stateHash).executeTakeFirst();
    if (!row) return null;
    const { numDeletedRows } = await tx.deleteFrom('connection_requests').where('state_hash', '=', stateHash).executeTakeFirst();
    return numDeletedRows > 0n ? row : null;
  });
}

export async function purgeExpiredRequests(db: DB, now: number): Promise<number> {
  const r = await db.deleteFrom('connection_requests').where('expires_at', '<', now).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Links (or re-links) the wallet's account at this provider. */
export async function saveConnection(db: DB, platformAddress: string, provider: ProviderId, identity: SocialIdentity, now: number): Promise<void> {
  await db
    .insertInto('social_connections')
    .values({ platform_address: platformAddress, provider, provider_user_id: identity.id, username: identity.username, linked_at: now })
    .onConflict((oc) => oc.columns(['platform_address', 'provider']).doUpdateSet({ provider_user_id: identity.id, username: identity.username, linked_at: now }))
    .execute();
}

export async function listConnections(db: DB | Tx, platformAddress: string): Promise<SocialConnection[]> {
  const rows = await db.selectFrom('social_connections').selectAll().where('platform_address', '=', platformAddress).orderBy('provider').execute();
  return rows.map((r) => ({ provider: r.provider as ProviderId, id: r.provider_user_id, username: r.username, linkedAt: Number(r.linked_at) }));
}

export async function findConnection(db: DB | Tx, platformAddress: string, provider: ProviderId): Promise<SocialIdentity | null> {
  const r = await db
    .selectFrom('social_connections')
    .select(['provider_user_id', 'username'])
    .where('platform_address', '=', platformAddress)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return r ? { id: r.provider_user_id, username: r.username } : null;
}

export async function deleteConnection(db: DB, platformAddress: string, provider: ProviderId): Promise<boolean> {
  const r = await db.deleteFrom('social_connections').where('platform_address', '=', platformAddress).where('provider', '=', provider).executeTakeFirst();
  return r.numDeletedRows > 0n;
}
