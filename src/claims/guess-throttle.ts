// Guess throttling: wrong passwords and codes (a failing user-input plugin) are counted per claim
// in fixed one-minute windows, in the database so that every process sharing it enforces one
// budget. Before a claim with a password or codes plugin is evaluated, the caller's buckets are
// checked: the claiming address and the client IP (GUESS_LIMIT_PER_MINUTE each) and the whole
// claim (GUESS_CLAIM_LIMIT_PER_MINUTE). A bucket at its limit refuses further attempts with a 429
// until its window ends; right answers from other buckets still pass. The claim's owner reads the
// counts in the claim document (`_failedGuesses`). Policy and figures: docs/security.md.
import { sql } from 'kysely';
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';
import { tooManyRequests } from '../shared/errors.ts';

export const GUESS_WINDOW_MS = 60_000;
/** How long ended windows are kept (the owner's "last hour" figure reads them). */
export const GUESS_RETENTION_MS = 60 * 60_000;

export interface Guesser {
  ip: string;
  /** Canonical claiming address. */
  platformAddress: string;
}

const windowOf = (now: number) => now - (now % GUESS_WINDOW_MS);
const buckets = (who: Guesser) => [
  { scope: `address:${who.platformAddress}`, what: 'for this address' },
  { scope: `ip:${who.ip}`, what: 'from this IP address' },
  { scope: 'claim', what: 'on this claim' },
];

/** Throws a 429 (with Retry-After) when one of the caller's buckets has used this window's budget. */
export async function checkGuessBudget(ctx: AppContext, claimId: string, who: Guesser, now: number): Promise<void> {
  const { perClientPerMinute, perClaimPerMinute } = ctx.config.guessLimits;
  if (perClientPerMinute === 0 && perClaimPerMinute === 0) return;
  const window = windowOf(now);
  const scopes = buckets(who);
  const rows = await ctx.db
    .selectFrom('claim_guess_failures')
    .select(['scope', 'failures'])
    .where('claim_id', '=', claimId)
    .where('window_start', '=', window)
    .where('scope', 'in', scopes.map((b) => b.scope))
    .execute();
  for (const row of rows) {
    const limit = row.scope === 'claim' ? perClaimPerMinute : perClientPerMinute;
    if (limit > 0 && row.failures >= limit) {
      const what = scopes.find((b) => b.scope === row.scope)!.what;
      const retryAfter = Math.max(1, Math.ceil((window + GUESS_WINDOW_MS - now) / 1000));
      throw tooManyRequests(`Too many failed guesses ${what} on claim ${claimId}: ${limit} per minute. Try again in ${retryAfter} s.`, retryAfter);
    }
  }
}

/**
 * Counts one failed guess in each of the caller's buckets and in the claim's total: one statement,
 * so atomic; rows are always locked in the same order (address, IP, claim, total), so concurrent
 * upserts cannot deadlock on PostgreSQL.
 */
export async function recordFailedGuess(ctx: AppContext, claimId: string, who: Guesser, now: number): Promise<void> {
  const window = windowOf(now);
  const rows = [...buckets(who).map((b) => ({ claim_id: claimId, scope: b.scope, window_start: window, failures: 1 })), { claim_id: claimId, scope: 'total', window_start: 0, failures: 1 }];
  await ctx.db
    .insertInto('claim_guess_failures')
    .values(rows)
    .onConflict((oc) => oc.columns(['claim_id', 'scope', 'window_start']).doUpdateSet({ failures: sql`claim_guess_failures.failures + 1` }))
    .execute();
}

/** What the claim's owner sees: all failed guesses since creation, and those of the last hour. */
export async function failedGuesses(db: DB | Tx, claimId: string, now: number): Promise<{ total: number; lastHour: number }> {
  const rows = await db
    .selectFrom('claim_guess_failures')
    .select(['scope', 'window_start', 'failures'])
    .where('claim_id', '=', claimId)
    .where('scope', 'in', ['claim', 'total'])
    .execute();
  let total = 0;
  let lastHour = 0;
  for (const r of rows) {
    if (r.scope === 'total') total = Number(r.failures);
    else if (Number(r.window_start) > now - GUESS_RETENTION_MS) lastHour += Number(r.failures);
  }
  return { total, lastHour };
}

/** Deletes windows older than the retention (every process may run it; deletes are idempotent). */
export async function sweepGuessWindows(ctx: AppContext, now = ctx.clock.now()): Promise<number> {
  const res = await ctx.db
    .deleteFrom('claim_guess_failures')
    .where('window_start', '>', 0)
    .where('window_start', '<', now - GUESS_RETENTION_MS)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
