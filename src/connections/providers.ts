// The five social providers: their OAuth endpoints, what they support, and how their user endpoint
// names the account. Endpoints are the providers' public ones by default and can each be pointed
// elsewhere (a test server, a proxy) by configuration. Facts per provider: docs/connections.md.

export type ProviderId = 'discord' | 'github' | 'google' | 'twitch' | 'twitter';
export const PROVIDER_IDS: readonly ProviderId[] = ['discord', 'github', 'google', 'twitch', 'twitter'];
/** How pages and signed texts name each provider. */
export const PROVIDER_NAMES: Record<ProviderId, string> = {
  discord: 'Discord',
  github: 'GitHub',
  google: 'Google',
  twitch: 'Twitch',
  twitter: 'X (Twitter)',
};

/** The provider account a wallet links to: a stable id (always a string) and the handle. */
export interface SocialIdentity {
  id: string;
  username: string;
}

export interface ProviderSpec {
  id: ProviderId;
  authorizationUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  /** Scopes for the id and handle only. */
  scope: string;
  /** S256 PKCE is sent when the provider supports it (Twitch does not). */
  pkce: boolean;
  /** How the client authenticates at the token endpoint. */
  clientAuth: 'post' | 'basic';
  /** Extra headers the user endpoint needs (`clientId` is the configured client id). */
  userInfoHeaders?: (clientId: string) => Record<string, string>;
  /** Reads the stable id and handle from the user endpoint's JSON; null when they are missing. */
  identity(body: unknown): SocialIdentity | null;
}

const obj = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
/** Ids travel as strings everywhere (Discord's snowflakes exceed 2^53; GitHub's are JSON numbers). */
const idString = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : null;
const nonEmpty = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const both = (id: string | null, username: string | null): SocialIdentity | null =>
  id && username ? { id, username } : null;

export const PROVIDERS: Record<ProviderId, ProviderSpec> = {
  discord: {
    id: 'discord',
    authorizationUrl: 'https://discord.com/oauth2/authorize',
    tokenUrl: 'https://discord.com/api/oauth2/token',
    userInfoUrl: 'https://discord.com/api/v10/users/@me',
    scope: 'identify',
    pkce: true,
    clientAuth: 'post',
    identity: (b) => both(idString(obj(b)?.id), nonEmpty(obj(b)?.username)),
  },
  github: {
    id: 'github',
    authorizationUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    userInfoUrl: 'https://api.github.com/user',
    scope: '',
    pkce: true,
    clientAuth: 'post',
    // GitHub refuses REST calls without a User-Agent
    userInfoHeaders: () => ({ 'user-agent': 'platform-connections', accept: 'application/vnd.github+json' }),
    identity: (b) => both(idString(obj(b)?.id), nonEmpty(obj(b)?.login)),
  },
  google: {
    id: 'google',
    authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    userInfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
    scope: 'openid email',
    pkce: true,
    clientAuth: 'post',
    // Google has no handle: the e-mail is shown as the username, but the account is keyed on `sub`
    identity: (b) => both(nonEmpty(obj(b)?.sub), nonEmpty(obj(b)?.email)),
  },
  twitch: {
    id: 'twitch',
    authorizationUrl: 'https://id.twitch.tv/oauth2/authorize',
    tokenUrl: 'https://id.twitch.tv/oauth2/token',
    userInfoUrl: 'https://api.twitch.tv/helix/users',
    scope: '',
    pkce: false,
    clientAuth: 'post',
    userInfoHeaders: (clientId) => ({ 'client-id': clientId }),
    identity: (b) => {
      const data = obj(b)?.data;
      const first = Array.isArray(data) ? obj(data[0]) : null;
      return both(idString(first?.id), nonEmpty(first?.login));
    },
  },
  twitter: {
    id: 'twitter',
    authorizationUrl: 'https://twitter.com/i/oauth2/authorize',
    tokenUrl: 'https://api.twitter.com/2/oauth2/token',
    userInfoUrl: 'https://api.x.com/2/users/me',
    scope: 'users.read tweet.read',
    pkce: true,
    clientAuth: 'basic',
    identity: (b) => {
      const data = obj(obj(b)?.data);
      return both(idString(data?.id), nonEmpty(data?.username));
    },
  },
};
