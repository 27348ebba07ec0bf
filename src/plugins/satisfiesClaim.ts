// satisfies-claim (hosted): the address has succeeded on another claim. An indexed target (with
// numUses) passes with one recorded success; an on-demand target is evaluated again, now. Chains of
// satisfies-claim are at most MAX_CHAIN claims long, and a cycle is refused when a claim is created or
// updated (400 naming the chain); at run time the chain being evaluated is tracked, so even a cycle
// that slipped in (two concurrent updates) fails instead of looping.
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApiError, badRequest } from '../shared/errors.ts';
import { asObject, onlyKeys } from './params.ts';
import type { ClaimPlugin, ClaimsAccess } from './types.ts';

interface Pub {
  claimIdToCheck: string;
}

export const MAX_CHAIN = 5;
const CLAIM_ID = /^[A-Za-z0-9_-]{1,128}$/;

const evaluating = new AsyncLocalStorage<string[]>();

/**
 * The longest chain of live claims whose satisfies-claim checks `claimId`, directly or through
 * others, outermost first (`claimId` itself excluded); `seen` holds the chain below and the path so
 * far. Stored chains hold at most MAX_CHAIN claims, so `seen` stays within 2 × MAX_CHAIN; the bound
 * only cuts short chains that slipped in through concurrent updates. The claims capability finds
 * the referring claims.
 */
async function referrerChain(claims: ClaimsAccess, claimId: string, seen: ReadonlySet<string>): Promise<string[]> {
  if (seen.size > 2 * MAX_CHAIN) return [];
  const referrers = await claims.withPublicParam('satisfies-claim', 'claimIdToCheck', claimId);
  let longest: string[] = [];
  for (const referrer of referrers) {
    if (seen.has(referrer)) continue;
    const chain = [...(await referrerChain(claims, referrer, new Set([...seen, referrer]))), referrer];
    if (chain.length > longest.length) longest = chain;
  }
  return longest;
}

export const satisfiesClaim: ClaimPlugin<Pub> = {
  id: 'satisfies-claim',
  duplicatesAllowed: true,
  stateful: false,
  requiresUserInput: false,
  requiresSession: false,
  async validate(pub, priv, { path, claimId, claims }) {
    const pp = `${path}.publicParams`;
    const p = asObject(pub, pp);
    onlyKeys(p, ['claimIdToCheck'], pp);
    onlyKeys(asObject(priv, `${path}.privateParams`), [], `${path}.privateParams`);
    const target = p.claimIdToCheck;
    if (typeof target !== 'string' || !CLAIM_ID.test(target))
      throw badRequest(`${pp}.claimIdToCheck must be a claim id (1 to 128 letters, digits, _ or -)`);
    // the longest chain of satisfies-claim references from `id` down; a cycle is refused on the way
    const down = async (id: string, chain: string[]): Promise<string[]> => {
      if (id === claimId || chain.includes(id))
        throw badRequest(`${pp}.claimIdToCheck forms a cycle: ${[...chain, id].join(' → ')}`);
      if (chain.length >= MAX_CHAIN)
        throw badRequest(
          `${pp}.claimIdToCheck makes a satisfies-claim chain longer than ${MAX_CHAIN}: ${[...chain, id].join(' → ')}`,
        );
      const c = await claims.load(id);
      if (!c) {
        if (chain.length === 1) throw badRequest(`${pp}.claimIdToCheck names claim "${id}", which does not exist`);
        return [id];
      }
      let longest: string[] = [];
      for (const inst of c.plugins) {
        if (inst.pluginId !== 'satisfies-claim') continue;
        const path = await down(String(inst.publicParams.claimIdToCheck), [...chain, id]);
        if (path.length > longest.length) longest = path;
      }
      return [id, ...longest];
    };
    const below = [claimId, ...(await down(target, [claimId]))];
    // claims that check this one lengthen every chain through it: joining two short chains is refused too
    const above = await referrerChain(claims, claimId, new Set(below));
    if (above.length + below.length > MAX_CHAIN) {
      throw badRequest(
        `${pp}.claimIdToCheck makes a satisfies-claim chain longer than ${MAX_CHAIN}: ${[...above, ...below].join(' → ')}`,
      );
    }
    return { publicParams: { claimIdToCheck: target }, privateParams: {} };
  },
  async evaluate(ctx) {
    const target = ctx.publicParams.claimIdToCheck;
    const chain = evaluating.getStore() ?? [ctx.claim.claimId];
    if (chain.includes(target))
      return {
        success: false,
        error: `Claim ${target} refers back to itself through satisfies-claim (${[...chain, target].join(' → ')})`,
      };
    // chain + target must stay within MAX_CHAIN claims, the bound creation and update enforce
    if (chain.length >= MAX_CHAIN)
      return { success: false, error: `satisfies-claim chains are limited to ${MAX_CHAIN} claims` };
    try {
      const { successCount } = await evaluating.run([...chain, target], () =>
        ctx.claims.successOf(target, ctx.platformAddress),
      );
      return successCount > 0
        ? { success: true }
        : { success: false, error: `Address has not satisfied claim ${target}.` };
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 404)
        return { success: false, error: `Claim ${target} to check does not exist.` };
      throw err;
    }
  },
};
