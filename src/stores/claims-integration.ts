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
 * Claim creation and update: may this store be attached, and with which secret? Returns the
 * dataSecret to store with the claim:
 * - the one given (the id + secret contract): the store must be the `creator`'s or the `caller`'s
 *   own, or `publicUseInClaims`; the secret itself is not checked here: a wrong or stale one shows
 *   up on each attempt as `Invalid data secret` (e.g. after the owner rotates it);
 * - none given, by the store's creator or manager (`caller`): the store's own secret, filled in
 *   here, so the claim's author never copies it;
 * - none given otherwise: none, for a `publicUseInClaims` store (which needs none).
 * Throws an ApiError otherwise: 404 unknown store, 403 not allowed.
 */
export async function attachStore(
  db: DB | Tx,
  keyring: Keyring,
  ref: StoreRef,
  creator: string,
  caller: string = creator,
): Promise<string | undefined> {
  const row =
    typeof ref.dynamicDataId === 'string' && ref.dynamicDataId ? await findStore(db, ref.dynamicDataId) : undefined;
  if (!row) throw notFound(`Dynamic data doc not found: ${ref.dynamicDataId}`);
  const owns = (address: string) => address === row.created_by || address === row.managed_by;
  if (ref.dataSecret === undefined && owns(caller)) return keyring.decrypt(row.data_secret_enc);
  if (row.public_use_in_claims) return ref.dataSecret;
  if (ref.dataSecret === undefined)
    throw forbidden(
      `Dynamic store ${ref.dynamicDataId} is not yours and not publicUseInClaims: only its creator or manager can attach it without its dataSecret`,
    );
  if (owns(creator) || owns(caller)) return ref.dataSecret;
  throw forbidden(
    `Dynamic store ${ref.dynamicDataId} belongs to another user and is not publicUseInClaims: only its creator or manager can attach it to a claim`,
  );
}
