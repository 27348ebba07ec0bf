// halt: pauses the claim; every attempt fails while the plugin is present.
import { definePlugin } from './define.ts';

export const HALTED = 'Claim halted';

export const halt = definePlugin({
  id: 'halt',
  form: {
    name: 'Halt',
    description: 'Pauses the claim: every attempt fails while it is present.',
    details: 'This claim is paused.',
  },
  async evaluate() {
    return { success: false, error: HALTED };
  },
});
