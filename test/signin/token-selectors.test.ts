// Access and refresh tokens are `<authorization_id>.<verifier>` (selector.verifier): the row is read by
// its primary key and the stored SHA-256 of the verifier is compared in constant time. The selector
// is no secret, so a token with a real selector and any other verifier must be an unknown token on
// every path: bearer sessions, the refresh grant and revocation.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { authorizeCode, codeExchangeBody, createTestClient, isSignedIn, type TestClient } from '../helpers/signin.ts';
import { requireSession } from '../../src/shared/session.ts';
import { sha256Hex } from '../../src/shared/crypto.ts';

const TOKEN = '/api/v0/signin/token';
const REVOKE = '/api/v0/signin/token/revoke';
const SHAPE = /^[0-9a-f]{32}\.[0-9a-f]{64}$/;

interface Tokens {
  access_token: string;
  refresh_token: string;
}

function assertInvalidGrant(res: LightMyRequestResponse, description?: RegExp): void {
  assert.equal(res.statusCode, 400, res.body);
  assert.equal(res.json().error, 'invalid_grant');
  if (description) assert.match(res.json().error_description, description);
}

/** Flips the last hex digit: the same selector, a verifier one character off. */
const offByOne = (token: string) => token.slice(0, -1) + (token.endsWith('0') ? '1' : '0');

