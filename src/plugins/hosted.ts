// The hosted plugins (docs/hosted-plugins.md): plugins of the service itself, listed as plugin documents (seeded
// by migration 0016, in English and Spanish) and run in-process. A localised id (`min-badge-es`)
// runs the same plugin as the bare one.
export const HOSTED_PLUGIN_IDS = [
  'must-own-badges',
  'min-badge',
  'satisfies-claim',
  'username-set',
  'url-clicker',
  'custom-instructions',
  'github-contributions',
] as const;

/** The hosted plugin an id names, localised or not (`min-badge-es` → `min-badge`); null otherwise. */
export function hostedBaseId(pluginId: string): string | null {
  if ((HOSTED_PLUGIN_IDS as readonly string[]).includes(pluginId)) return pluginId;
  const m = /^(.+)-[a-z]{2}$/.exec(pluginId);
  return m && (HOSTED_PLUGIN_IDS as readonly string[]).includes(m[1]) ? m[1] : null;
}

/** `verificationCall.uri` of a hosted plugin as stored; `{base_url}` reads as PUBLIC_URL. */
export const HOSTED_URI_PREFIX = '{base_url}/api/v0/integrations/query/';
