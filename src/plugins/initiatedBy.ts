// initiatedBy: proof of address. The attempt must come with a session (bearer token) of the
// claiming address holding the `completeClaims` scope; the session is captured at complete time.
import { definePlugin } from './define.ts';

export const initiatedBy = definePlugin({
  id: 'initiatedBy',
  requiresSession: true,
  form: {
    name: 'Signed in',
    description: 'The claimer must prove the address by signing in with the wallet.',
    details: 'Sign in with the claiming wallet.',
  },
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
});
