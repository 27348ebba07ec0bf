// Token revocation (RFC 7009) with and without client authentication: a request that carries any
// client credential (a body client_id, a body client_secret, or an HTTP Basic header) is
// authenticated and must authenticate; one that carries none revokes by the token alone. An
// authenticated client revokes only its own tokens (another client's stay live, still a 200).
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import {
  authorizeCode,
  basicAuth,
  codeExchangeBody,
  createTestClient,
  isSignedIn,
  testClient,
  type TestClient,
} from '../helpers/signin.ts';

const TOKEN = '/api/v0/signin/token';
const REVOKE = '/api/v0/signin/token/revoke';

describe('revocation: who must authenticate', () => {
  let client: TestClient;
  let other: TestClient;
  const t = useApp();
  before(async () => {
    client = await testClient(t);
    other = await createTestClient(t);
  });

  async function accessToken(): Promise<string> {
    const { code } = await authorizeCode(t, { client });
    const res = await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().access_token as string;
  }
  const revoke = (body: Record<string, string>, authorization?: string) =>
    t.request('POST', REVOKE, { body, ...(authorization ? { headers: { authorization } } : {}) });

  test('a body client_secret alone is an authentication attempt without a client_id', async () => {
    const token = await accessToken();
    const res = await revoke({ token, client_secret: client.clientSecret });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error_description, 'client_id is required.');
    assert.equal(await isSignedIn(t, token), true, 'nothing revoked');
  });

  test('a body client_id alone must come with its secret', async () => {
    const token = await accessToken();
    const res = await revoke({ token, client_id: client.clientId });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error_description, 'Client authentication failed: client_secret is required.');
    assert.equal(await isSignedIn(t, token), true);
  });

  test('an HTTP Basic header authenticates: a wrong secret is refused with the challenge, the right one revokes', async () => {
    const token = await accessToken();
    const wrong = await revoke({ token }, basicAuth(client.clientId, 'f'.repeat(64)));
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.json().error, 'invalid_client');
    assert.equal(wrong.headers['www-authenticate'], 'Basic realm="platform", error="invalid_client"');
    assert.equal(await isSignedIn(t, token), true);
    assert.equal((await revoke({ token }, basicAuth(client.clientId, client.clientSecret))).statusCode, 200);
    assert.equal(await isSignedIn(t, token), false);
  });

  test('another authenticated client gets a 200 but the token stays live', async () => {
    const token = await accessToken();
    const res = await revoke({ token, client_id: other.clientId, client_secret: other.clientSecret });
    assert.equal(res.statusCode, 200);
    assert.equal(await isSignedIn(t, token), true, "another client's token is not revoked");
    assert.equal(
      (await revoke({ token, client_id: client.clientId, client_secret: client.clientSecret })).statusCode,
      200,
    );
    assert.equal(await isSignedIn(t, token), false);
  });

  test('an Authorization header that is not Basic is no authentication: the token alone revokes', async () => {
    const token = await accessToken();
    assert.equal((await revoke({ token }, 'Bearer basic')).statusCode, 200);
    assert.equal(await isSignedIn(t, token), false);
  });
});
