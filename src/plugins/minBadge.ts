// min-badge (hosted): the address's native balance is at least `minBalance` whole units (1 whole
// unit = 10^9 ubadge; truncating division, as the reference). A result is kept 60 s after a pass and
// 10 s after an "Insufficient balance", per (address, threshold); an unreadable chain is never kept.
// Each result comes from a chain read made for the check, never from the chain client's 2 s
// balance cache (which the account route fills): a kept failure is never older than its window.
// With `combineLinkedWallets: true` the balances of the wallets linked to the claimer are summed
// (plugins/linked.ts), and the result is kept per group of addresses.
import { chainClientFor } from '../chain/client.ts';
import type { AppContext } from '../context.ts';
import { definePlugin } from './define.ts';
import { COMBINE_FIELD, holdersOf, LINKED_ELSEWHERE } from './linked.ts';

interface Pub {
  minBalance: number;
  combineLinkedWallets?: boolean;
}

export const PASS_TTL_MS = 60_000;
export const FAIL_TTL_MS = 10_000;
const UNIT = 1_000_000_000n;
const MAX_CACHE = 100_000;

/** A verdict kept on the context (`minBadgeResults`), by chain, holders and minimum. */
export interface MinBadgeResult {
  pass: boolean;
  expires: number;
}

/** Forgets the kept results of these addresses (the indexer committed a block changing their balances). */
export function dropMinBadgeResults(ctx: Pick<AppContext, 'minBadgeResults'>, addresses: ReadonlySet<string>): void {
  const cache = ctx.minBadgeResults;
  // the key's middle part is the holders, joined with '+' when linked wallets are combined
  for (const key of cache.keys())
    if (
      key
        .split('|')[1]!
        .split('+')
        .some((a) => addresses.has(a))
    )
      cache.delete(key);
}

export const minBadge = definePlugin<Pub>({
  id: 'min-badge',
  params: {
    public: [
      {
        key: 'minBalance',
        type: 'number',
        required: true,
        min: 0,
        invalid: 'must be a non-negative integer number of whole units',
        missingIsInvalid: true,
      },
      COMBINE_FIELD,
    ],
  },
  async evaluate(ctx) {
    const client = chainClientFor(ctx.app);
    if (!client)
      return { success: false, error: 'The chain is not configured on this service, so balances cannot be checked.' };
    // with combineLinkedWallets, the balances of the claimer's linked wallets are summed (exactly)
    const holders = await holdersOf(ctx);
    if (!holders) return { success: false, error: LINKED_ELSEWHERE };
    const key = `${client.baseUrl}|${holders.join('+')}|${ctx.publicParams.minBalance}`;
    const cache = ctx.app.minBadgeResults;
    const hit = cache.get(key);
    if (hit && hit.expires > ctx.now)
      return hit.pass ? { success: true } : { success: false, error: 'Insufficient balance' };
    let amount: bigint;
    try {
      amount = 0n;
      for (const holder of holders) amount += BigInt(await client.nativeBalance(holder, { fresh: true }));
    } catch (err) {
      return { success: false, error: `Could not read the balance from the chain: ${(err as Error).message}` };
    }
    const pass = amount / UNIT >= BigInt(ctx.publicParams.minBalance);
    if (cache.size >= MAX_CACHE) cache.clear();
    cache.set(key, { pass, expires: ctx.now + (pass ? PASS_TTL_MS : FAIL_TTL_MS) });
    return pass ? { success: true } : { success: false, error: 'Insufficient balance' };
  },
});
