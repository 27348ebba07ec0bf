// OpenID Connect with clients nobody here wrote, against the running service (listening on a real
// port), with the user's step in Chromium: the authorize page, and a test wallet (an injected
// EIP-1193 provider) signing in place of the extension.
// - openid-client (panva): discovery, code + PKCE + nonce, id_token validation (signature too),
//   userinfo, refresh; the API key goes in through its own hook, customFetch.
// - Auth.js (@auth/core), configured as a generic OIDC provider and driven with Request objects: a
//   sign-in that ends with a session holding the address; the API key through its customFetch.
// - A negative matrix, each case refused by openid-client's or jose's own validation: a wrong nonce,
//   an expired id_token, a key that left the JWKS (two rotations later), another audience, another issuer.
// Chromium is required: without it these tests fail, they do not skip.
// test-run: once (a browser flow over the HTTP API, which the API's own tests cover on both databases; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import * as client from 'openid-client';
import { Auth, customFetch, type AuthConfig } from '@auth/core';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type { Browser } from 'playwright-core';
import { generatePrivateKey } from 'viem/accounts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { injectEvmWallet, launchChromium } from '../helpers/chromium.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { freePort } from '../helpers/process.ts';
import { createTestClient, testAccount, type TestAccount, type TestClient } from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const HOUR = 3600_000;

/** openid-client's fetch hook, adding the API key: the one thing this service adds to a stock OIDC client. */
const openidClientFetch =
  (apiKey: string): client.CustomFetch =>
  (url, options) =>
    fetch(url, { ...options, headers: { ...options.headers, 'x-api-key': apiKey } } as RequestInit);

/** Auth.js's fetch hook (a fetch: its headers may be any HeadersInit), adding the API key. */
const authjsFetch =
  (apiKey: string): typeof fetch =>
  (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('x-api-key', apiKey);
    return fetch(input, { ...init, headers });
  };

/** openid-client wraps the validation error of oauth4webapi (its core): the cause says which check refused. */
const causedBy = (message: string) => (e: Error & { cause?: Error }) => {
  assert.equal(e.cause?.message, message);
  return true;
};

/** Cookies as a browser keeps them, for driving Auth.js with Request objects. */
class CookieJar {
  private jar = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (value === '' || /;\s*max-age=0/i.test(c)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }
  header(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  names(): string[] {
    return [...this.jar.keys()];
  }
}

describe('OpenID Connect with stock clients through the authorize page in Chromium', () => {
  let t: TestApp;
  let clock: ManualClock;
  let issuer: string;
  let browser: Browser;
  let callbackServer: Server;
  let callbackOrigin: string;
  let rp: TestClient; // the openid-client relying party
  let authjs: TestClient; // the Auth.js one
  let user: TestAccount;
  let config: client.Configuration;
  /** An id_token the first key signed (kept for the rotation case). */
  let firstIdToken = '';

  before(async () => {
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    t = await startApp({ manualClock: true, env: { PUBLIC_URL: issuer } });
    clock = t.clock as ManualClock;
    await t.app.listen({ port, host: '127.0.0.1' });
    callbackServer = createServer((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>callback</title><p id="done">back at the app</p>'),
    );
    await new Promise<void>((r) => callbackServer.listen(0, '127.0.0.1', r));
    callbackOrigin = `http://127.0.0.1:${(callbackServer.address() as { port: number }).port}`;
    rp = await createTestClient(t, { name: 'OIDC RP', redirectUris: [`${callbackOrigin}/openid-client/cb`] });
    authjs = await createTestClient(t, {
      name: 'Authjs App',
      redirectUris: [`${callbackOrigin}/auth/callback/platform`],
    });
    user = testAccount(generatePrivateKey());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => (callbackServer ? callbackServer.close(r) : r(undefined)));
    await t?.close();
  });

  /** The user's part: open the authorization URL, press the EVM button, sign; the URL the page lands on. */
  async function signInInBrowser(authorizationUrl: string): Promise<URL> {
    const page = await browser.newPage();
    try {
      const signed: string[] = [];
      await injectEvmWallet(page, user.privateKey, signed);
      await page.goto(authorizationUrl);
      await Promise.all([
        page.waitForURL((u) => u.href.startsWith(callbackOrigin), { timeout: PATIENCE_MS }),
        page.click('#evm'),
      ]);
      assert.equal(signed.length, 1);
      return new URL(page.url());
    } finally {
      await page.close();
    }
  }

  /** openid-client configured from the discovery URL, the API key added through its customFetch hook. */
  async function discover(): Promise<client.Configuration> {
    const c = await client.discovery(new URL(issuer), rp.clientId, rp.clientSecret, undefined, {
      execute: [client.allowInsecureRequests], // http on 127.0.0.1 in this test
      [client.customFetch]: openidClientFetch(t.apiKey),
    });
    client.enableNonRepudiationChecks(c); // validate the id_token's JWS against jwks_uri too
    return c;
  }

  /** openid-client's authorization URL with fresh PKCE, state and nonce (what its docs show). */
  async function authorizationRequest() {
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: `${callbackOrigin}/openid-client/cb`,
      scope: 'openid completeClaims',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
      state,
    });
    return { url, verifier, nonce, state };
  }

