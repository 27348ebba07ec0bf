// The token endpoint against RFC 6749 / 7636 / 9700 and the peers' test cases (reference notes §10).
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import {
  authorizeCode,
  basicAuth,
  codeExchangeBody,
  createTestClient,
  isSignedIn,
  testClient,
} from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { sha256Hex } from '../../src/shared/crypto.ts';
import { SCOPE_IDS } from '../../src/signin/scopes.ts';

const DAY = 86_400_000;
const TOKEN = '/api/v0/signin/token';

function assertOAuthError(res: LightMyRequestResponse, status: number, error: string, description?: RegExp): void {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'errorMessage', 'error_description']);
  assert.equal(body.error, error);
  assert.equal(body.errorMessage, body.error_description);
  if (description) assert.match(body.error_description, description);
  assert.equal(res.headers['cache-control'], 'no-store');
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('token endpoint: authorization_code', () => {
  const t = useApp();

  test('success: docs/signin.md plus expires_in and scope, Bearer, no-store', async () => {
    const { code, client, account } = await authorizeCode(t, { scopes: ['completeClaims', 'manageClaims'] });
    const res = await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.pragma, 'no-cache');
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'access_token',
      'access_token_expires_at',
      'address',
      'chain',
      'expires_in',
      'platformAddress',
      'refresh_token',
      'refresh_token_expires_at',
      'scope',
      'token_type',
      'verificationResponse',
    ]);
    assert.equal(body.address, account.address);
    assert.equal(body.platformAddress, account.platformAddress);
    assert.equal(body.chain, 'ETH');
    assert.deepEqual(body.verificationResponse, { success: true });
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.scope, 'completeClaims manageClaims');
    assert.equal(body.expires_in, 86_400);
    const now = Date.now();
    assert.ok(Math.abs(Number(body.access_token_expires_at) - (now + DAY)) < 60_000);
    assert.ok(Math.abs(Number(body.refresh_token_expires_at) - (now + 60 * DAY)) < 60_000);
    assert.equal(typeof body.access_token_expires_at, 'string');
  });

  test('a code is single use: the second exchange is invalid_grant and revokes the first tokens', async () => {
    const { code, client } = await authorizeCode(t);
    const first = await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) });
    assert.equal(first.statusCode, 200);
    const { access_token, refresh_token } = first.json();
    assert.equal(await isSignedIn(t, access_token), true);

    assertOAuthError(
      await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) }),
      400,
      'invalid_grant',
      /already been used/,
    );
    assert.equal(
      await isSignedIn(t, access_token),
      false,
      'the access token issued from a reused code must be revoked',
    );
    const refreshed = await t.request('POST', TOKEN, {
      body: {
        grant_type: 'refresh_token',
        refresh_token,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      },
    });
    assertOAuthError(refreshed, 400, 'invalid_grant');
    assertOAuthError(await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) }), 400, 'invalid_grant');
  });

  test('unknown and malformed codes are invalid_grant; a missing code is invalid_request', async () => {
    const client = await testClient(t);
    assertOAuthError(
      await t.request('POST', TOKEN, { body: codeExchangeBody(client, 'ab'.repeat(32)) }),
      400,
      'invalid_grant',
    );
    assertOAuthError(
      await t.request('POST', TOKEN, { body: codeExchangeBody(client, 'not hex') }),
      400,
      'invalid_grant',
    );
    const { code: _omit, ...noCode } = codeExchangeBody(client, '');
    assertOAuthError(await t.request('POST', TOKEN, { body: noCode }), 400, 'invalid_request', /code is required/);
  });

  test('a code issued to another client is invalid_grant', async () => {
    const other = await createTestClient(t);
    const { code, client } = await authorizeCode(t);
    assertOAuthError(
      await t.request('POST', TOKEN, { body: codeExchangeBody(other, code) }),
      400,
      'invalid_grant',
      /another client/,
    );
    assert.equal(
      (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).statusCode,
      200,
      'the failed attempt must not burn the code',
    );
  });

  test('redirect_uri must match exactly; missing is invalid_request; failures do not burn the code', async () => {
    const { code, client } = await authorizeCode(t);
    for (const wrong of [
      client.redirectUri + '/',
      client.redirectUri + '?x=1',
      client.redirectUri.toUpperCase(),
      'https://evil.example/callback',
    ]) {
      assertOAuthError(
        await t.request('POST', TOKEN, { body: codeExchangeBody(client, code, { redirect_uri: wrong }) }),
        400,
        'invalid_grant',
        /redirect_uri/,
      );
    }
    const { redirect_uri: _omit, ...noRedirect } = codeExchangeBody(client, code);
    assertOAuthError(
      await t.request('POST', TOKEN, { body: noRedirect }),
      400,
      'invalid_request',
      /redirect_uri is required/,
    );
    assert.equal((await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).statusCode, 200);
  });

  test('a code issued without redirect_uri is exchanged without one (and refuses one)', async () => {
    const { code, client, approval } = await authorizeCode(t, { redirectUri: null });
    assert.equal(approval.redirectUrl, undefined);
    assertOAuthError(await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) }), 400, 'invalid_grant');
    const { redirect_uri: _omit, ...body } = codeExchangeBody(client, code);
    assert.equal((await t.request('POST', TOKEN, { body })).statusCode, 200);
  });

  test('PKCE: the RFC 7636 Appendix B vector passes; wrong, missing and malformed verifiers are refused', async () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const { code, client } = await authorizeCode(t, { codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' });
    const tryWith = (extra: Record<string, unknown>) =>
      t.request('POST', TOKEN, { body: codeExchangeBody(client, code, extra) });
    assertOAuthError(await tryWith({}), 400, 'invalid_grant', /code_verifier is required/);
    assertOAuthError(await tryWith({ code_verifier: 'x'.repeat(43) }), 400, 'invalid_grant', /does not match/);
    assertOAuthError(await tryWith({ code_verifier: verifier.slice(0, 42) }), 400, 'invalid_request', /43 to 128/);
    assertOAuthError(await tryWith({ code_verifier: 'a'.repeat(129) }), 400, 'invalid_request', /43 to 128/);
    assertOAuthError(await tryWith({ code_verifier: verifier.slice(0, 42) + '+' }), 400, 'invalid_request');
    assertOAuthError(await tryWith({ code_verifier: verifier.slice(0, 42) + ' ' }), 400, 'invalid_request');
    const ok = await tryWith({ code_verifier: verifier });
    assert.equal(ok.statusCode, 200, ok.body);
    // bounds that are valid are accepted by the format check (and then compared)
    const { code: code2 } = await authorizeCode(t, { codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' });
    for (const v of ['a'.repeat(43), '~'.repeat(128)]) {
      assertOAuthError(
        await t.request('POST', TOKEN, { body: codeExchangeBody(client, code2, { code_verifier: v }) }),
        400,
        'invalid_grant',
        /does not match/,
      );
    }
  });

  test('PKCE downgrade: a verifier for a code that had no challenge is refused', async () => {
    const { code, client } = await authorizeCode(t);
    assertOAuthError(
      await t.request('POST', TOKEN, {
        body: codeExchangeBody(client, code, { code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' }),
      }),
      400,
      'invalid_grant',
      /no code_challenge/,
    );
  });

  test('PKCE plain and malformed challenges are refused at the challenge step', async () => {
    const client = await testClient(t);
    const base = {
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    };
    for (const extra of [
      { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'plain' },
      { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' },
      { code_challenge: 'short', code_challenge_method: 'S256' },
      { code_challenge_method: 'S256' },
    ]) {
      const res = await t.request('POST', '/api/v0/signin/challenge', { apiKey: null, body: { ...base, ...extra } });
      assert.equal(res.statusCode, 400, JSON.stringify(extra));
      assert.equal(res.json().error, 'invalid_request');
    }
  });

  test('form-urlencoded bodies and HTTP Basic client authentication', async () => {
    const { code, client } = await authorizeCode(t);
    const res = await t.request('POST', TOKEN, {
      headers: { ...FORM, authorization: basicAuth(client.clientId, client.clientSecret) },
      body: form({
        grant_type: 'authorization_code',
        code,
        redirect_uri: client.redirectUri,
        options: JSON.stringify({ issuedAtTimeWindowMs: 60_000 }),
      }),
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const { code: code2 } = await authorizeCode(t);
    const postForm = await t.request('POST', TOKEN, {
      headers: FORM,
      body: form(codeExchangeBody(client, code2) as Record<string, string>),
    });
    assert.equal(postForm.statusCode, 200, postForm.body);
  });

  test('client authentication failures', async () => {
    const { code, client } = await authorizeCode(t);
    const bad = await t.request('POST', TOKEN, {
      body: codeExchangeBody(client, code, { client_secret: 'f'.repeat(64) }),
    });
    assertOAuthError(bad, 401, 'invalid_client');
    assert.equal(bad.headers['www-authenticate'], undefined);

    const badBasic = await t.request('POST', TOKEN, {
      headers: { authorization: basicAuth(client.clientId, 'wrong') },
      body: { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri },
    });
    assertOAuthError(badBasic, 401, 'invalid_client');
    assert.match(String(badBasic.headers['www-authenticate']), /^Basic realm="/);

    const both = await t.request('POST', TOKEN, {
      headers: { authorization: basicAuth(client.clientId, client.clientSecret) },
      body: codeExchangeBody(client, code),
    });
    assertOAuthError(both, 400, 'invalid_request', /only one mechanism/);

    const other = await createTestClient(t);
    const mismatch = await t.request('POST', TOKEN, {
      headers: { authorization: basicAuth(client.clientId, client.clientSecret) },
      body: { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, client_id: other.clientId },
    });
    assertOAuthError(mismatch, 400, 'invalid_request', /does not match/);

    assertOAuthError(
      await t.request('POST', TOKEN, { body: codeExchangeBody(client, code, { client_id: 'unknown-client' }) }),
      401,
      'invalid_client',
      /unknown client/,
    );
    const { client_secret: _s, ...noSecret } = codeExchangeBody(client, code);
    assertOAuthError(
      await t.request('POST', TOKEN, { body: noSecret }),
      401,
      'invalid_client',
      /client_secret is required/,
    );
    const { client_id: _i, ...noId } = codeExchangeBody(client, code);
    assertOAuthError(await t.request('POST', TOKEN, { body: noId }), 400, 'invalid_request', /client_id is required/);
    assertOAuthError(
      await t.request('POST', TOKEN, {
        headers: { authorization: 'Basic !!!' },
        body: { grant_type: 'authorization_code', code },
      }),
      400,
      'invalid_request',
    );

    assert.equal(
      (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).statusCode,
      200,
      'failed client auth must not burn the code',
    );
  });

  test('grant types: unknown is unsupported_grant_type, missing is invalid_request, not allowed is unauthorized_client', async () => {
    const client = await testClient(t);
    const creds = { client_id: client.clientId, client_secret: client.clientSecret };
    assertOAuthError(
      await t.request('POST', TOKEN, { body: { ...creds, grant_type: 'password' } }),
      400,
      'unsupported_grant_type',
    );
    assertOAuthError(
      await t.request('POST', TOKEN, { body: { ...creds, grant_type: 'client_credentials' } }),
      400,
      'unsupported_grant_type',
    );
    assertOAuthError(await t.request('POST', TOKEN, { body: creds }), 400, 'invalid_request', /grant_type is required/);

    const codeOnly = await createTestClient(t, { grantTypes: ['authorization_code'] });
    const { code } = await authorizeCode(t, { client: codeOnly });
    const ok = await t.request('POST', TOKEN, { body: codeExchangeBody(codeOnly, code) });
    assert.equal(ok.statusCode, 200);
    const refresh = await t.request('POST', TOKEN, {
      body: {
        grant_type: 'refresh_token',
        refresh_token: ok.json().refresh_token,
        client_id: codeOnly.clientId,
        client_secret: codeOnly.clientSecret,
      },
    });
    assertOAuthError(refresh, 400, 'unauthorized_client');
  });

  test('malformed requests are invalid_request with no-store: repeated parameters, bad options, wrong types', async () => {
    const { code, client } = await authorizeCode(t);
    const repeated = `${form(codeExchangeBody(client, code) as Record<string, string>)}&code=${code}`;
    assertOAuthError(
      await t.request('POST', TOKEN, { headers: FORM, body: repeated }),
      400,
      'invalid_request',
      /more than once/,
    );
    assertOAuthError(
      await t.request('POST', TOKEN, {
        body: codeExchangeBody(client, code, { options: { issuedAtTimeWindowMs: -1 } }),
      }),
      400,
      'invalid_request',
    );
    assertOAuthError(
      await t.request('POST', TOKEN, { body: codeExchangeBody(client, code, { options: '{nope' }) }),
      400,
      'invalid_request',
      /options/,
    );
    assertOAuthError(
      await t.request('POST', TOKEN, { body: codeExchangeBody(client, code, { code: 12345 }) }),
      400,
      'invalid_request',
    );
    // unknown parameters are ignored (RFC 6749 §3.2)
    assert.equal(
      (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code, { nonce: 'x', resource: 'y' }) }))
        .statusCode,
      200,
    );
    // the API key is required (docs/signin.md); even that refusal is not cacheable
    const noKey = await t.request('POST', TOKEN, { apiKey: null, body: codeExchangeBody(client, code) });
    assert.equal(noKey.statusCode, 401);
    assert.equal(noKey.headers['cache-control'], 'no-store');
  });

  for (const n of [12]) {
    test(`${n} parallel exchanges of one code: exactly one success, the rest invalid_grant, no 500`, async () => {
      const { code, client } = await authorizeCode(t);
      const results = await Promise.all(
        Array.from({ length: n }, () => t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })),
      );
      const statuses = results.map((r) => r.statusCode);
      assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
      for (const r of results.filter((r) => r.statusCode !== 200)) assertOAuthError(r, 400, 'invalid_grant');
      // the winner's tokens are the ones stored; the losers' reuse revoked them (RFC 6749 §4.1.2)
      const row = await t.ctx.db
        .selectFrom('signin_authorizations')
        .selectAll()
        .where('code_hash', '=', sha256Hex(code))
        .executeTakeFirstOrThrow();
      const winner = results.find((r) => r.statusCode === 200)!.json();
      assert.equal(row.access_hash, sha256Hex(winner.access_token.split('.')[1]));
      assert.equal(row.refresh_hash, sha256Hex(winner.refresh_token.split('.')[1]));
      assert.notEqual(row.revoked_at, null);
    });
  }
});

describe('token endpoint: refresh_token', () => {
  const t = useApp();

  async function grant(scopes?: string[]) {
    const { code, client } = await authorizeCode(t, scopes ? { scopes } : {});
    const res = await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) });
    assert.equal(res.statusCode, 200);
    return { client, tokens: res.json() };
  }
  const refreshBody = (
    client: { clientId: string; clientSecret: string },
    refresh_token: string,
    extra: Record<string, unknown> = {},
  ) => ({
    grant_type: 'refresh_token',
    refresh_token,
    client_id: client.clientId,
    client_secret: client.clientSecret,
    ...extra,
  });

  test('rotates: new tokens every time, the response has the same shape, the new pair works', async () => {
    const { client, tokens } = await grant();
    const r1 = await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) });
    assert.equal(r1.statusCode, 200, r1.body);
    assert.equal(r1.headers['cache-control'], 'no-store');
    const n1 = r1.json();
    assert.notEqual(n1.refresh_token, tokens.refresh_token);
    assert.notEqual(n1.access_token, tokens.access_token);
    assert.equal(n1.platformAddress, tokens.platformAddress);
    assert.equal(n1.scope, SCOPE_IDS.join(' '));
    assert.equal(await isSignedIn(t, n1.access_token), true);
    assert.equal(await isSignedIn(t, tokens.access_token), false, 'rotation replaces the previous access token');
    const r2 = await t.request('POST', TOKEN, {
      headers: FORM,
      body: form(refreshBody(client, n1.refresh_token) as Record<string, string>),
    });
    assert.equal(r2.statusCode, 200, r2.body);
  });

  test('reuse of a rotated refresh token is invalid_grant and revokes the whole family', async () => {
    const { client, tokens } = await grant();
    const rotated = (await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) })).json();
    assertOAuthError(
      await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) }),
      400,
      'invalid_grant',
      /already been used/,
    );
    assert.equal(await isSignedIn(t, rotated.access_token), false);
    assert.equal(await isSignedIn(t, tokens.access_token), false);
    assertOAuthError(
      await t.request('POST', TOKEN, { body: refreshBody(client, rotated.refresh_token) }),
      400,
      'invalid_grant',
      /revoked/,
    );
  });

  test('scopes can be narrowed, never widened', async () => {
    const { client, tokens } = await grant(['completeClaims', 'manageClaims']);
    assertOAuthError(
      await t.request('POST', TOKEN, {
        body: refreshBody(client, tokens.refresh_token, { scope: 'completeClaims manageDeveloperApps' }),
      }),
      400,
      'invalid_scope',
      /manageDeveloperApps/,
    );
    assertOAuthError(
      await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token, { scope: 'noSuchScope' }) }),
      400,
      'invalid_scope',
    );
    const narrowed = await t.request('POST', TOKEN, {
      body: refreshBody(client, tokens.refresh_token, { scope: 'completeClaims' }),
    });
    assert.equal(narrowed.statusCode, 200, 'a refused widening must not consume the refresh token');
    assert.equal(narrowed.json().scope, 'completeClaims');
    const st = (
      await t.request('POST', '/api/v0/auth/status', { token: narrowed.json().access_token, body: {} })
    ).json();
    assert.deepEqual(
      st.scopes.map((s: { scopeId: string }) => s.scopeId),
      ['completeClaims'],
    );
    // the rotated refresh token keeps the original grant
    const again = await t.request('POST', TOKEN, { body: refreshBody(client, narrowed.json().refresh_token) });
    assert.equal(again.json().scope, 'completeClaims manageClaims');
  });

  test('an empty scope is the scope omitted (RFC 6749 §3.1): the new token keeps the whole grant', async () => {
    const { client, tokens } = await grant(['completeClaims', 'manageClaims']);
    const res = await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token, { scope: '' }) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().scope, 'completeClaims manageClaims');
    const st = (await t.request('POST', '/api/v0/auth/status', { token: res.json().access_token, body: {} })).json();
    assert.deepEqual(
      st.scopes.map((s: { scopeId: string }) => s.scopeId),
      ['completeClaims', 'manageClaims'],
    );
  });

  test('another client, an access token, or garbage cannot refresh', async () => {
    const { client, tokens } = await grant();
    const other = await createTestClient(t);
    assertOAuthError(
      await t.request('POST', TOKEN, { body: refreshBody(other, tokens.refresh_token) }),
      400,
      'invalid_grant',
      /another client/,
    );
    assertOAuthError(
      await t.request('POST', TOKEN, { body: refreshBody(client, tokens.access_token) }),
      400,
      'invalid_grant',
    );
    assertOAuthError(await t.request('POST', TOKEN, { body: refreshBody(client, 'garbage') }), 400, 'invalid_grant');
    const { refresh_token: _r, ...missing } = refreshBody(client, '');
    assertOAuthError(
      await t.request('POST', TOKEN, { body: missing }),
      400,
      'invalid_request',
      /refresh_token is required/,
    );
    assert.equal(
      (await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) })).statusCode,
      200,
      'the refused attempts did not consume it',
    );
  });

  test('two concurrent refreshes with one token: one success at most, the family ends revoked, no 500', async () => {
    const { client, tokens } = await grant();
    const results = await Promise.all(
      [0, 1, 2].map(() => t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) })),
    );
    const ok = results.filter((r) => r.statusCode === 200);
    assert.equal(ok.length, 1, results.map((r) => r.statusCode).join(','));
    for (const r of results.filter((r) => r.statusCode !== 200)) assertOAuthError(r, 400, 'invalid_grant');
    assert.equal(await isSignedIn(t, ok[0].json().access_token), false, 'reuse detected: the family is revoked');
  });

  test('parallel refreshes with one token: exactly one success, every other one is the reuse error', async () => {
    const { client, tokens } = await grant();
    const results = await Promise.all(
      [0, 1, 2, 3].map(() => t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) })),
    );
    assert.equal(results.filter((r) => r.statusCode === 200).length, 1, results.map((r) => r.statusCode).join(','));
    for (const r of results.filter((r) => r.statusCode !== 200))
      assertOAuthError(r, 400, 'invalid_grant', /already been used/);
  });

  test('a rotation remembers the replaced token: revoking it later revokes the family', async () => {
    const { client, tokens } = await grant();
    const rotated = (await t.request('POST', TOKEN, { body: refreshBody(client, tokens.refresh_token) })).json();
    assert.equal(await isSignedIn(t, rotated.access_token), true);
    const res = await t.request('POST', '/api/v0/signin/token/revoke', {
      body: { token: tokens.refresh_token, client_id: client.clientId, client_secret: client.clientSecret },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await isSignedIn(t, rotated.access_token), false);
  });
});

