// username-set (hosted): the address has chosen a username (accounts).
import { usernamesOf } from '../accounts/storage.ts';
import { noParams } from './params.ts';
import type { ClaimPlugin } from './types.ts';

export const usernameSet: ClaimPlugin = {
  id: 'username-set',
  duplicatesAllowed: true,
  stateful: false,
  requiresUserInput: false,
  requiresSession: false,
  validate: noParams,
  async evaluate(ctx) {
    const names = await usernamesOf(ctx.db, [ctx.platformAddress]);
    return names.has(ctx.platformAddress)
      ? { success: true }
      : { success: false, error: 'No username is set for this address.' };
  },
};
