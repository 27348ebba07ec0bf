// The contract between dynamic stores and the claims engine's `whitelist` plugin
// (privateParams { useDynamicStore: true, dynamicDataId, dataSecret }). Owned by the stores
// capability; the claims capability only calls these two functions.
import type { DB, Tx } from '../db/index.ts';
import type { Keyring } from '../shared/crypto.ts';
import { notFound } from '../shared/errors.ts';

export interface StoreRef {
  dynamicDataId: string;
  dataSecret?: string;
}

export type StoreMembership =
  | { error: 'Dynamic data doc not found' | 'Invalid data secret' }
  | { inStore: boolean };

/**
 * Whether `platformAddress` (canonical form) is in the store, as a claim attempt reads it.
 * A store with `publicUseInClaims` needs no secret; otherwise `dataSecret` must match.
 */
export async function readStoreMembership(_db: DB | Tx, _keyring: Keyring, _ref: StoreRef, _platformAddress: string): Promise<StoreMembership> {
  // Replaced by the dynamic stores capability (issue 5).
  return { error: 'Dynamic data doc not found' };
}

/**
 * Claim creation and update: may `creator` (canonical address) attach this store? Attaching a
 * store one does not own needs `publicUseInClaims: true`. Throws an ApiError (404 unknown store,
 * 403 not allowed) otherwise.
 */
export async function assertCanAttachStore(_db: DB | Tx, _keyring: Keyring, ref: StoreRef, _creator: string): Promise<void> {
  // Replaced by the dynamic stores capability (issue 5).
  throw notFound(`Dynamic data doc not found: ${ref.dynamicDataId}`);
}
