// Configuration of the social providers: each is off until its client id and secret are set.
// Every endpoint can be overridden (CONNECTIONS_<PROVIDER>_AUTHORIZATION_URL, _TOKEN_URL,
// _USERINFO_URL), which is how tests point a provider at a local OAuth server.
import { ConfigError } from '../shared/env.ts';
import { PROVIDERS, PROVIDER_IDS, type ProviderId, type ProviderSpec } from './providers.ts';

export interface ConfiguredProvider extends ProviderSpec {
  clientId: string;
  clientSecret: string;
}

export interface ConnectionsConfig {
  /** Configured providers only. */
  providers: Partial<Record<ProviderId, ConfiguredProvider>>;
  /** Where the callback sends the browser afterwards (`?connected=` or `?connectionError=` added). */
  returnUrl: string;
  /** GitHub REST API base for github-contributions (GITHUB_API_URL). */
  githubApiUrl: string;
  /** Optional token raising GitHub's rate limit for github-contributions (GITHUB_API_TOKEN). */
  githubApiToken: string | null;
  /** Timeout of each call to a provider or the GitHub API. */
  timeoutMs: number;
}

type Env = Record<string, string | undefined>;
const get = (env: Env, name: string): string | null => {
  const v = env[name]?.trim();
  return v ? v : null;
};

function httpUrl(env: Env, name: string, fallback: string): string {
  const v = get(env, name) ?? fallback;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(name, `must be a URL (got "${v}")`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    throw new ConfigError(name, `must use http or https (got "${u.protocol.replace(':', '')}")`);
  return v.replace(/\/+$/, '');
}

/** A URL the service itself calls (through the egress module, which speaks https only). */
function httpsUrl(env: Env, name: string, fallback: string): string {
  const v = httpUrl(env, name, fallback);
  if (new URL(v).protocol !== 'https:')
    throw new ConfigError(name, `must use https: the service calls it, and outbound calls are https only (got "${v}")`);
  return v;
}

export function connectionsConfig(env: Env, publicUrl: string): ConnectionsConfig {
  const providers: ConnectionsConfig['providers'] = {};
  for (const id of PROVIDER_IDS) {
    const p = `CONNECTIONS_${id.toUpperCase()}`;
    const clientId = get(env, `${p}_CLIENT_ID`);
    const clientSecret = get(env, `${p}_CLIENT_SECRET`);
    if (!clientId && !clientSecret) continue;
    if (!clientId) throw new ConfigError(`${p}_CLIENT_ID`, `is required when ${p}_CLIENT_SECRET is set`);
    if (!clientSecret) throw new ConfigError(`${p}_CLIENT_SECRET`, `is required when ${p}_CLIENT_ID is set`);
    const spec = PROVIDERS[id];
    providers[id] = {
      ...spec,
      clientId,
      clientSecret,
      authorizationUrl: httpUrl(env, `${p}_AUTHORIZATION_URL`, spec.authorizationUrl),
      tokenUrl: httpsUrl(env, `${p}_TOKEN_URL`, spec.tokenUrl),
      userInfoUrl: httpsUrl(env, `${p}_USERINFO_URL`, spec.userInfoUrl),
    };
  }
  const timeout = get(env, 'CONNECTIONS_TIMEOUT_MS') ?? '10000';
  if (!/^\d+$/.test(timeout) || Number(timeout) < 100 || Number(timeout) > 120_000)
    throw new ConfigError('CONNECTIONS_TIMEOUT_MS', `must be an integer from 100 to 120000 (got "${timeout}")`);
  return {
    providers,
    returnUrl: httpUrl(env, 'CONNECTIONS_RETURN_URL', `${publicUrl}/`),
    githubApiUrl: httpsUrl(env, 'GITHUB_API_URL', 'https://api.github.com'),
    githubApiToken: get(env, 'GITHUB_API_TOKEN'),
    timeoutMs: Number(timeout),
  };
}
