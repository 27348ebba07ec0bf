// url-clicker and custom-instructions (hosted): shown to the claimer, always pass, call nothing.
// They need the claimer's interaction, so they are not on-demand compatible (they count as taking
// user input; any input other than none or {} is refused).
import { badRequest } from '../shared/errors.ts';
import { asObject, onlyKeys } from './params.ts';
import type { ClaimPlugin } from './types.ts';

function displayOnly(id: string, key: string, check: (v: unknown, field: string) => string): ClaimPlugin {
  return {
    id,
    duplicatesAllowed: true,
    stateful: false,
    requiresUserInput: true,
    requiresSession: false,
    validate(pub, priv, { path }) {
      const pp = `${path}.publicParams`;
      const p = asObject(pub, pp);
      onlyKeys(p, [key], pp);
      onlyKeys(asObject(priv, `${path}.privateParams`), [], `${path}.privateParams`);
      return { publicParams: { [key]: check(p[key], `${pp}.${key}`) }, privateParams: {} };
    },
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
  };
}

export const urlClicker = displayOnly('url-clicker', 'url', (v, field) => {
  let u: URL | null = null;
  try {
    u = typeof v === 'string' && v.length <= 4096 ? new URL(v) : null;
  } catch {
    u = null;
  }
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:'))
    throw badRequest(`${field} must be an http(s) URL of at most 4096 characters`);
  return v as string;
});

export const customInstructions = displayOnly('custom-instructions', 'instructions', (v, field) => {
  if (typeof v !== 'string' || v.trim() === '' || v.length > 10_000)
    throw badRequest(`${field} must be a non-empty string of at most 10000 characters`);
  return v;
});

/** Their ids: they check no address (their documents' `verificationCall.passAddress` is false). */
export const DISPLAY_ONLY_PLUGIN_IDS: ReadonlySet<string> = new Set([urlClicker.id, customInstructions.id]);
