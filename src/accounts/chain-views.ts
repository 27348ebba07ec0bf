// Chain-backed parts of an account: the views over the indexer's read model (as fresh as the
// indexer; they answer while the chain is down) and the native balance, read live from the chain.
import type { AppContext } from '../context.ts';
import {
  accountChainView,
  nativeBalance,
  ownerDocsOfCollections,
  type AccountChainViewType,
} from '../chain/account-views.ts';
import { ChainError } from '../chain/client.ts';
import type { AccountView, ViewDoc } from './views.ts';

export type ChainViewType = AccountChainViewType;

const chainView = (viewType: ChainViewType, field: string): AccountView => ({
  field,
  ownerOnly: false,
  async load(ctx, address, req) {
    const { docs, pagination } = await accountChainView(ctx, address, viewType, req);
    return { docs, ...pagination };
  },
});

export const chainViews: Record<ChainViewType, AccountView> = {
  /** Transfer legs the address sent or received: activity documents. */
  transferActivity: chainView('transferActivity', 'activity'),
  /** Owner (balance) documents of the collections where the address holds an amount above 0. */
  tokensCollected: chainView('tokensCollected', 'collected'),
  /** Collection documents: created by the address, or managed by it now. */
  createdTokens: chainView('createdTokens', 'collections'),
  managingTokens: chainView('managingTokens', 'collections'),
};

/**
 * The tokens route's answer for the created / managing views: the account's owner document in each
 * collection of the page, in its order (the reference client maps that route's documents as owner
 * documents whatever the view).
 */
export const ownerDocsOfPage = (ctx: AppContext, address: string, docs: ViewDoc[]): Promise<ViewDoc[]> =>
  ownerDocsOfCollections(ctx, address, docs);

/** The native denom's balance, or why it is unknown (the account answers either way). */
export interface NativeBalance {
  balance?: { amount: string; denom: string };
  balanceError?: string;
}

export const NATIVE_DENOM = 'ubadge';

export async function accountBalance(ctx: AppContext, address: string): Promise<NativeBalance> {
  try {
    return { balance: { amount: await nativeBalance(ctx, address), denom: NATIVE_DENOM } };
  } catch (err) {
    if (err instanceof ChainError) return { balanceError: `Native balance unknown: ${err.message}` };
    throw err;
  }
}
