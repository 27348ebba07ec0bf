// username-set (hosted): the address has chosen a username (accounts).
import { usernamesOf } from '../accounts/storage.ts';
import { definePlugin } from './define.ts';

export const usernameSet = definePlugin({
  id: 'username-set',
  async evaluate(ctx) {
    const names = await usernamesOf(ctx.db, [ctx.platformAddress]);
    return names.has(ctx.platformAddress)
      ? { success: true }
      : { success: false, error: 'No username is set for this address.' };
  },
});
