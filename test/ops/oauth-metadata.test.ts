// RFC 8414 metadata, and a stock OAuth client (oauth4webapi, the library under openid-client and
// Auth.js) configuring itself from it and running the whole code flow, passing x-api-key on the
// token and revocation calls. This is the example docs/operations.md shows.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { privateKeyToAccount } from 'viem/accounts';
import { freePort } from '../helpers/process.ts';
import { createTestClient, testAccount } from '../helpers/signin.ts';
import { SCOPE_IDS } from '../../src/signin/scopes.ts';

describe('OAuth authorization server metadata', () => {
  let port: number;
  let issuer: string;
  before(async () => {
    port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
  });
  const t = useApp({ env: () => ({ PUBLIC_URL: issuer }) });
  before(() => t.app.listen({ port, host: '127.0.0.1' }));

  test('GET /.well-known/oauth-authorization-server describes the endpoints, without an API key', async () => {
    const res = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(
      res.headers.get('cache-control'),
      'public, max-age=3600',
      'clients may cache the document for an hour',
    );
    assert.deepEqual(await res.json(), {
      issuer,
      authorization_endpoint: `${issuer}/signin/authorize`,
      token_endpoint: `${issuer}/api/v0/signin/token`,
      userinfo_endpoint: `${issuer}/api/v0/signin/userinfo`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      revocation_endpoint: `${issuer}/api/v0/signin/token/revoke`,
      scopes_supported: [...SCOPE_IDS],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      // a token holder may revoke it without client credentials (RFC 7009 §2.1 leaves it to the server; test/signin/token.test.ts)
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      service_documentation: `${issuer}/docs`,
    });
  });

  test('oauth4webapi discovers the server and runs code + PKCE, refresh and revocation with x-api-key', async () => {
    const apiKey = t.apiKey;
    const registered = await createTestClient(t, { redirectUris: ['https://rp.example/callback'] });

    // --- the client side, as a backend using oauth4webapi would write it ---
    const issuerUrl = new URL(issuer);
    const as = await oauth
      .discoveryRequest(issuerUrl, { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true })
      .then((response) => oauth.processDiscoveryResponse(issuerUrl, response));
    const client: oauth.Client = { client_id: registered.clientId };
    const clientAuth = oauth.ClientSecretBasic(registered.clientSecret);
    // The token and revocation endpoints sit behind the API-key gate: every call carries x-api-key.
    const withApiKey = { headers: { 'x-api-key': apiKey }, [oauth.allowInsecureRequests]: true };

    const codeVerifier = oauth.generateRandomCodeVerifier();
    const codeChallenge = await oauth.calculatePKCECodeChallenge(codeVerifier);
    const state = oauth.generateRandomState();
    const authorizationUrl = new URL(as.authorization_endpoint!);
    authorizationUrl.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: 'https://rp.example/callback',
      response_type: 'code',
      scope: 'manageClaims completeClaims',
      state,
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
    }).toString();

    // --- the user's browser: the authorize page, then the wallet signs (what the page's script does) ---
    const page = await fetch(authorizationUrl);
    assert.equal(page.status, 200);
    const q = Object.fromEntries(authorizationUrl.searchParams);
    const wallet = testAccount();
    const challenge = (await (
      await fetch(`${issuer}/api/v0/signin/challenge`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_id: q.client_id,
          redirect_uri: q.redirect_uri,
          scope: q.scope,
          state: q.state,
          code_challenge: q.code_challenge,
          code_challenge_method: q.code_challenge_method,
          address: wallet.address,
        }),
      })
    ).json()) as { requestId: string; message: string };
    const signature = await privateKeyToAccount(wallet.privateKey).signMessage({ message: challenge.message });
    const approval = (await (
      await fetch(`${issuer}/api/v0/signin/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ requestId: challenge.requestId, signature }),
      })
    ).json()) as { redirectUrl: string };
    const callbackUrl = new URL(approval.redirectUrl);

    // --- back in the client: validate the callback, exchange the code ---
    const params = oauth.validateAuthResponse(as, client, callbackUrl, state);
    const tokens = await oauth
      .authorizationCodeGrantRequest(
        as,
        client,
        clientAuth,
        params,
        'https://rp.example/callback',
        codeVerifier,
        withApiKey,
      )
      .then((response) => oauth.processAuthorizationCodeResponse(as, client, response));
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.scope, 'manageClaims completeClaims');
    assert.ok(tokens.refresh_token);
    assert.equal((tokens as unknown as { platformAddress: string }).platformAddress, wallet.platformAddress);

    // without the key the same library call is refused by the gate
    const keyless = await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, {
      [oauth.allowInsecureRequests]: true,
    });
    assert.equal(keyless.status, 401);

    // refresh with a custom fetch (how openid-client and Auth.js take it): every request gets the key
    const customFetch: typeof fetch = (url, init) =>
      fetch(url, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), 'x-api-key': apiKey } });
    const refreshed = await oauth
      .refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, {
        [oauth.customFetch]: customFetch,
        [oauth.allowInsecureRequests]: true,
      })
      .then((response) => oauth.processRefreshTokenResponse(as, client, response));
    assert.notEqual(refreshed.access_token, tokens.access_token);

    await oauth
      .revocationRequest(as, client, clientAuth, refreshed.access_token, withApiKey)
      .then(oauth.processRevocationResponse);
    const status = (await (
      await fetch(`${issuer}/api/v0/auth/status`, {
        method: 'POST',
        headers: {
          'x-api-key': apiKey,
          authorization: `Bearer ${refreshed.access_token}`,
          'content-type': 'application/json',
        },
        body: '{}',
      })
    ).json()) as { signedIn: boolean };
    assert.equal(status.signedIn, false);
  });
});
