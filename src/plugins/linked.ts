// `combineLinkedWallets` (issue 35), shared by must-own-badges and min-badge: an opt-in public
// param under which an instance counts the holdings of every wallet linked to the claiming
// address's account, as the links stood when the claim was created (src/linked-wallets).
import { groupAt } from '../linked-wallets/storage.ts';
import { badRequest } from '../shared/errors.ts';
import type { ParamField } from './params.ts';
import type { EvaluateContext } from './types.ts';

export const COMBINE_KEY = 'combineLinkedWallets';

/** The refusal of a claimer whose own address counted for another account when the claim was created. */
export const LINKED_ELSEWHERE =
  "This address was linked to another account when this claim was created, so its holdings count toward that account's claims, not its own.";

/** The declared param: stored as `true` when set, not stored when false. */
export const COMBINE_FIELD: ParamField = {
  key: COMBINE_KEY,
  type: 'boolean',
  parse(v, path) {
    if (v === false) return undefined;
    if (v !== true) throw badRequest(`${path} must be a boolean`);
    return true;
  },
};

/**
 * Whose holdings an evaluation counts: the claiming address alone by default; with the param, the
 * claimer and the wallets linked to it at the claim's creation (null: the claimer was then linked
 * to another account itself).
 */
export async function holdersOf(
  ctx: Pick<EvaluateContext<{ combineLinkedWallets?: boolean }>, 'db' | 'platformAddress' | 'claim' | 'publicParams'>,
): Promise<string[] | null> {
  if (ctx.publicParams.combineLinkedWallets !== true) return [ctx.platformAddress];
  return groupAt(ctx.db, ctx.platformAddress, ctx.claim.createdAt);
}
