// The contract between dynamic stores and the claims engine's `whitelist` plugin
// (privateParams { useDynamicStore: true, dynamicDataId, dataSecret }). Owned by the stores
// capability; the claims capability only calls these two functions.
//
// A read is one query: the store row joined to a primary-key probe of the member table, inside the caller's transaction
// when one is passed, so a claim sees an edit as soon as the action route has answered.
import type { DB, Tx } from '../db/index.ts';
import type { Keyring } from '../shared/crypto.ts';
import { forbidden, notFound } from '../shared/errors.ts';
import { secretMatches } from './domain.ts';
import { findStore, findStoreAndMember } from './storage.ts';

export interface StoreRef {
  dynamicDataId: string;
  dataSecret?: string;
}

export type StoreMembership = { error: 'Dynamic data doc not found' | 'Invalid data secret' } | { inStore: boolean };

/**
 * Whether `platformAddress` (canonical form) is in the store, as a claim attempt reads it.
 * A store with `publicUseInClaims` needs no secret; otherwise `dataSecret` must match.
 */
export async function readStoreMembership(
  db: DB | Tx,
  _keyring: Keyring,
  ref: StoreRef,
  platformAddress: string,
): Promise<StoreMembership> {
  if (typeof ref.dynamicDataId !== 'string' || !ref.dynamicDataId) return { error: 'Dynamic data doc not found' };
  const row = await findStoreAndMember(db, ref.dynamicDataId, platformAddress);
  if (!row) return { error: 'Dynamic data doc not found' };
  if (!row.public_use_in_claims && !secretMatches(row, ref.dataSecret)) return { error: 'Invalid data secret' };
  return { inStore: row.member };
}

/**
 * Claim creation and update: may `creator` (canonical address) attach this store? Attaching a
 * store one does not own needs `publicUseInClaims: true`. Throws an ApiError (404 unknown store,
 * 403 not allowed) otherwise. The secret is not checked here: a wrong or stale secret shows up
 * on each attempt as `Invalid data secret` (e.g. after the owner rotates it).
 */
export async function assertCanAttachStore(
  db: DB | Tx,
  _keyring: Keyring,
  ref: StoreRef,
  creator: string,
): Promise<void> {
  const row =
    typeof ref.dynamicDataId === 'string' && ref.dynamicDataId ? await findStore(db, ref.dynamicDataId) : undefined;
  if (!row) throw notFound(`Dynamic data doc not found: ${ref.dynamicDataId}`);
  if (creator === row.created_by || creator === row.managed_by) return;
  if (!row.public_use_in_claims) {
    throw forbidden(
      `Dynamic store ${ref.dynamicDataId} belongs to another user and is not publicUseInClaims: only its creator or manager can attach it to a claim`,
    );
  }
}
