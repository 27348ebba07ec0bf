// satisfies-claim (hosted): the address has succeeded on another claim. An indexed target (with
// numUses) passes with one recorded success; an on-demand target is evaluated again, now. Chains of
// satisfies-claim are at most MAX_CHAIN claims long, and a cycle is refused when a claim is created or
// updated (400 naming the chain); at run time the chain being evaluated is tracked, so even a cycle
// that slipped in (two concurrent updates) fails instead of looping.
import { AsyncLocalStorage } from 'node:async_hooks';
import { successOf } from '../claims/attempts.ts';
import { loadClaim } from '../claims/model.ts';
import { ApiError, badRequest } from '../shared/errors.ts';
import { asObject, onlyKeys } from './params.ts';
import type { ClaimPlugin } from './types.ts';

interface Pub {
  claimIdToCheck: string;
}

export const MAX_CHAIN = 5;
const CLAIM_ID = /^[A-Za-z0-9_-]{1,128}$/;

const evaluating = new AsyncLocalStorage<string[]>();

export const satisfiesClaim: ClaimPlugin<Pub> = {
  id: 'satisfies-claim',
  duplicatesAllowed: true,
  stateful: false,
  requiresUserInput: false,
  requiresSession: false,
  async validate(pub, priv, { path, claimId, db, keyring }) {
    const pp = `${path}.publicParams`;
    const p = asObject(pub, pp);
    onlyKeys(p, ['claimIdToCheck'], pp);
    onlyKeys(asObject(priv, `${path}.privateParams`), [], `${path}.privateParams`);
    const target = p.claimIdToCheck;
    if (typeof target !== 'string' || !CLAIM_ID.test(target)) throw badRequest(`${pp}.claimIdToCheck must be a claim id (1 to 128 letters, digits, _ or -)`);
    // walk the chain of satisfies-claim references from the target
    const walk = async (id: string, chain: string[]): Promise<void> => {
      if (id === claimId || chain.includes(id)) throw badRequest(`${pp}.claimIdToCheck forms a cycle: ${[...chain, id].join(' → ')}`);
      if (chain.length >= MAX_CHAIN) throw badRequest(`${pp}.claimIdToCheck makes a satisfies-claim chain longer than ${MAX_CHAIN}: ${[...chain, id].join(' → ')}`);
      const c = await loadClaim(db, keyring, id, Date.now());
      if (!c) {
        if (chain.length === 1) throw badRequest(`${pp}.claimIdToCheck names claim "${id}", which does not exist`);
        return;
      }
      for (const inst of c.plugins) if (inst.pluginId === 'satisfies-claim') await walk(String(inst.publicParams.claimIdToCheck), [...chain, id]);
    };
    await walk(target, [claimId]);
    return { publicParams: { claimIdToCheck: target }, privateParams: {} };
  },
  async evaluate(ctx) {
    const target = ctx.publicParams.claimIdToCheck;
    const chain = evaluating.getStore() ?? [ctx.claim.claimId];
    if (chain.includes(target)) return { success: false, error: `Claim ${target} refers back to itself through satisfies-claim (${[...chain, target].join(' → ')})` };
    if (chain.length > MAX_CHAIN) return { success: false, error: `satisfies-claim chains are limited to ${MAX_CHAIN} claims` };
    try {
      const { successCount } = await evaluating.run([...chain, target], () => successOf(ctx.app, target, ctx.platformAddress));
      return successCount > 0 ? { success: true } : { success: false, error: `Address has not satisfied claim ${target}.` };
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 404) return { success: false, error: `Claim ${target} to check does not exist.` };
      throw err;
    }
  },
};