describe('revocation', () => {
  const t = useApp();
  const REVOKE = '/api/v0/signin/token/revoke';

  async function grant(client?: Awaited<ReturnType<typeof createTestClient>>) {
    const { code, client: c } = await authorizeCode(t, client ? { client } : {});
    return { client: c, tokens: (await t.request('POST', TOKEN, { body: codeExchangeBody(c, code) })).json() };
  }

  test('unknown or garbage tokens answer 200 with no-store', async () => {
    for (const token of ['f'.repeat(64), 'garbage', 'x']) {
      const res = await t.request('POST', REVOKE, { body: { token } });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {});
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    assertOAuthError(await t.request('POST', REVOKE, { body: {} }), 400, 'invalid_request', /token is required/);
  });

  test('revoking the access token revokes the whole authorization (refresh included)', async () => {
    const { client, tokens } = await grant();
    assert.equal((await t.request('POST', REVOKE, { body: { token: tokens.access_token } })).statusCode, 200);
    assert.equal(await isSignedIn(t, tokens.access_token), false);
    assertOAuthError(
      await t.request('POST', TOKEN, {
        body: {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        },
      }),
      400,
      'invalid_grant',
    );
  });

  test('revoking the refresh token (form body, token_type_hint) makes the access token inactive', async () => {
    const { tokens } = await grant();
    const res = await t.request('POST', REVOKE, {
      headers: FORM,
      body: form({ token: tokens.refresh_token, token_type_hint: 'refresh_token' }),
    });
    assert.equal(res.statusCode, 200);
    assert.equal(await isSignedIn(t, tokens.access_token), false);
  });

  test('a client authenticating on revoke cannot revoke another client’s token; a wrong secret is invalid_client', async () => {
    const { tokens } = await grant();
    const other = await createTestClient(t);
    const res = await t.request('POST', REVOKE, {
      body: { token: tokens.access_token, client_id: other.clientId, client_secret: other.clientSecret },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(await isSignedIn(t, tokens.access_token), true, 'another client’s token stays valid');
    assertOAuthError(
      await t.request('POST', REVOKE, {
        body: { token: tokens.access_token, client_id: other.clientId, client_secret: 'wrong' },
      }),
      401,
      'invalid_client',
    );
    const own = await grant(other);
    const ok = await t.request('POST', REVOKE, {
      headers: { authorization: basicAuth(other.clientId, other.clientSecret) },
      body: { token: own.tokens.access_token },
    });
    assert.equal(ok.statusCode, 200);
    assert.equal(await isSignedIn(t, own.tokens.access_token), false);
  });
});

describe('expiry under a controllable clock', () => {
  let clock: ManualClock;
  const t = useApp({ clock: true });
  before(async () => {
    clock = t.clock as ManualClock;
  });

  test('codes expire after 10 minutes, whatever the window option says', async () => {
    const { code, client } = await authorizeCode(t);
    clock.advance(10 * 60_000);
    assertOAuthError(
      await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) }),
      400,
      'invalid_grant',
      /expired/,
    );
    assertOAuthError(
      await t.request('POST', TOKEN, {
        body: codeExchangeBody(client, code, { options: { issuedAtTimeWindowMs: 0 } }),
      }),
      400,
      'invalid_grant',
      /expired/,
    );
  });

  test('options.issuedAtTimeWindowMs tightens the window; 0 disables it; a refused attempt does not burn the code', async () => {
    const { code, client } = await authorizeCode(t);
    clock.advance(5_000);
    assertOAuthError(
      await t.request('POST', TOKEN, {
        body: codeExchangeBody(client, code, { options: { issuedAtTimeWindowMs: 4_000 } }),
      }),
      400,
      'invalid_grant',
      /Not recent enough/,
    );
    const ok = await t.request('POST', TOKEN, {
      body: codeExchangeBody(client, code, { options: { issuedAtTimeWindowMs: 0 } }),
    });
    assert.equal(ok.statusCode, 200, ok.body);
    const { code: code2 } = await authorizeCode(t);
    clock.advance(9 * 60_000);
    assert.equal(
      (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code2) })).statusCode,
      200,
      'inside the default 10-minute window',
    );
  });

  test('access tokens live one day, refresh tokens 60 days; each rotation resets both (docs/signin.md)', async () => {
    const { code, client } = await authorizeCode(t);
    const granted = clock.now();
    const tokens = (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).json();
    assert.equal(Number(tokens.access_token_expires_at), granted + DAY);
    assert.equal(Number(tokens.refresh_token_expires_at), granted + 60 * DAY);
    clock.advance(DAY - 1);
    assert.equal(await isSignedIn(t, tokens.access_token), true);
    clock.advance(1);
    assert.equal(await isSignedIn(t, tokens.access_token), false, 'expired after one day');

    const refreshWith = (refresh_token: string) =>
      t.request('POST', TOKEN, {
        body: {
          grant_type: 'refresh_token',
          refresh_token,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        },
      });
    clock.set(granted + 59 * DAY + DAY / 2);
    const late = await refreshWith(tokens.refresh_token);
    assert.equal(late.statusCode, 200, late.body);
    const l = late.json();
    assert.equal(Number(l.refresh_token_expires_at), clock.now() + 60 * DAY, 'rotation resets the refresh expiry');
    assert.equal(Number(l.access_token_expires_at), clock.now() + DAY);
    assert.equal(l.expires_in, DAY / 1000);
    // an unused refresh token ends 60 days after its rotation
    clock.set(Number(l.refresh_token_expires_at));
    assertOAuthError(await refreshWith(l.refresh_token), 400, 'invalid_grant', /expired/);
    assert.equal(await isSignedIn(t, l.access_token), false);
  });
});

