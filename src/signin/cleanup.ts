// Sign-in rows have a bounded useful life; a periodic sweep deletes the ones that can no longer
// matter. Rows are kept a grace period past their end so that a late reuse of a code or refresh
// token still finds them (and is refused as reuse rather than as unknown).
import type { ExpressionBuilder } from 'kysely';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/index.ts';
import { DAY } from './lifetimes.ts';

export const SWEEP_INTERVAL_MS = 10 * 60_000;
/** Sign-in requests (challenges) are purged more often: anyone may create them (challenge-limits.ts). */
export const REQUEST_SWEEP_INTERVAL_MS = 60_000;
/** How long ended codes and token families stay before the sweep deletes them. */
export const SWEEP_GRACE_MS = DAY;

/**
 * Deletes sign-in requests past their expiry, used or not: an expired request can no longer be
 * approved, and its code (if any) lives on in its authorization row.
 */
export async function sweepSigninRequests(ctx: AppContext, now = ctx.clock.now()): Promise<number> {
  const res = await ctx.db.deleteFrom('signin_requests').where('expires_at', '<=', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export interface SweepResult {
  requests: number;
  authorizations: number;
  rotatedTokens: number;
}

export async function sweepSignin(ctx: AppContext, now = ctx.clock.now()): Promise<SweepResult> {
  const before = now - SWEEP_GRACE_MS;
  const requests = await sweepSigninRequests(ctx, now);
  return ctx.db.transaction().execute(async (tx) => {
    // an unused code past its expiry, a refresh token past its expiry (the access token ends first),
    // a family past its absolute end, or revoked: nothing left to use
    const ended = (eb: ExpressionBuilder<Database, 'signin_authorizations'>) =>
      eb.or([
        eb.and([eb('code_consumed_at', 'is', null), eb('code_expires_at', '<', before)]),
        eb('refresh_expires_at', '<', before),
        eb('expires_at', '<', before),
        eb('revoked_at', '<', before),
      ]);
    const rotated = await tx
      .deleteFrom('signin_rotated_tokens')
      .where('authorization_id', 'in', tx.selectFrom('signin_authorizations').select('authorization_id').where(ended))
      .executeTakeFirst();
    const authorizations = await tx.deleteFrom('signin_authorizations').where(ended).executeTakeFirst();
    return {
      requests,
      authorizations: Number(authorizations.numDeletedRows),
      rotatedTokens: Number(rotated.numDeletedRows),
    };
  });
}
