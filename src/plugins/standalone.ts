// A plugin's check outside any claim: the direct integrations route and benchmarks evaluate one
// instance for one address with no claim state, as a simulation. Stateless plugins are the ones
// this makes sense for (hosted plugins).
import type { AppContext } from '../context.ts';
import type { AnyClaimPlugin, JsonObject, PluginResult } from './types.ts';

export interface StandaloneCheck {
  publicParams: JsonObject;
  privateParams?: JsonObject;
  /** Canonical address; '' for plugins that take none. */
  platformAddress: string;
  claimId?: string;
  instanceId: string;
  locale?: string;
}

export function evaluateStandalone(app: AppContext, plugin: AnyClaimPlugin, check: StandaloneCheck): Promise<PluginResult> {
  const now = app.clock.now();
  return plugin.evaluate({
    mode: 'simulate',
    claim: { claimId: check.claimId ?? '', version: 0, createdAt: now, lastUpdated: now, createdBy: '', managedBy: '', maxUses: null },
    instanceId: check.instanceId,
    publicParams: check.publicParams,
    privateParams: check.privateParams ?? {},
    platformAddress: check.platformAddress,
    input: undefined,
    session: null,
    claimAttemptId: '',
    now,
    state: { get: async () => undefined },
    isClaimNumberAssigner: false,
    db: app.db,
    keyring: app.keyring,
    app,
    locale: check.locale ?? 'en',
  });
}
