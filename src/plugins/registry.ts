// The plugin registry: one line per core plugin, and one per source of plugin documents (custom
// and hosted plugins resolve by id and pinned version).
import { anonymous } from './anonymous.ts';
import { codes } from './codes.ts';
import { halt } from './halt.ts';
import { initiatedBy } from './initiatedBy.ts';
import { numUses } from './numUses.ts';
import { password } from './password.ts';
import { socialPlugin } from './social.ts';
import { githubContributions } from './githubContributions.ts';
import { mustOwnBadges } from './mustOwnBadges.ts';
import { minBadge } from './minBadge.ts';
import { satisfiesClaim } from './satisfiesClaim.ts';
import { usernameSet } from './usernameSet.ts';
import { customInstructions, urlClicker } from './displayOnly.ts';
import { transferTimes } from './transferTimes.ts';
import type { DB, Tx } from '../db/index.ts';
import { customPlugins } from '../plugin-documents/runtime.ts';
import type { AppContext } from '../context.ts';
import { hostedBaseId } from './hosted.ts';
import type { AnyClaimPlugin, PluginSource } from './types.ts';
import { whitelist } from './whitelist.ts';

const plugins = new Map<string, AnyClaimPlugin>();
const sources: PluginSource[] = [];

export function registerPluginSource(source: PluginSource): void {
  sources.push(source);
}

export function registerPlugin(plugin: AnyClaimPlugin): void {
  plugins.set(plugin.id, plugin);
}

registerPlugin(numUses);
registerPlugin(codes);
registerPlugin(password);
registerPlugin(transferTimes);
registerPlugin(initiatedBy);
registerPlugin(whitelist);
registerPlugin(halt);
registerPlugin(anonymous);
registerPlugin(socialPlugin('discord'));
registerPlugin(socialPlugin('github'));
registerPlugin(socialPlugin('google'));
registerPlugin(socialPlugin('twitch'));
registerPlugin(socialPlugin('twitter'));
registerPlugin(githubContributions);
registerPlugin(mustOwnBadges);
registerPlugin(minBadge);
registerPlugin(satisfiesClaim);
registerPlugin(usernameSet);
registerPlugin(urlClicker);
registerPlugin(customInstructions);

registerPluginSource(customPlugins);

/** A core plugin by id. */
export const findPlugin = (pluginId: string): AnyClaimPlugin | undefined => plugins.get(pluginId);

/** Every core plugin, in registration order. */
export const corePlugins = (): AnyClaimPlugin[] => [...plugins.values()];

/** Every registered plugin id, in registration order (named by the "unknown plugin" error). */
export const pluginIds = (): string[] => [...plugins.keys()];
/** The plugin of an instance: a core plugin, else the pinned version of a plugin document. */
export async function resolvePlugin(
  inst: { pluginId: string; version: string },
  env: { db: DB | Tx; app: Pick<AppContext, 'keyring' | 'pluginDocumentCache'> },
): Promise<AnyClaimPlugin | undefined> {
  const core = plugins.get(inst.pluginId) ?? plugins.get(hostedBaseId(inst.pluginId) ?? '');
  if (core) return core;
  for (const source of sources) {
    const p = await source.resolve(inst.pluginId, inst.version, env);
    if (p) return p;
  }
  return undefined;
}

/** Usable on an on-demand claim (no numUses): stateless, no user input, no session. */
export const onDemandCompatible = (p: AnyClaimPlugin): boolean =>
  p.onDemand ?? (!p.stateful && !p.requiresUserInput && !p.requiresSession);
