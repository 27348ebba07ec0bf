// What the accounts capability reads of the chain: an address's views over the read model (with
// the reference client's document shapes) and its native balance (through the chain client).
import type { AppContext } from '../context.ts';
import { toCanonical } from '../shared/addresses.ts';
import { requireChainClient } from './client.ts';
import { addressActivityView, collectionsByRoleView, ownerDocsIn, tokensCollectedView, type Doc } from './views.ts';

export type AccountChainViewType = 'transferActivity' | 'tokensCollected' | 'createdTokens' | 'managingTokens';

/**
 * One page of an account view, newest first unless `oldestFirst`:
 *   - transferActivity: transfer legs the address sent or received (activity documents);
 *   - tokensCollected: its owner documents in collections where it holds some amount;
 *   - createdTokens / managingTokens: collection documents it created (`createdBy`) / manages.
 */
export async function accountChainView(
  ctx: AppContext,
  address: string,
  viewType: AccountChainViewType,
  opts: { bookmark?: string; oldestFirst?: boolean },
): Promise<{ docs: Doc[]; pagination: { bookmark: string; hasMore: boolean } }> {
  const native = toCanonical(address, 'address');
  const o = { bookmark: opts.bookmark, oldestFirst: opts.oldestFirst };
  const page =
    viewType === 'transferActivity'
      ? await addressActivityView(ctx, native, o)
      : viewType === 'tokensCollected'
        ? await tokensCollectedView(ctx, native, o)
        : await collectionsByRoleView(ctx, viewType === 'createdTokens' ? 'created_by' : 'manager', native, o);
  return { docs: page.docs, pagination: { bookmark: page.bookmark, hasMore: page.hasMore } };
}

/**
 * The address's owner documents in the collections of a createdTokens / managingTokens page, in
 * the page's order (the reference client reads those views' documents as owner documents).
 */
export function ownerDocsOfCollections(ctx: AppContext, address: string, collections: Doc[]): Promise<Doc[]> {
  return ownerDocsIn(ctx, address, collections);
}

/**
 * The address's native `ubadge` amount as a decimal string. Throws ChainError (503 when
 * CHAIN_REST_URL is unset or the chain is unreachable, 502 on a chain error).
 */
export async function nativeBalance(ctx: AppContext, address: string): Promise<string> {
  return requireChainClient(ctx).nativeBalance(toCanonical(address, 'address'));
}
