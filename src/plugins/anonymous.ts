// anonymous: the claiming address must be the null address (20 zero bytes) of the native format.
import { nullAddress } from '../shared/addresses.ts';
import { noParams } from './params.ts';
import type { ClaimPlugin } from './types.ts';

export const anonymous: ClaimPlugin = {
  id: 'anonymous',
  duplicatesAllowed: false,
  stateful: false,
  requiresUserInput: false,
  requiresSession: false,
  validate: noParams,
  async evaluate({ platformAddress }) {
    // Text as the SPEC gives it (§7), brand word included.
    if (platformAddress !== nullAddress()) return { success: false, error: 'BitBadges address must be anonymous' };
    return { success: true };
  },
};
