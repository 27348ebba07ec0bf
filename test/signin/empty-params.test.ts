// RFC 6749 §3.1: "Parameters sent without a value MUST be treated as if they were omitted from the
// request." Token and revocation requests, form-encoded as OAuth clients send them, with empty
// parameters that would otherwise be read as values: each behaves as the request without them.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import {
  authorizeCode,
  basicAuth,
  createTestClient,
  isSignedIn,
  testClient,
  type TestClient,
} from '../helpers/signin.ts';

const TOKEN = '/api/v0/signin/token';
const REVOKE = '/api/v0/signin/token/revoke';

describe('empty parameters are omitted ones (RFC 6749 §3.1)', () => {
  let client: TestClient;
  const t = useApp();
  before(async () => {
    client = await testClient(t);
  });

  const form = (url: string, params: Record<string, string>, authorization?: string) =>
    t.request('POST', url, {
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
      body: new URLSearchParams(params).toString(),
    });

  test('an empty code_verifier, for a code issued without PKCE, exchanges the code', async () => {
    const { code } = await authorizeCode(t, { client });
    const res = await form(TOKEN, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      code_verifier: '',
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  test('an empty redirect_uri, for a code issued without one, exchanges the code', async () => {
    const noRedirect = await createTestClient(t, { redirectUris: [] });
    const { code } = await authorizeCode(t, { client: noRedirect, redirectUri: null });
    const res = await form(TOKEN, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: '',
      client_id: noRedirect.clientId,
      client_secret: noRedirect.clientSecret,
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  test('with HTTP Basic, an empty client_secret (and client_id) in the body is not a second mechanism', async () => {
    const { code } = await authorizeCode(t, { client });
    const res = await form(
      TOKEN,
      { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, client_id: '', client_secret: '' },
      basicAuth(client.clientId, client.clientSecret),
    );
    assert.equal(res.statusCode, 200, res.body);
  });

  test('an empty grant_type or client_id is a missing one, with the same text', async () => {
    const missing = await form(TOKEN, { client_id: client.clientId, client_secret: client.clientSecret });
    const empty = await form(TOKEN, { grant_type: '', client_id: client.clientId, client_secret: client.clientSecret });
    assert.equal(empty.statusCode, 400);
    assert.deepEqual(empty.json(), missing.json());
    assert.equal(empty.json().error_description, 'grant_type is required.');
    const noClient = await form(TOKEN, { grant_type: 'authorization_code', client_id: '' });
    assert.equal(noClient.json().error_description, 'client_id is required.');
  });

  test('no body at all is a request with every parameter omitted: a 400 naming the first, not a 500', async () => {
    const token = await t.app.inject({ method: 'POST', url: TOKEN, headers: { 'x-api-key': t.apiKey } });
    assert.equal(token.statusCode, 400, token.body);
    assert.equal(token.json().error_description, 'client_id is required.');
    const revoke = await t.app.inject({ method: 'POST', url: REVOKE, headers: { 'x-api-key': t.apiKey } });
    assert.equal(revoke.statusCode, 400, revoke.body);
    assert.equal(revoke.json().error_description, 'token is required.');
  });

  test('revocation: empty client credentials are no client authentication, so a public revoke goes through', async () => {
    const { code } = await authorizeCode(t, { client });
    const tokens = (
      await form(TOKEN, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: client.redirectUri,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      })
    ).json();
    assert.equal(await isSignedIn(t, tokens.access_token), true);
    const res = await form(REVOKE, {
      token: tokens.access_token,
      token_type_hint: '',
      client_id: '',
      client_secret: '',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await isSignedIn(t, tokens.access_token), false);
    const empty = await form(REVOKE, { token: '' });
    assert.equal(empty.statusCode, 400);
    assert.equal(empty.json().error_description, 'token is required.');
  });
});
