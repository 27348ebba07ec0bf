// Chain-backed account views: placeholder until the indexer's read model lands.
import type { AppContext } from '../context.ts';
import { ChainError, chainClientFor } from '../chain/client.ts';
import { ApiError } from '../shared/errors.ts';
import type { AccountView } from './views.ts';

export type ChainViewType = 'transferActivity' | 'tokensCollected' | 'createdTokens' | 'managingTokens';

const pending = (field: string): AccountView => ({
  field,
  ownerOnly: false,
  load: async () => {
    throw new ApiError(503, 'Chain views are not available yet');
  },
});

export const chainViews: Record<ChainViewType, AccountView> = {
  transferActivity: pending('activity'),
  tokensCollected: pending('collected'),
  createdTokens: pending('createdTokens'),
  managingTokens: pending('managingTokens'),
};

/** The native denom's balance, or why it is unknown (the account answers either way). */
export interface NativeBalance {
  balance?: { amount: string; denom: string };
  balanceError?: string;
}

export const NATIVE_DENOM = 'ubadge';

export async function accountBalance(ctx: AppContext, address: string): Promise<NativeBalance> {
  const chain = chainClientFor(ctx);
  if (!chain) return { balanceError: 'The chain is not configured (CHAIN_REST_URL is unset), so the native balance is unknown' };
  try {
    return { balance: { amount: await chain.nativeBalance(address), denom: NATIVE_DENOM } };
  } catch (err) {
    if (err instanceof ChainError) return { balanceError: err.message };
    throw err;
  }
}
