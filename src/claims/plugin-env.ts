// What plugins get from the claims capability (plugins/types.ts `PluginEnv`): the deployment, the
// read handle, the time and the claims they may consult. Built here and handed in through their
// validate and evaluate contexts, as stores/claims-integration.ts lends stores to claims, so no
// plugin imports claims (claims imports the plugin registry).
import type { AppContext } from '../context.ts';
import type { DB, Tx } from '../db/index.ts';
import type { PluginEnv } from '../plugins/types.ts';
import { toCanonical } from '../shared/addresses.ts';
import { notFound } from '../shared/errors.ts';
import { evaluateAttempt } from './engine.ts';
import { loadClaim, numUsesInstance } from './model.ts';
import { claimNumbersOf, liveClaimsWithPublicParam } from './storage.ts';

// What claims lends plugins beyond plugins/types.ts's ClaimsAccess, declared next to its
// implementation (as each capability adds its tables to db/schema.ts's Database).
declare module '../plugins/types.ts' {
  interface ClaimsAccess {
    /** Ids of the live claims (through the context's `db`, at `now`) with an instance of `pluginId` whose public param `key` is `value`. */
    withPublicParam(pluginId: string, key: string, value: string): Promise<string[]>;
  }
}

/**
 * The plugin environment of a read through `db` (the deployment's own by default) at `now`;
 * `readModel`: where the chain read model may be read instead (a replica, for a simulation).
 */
export function pluginEnv(app: AppContext, now: number, db: DB | Tx = app.db, readModel?: DB): PluginEnv {
  return {
    db,
    ...(readModel ? { readModel } : {}),
    keyring: app.keyring,
    app,
    now,
    claims: {
      load: (claimId) => loadClaim(db, app, claimId, now),
      successOf: (claimId, address) => successOf(app, claimId, address),
      withPublicParam: (pluginId, key, value) => liveClaimsWithPublicParam(db, now, pluginId, key, value),
    },
  };
}

/** Indexed claims: the address's claim numbers. On-demand claims: the criteria, evaluated now. */
export async function successOf(
  ctx: AppContext,
  claimId: string,
  address: string,
): Promise<{ successCount: number; claimNumbers: number[] }> {
  const platformAddress = toCanonical(address, 'address');
  const now = ctx.clock.now();
  const claim = await loadClaim(ctx.db, ctx, claimId, now);
  if (!claim) throw notFound(`Claim ${claimId} not found`);
  if (!numUsesInstance(claim)) {
    const outcome = await evaluateAttempt(
      claim,
      { platformAddress, inputs: {}, expectedVersion: -1, session: null },
      { ...pluginEnv(ctx, now), mode: 'simulate', claimAttemptId: '' },
    );
    return { successCount: outcome.success ? 1 : 0, claimNumbers: [] };
  }
  const claimNumbers = await claimNumbersOf(ctx.db, claimId, platformAddress);
  return { successCount: claimNumbers.length, claimNumbers };
}