  test('openid-client: discovery, code + PKCE + nonce, id_token (signature checked on the JWKS), userinfo, refresh', async () => {
    config = await discover();
    const meta = config.serverMetadata();
    assert.equal(meta.issuer, issuer);
    assert.equal(meta.userinfo_endpoint, `${issuer}/api/v0/signin/userinfo`);

    const req = await authorizationRequest();
    const approvedAt = clock.now();
    const callback = await signInInBrowser(req.url.href);
    assert.equal(callback.pathname, '/openid-client/cb');
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: req.verifier,
      expectedNonce: req.nonce,
      expectedState: req.state,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    assert.equal(claims.iss, issuer);
    assert.equal(claims.sub, user.platformAddress);
    assert.equal(claims.aud, rp.clientId);
    assert.equal(claims.nonce, req.nonce);
    assert.equal(claims.auth_time, Math.floor(approvedAt / 1000));
    assert.equal(claims.address, user.address);
    assert.equal(claims.chain, 'ETH');
    assert.equal(claims.platformAddress, user.platformAddress);
    // the SDK contract stays: the usual token response fields are there beside id_token
    assert.equal((tokens as unknown as { platformAddress: string }).platformAddress, user.platformAddress);
    assert.equal(tokens.scope, 'openid completeClaims');
    firstIdToken = tokens.id_token!;

    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    assert.deepEqual(info, {
      sub: user.platformAddress,
      address: user.address,
      chain: 'ETH',
      platformAddress: user.platformAddress,
    });

    clock.advance(10 * 60_000);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    const again = refreshed.claims()!;
    assert.equal(again.sub, claims.sub);
    assert.equal(again.auth_time, claims.auth_time);
    assert.equal(again.iat, Math.floor(clock.now() / 1000));
    assert.equal(again.nonce, undefined);
    assert.notEqual(refreshed.access_token, tokens.access_token);
    assert.deepEqual(await client.fetchUserInfo(config, refreshed.access_token, again.sub), info);
    // the old access token was replaced by the refresh: userinfo refuses it (RFC 6750 invalid_token)
    await assert.rejects(
      client.fetchUserInfo(config, tokens.access_token, claims.sub),
      (e: Error & { cause?: { scheme: string; parameters: Record<string, string> }[] }) => {
        assert.equal(e.message, 'server responded with a challenge in the WWW-Authenticate HTTP Header');
        assert.deepEqual(e.cause, [
          {
            scheme: 'bearer',
            parameters: {
              realm: 'platform',
              error: 'invalid_token',
              error_description: 'The access token is unknown, expired or revoked.',
            },
          },
        ]);
        return true;
      },
    );
  });

