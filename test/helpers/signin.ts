// Signs a test wallet in through the REAL flow over HTTP: a developer app, the challenge, an EIP-191
// wallet signature (viem), approval, and the token exchange. Other capabilities' tests use it to
// get a bearer session:  const { accessToken, platformAddress } = await signIn(t, { scopes: ['manageClaims'] });
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { toPlatformAddress } from '../../src/shared/addresses.ts';
import { hexToBytes } from '@noble/hashes/utils.js';
import { createDeveloperApp } from '../../src/signin/apps.ts';
import { SCOPE_IDS } from '../../src/signin/scopes.ts';
import { CODE_TTL_MS } from '../../src/signin/lifetimes.ts';
import { type SigninAuthorizationTable, UNUSED_CODE } from '../../src/signin/storage.ts';
import type { TestApp } from './app.ts';

export interface TestAccount {
  privateKey: `0x${string}`;
  /** EIP-55 0x address. */
  address: string;
  /** Native bech32 form (ADDRESS_PREFIX of the running process). */
  platformAddress: string;
}

export function testAccount(privateKey: `0x${string}` = generatePrivateKey()): TestAccount {
  const account = privateKeyToAccount(privateKey);
  return {
    privateKey,
    address: account.address,
    platformAddress: toPlatformAddress(hexToBytes(account.address.slice(2).toLowerCase())),
  };
}

export interface TestClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

export const TEST_REDIRECT_URI = 'https://app.example/callback';

const clients = new WeakMap<TestApp, Promise<TestClient>>();

/** One developer app per test app (created through the domain function: creating one over HTTP needs a session). */
export function testClient(t: TestApp): Promise<TestClient> {
  let c = clients.get(t);
  if (!c) {
    c = createDeveloperApp(t.ctx.db, { name: 'Test App', redirectUris: [TEST_REDIRECT_URI] }, t.ctx.clock.now()).then(
      ({ app, clientSecret }) => ({
        clientId: app.clientId,
        clientSecret,
        redirectUri: TEST_REDIRECT_URI,
      }),
    );
    clients.set(t, c);
  }
  return c;
}

export interface SignedIn {
  accessToken: string;
  refreshToken: string;
  platformAddress: string;
  address: string;
  privateKey: `0x${string}`;
}

function expectOk(res: { statusCode: number; body: string }, what: string): void {
  if (res.statusCode !== 200) throw new Error(`signIn: ${what} answered ${res.statusCode}: ${res.body}`);
}

/** Whether `auth/status` reads the access token as a live session (the call itself must answer 200). */
export async function isSignedIn(t: TestApp, token: string): Promise<boolean> {
  const res = await t.request('POST', '/api/v0/auth/status', { token, body: {} });
  expectOk(res, 'auth/status');
  return res.json().signedIn as boolean;
}

/** `client`: sign in to another developer app (a third-party app's token) instead of the test app. */
export async function signIn(
  t: TestApp,
  opts: { privateKey?: `0x${string}`; scopes?: string[]; client?: TestClient } = {},
): Promise<SignedIn> {
  const who = testAccount(opts.privateKey);
  const client = opts.client ?? (await testClient(t));
  const scopes = opts.scopes ?? [...SCOPE_IDS];
  const challenge = await t.request('POST', '/api/v0/signin/challenge', {
    apiKey: null,
    body: {
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      scope: scopes.join(' '),
      address: who.address,
    },
  });
  expectOk(challenge, 'challenge');
  const { requestId, message } = challenge.json() as { requestId: string; message: string };
  const signature = await privateKeyToAccount(who.privateKey).signMessage({ message });
  const approve = await t.request('POST', '/api/v0/signin/approve', { apiKey: null, body: { requestId, signature } });
  expectOk(approve, 'approve');
  const { code } = approve.json() as { code: string };
  const token = await t.request('POST', '/api/v0/signin/token', {
    body: {
      grant_type: 'authorization_code',
      code,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uri: client.redirectUri,
    },
  });
  expectOk(token, 'token exchange');
  const tokens = token.json() as {
    access_token: string;
    refresh_token: string;
    platformAddress: string;
    address: string;
  };
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    platformAddress: tokens.platformAddress,
    address: tokens.address,
    privateKey: who.privateKey,
  };
}

