// username-set (hosted): the address has chosen a username (accounts).
import { usernameOf } from '../accounts/storage.ts';
import { definePlugin } from './define.ts';

export const usernameSet = definePlugin({
  id: 'username-set',
  async evaluate(ctx) {
    return (await usernameOf(ctx.db, ctx.platformAddress)) !== undefined
      ? { success: true }
      : { success: false, error: 'No username is set for this address.' };
  },
});
