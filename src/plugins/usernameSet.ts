// username-set (hosted): the address has chosen a username (accounts).
import { usernameOf } from '../accounts/storage.ts';
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
    return (await usernameOf(ctx.db, ctx.platformAddress)) !== undefined
      ? { success: true }
      : { success: false, error: 'No username is set for this address.' };
  },
};
