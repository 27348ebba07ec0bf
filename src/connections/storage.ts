// Storage of the connections flow: pending requests (created by `start`, proven by a browser that
// controls the wallet, taken once by the callback) and links.
import type { DB, Tx } from '../db/index.ts';
import type { Chain } from '../shared/addresses.ts';
import { safeEqual } from '../shared/crypto.ts';
import type { ProviderId, SocialIdentity } from './providers.ts';

export interface ConnectionRequestTable {
  /** Public id of the request, named by the service's link page (`?request=`). */
  request_id: string;
  provider: string;
  platform_address: string;
  /** The address as the session holds it (0x or native): the link text names and signs it. */
  address: string;
  chain: Chain;
  /** The signed link text's nonce, issue and expiry times (the text is rebuilt from them). */
  nonce: string;
  issued_at: number;
  expires_at: number;
  /** When a browser proved control of the wallet; null until then. */
  proven_at: number | null;
  /** SHA-256 of the `state` sent to the provider (set at the proof). */
  state_hash: string | null;
  /** SHA-256 of the binding cookie of the browser that proved the wallet (set at the proof). */
  binding_hash: string | null;
  /** PKCE verifier, encrypted with the keyring (null for providers without PKCE, and until the proof). */
  code_verifier_enc: string | null;
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

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends ConnectionTables {}
}

export interface SocialConnection extends SocialIdentity {
  provider: ProviderId;
  linkedAt: number;
}

export async function insertRequest(db: DB, row: ConnectionRequestTable): Promise<void> {
  await db.insertInto('connection_requests').values(row).execute();
}

export async function findRequest(db: DB, requestId: string): Promise<ConnectionRequestTable | null> {
  return (
    (await db.selectFrom('connection_requests').selectAll().where('request_id', '=', requestId).executeTakeFirst()) ??
    null
  );
}

/** Records the proof: once per request and before its expiry (false when another proof came first or it expired). */
export async function markProven(
  db: DB,
  requestId: string,
  proof: Pick<ConnectionRequestTable, 'state_hash' | 'binding_hash' | 'code_verifier_enc'>,
  now: number,
): Promise<boolean> {
  const r = await db
    .updateTable('connection_requests')
    .set({ ...proof, proven_at: now })
    .where('request_id', '=', requestId)
    .where('proven_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export type Taken =
  | { outcome: 'unknown' }
  | { outcome: 'missing-binding' | 'binding-mismatch'; row: ConnectionRequestTable }
  | { outcome: 'taken'; row: ConnectionRequestTable };

/**
 * Takes a proven, unexpired request of `provider` by the hash of its `state`, for the browser whose
 * binding cookie hashes to `bindingHash` (compared in constant time). Taken once: it is deleted in
 * the same transaction. A request presented without its browser's cookie stays for that browser.
 */
export async function takeRequest(
  db: DB,
  stateHash: string,
  provider: ProviderId,
  now: number,
  bindingHash: string | null,
): Promise<Taken> {
  return db.transaction().execute(async (tx): Promise<Taken> => {
    const row = await tx
      .selectFrom('connection_requests')
      .selectAll()
      .where('state_hash', '=', stateHash)
      .executeTakeFirst();
    if (!row || row.binding_hash === null || row.provider !== provider || row.expires_at < now)
      return { outcome: 'unknown' };
    if (bindingHash === null) return { outcome: 'missing-binding', row };
    if (!safeEqual(bindingHash, row.binding_hash)) return { outcome: 'binding-mismatch', row };
    const { numDeletedRows } = await tx
      .deleteFrom('connection_requests')
      .where('request_id', '=', row.request_id)
      .executeTakeFirst();
    return numDeletedRows > 0n ? { outcome: 'taken', row } : { outcome: 'unknown' };
  });
}

export async function purgeExpiredRequests(db: DB, now: number): Promise<number> {
  const r = await db.deleteFrom('connection_requests').where('expires_at', '<', now).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Links (or re-links) the wallet's account at this provider. */
export async function saveConnection(
  db: DB,
  platformAddress: string,
  provider: ProviderId,
  identity: SocialIdentity,
  now: number,
): Promise<void> {
  await db
    .insertInto('social_connections')
    .values({
      platform_address: platformAddress,
      provider,
      provider_user_id: identity.id,
      username: identity.username,
      linked_at: now,
    })
    .onConflict((oc) =>
      oc
        .columns(['platform_address', 'provider'])
        .doUpdateSet({ provider_user_id: identity.id, username: identity.username, linked_at: now }),
    )
    .execute();
}

export async function listConnections(db: DB | Tx, platformAddress: string): Promise<SocialConnection[]> {
  const rows = await db
    .selectFrom('social_connections')
    .selectAll()
    .where('platform_address', '=', platformAddress)
    .orderBy('provider')
    .execute();
  return rows.map((r) => ({
    provider: r.provider as ProviderId,
    id: r.provider_user_id,
    username: r.username,
    linkedAt: Number(r.linked_at),
  }));
}

export async function findConnection(
  db: DB | Tx,
  platformAddress: string,
  provider: ProviderId,
): Promise<SocialIdentity | null> {
  const r = await db
    .selectFrom('social_connections')
    .select(['provider_user_id', 'username'])
    .where('platform_address', '=', platformAddress)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return r ? { id: r.provider_user_id, username: r.username } : null;
}

export async function deleteConnection(db: DB, platformAddress: string, provider: ProviderId): Promise<boolean> {
  const r = await db
    .deleteFrom('social_connections')
    .where('platform_address', '=', platformAddress)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return r.numDeletedRows > 0n;
}