// ---------------------------------------------------------------------------------------------
// Lower-level steps, for the sign-in tests themselves.

export interface CodeOptions {
  privateKey?: `0x${string}`;
  scopes?: string[];
  client?: TestClient;
  /** null: no redirect URI (the copy-the-code flow). */
  redirectUri?: string | null;
  state?: string;
  codeChallenge?: string;
}

/** Challenge, sign, approve: returns the one-time code (and what approval answered). */
export async function authorizeCode(
  t: TestApp,
  opts: CodeOptions = {},
): Promise<{ code: string; client: TestClient; account: TestAccount; approval: Record<string, string> }> {
  const account = testAccount(opts.privateKey);
  const client = opts.client ?? (await testClient(t));
  const redirectUri = opts.redirectUri === undefined ? client.redirectUri : opts.redirectUri;
  const body: Record<string, string> = {
    client_id: client.clientId,
    scope: (opts.scopes ?? [...SCOPE_IDS]).join(' '),
    address: account.address,
  };
  if (redirectUri !== null) body.redirect_uri = redirectUri;
  if (opts.state !== undefined) body.state = opts.state;
  if (opts.codeChallenge !== undefined)
    Object.assign(body, { code_challenge: opts.codeChallenge, code_challenge_method: 'S256' });
  const challenge = await t.request('POST', '/api/v0/signin/challenge', { apiKey: null, body });
  expectOk(challenge, 'challenge');
  const { requestId, message } = challenge.json() as { requestId: string; message: string };
  const signature = await privateKeyToAccount(account.privateKey).signMessage({ message });
  const approve = await t.request('POST', '/api/v0/signin/approve', { apiKey: null, body: { requestId, signature } });
  expectOk(approve, 'approve');
  const approval = approve.json() as Record<string, string>;
  return { code: approval.code, client, account, approval };
}

/** The token-exchange body for a code with the test client's credentials in the body. */
export function codeExchangeBody(
  client: TestClient,
  code: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    grant_type: 'authorization_code',
    code,
    client_id: client.clientId,
    client_secret: client.clientSecret,
    redirect_uri: client.redirectUri,
    ...extra,
  };
}

export const basicAuth = (id: string, secret: string) =>
  'Basic ' + Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');

/** Another developer app (e.g. a second client, or one limited to some grants). */
export async function createTestClient(
  t: TestApp,
  opts: { name?: string; redirectUris?: string[]; grantTypes?: ('authorization_code' | 'refresh_token')[] } = {},
): Promise<TestClient> {
  const redirectUris = opts.redirectUris ?? [TEST_REDIRECT_URI];
  const { app, clientSecret } = await createDeveloperApp(
    t.ctx.db,
    { name: opts.name ?? 'Other App', redirectUris, ...(opts.grantTypes ? { grantTypes: opts.grantTypes } : {}) },
    t.ctx.clock.now(),
  );
  return { clientId: app.clientId, clientSecret, redirectUri: redirectUris[0] ?? '' };
}

/**
 * A `signin_authorizations` row as a fresh, unused code leaves it, for writing straight to the table
 * (no wallet proof): `fields` names the row and whatever else differs.
 */
export function authorizationRow(
  fields: Pick<SigninAuthorizationTable, 'authorization_id' | 'code_hash' | 'client_id' | 'created_at'> &
    Partial<SigninAuthorizationTable>,
): SigninAuthorizationTable {
  return {
    redirect_uri: null,
    scopes: '[]',
    code_challenge: null,
    address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    platform_address: 'bb17w0adeg64ky0daxwd2ugyuneellmjgnxqqnph3',
    chain: 'ETH',
    message: 'm',
    code_expires_at: fields.created_at + CODE_TTL_MS,
    ...UNUSED_CODE,
    oidc_nonce: null,
    ...fields,
  };
}
