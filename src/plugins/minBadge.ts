// min-badge (hosted): the address's native balance is at least `minBalance` whole units (1 whole
// unit = 10^9 ubadge; truncating division, as the reference). A result is kept 60 s after a pass and
// 10 s after an "Insufficient balance", per (address, threshold); an unreadable chain is never kept.
import { chainClientFor } from '../chain/client.ts';
import { badRequest } from '../shared/errors.ts';
import { asObject, onlyKeys } from './params.ts';
import type { ClaimPlugin } from './types.ts';

interface Pub {
  minBalance: number;
}

export const PASS_TTL_MS = 60_000;
export const FAIL_TTL_MS = 10_000;
const UNIT = 1_000_000_000n;
const MAX_CACHE = 100_000;

const cache = new Map<string, { pass: boolean; expires: number }>();

/** Forgets the kept results of these addresses (the indexer committed a block changing their balances). */
export function dropMinBadgeResults(addresses: ReadonlySet<string>): void {
  for (const key of cache.keys()) if (addresses.has(key.split('|')[1])) cache.delete(key);
}

export const minBadge: ClaimPlugin<Pub> = {
  id: 'min-badge',
  duplicatesAllowed: true,
  stateful: false,
  requiresUserInput: false,
  requiresSession: false,
  validate(pub, priv, { path }) {
    const pp = `${path}.publicParams`;
    const p = asObject(pub, pp);
    onlyKeys(p, ['minBalance'], pp);
    onlyKeys(asObject(priv, `${path}.privateParams`), [], `${path}.privateParams`);
    const m = p.minBalance;
    if (typeof m !== 'number' || !Number.isSafeInteger(m) || m < 0)
      throw badRequest(`${pp}.minBalance must be a non-negative integer number of whole units`);
    return { publicParams: { minBalance: m }, privateParams: {} };
  },
  async evaluate(ctx) {
    const client = chainClientFor(ctx.app);
    if (!client)
      return { success: false, error: 'The chain is not configured on this service, so balances cannot be checked.' };
    const key = `${client.baseUrl}|${ctx.platformAddress}|${ctx.publicParams.minBalance}`;
    const hit = cache.get(key);
    if (hit && hit.expires > ctx.now)
      return hit.pass ? { success: true } : { success: false, error: 'Insufficient balance' };
    let amount: bigint;
    try {
      amount = BigInt(await client.nativeBalance(ctx.platformAddress));
    } catch (err) {
      return { success: false, error: `Could not read the balance from the chain: ${(err as Error).message}` };
    }
    const pass = amount / UNIT >= BigInt(ctx.publicParams.minBalance);
    if (cache.size >= MAX_CACHE) cache.clear();
    cache.set(key, { pass, expires: ctx.now + (pass ? PASS_TTL_MS : FAIL_TTL_MS) });
    return pass ? { success: true } : { success: false, error: 'Insufficient balance' };
  },
};
