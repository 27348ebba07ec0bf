// anonymous: the claiming address must be the null address (20 zero bytes) of the native format.
import { nullAddress } from '../shared/addresses.ts';
import { definePlugin } from './define.ts';

export const anonymous = definePlugin({
  id: 'anonymous',
  duplicatesAllowed: false,
  form: {
    name: 'Anonymous',
    description: 'Claims are made for the null address only.',
    details: 'Claimed anonymously (the null address).',
  },
  async evaluate({ platformAddress }) {
    // The reference client's text, brand word included (docs/plugins.md).
    if (platformAddress !== nullAddress()) return { success: false, error: 'BitBadges address must be anonymous' };
    return { success: true };
  },
});
