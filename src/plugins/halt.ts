// halt: pauses the claim; every attempt fails while the plugin is present.
import { noParams } from './params.ts';
import type { ClaimPlugin } from './types.ts';

export const HALTED = 'Claim halted';

export const halt: ClaimPlugin = {
  id: 'halt',
  duplicatesAllowed: true,
  stateful: false,
  requiresUserInput: false,
  requiresSession: false,
  validate: noParams,
  async evaluate() {
    return { success: false, error: HALTED };
  },
};
