// A local OAuth 2.0 provider (oauth2-mock-server) standing in for each social provider, and the
// steps a browser takes through the connections flow.
import assert from 'node:assert/strict';
import { OAuth2Server } from 'oauth2-mock-server';
import type { TestApp } from '../helpers/app.ts';

export const PROVIDERS = ['discord', 'github', 'google', 'twitch', 'twitter'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** What each provider's user endpoint answers, in its own shape (reference note §8). */
export const userBody: Record<Provider, (id: string, username: string) => unknown> = {
  discord: (id, username) => ({ id, username, discriminator: '0', global_name: 'Display', avatar: 'abc' }),
  github: (id, username) => ({ login: username, id: Number(id), node_id: 'MDQ6VXNlcjE=', type: 'User', name: 'Name' }),
  google: (id, username) => ({ sub: id, name: 'Ada L.', email: username, email_verified: true }),
  twitch: (id, username) => ({ data: [{ id, login: username, display_name: username.toUpperCase(), type: '', broadcaster_type: '' }] }),
  twitter: (id, username) => ({ data: { id, name: 'X Dev', username } }),
};

export interface MockProvider {
  server: OAuth2Server;
  url: string;
  /** The account the next user-endpoint read returns. */
  nextUser: { id: string; username: string };
  /** Provider whose shape the user endpoint answers in. */
  shape: Provider;
  /** Token requests seen (form fields). */
  tokenRequests: URLSearchParams[];
  stop(): Promise<void>;
}

export async function startMockProvider(): Promise<MockProvider> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const url = server.issuer.url!.replace('localhost', '127.0.0.1');
  const mock: MockProvider = {
    server,
    url,
    nextUser: { id: '1', username: 'someone' },
    shape: 'discord',
    tokenRequests: [],
    stop: () => server.stop(),
  };
  server.service.on('beforeUserinfo', (res: { body: unknown; statusCode: number }) => {
    res.body = userBody[mock.shape](mock.nextUser.id, mock.nextUser.username);
  });
  server.service.on('beforeResponse', (_res: unknown, req: { body: Record<string, string> }) => {
    mock.tokenRequests.push(new URLSearchParams(req.body));
  });
  return mock;
}

/** Env enabling `providers` against the mock. */
export function providerEnv(mock: MockProvider, providers: readonly Provider[] = PROVIDERS): Record<string, string> {
  const env: Record<string, string> = { CONNECTIONS_RETURN_URL: 'https://app.example/account' };
  for (const p of providers) {
    const P = `CONNECTIONS_${p.toUpperCase()}`;
    Object.assign(env, {
      [`${P}_CLIENT_ID`]: `${p}-client`,
      [`${P}_CLIENT_SECRET`]: `${p}-secret`,
      [`${P}_AUTHORIZATION_URL`]: `${mock.url}/authorize`,
      [`${P}_TOKEN_URL`]: `${mock.url}/token`,
      [`${P}_USERINFO_URL`]: `${mock.url}/userinfo`,
    });
  }
  return env;
}

export async function startLink(t: TestApp, token: string, provider: string): Promise<URL> {
  const res = await t.request('POST', `/api/v0/connections/${provider}/start`, { token });
  assert.equal(res.statusCode, 200, res.body);
  return new URL(res.json().url);
}

/** The browser at the provider: it approves and is redirected back with code and state. */
export async function approveAtProvider(authorizeUrl: URL): Promise<URL> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  assert.equal(res.status, 302, `the provider redirects back (${res.status})`);
  return new URL(res.headers.get('location')!);
}

/** The callback as the browser calls it; answers where the service sends the browser next. */
export async function callback(t: TestApp, provider: string, back: URL): Promise<URL> {
  const res = await t.request('GET', `/api/v0/connections/${provider}/callback${back.search}`, { apiKey: null });
  assert.equal(res.statusCode, 302, res.body);
  return new URL(res.headers.location as string);
}

/** The whole flow: the mock answers as `provider` with this account. */
export async function link(t: TestApp, mock: MockProvider, token: string, provider: Provider, account: { id: string; username: string }): Promise<URL> {
  mock.shape = provider;
  mock.nextUser = account;
  return callback(t, provider, await approveAtProvider(await startLink(t, token, provider)));
}
