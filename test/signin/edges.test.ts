// Second angles on sign-in checks (issue 16): the auth/status body check and the PKCE verifier
// comparison. Each test here was seen to fail on the bug its comment names.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { startApp, type TestApp } from '../helpers/app.ts';
import { authorizeCode, basicAuth, signIn } from '../helpers/signin.ts';

const TOKEN = '/api/v0/signin/token';
const STATUS = '/api/v0/auth/status';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };

function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

describe('sign-in edges', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  // Bug it catches: the body check throwing a plain Error (a 500) instead of a 400.
  test('auth/status: an unknown field is a 400 naming it; a non-object body is a 400', async () => {
    const s = await signIn(t, { scopes: ['completeClaims'] });
    for (const token of [s.accessToken, undefined]) {
      const other = await t.request('POST', STATUS, { token, body: { other: 1 } });
      assert.equal(other.statusCode, 400, other.body);
      assert.deepEqual(other.json(), { errorMessage: 'body has unknown field "other"' });
      for (const payload of ['[1]', '[]', '"text"', '5', 'true']) {
        const res = await t.request('POST', STATUS, { token, body: payload, headers: JSON_TYPE });
        assert.equal(res.statusCode, 400, `${payload}: ${res.body}`);
        assert.deepEqual(res.json(), { errorMessage: 'body must be an empty object' }, payload);
      }
    }
    // and the accepted forms still answer
    const ok = await t.request('POST', STATUS, { token: s.accessToken, body: {} });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().signedIn, true);
  });

  // Bug it catches: the verifier compared to the challenge without hashing it, or not compared at all.
  test('PKCE over a form body with HTTP Basic: the challenge itself and another pair\'s verifier are refused, and do not burn the code', async () => {
    const mine = pkcePair();
    const other = pkcePair();
    const { code, client } = await authorizeCode(t, { codeChallenge: mine.challenge });
    const exchange = (code_verifier: string) =>
      t.request('POST', TOKEN, {
        apiKey: t.apiKey,
        headers: { ...FORM, authorization: basicAuth(client.clientId, client.clientSecret) },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier }).toString(),
      });
    for (const wrong of [mine.challenge, other.verifier]) {
      const res = await exchange(wrong);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().error, 'invalid_grant');
      assert.equal(res.json().error_description, 'code_verifier does not match the code_challenge.');
    }
    const ok = await exchange(mine.verifier);
    assert.equal(ok.statusCode, 200, ok.body);
    const st = await t.request('POST', STATUS, { token: ok.json().access_token, body: {} });
    assert.equal(st.json().signedIn, true);
  });
});
