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
    // The reference client's text, brand word included (docs/plugins.md).
    if (platformAddress !== nullAddress()) return { success: false, error: 'BitBadges address must be anonymous' };
    return { success: true };
  },
};
