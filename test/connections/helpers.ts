// A local OAuth 2.0 provider (oauth2-mock-server) standing in for each social provider, and the
// steps a browser takes through the connections flow: the link page, where the wallet signs, the
// provider, and the callback with the browser's binding cookie.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OAuth2Server } from 'oauth2-mock-server';
import { Agent, fetch as undiciFetch } from 'undici';
import { testCertificates } from '../helpers/https-endpoint.ts';
import { privateKeyToAccount } from 'viem/accounts';
import type { TestApp } from '../helpers/app.ts';

export const PROVIDERS = ['discord', 'github', 'google', 'twitch', 'twitter'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** What each provider's user endpoint answers, in its own shape (reference note §8). */
export const userBody: Record<Provider, (id: string, username: string) => unknown> = {
  discord: (id, username) => ({ id, username, discriminator: '0', global_name: 'Display', avatar: 'abc' }),
  github: (id, username) => ({ login: username, id: Number(id), node_id: 'MDQ6VXNlcjE=', type: 'User', name: 'Name' }),
  google: (id, username) => ({ sub: id, name: 'Ada L.', email: username, email_verified: true }),
  twitch: (id, username) => ({
    data: [{ id, login: username, display_name: username.toUpperCase(), type: '', broadcaster_type: '' }],
  }),
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

/**
 * The provider serves https with the test CA's certificate: the service reaches its token and user
 * endpoints through the egress module (https only), trusting that CA (providerEnv).
 */
export async function startMockProvider(): Promise<MockProvider> {
  const certs = testCertificates();
  const dir = mkdtempSync(join(tmpdir(), 'platform-mock-provider-'));
  writeFileSync(join(dir, 'key.pem'), certs.keyPem);
  writeFileSync(join(dir, 'cert.pem'), certs.certPem);
  const server = new OAuth2Server(join(dir, 'key.pem'), join(dir, 'cert.pem'));
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
  const env: Record<string, string> = {
    CONNECTIONS_RETURN_URL: 'https://app.example/account',
    // the egress module's test-only trust settings: the mock provider is on loopback, with the test CA
    EGRESS_EXTRA_CA_FILE: testCertificates().caFile,
    EGRESS_ALLOW_PRIVATE_CIDRS: '127.0.0.1/32',
  };
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

/** `start` as a backend calls it: answers the service's link page (not yet the provider). */
export async function startLink(t: TestApp, token: string, provider: string): Promise<URL> {
  const res = await t.request('POST', `/api/v0/connections/${provider}/start`, { token, body: {} });
  assert.equal(res.statusCode, 200, res.body);
  const url = new URL(res.json().url);
  assert.equal(url.origin + url.pathname, `${t.config.publicUrl}/connections/${provider}/link`);
  return url;
}

/** The link page as the browser gets it (HTML), with the parameters its script reads. */
export async function openLinkPage(t: TestApp, page: URL, headers: Record<string, string> = {}) {
  const res = await t.request('GET', page.pathname + page.search, { apiKey: null, headers });
  const m = /<script type="application\/json" id="params">(.*?)<\/script>/s.exec(res.body);
  return {
    res,
    params: m
      ? (JSON.parse(m[1]!) as {
          requestId: string;
          address: string;
          chain: string;
          message: string;
          proofPath: string;
          cancelUrl: string;
        })
      : null,
  };
}

/** What the link page's script posts, from the link page's own origin. */
export function postProof(
  t: TestApp,
  provider: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return t.request('POST', `/api/v0/connections/${provider}/link`, {
    apiKey: null,
    body,
    headers: { origin: new URL(t.config.publicUrl).origin, 'sec-fetch-site': 'same-origin', ...headers },
  });
}

/** The `name=value` part of a Set-Cookie header. */
export const cookiePair = (setCookie: unknown): string => String(setCookie).split(';')[0]!;

/**
 * The browser at the link page: the wallet signs the page's text, the proof is posted; answers the
 * provider's authorization URL and the binding cookie (`name=value`) the browser now holds.
 */
export async function proveWallet(
  t: TestApp,
  page: URL,
  privateKey: `0x${string}`,
): Promise<{ authorizeUrl: URL; cookie: string }> {
  const { res, params } = await openLinkPage(t, page);
  assert.equal(res.statusCode, 200, res.body);
  assert.ok(params, 'the link page carries its parameters');
  const signature = await privateKeyToAccount(privateKey).signMessage({ message: params.message });
  const provider = page.pathname.split('/')[2]!;
  const proof = await postProof(t, provider, { request: params.requestId, signature });
  assert.equal(proof.statusCode, 200, proof.body);
  return { authorizeUrl: new URL(proof.json().url), cookie: cookiePair(proof.headers['set-cookie']) };
}

/** The browser at the provider: it approves and is redirected back with code and state. */
let trustingTestCa: Agent | undefined;
export async function approveAtProvider(authorizeUrl: URL): Promise<URL> {
  trustingTestCa ??= new Agent({ connect: { ca: testCertificates().caPem } });
  const res = await undiciFetch(authorizeUrl, { redirect: 'manual', dispatcher: trustingTestCa });
  assert.equal(res.status, 302, `the provider redirects back (${res.status})`);
  return new URL(res.headers.get('location')!);
}

/** The callback as the browser calls it (with its binding cookie, when given); answers where the service sends the browser next. */
export async function callback(t: TestApp, provider: string, back: URL, cookie?: string): Promise<URL> {
  const res = await t.request('GET', `/api/v0/connections/${provider}/callback${back.search}`, {
    apiKey: null,
    headers: cookie ? { cookie } : {},
  });
  assert.equal(res.statusCode, 302, res.body);
  return new URL(res.headers.location as string);
}

/** The whole flow from a backend: start, the wallet's proof at the link page, the provider (answering as `provider` with this account), the callback. */
export async function link(
  t: TestApp,
  mock: MockProvider,
  user: { accessToken: string; privateKey: `0x${string}` },
  provider: Provider,
  account: { id: string; username: string },
): Promise<URL> {
  mock.shape = provider;
  mock.nextUser = account;
  const { authorizeUrl, cookie } = await proveWallet(
    t,
    await startLink(t, user.accessToken, provider),
    user.privateKey,
  );
  return callback(t, provider, await approveAtProvider(authorizeUrl), cookie);
}
