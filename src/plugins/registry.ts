// The plugin registry: one line per core plugin. Later plugin kinds (hosted, custom) register
// through `registerPlugin` from their own capability.
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
import type { AnyClaimPlugin } from './types.ts';
import { whitelist } from './whitelist.ts';

const plugins = new Map<string, AnyClaimPlugin>();

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

export const findPlugin = (pluginId: string): AnyClaimPlugin | undefined => plugins.get(pluginId);

/** Usable on an on-demand claim (no numUses): stateless, no user input, no session. */
export const onDemandCompatible = (p: AnyClaimPlugin): boolean => !p.stateful && !p.requiresUserInput && !p.requiresSession;