describe('sweeping ended rows', () => {
  let clock: ManualClock;
  const t = useApp({ clock: true });
  before(async () => {
    clock = t.clock as ManualClock;
  });

  test('unused codes, revoked and ended families go after a day of grace; live families stay', async () => {
    const { sweepSignin } = await import('../../src/signin/cleanup.ts');
    const unused = await authorizeCode(t);
    const live = await authorizeCode(t);
    const liveTokens = (await t.request('POST', TOKEN, { body: codeExchangeBody(live.client, live.code) })).json();
    const revoked = await authorizeCode(t);
    const revokedTokens = (
      await t.request('POST', TOKEN, { body: codeExchangeBody(revoked.client, revoked.code) })
    ).json();
    const rotated = (
      await t.request('POST', TOKEN, {
        body: {
          grant_type: 'refresh_token',
          refresh_token: revokedTokens.refresh_token,
          client_id: revoked.client.clientId,
          client_secret: revoked.client.clientSecret,
        },
      })
    ).json();
    await t.request('POST', '/api/v0/signin/token/revoke', { body: { token: rotated.access_token } });

    assert.deepEqual(
      await sweepSignin(t.ctx),
      { requests: 0, authorizations: 0, rotatedTokens: 0 },
      'nothing is swept inside the grace period',
    );
    clock.advance(DAY + 10 * 60_000 + 1);
    assert.deepEqual(await sweepSignin(t.ctx), { requests: 3, authorizations: 2, rotatedTokens: 1 });
    assertOAuthError(
      await t.request('POST', TOKEN, { body: codeExchangeBody(unused.client, unused.code) }),
      400,
      'invalid_grant',
    );
    const r = await t.request('POST', TOKEN, {
      body: {
        grant_type: 'refresh_token',
        refresh_token: liveTokens.refresh_token,
        client_id: live.client.clientId,
        client_secret: live.client.clientSecret,
      },
    });
    assert.equal(r.statusCode, 200, 'a live family survives');
    clock.advance(61 * DAY + 1); // the rotated refresh token's 60 days, plus the grace day
    assert.deepEqual(await sweepSignin(t.ctx), { requests: 0, authorizations: 1, rotatedTokens: 1 });
  });
});
