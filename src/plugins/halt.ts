// halt: pauses the claim; every attempt fails while the plugin is present.
import { asObject, onlyKeys } from './params.ts';
import type { ClaimPlugin } from './types.ts';

export const halt: ClaimPlugin = {
  id: 'halt',
  duplicatesAllowed: true,
  stateful: false,
  requiresUserInput: false,
  requiresSession: false,
  validate(pub, priv, { path }) {
    onlyKeys(asObject(pub, `${path}.publicParams`), [], `${path}.publicParams`);
    onlyKeys(asObject(priv, `${path}.privateParams`), [], `${path}.privateParams`);
    return { publicParams: {}, privateParams: {} };
  },
  async evaluate() {
    return { success: false, error: 'Claim halted' };
  },
};
