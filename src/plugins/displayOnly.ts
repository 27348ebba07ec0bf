// url-clicker and custom-instructions (hosted): shown to the claimer, always pass, call nothing.
// They need the claimer's interaction, so they are not on-demand compatible (they count as taking
// user input; any input other than none or {} is refused).
import { definePlugin } from './define.ts';
import type { ParamField } from './params.ts';

/** `field`: the one public param, required. */
function displayOnly(id: string, field: ParamField) {
  return definePlugin({
    id,
    // no input fields: any input is refused by evaluate, with its own text
    requiresUserInput: true,
    params: { public: [{ ...field, required: true, missingIsInvalid: true }] },
    async evaluate(ctx) {
      if (
        ctx.input !== undefined &&
        ctx.input !== null &&
        (typeof ctx.input !== 'object' || Array.isArray(ctx.input) || Object.keys(ctx.input).length > 0)
      ) {
        return { success: false, error: `${id} takes no input` };
      }
      return { success: true };
    },
  });
}

export const urlClicker = displayOnly('url-clicker', {
  key: 'url',
  type: 'url',
  maxLength: 4096,
  invalid: 'must be an http(s) URL of at most 4096 characters',
});

export const customInstructions = displayOnly('custom-instructions', {
  key: 'instructions',
  type: 'string',
  nonEmpty: 'trimmed',
  maxLength: 10_000,
});

/** Their ids: they check no address (their documents' `verificationCall.passAddress` is false). */
export const DISPLAY_ONLY_PLUGIN_IDS: ReadonlySet<string> = new Set([urlClicker.id, customInstructions.id]);