describe('selector.verifier tokens', () => {
  const t = useApp({ extend: (app) => app.get('/api/v0/test/whoami', async (req) => requireSession(req)) });

  async function grant(client?: TestClient): Promise<{ client: TestClient; tokens: Tokens }> {
    const { code, client: c } = await authorizeCode(t, client ? { client } : {});
    const res = await t.request('POST', TOKEN, { body: codeExchangeBody(c, code) });
    assert.equal(res.statusCode, 200, res.body);
    return { client: c, tokens: res.json() };
  }
  const refresh = (client: TestClient, refresh_token: string) =>
    t.request('POST', TOKEN, {
      body: {
        grant_type: 'refresh_token',
        refresh_token,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      },
    });
  const row = (authorizationId: string) =>
    t.ctx.db
      .selectFrom('signin_authorizations')
      .selectAll()
      .where('authorization_id', '=', authorizationId)
      .executeTakeFirstOrThrow();

  test('the selector is the authorization id; only SHA-256 of each verifier is stored, never a token', async () => {
    const { client, tokens } = await grant();
    assert.match(tokens.access_token, SHAPE);
    assert.match(tokens.refresh_token, SHAPE);
    const [selector, accessVerifier] = tokens.access_token.split('.');
    const [refreshSelector, refreshVerifier] = tokens.refresh_token.split('.');
    assert.equal(refreshSelector, selector);
    assert.notEqual(accessVerifier, refreshVerifier);

    const stored = await row(selector);
    assert.equal(stored.access_hash, sha256Hex(accessVerifier));
    assert.equal(stored.refresh_hash, sha256Hex(refreshVerifier));
    const values = JSON.stringify(stored);
    for (const secret of [tokens.access_token, tokens.refresh_token, accessVerifier, refreshVerifier])
      assert.ok(!values.includes(secret), 'no token or verifier is stored');

    const rotated = await refresh(client, tokens.refresh_token);
    assert.equal(rotated.statusCode, 200, rotated.body);
    const next: Tokens = rotated.json();
    assert.equal(next.access_token.split('.')[0], selector, 'rotation keeps the selector');
    assert.equal(next.refresh_token.split('.')[0], selector);
    assert.equal((await row(selector)).refresh_hash, sha256Hex(next.refresh_token.split('.')[1]));
    const old = await t.ctx.db
      .selectFrom('signin_rotated_tokens')
      .selectAll()
      .where('authorization_id', '=', selector)
      .execute();
    assert.deepEqual(
      old.map((r) => r.token_hash),
      [sha256Hex(refreshVerifier)],
    );
  });

  test('a real selector with a wrong verifier is not signed in, cannot refresh, and revokes nothing', async () => {
    const { client, tokens } = await grant();
    const selector = tokens.access_token.split('.')[0];
    const forged = [
      `${selector}.${'0'.repeat(64)}`,
      offByOne(tokens.access_token),
      offByOne(tokens.refresh_token),
      `${selector}.${tokens.access_token.split('.')[1].split('').reverse().join('')}`,
    ];
    const owner = await createTestClient(t); // a client authenticating on revoke, too
    for (const token of forged) {
      assert.match(token, SHAPE);
      // (a) bearer: no session
      assert.equal(await isSignedIn(t, token), false, token);
      assert.equal((await t.request('GET', '/api/v0/test/whoami', { token })).statusCode, 401);
      // (b) refresh: unknown token, and it does not count as reuse
      assertInvalidGrant(await refresh(client, token), /^Invalid refresh token\.$/);
      // (c) revoke: 200 {}, nothing revoked (with and without client authentication)
      for (const extra of [
        {},
        { client_id: client.clientId, client_secret: client.clientSecret },
        { client_id: owner.clientId, client_secret: owner.clientSecret },
      ]) {
        const res = await t.request('POST', REVOKE, { body: { token, ...extra } });
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json(), {});
      }
    }
    assert.equal((await row(selector)).revoked_at, null, 'nothing revoked');
    assert.equal(await isSignedIn(t, tokens.access_token), true, 'the real access token still works');
    const rotated = await refresh(client, tokens.refresh_token);
    assert.equal(rotated.statusCode, 200, 'the real refresh token still works: ' + rotated.body);
    assert.equal(await isSignedIn(t, rotated.json().access_token), true);
  });

  test('after a rotation, a wrong verifier on the family’s selector is still unknown, not reuse', async () => {
    const { client, tokens } = await grant();
    const next: Tokens = (await refresh(client, tokens.refresh_token)).json();
    const forged = offByOne(tokens.refresh_token); // one character off a rotated refresh token
    assertInvalidGrant(await refresh(client, forged), /^Invalid refresh token\.$/);
    assert.equal((await t.request('POST', REVOKE, { body: { token: forged } })).statusCode, 200);
    assert.equal(await isSignedIn(t, next.access_token), true, 'the family is not revoked');
    assert.equal((await refresh(client, next.refresh_token)).statusCode, 200);
  });

  test('malformed tokens are unknown tokens everywhere, never a 500', async () => {
    const { client, tokens } = await grant();
    const [selector, verifier] = tokens.refresh_token.split('.');
    const malformed = [
      'garbage',
      'x',
      '.',
      verifier, // 64 hex: the old format
      selector, // the selector alone
      `${selector}.`,
      `.${verifier}`,
      `${selector}${verifier}`, // missing dot
      `${selector}-${verifier}`,
      `${selector}.${verifier.slice(1)}`, // 63
      `${selector}.${verifier}0`, // 65
      `${selector.slice(1)}.${verifier}`, // 31
      `${selector}0.${verifier}`, // 33
      `${selector}.${verifier}.${verifier}`,
      tokens.refresh_token.toUpperCase(),
      `${selector.toUpperCase()}.${verifier}`,
      `${selector}.${verifier.toUpperCase()}`,
      `${selector}.${verifier.slice(0, 63)}g`,
      `${selector.slice(0, 31)}z.${verifier}`,
      `${selector}.${verifier.slice(0, 63)}\u0661`, // a non-ASCII digit
      ` ${tokens.refresh_token}`,
      `${tokens.refresh_token} `,
      `${tokens.refresh_token}\n`,
      'a'.repeat(200),
    ];
    for (const token of malformed) {
      assertInvalidGrant(await refresh(client, token), /^Invalid refresh token\.$/);
      const revoked = await t.request('POST', REVOKE, { body: { token } });
      assert.equal(revoked.statusCode, 200, `${JSON.stringify(token)}: ${revoked.body}`);
      if (/^[\x21-\x7e]+$/.test(token)) {
        // (as a bearer token; whitespace and non-ASCII cannot be sent in the header)
        assert.equal(await isSignedIn(t, token), false, token);
        assert.equal((await t.request('GET', '/api/v0/test/whoami', { token })).statusCode, 401);
      }
    }
    // longer than the body schema allows: a 400 from the schema (refresh, revoke), still no session
    const long = `${tokens.refresh_token}${'0'.repeat(10_000)}`;
    assert.equal((await refresh(client, long)).json().error, 'invalid_request');
    assert.equal((await t.request('POST', REVOKE, { body: { token: long } })).statusCode, 400);
    assert.equal(await isSignedIn(t, long), false);
    // uppercase, padded and prefixed forms of the real access token are unknown too
    for (const token of [tokens.access_token.toUpperCase(), `${tokens.access_token}0`, `0${tokens.access_token}`])
      assert.equal(await isSignedIn(t, token), false);
    assert.equal((await row(selector)).revoked_at, null, 'none of them revoked the family');
    assert.equal(await isSignedIn(t, tokens.access_token), true);
    assert.equal((await refresh(client, tokens.refresh_token)).statusCode, 200);
  });

  test('reuse of a rotated refresh token (any generation) revokes the family', async () => {
    const { client, tokens } = await grant();
    const second: Tokens = (await refresh(client, tokens.refresh_token)).json();
    const third: Tokens = (await refresh(client, second.refresh_token)).json();
    assert.equal(await isSignedIn(t, third.access_token), true);
    assertInvalidGrant(await refresh(client, tokens.refresh_token), /already been used/);
    assert.equal(await isSignedIn(t, third.access_token), false);
    assertInvalidGrant(await refresh(client, third.refresh_token), /revoked/);
  });

  test('a rotated refresh token presented by another client is refused without revoking', async () => {
    const { client, tokens } = await grant();
    const next: Tokens = (await refresh(client, tokens.refresh_token)).json();
    const other = await createTestClient(t);
    assertInvalidGrant(await refresh(other, tokens.refresh_token), /^Invalid refresh token\.$/);
    assert.equal(await isSignedIn(t, next.access_token), true);
  });

  test('revoking a rotated refresh token revokes the family', async () => {
    const { client, tokens } = await grant();
    const next: Tokens = (await refresh(client, tokens.refresh_token)).json();
    const res = await t.request('POST', REVOKE, {
      body: { token: tokens.refresh_token, token_type_hint: 'refresh_token' },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(await isSignedIn(t, next.access_token), false);
    assertInvalidGrant(await refresh(client, next.refresh_token), /revoked/);
  });

  test('the access token is not a refresh token, and the refresh token is not a bearer token', async () => {
    const { client, tokens } = await grant();
    assert.equal(await isSignedIn(t, tokens.refresh_token), false);
    assertInvalidGrant(await refresh(client, tokens.access_token), /^Invalid refresh token\.$/);
    assert.equal(await isSignedIn(t, tokens.access_token), true, 'neither attempt revoked anything');
  });
});
