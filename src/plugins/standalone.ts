// A plugin's check outside any claim: the direct integrations route and benchmarks evaluate one
// instance for one address with no claim state, as a simulation. Stateless plugins are the ones
// this makes sense for (hosted plugins).
import type { JsonObject } from '../shared/json.ts';
import type { AnyClaimPlugin, PluginEnv, PluginResult } from './types.ts';

export interface StandaloneCheck {
  publicParams: JsonObject;
  privateParams?: JsonObject;
  /** Canonical address; '' for plugins that take none. */
  platformAddress: string;
  claimId?: string;
  instanceId: string;
  locale?: string;
}

/** `env`: the deployment's, at the time of the check (claims/plugin-env.ts). */
export function evaluateStandalone(
  env: PluginEnv,
  plugin: AnyClaimPlugin,
  check: StandaloneCheck,
): Promise<PluginResult> {
  const { now } = env;
  return plugin.evaluate({
    ...env,
    mode: 'simulate',
    claim: {
      claimId: check.claimId ?? '',
      version: 0,
      createdAt: now,
      lastUpdated: now,
      createdBy: '',
      managedBy: '',
      maxUses: null,
    },
    instanceId: check.instanceId,
    publicParams: check.publicParams,
    privateParams: check.privateParams ?? {},
    platformAddress: check.platformAddress,
    input: undefined,
    session: null,
    claimAttemptId: '',
    state: { get: async () => undefined },
    isClaimNumberAssigner: false,
    locale: check.locale ?? 'en',
  });
}
