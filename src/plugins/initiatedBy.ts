// initiatedBy: proof of address. The attempt must come with a session (bearer token) of the
// claiming address holding the `completeClaims` scope; the session is captured at complete time.
import { noParams } from './params.ts';
import type { ClaimPlugin } from './types.ts';

export const initiatedBy: ClaimPlugin = {
  id: 'initiatedBy',
  duplicatesAllowed: true,
  stateful: false,
  requiresUserInput: false,
  requiresSession: true,
  validate: noParams,
  async evaluate({ session, platformAddress }) {
    if (!session?.scopes.includes('completeClaims'))
      return { success: false, error: 'Must be authenticated to claim', status: 401 };
    if (session.platformAddress !== platformAddress) {
      return {
        success: false,
        error: 'Invalid address. Provided address does not match the address of the signed in user.',
        status: 403,
      };
    }
    return { success: true };
  },
};