  test('openid-client without the API-key hook: the token call is refused by the gate', async () => {
    const bare = await client.discovery(new URL(issuer), rp.clientId, rp.clientSecret, undefined, {
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(bare, {
      redirect_uri: `${callbackOrigin}/openid-client/cb`,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await signInInBrowser(url.href);
    await assert.rejects(
      client.authorizationCodeGrant(bare, callback, { pkceCodeVerifier: verifier }),
      (e: Error & { status?: number; cause?: unknown }) => {
        assert.equal(e.status, 401);
        const gate = 'Unauthorized request. This route is only accessible with an API key.';
        assert.deepEqual(e.cause, {
          error: 'invalid_request',
          error_description: gate,
          errorMessage: gate,
          unauthorized: true,
        });
        return true;
      },
    );
  });

  test('Auth.js as a generic OIDC provider: sign-in ends with a session holding the address', async () => {
    const base = `${callbackOrigin}/auth`;
    const authConfig: AuthConfig = {
      basePath: '/auth',
      secret: 'a-test-secret-of-at-least-32-characters!',
      trustHost: true,
      providers: [
        {
          id: 'platform',
          name: 'Wallet',
          type: 'oidc',
          issuer,
          clientId: authjs.clientId,
          clientSecret: authjs.clientSecret,
          authorization: { params: { scope: 'openid' } },
          checks: ['pkce', 'state', 'nonce'],
          profile: (p) => ({ id: p.sub as string, name: p.address as string }),
          [customFetch]: authjsFetch(t.apiKey),
        },
      ],
      callbacks: {
        jwt({ token, profile }) {
          if (profile)
            Object.assign(token, {
              address: profile.address,
              chain: profile.chain,
              platformAddress: profile.platformAddress,
            });
          return token;
        },
        session({ session, token }) {
          return {
            ...session,
            address: token.address,
            chain: token.chain,
            platformAddress: token.platformAddress,
          } as typeof session;
        },
      },
    };
    const jar = new CookieJar();
    const call = async (path: string, init: RequestInit = {}) => {
      const res = await Auth(
        new Request(`${base}${path}`, {
          ...init,
          headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
        }),
        authConfig,
      );
      jar.take(res);
      return res;
    };

    const { csrfToken } = (await (await call('/csrf')).json()) as { csrfToken: string };
    const start = await call('/signin/platform', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrfToken, callbackUrl: `${callbackOrigin}/welcome` }),
    });
    assert.equal(start.status, 302);
    const authorizationUrl = new URL(start.headers.get('location')!);
    assert.equal(authorizationUrl.origin + authorizationUrl.pathname, `${issuer}/signin/authorize`);
    assert.equal(authorizationUrl.searchParams.get('scope'), 'openid');
    assert.ok(authorizationUrl.searchParams.get('nonce'), 'Auth.js sends a nonce');

    const callback = await signInInBrowser(authorizationUrl.href);
    assert.equal(callback.pathname, '/auth/callback/platform');
    const done = await call(`/callback/platform${callback.search}`);
    assert.equal(done.status, 302, await done.clone().text());
    assert.equal(done.headers.get('location'), `${callbackOrigin}/welcome`);
    assert.ok(jar.names().includes('authjs.session-token'), jar.names().join(', '));

    const session = (await (await call('/session')).json()) as Record<string, unknown>;
    assert.equal(session.address, user.address);
    assert.equal(session.platformAddress, user.platformAddress);
    assert.equal(session.chain, 'ETH');
    assert.deepEqual(session.user, { name: user.address });
  });

  // ---------------------------------------------------------------------------------------------
  // The negative matrix

  test('refused: a wrong nonce (openid-client)', async () => {
    const req = await authorizationRequest();
    const callback = await signInInBrowser(req.url.href);
    await assert.rejects(
      client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: req.verifier,
        expectedNonce: client.randomNonce(),
        expectedState: req.state,
      }),
      causedBy('unexpected ID Token "nonce" claim value'),
    );
  });

  test('refused: an expired id_token (openid-client)', async () => {
    clock.set(Date.now() - 2 * HOUR); // the service signs in, and stamps the id_token, two hours ago
    try {
      const req = await authorizationRequest();
      const callback = await signInInBrowser(req.url.href);
      await assert.rejects(
        client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: req.verifier,
          expectedNonce: req.nonce,
          expectedState: req.state,
        }),
        causedBy('unexpected JWT "exp" (expiration time) claim value, expiration is past current timestamp'),
      );
    } finally {
      clock.set(Date.now());
    }
  });

  test('refused: a key that left the JWKS, two rotations later (jose on the jwks_uri); the JWKS kept it until its id_tokens expired', async () => {
    assert.ok(firstIdToken, 'the openid-client test ran first');
    const firstKid = decodeProtectedHeader(firstIdToken).kid;
    const jwksUri = new URL(config.serverMetadata().jwks_uri!);
    const kids = async () =>
      ((await (await fetch(jwksUri)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    const signedAt = (jwt: string) =>
      new Date(
        ((JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as { iat: number }).iat + 1) * 1000,
      );
    const verifyAt = (jwt: string) =>
      jwtVerify(jwt, createRemoteJWKSet(jwksUri), { issuer, audience: rp.clientId, currentDate: signedAt(jwt) });

    const first = cliJson(await runCli(['signin', 'rotate-keys'], t.database.env));
    assert.equal(first.previous.kid, firstKid);
    assert.deepEqual(first.deleted, []);
    clock.set(Number(first.signs_from) - 1); // the service has re-read its keys by then
    assert.deepEqual(await kids(), [first.kid, firstKid], 'the new key is published before it signs');
    clock.set(Number(first.signs_from));
    // openid-client re-reads a JWKS on an unknown kid once its copy is a minute old, and the new key
    // was published a minute before it signs; here the service's clock skipped that minute, so the
    // client starts with no copy
    config = await discover();
    const req = await authorizationRequest();
    const tokens = await client.authorizationCodeGrant(config, await signInInBrowser(req.url.href), {
      pkceCodeVerifier: req.verifier,
      expectedNonce: req.nonce,
      expectedState: req.state,
    });
    const secondIdToken = tokens.id_token!;
    assert.equal(
      decodeProtectedHeader(secondIdToken).kid,
      first.kid,
      'the new key signs once every process has read it',
    );
    assert.equal(
      (await verifyAt(firstIdToken)).payload.sub,
      user.platformAddress,
      'the replaced key is still published',
    );

    const second = cliJson(await runCli(['signin', 'rotate-keys'], t.database.env));
    assert.equal(second.previous.kid, first.kid);
    clock.set(Number(first.previous.published_until) - 1);
    assert.deepEqual(
      await kids(),
      [second.kid, first.kid, firstKid],
      'kept until the last id_token it signed has expired',
    );
    clock.set(Number(first.previous.published_until));
    assert.deepEqual(await kids(), [second.kid, first.kid]);

    await assert.rejects(verifyAt(firstIdToken), {
      code: 'ERR_JWKS_NO_MATCHING_KEY',
      message: 'no applicable key found in the JSON Web Key Set',
    });
    assert.equal((await verifyAt(secondIdToken)).payload.sub, user.platformAddress);
    clock.set(Date.now());
  });

  test('refused: an id_token for another audience (jose)', async () => {
    const req = await authorizationRequest();
    clock.set(Date.now());
    const tokens = await client.authorizationCodeGrant(config, await signInInBrowser(req.url.href), {
      pkceCodeVerifier: req.verifier,
      expectedNonce: req.nonce,
      expectedState: req.state,
    });
    const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
    assert.equal((await jwtVerify(tokens.id_token!, jwks, { issuer, audience: rp.clientId })).payload.aud, rp.clientId);
    await assert.rejects(jwtVerify(tokens.id_token!, jwks, { issuer, audience: authjs.clientId }), {
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
      message: 'unexpected "aud" claim value',
    });
  });

  test('refused: an id_token from another issuer (jose), whether checked on our JWKS or on its own', async () => {
    // a second service on its own database and port: another issuer with its own keys
    const port = await freePort();
    const otherIssuer = `http://127.0.0.1:${port}`;
    const other = await startApp({ env: { PUBLIC_URL: otherIssuer } });
    try {
      await other.app.listen({ port, host: '127.0.0.1' });
      const app = await createTestClient(other, {
        name: 'Elsewhere',
        redirectUris: [`${callbackOrigin}/openid-client/cb`],
      });
      const q = new URLSearchParams({
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: app.redirectUri,
        scope: 'openid',
        nonce: 'n',
      });
      const callback = await signInInBrowser(`${otherIssuer}/signin/authorize?${q}`);
      const res = await fetch(`${otherIssuer}/api/v0/signin/token`, {
        method: 'POST',
        headers: { 'x-api-key': other.apiKey, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code')!,
          redirect_uri: app.redirectUri,
          client_id: app.clientId,
          client_secret: app.clientSecret,
        }),
      });
      assert.equal(res.status, 200);
      const { id_token } = (await res.json()) as { id_token: string };
      const ours = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
      const theirs = createRemoteJWKSet(new URL(`${otherIssuer}/.well-known/jwks.json`));
      await assert.rejects(jwtVerify(id_token, ours, { issuer, audience: app.clientId }), {
        code: 'ERR_JWKS_NO_MATCHING_KEY',
      });
      await assert.rejects(jwtVerify(id_token, theirs, { issuer, audience: app.clientId }), {
        code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
        message: 'unexpected "iss" claim value',
      });
      assert.equal(
        (await jwtVerify(id_token, theirs, { issuer: otherIssuer, audience: app.clientId })).payload.sub,
        user.platformAddress,
      );
    } finally {
      await other.close();
    }
  });
});
