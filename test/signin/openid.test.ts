// OpenID Connect on the sign-in flow, over HTTP: the discovery document, the JWKS, the id_token of
// the code exchange and of a refresh (checked with jose, not by hand), the nonce's way from the
// authorization request to the id_token, userinfo and its RFC 6750 errors, and the signing keys:
// stored sealed, shared by processes that start together on one database.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  decodeProtectedHeader,
  jwtVerify,
  type JWK,
  type JWTPayload,
} from 'jose';
import { privateKeyToAccount } from 'viem/accounts';
import { createTestDatabase, startApp, type TestApp, type TestDatabase } from '../helpers/app.ts';
import { startService, type ServiceProcess } from '../helpers/process.ts';
import {
  authorizeCode,
  codeExchangeBody,
  createTestClient,
  testAccount,
  testClient,
  type TestClient,
} from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { SCOPE_IDS } from '../../src/signin/scopes.ts';

const TOKEN = '/api/v0/signin/token';
const USERINFO = '/api/v0/signin/userinfo';
const ISSUER = 'https://signin.example';

/** base64url of the left half of SHA-256 (OpenID Connect Core §3.1.3.6), computed here independently. */
const leftHalfHash = (s: string) =>
  createHash('sha256').update(s, 'ascii').digest().subarray(0, 16).toString('base64url');

async function jwksOf(t: TestApp): Promise<{ keys: JWK[] }> {
  const res = await t.request('GET', '/.well-known/jwks.json', { apiKey: null });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

async function verify(t: TestApp, idToken: string, audience: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(idToken, createLocalJWKSet(await jwksOf(t)), {
    issuer: ISSUER,
    audience,
    algorithms: ['ES256'],
    currentDate: new Date(t.clock.now()),
  });
  return payload;
}

/** Challenge (with a nonce), sign, approve: the code. */
async function codeWithNonce(t: TestApp, client: TestClient, scope: string, nonce: string | undefined) {
  const account = testAccount();
  const body: Record<string, string> = {
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    scope,
    address: account.address,
  };
  if (nonce !== undefined) body.nonce = nonce;
  const ch = await t.request('POST', '/api/v0/signin/challenge', { apiKey: null, body });
  assert.equal(ch.statusCode, 200, ch.body);
  const { requestId, message } = ch.json();
  const signature = await privateKeyToAccount(account.privateKey).signMessage({ message });
  const ap = await t.request('POST', '/api/v0/signin/approve', { apiKey: null, body: { requestId, signature } });
  assert.equal(ap.statusCode, 200, ap.body);
  return { code: ap.json().code as string, account };
}

describe('OpenID Connect: discovery, id_token, refresh, userinfo', () => {
  let clock: ManualClock;
  let client: TestClient;
  const t = useApp({ clock: true, env: { PUBLIC_URL: ISSUER } });
  before(async () => {
    clock = t.clock as ManualClock;
    client = await testClient(t);
  });

  test('the discovery document is the RFC 8414 document plus the OpenID fields, without an API key', async () => {
    const oidc = await t.request('GET', '/.well-known/openid-configuration', { apiKey: null });
    assert.equal(oidc.statusCode, 200);
    assert.equal(oidc.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(oidc.headers['cache-control'], 'public, max-age=3600');
    const rfc8414 = (await t.request('GET', '/.well-known/oauth-authorization-server', { apiKey: null })).json();
    assert.deepEqual(oidc.json(), {
      ...rfc8414,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      claims_supported: [
        'iss',
        'sub',
        'aud',
        'exp',
        'iat',
        'auth_time',
        'nonce',
        'at_hash',
        'address',
        'chain',
        'platformAddress',
      ],
      prompt_values_supported: ['consent', 'login'],
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    });
    assert.equal(rfc8414.issuer, ISSUER);
    assert.equal(rfc8414.userinfo_endpoint, `${ISSUER}/api/v0/signin/userinfo`);
    assert.equal(rfc8414.jwks_uri, `${ISSUER}/.well-known/jwks.json`);
    assert.deepEqual(rfc8414.scopes_supported, [...SCOPE_IDS]);
    assert.ok(rfc8414.scopes_supported.includes('openid'));
  });

  test('the JWKS holds one public P-256 key named by its thumbprint; the private key is stored sealed', async () => {
    const res = await t.get('/.well-known/jwks.json', { apiKey: null });
    assert.equal(res.headers['cache-control'], 'public, max-age=60');
    const { keys } = res.json();
    assert.equal(keys.length, 1);
    const [key] = keys;
    assert.deepEqual(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y'], 'no private member');
    assert.deepEqual([key.kty, key.crv, key.alg, key.use], ['EC', 'P-256', 'ES256', 'sig']);
    assert.equal(key.kid, await calculateJwkThumbprint(key));
    const rows = await t.ctx.db.selectFrom('signin_signing_keys').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.match(rows[0].private_jwk_sealed, /^v1\./);
    const priv = JSON.parse(t.ctx.keyring.decrypt(rows[0].private_jwk_sealed)) as JWK;
    assert.equal(typeof priv.d, 'string');
    assert.ok(
      !rows[0].private_jwk_sealed.includes(priv.d!) && !rows[0].public_jwk.includes(priv.d!),
      'the private scalar is stored only sealed',
    );
  });

  test('openid + nonce: the exchange adds an id_token with every claim, signed ES256 by the published key', async () => {
    const approvedAt = clock.now();
    const { code, account } = await codeWithNonce(t, client, 'openid completeClaims', 'n-0S6_WzA2Mj');
    clock.advance(5_000);
    const res = await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'access_token',
      'access_token_expires_at',
      'address',
      'chain',
      'expires_in',
      'id_token',
      'platformAddress',
      'refresh_token',
      'refresh_token_expires_at',
      'scope',
      'token_type',
      'verificationResponse',
    ]);
    assert.equal(body.scope, 'openid completeClaims');
    const header = decodeProtectedHeader(body.id_token);
    assert.deepEqual(header, { alg: 'ES256', kid: (await jwksOf(t)).keys[0].kid, typ: 'JWT' });
    const iat = Math.floor(clock.now() / 1000);
    assert.deepEqual(await verify(t, body.id_token, client.clientId), {
      iss: ISSUER,
      sub: account.platformAddress,
      address: account.address,
      chain: 'ETH',
      platformAddress: account.platformAddress,
      aud: client.clientId,
      exp: iat + 3600,
      iat,
      auth_time: Math.floor(approvedAt / 1000),
      nonce: 'n-0S6_WzA2Mj',
      at_hash: leftHalfHash(body.access_token),
    });
    assert.notEqual(account.platformAddress, account.address, 'sub is the native form, not the signed 0x form');
  });

  test('without the openid scope there is no id_token; without a nonce the id_token has none', async () => {
    const plain = await authorizeCode(t, { scopes: ['completeClaims'] });
    const res = await t.request('POST', TOKEN, { body: codeExchangeBody(plain.client, plain.code) });
    assert.equal(res.statusCode, 200);
    assert.equal('id_token' in res.json(), false);

    const { code } = await codeWithNonce(t, client, 'openid', undefined);
    const withoutNonce = await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) });
    const claims = await verify(t, withoutNonce.json().id_token, client.clientId);
    assert.equal('nonce' in claims, false);
    assert.equal(claims.at_hash, leftHalfHash(withoutNonce.json().access_token));
  });

  test('a refresh issues an id_token with the same sub, aud and auth_time, a new iat, no nonce; dropping openid drops it', async () => {
    const approvedAt = clock.now();
    const { code, account } = await codeWithNonce(t, client, 'openid manageClaims', 'first-nonce');
    const first = (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).json();
    clock.advance(2 * 3600_000); // the first id_token has expired; the family has not
    const res = await t.request('POST', TOKEN, {
      body: {
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    const iat = Math.floor(clock.now() / 1000);
    assert.deepEqual(await verify(t, body.id_token, client.clientId), {
      iss: ISSUER,
      sub: account.platformAddress,
      address: account.address,
      chain: 'ETH',
      platformAddress: account.platformAddress,
      aud: client.clientId,
      exp: iat + 3600,
      iat,
      auth_time: Math.floor(approvedAt / 1000),
      at_hash: leftHalfHash(body.access_token),
    });
    const narrowed = await t.request('POST', TOKEN, {
      body: {
        grant_type: 'refresh_token',
        refresh_token: body.refresh_token,
        scope: 'manageClaims',
        client_id: client.clientId,
        client_secret: client.clientSecret,
      },
    });
    assert.equal(narrowed.statusCode, 200, narrowed.body);
    assert.equal(narrowed.json().scope, 'manageClaims');
    assert.equal('id_token' in narrowed.json(), false);
  });

  test('every id_token of a long refresh chain verifies: the ES256 signature is always R || S, 64 bytes, whatever their leading zeros', async () => {
    // about 1 signature in 128 has an R or S below 2^248 (a shorter DER integer): 600 id_tokens
    // almost surely include some, and each must still verify
    const { code, account } = await codeWithNonce(t, client, 'openid', undefined);
    let body = (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).json();
    const published = await jwksOf(t);
    const jwks = createLocalJWKSet(published);
    for (let i = 0; i < 600; i++) {
      const res = await t.request('POST', TOKEN, {
        body: {
          grant_type: 'refresh_token',
          refresh_token: body.refresh_token,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      body = res.json();
      assert.equal(Buffer.from(body.id_token.split('.')[2], 'base64url').length, 64);
      const { payload, protectedHeader } = await jwtVerify(body.id_token, jwks, {
        issuer: ISSUER,
        audience: client.clientId,
        algorithms: ['ES256'],
        currentDate: new Date(t.clock.now()),
      });
      assert.equal(payload.sub, account.platformAddress);
      assert.equal(payload.at_hash, leftHalfHash(body.access_token));
      assert.deepEqual(protectedHeader, { alg: 'ES256', kid: published.keys[0].kid, typ: 'JWT' });
    }
  });

  test('the authorize page carries the nonce to the challenge; an over-long nonce or prompt=none goes back as an error', async () => {
    const page = (q: Record<string, string>) =>
      t.request(
        'GET',
        `/signin/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUri, state: 's', ...q })}`,
        { apiKey: null },
      );
    const ok = await page({ scope: 'openid', nonce: 'abc"</script>' });
    assert.equal(ok.statusCode, 200);
    const params = JSON.parse(/<script type="application\/json" id="params">(.*?)<\/script>/s.exec(ok.body)![1]);
    assert.equal(params.nonce, 'abc"</script>');

    const cases: [Record<string, string>, string, string][] = [
      [{ nonce: 'n'.repeat(1025) }, 'invalid_request', 'Parameter nonce must be at most 1024 characters.'],
      [
        { nonce: 'n', prompt: 'none' },
        'login_required',
        'prompt=none cannot be honoured: every sign-in needs a wallet signature.',
      ],
    ];
    for (const [q, error, description] of cases) {
      const res = await page(q);
      assert.equal(res.statusCode, 302, JSON.stringify(q));
      const loc = new URL(String(res.headers.location));
      assert.deepEqual(Object.fromEntries(loc.searchParams), { error, error_description: description, state: 's' });
    }

    const long = await t.request('POST', '/api/v0/signin/challenge', {
      apiKey: null,
      body: { client_id: client.clientId, nonce: 'n'.repeat(1025), address: testAccount().address },
    });
    assert.equal(long.statusCode, 400);
    assert.deepEqual(long.json(), { errorMessage: 'body.nonce must NOT have more than 1024 characters' });
  });

  test('userinfo (GET and POST) answers the identity claims of an access token holding openid', async () => {
    const { code, account } = await codeWithNonce(t, client, 'openid', 'x');
    const { access_token } = (await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) })).json();
    const expected = {
      sub: account.platformAddress,
      address: account.address,
      chain: 'ETH',
      platformAddress: account.platformAddress,
    };
    const get = await t.request('GET', USERINFO, { token: access_token });
    assert.equal(get.statusCode, 200, get.body);
    assert.equal(get.headers['cache-control'], 'no-store');
    assert.deepEqual(get.json(), expected);
    const post = await t.request('POST', USERINFO, { token: access_token, body: {} });
    assert.equal(post.statusCode, 200, post.body);
    assert.deepEqual(post.json(), expected);
    const bare = await t.request('POST', USERINFO, { token: access_token });
    assert.deepEqual(bare.json(), expected);
  });

  test('userinfo errors follow RFC 6750: no token, a malformed header, an unknown or revoked token, a token without openid', async () => {
    const withOpenid = await codeWithNonce(t, client, 'openid', 'y');
    const live = (await t.request('POST', TOKEN, { body: codeExchangeBody(client, withOpenid.code) })).json()
      .access_token as string;
    const without = await authorizeCode(t, { scopes: ['completeClaims'] });
    const noOpenid = (await t.request('POST', TOKEN, { body: codeExchangeBody(without.client, without.code) })).json()
      .access_token as string;
    const revoked = (
      await t.request('POST', TOKEN, {
        body: codeExchangeBody(client, (await codeWithNonce(t, client, 'openid', 'z')).code),
      })
    ).json().access_token as string;
    assert.equal(
      (await t.request('POST', '/api/v0/signin/token/revoke', { body: { token: revoked } })).statusCode,
      200,
    );

    const cases: [Record<string, string>, number, string, object][] = [
      [
        {},
        401,
        'Bearer realm="platform"',
        { errorMessage: 'The userinfo endpoint needs an access token: Authorization: Bearer <access_token>.' },
      ],
      [
        { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
        400,
        'Bearer realm="platform", error="invalid_request", error_description="The Authorization header must be Bearer <access_token>."',
        {
          error: 'invalid_request',
          error_description: 'The Authorization header must be Bearer <access_token>.',
          errorMessage: 'The Authorization header must be Bearer <access_token>.',
        },
      ],
      [
        { authorization: `Bearer ${live.replace(/.$/, (c) => (c === '0' ? '1' : '0'))}` },
        401,
        'Bearer realm="platform", error="invalid_token", error_description="The access token is unknown, expired or revoked."',
        {
          error: 'invalid_token',
          error_description: 'The access token is unknown, expired or revoked.',
          errorMessage: 'The access token is unknown, expired or revoked.',
        },
      ],
      [
        { authorization: `Bearer ${revoked}` },
        401,
        'Bearer realm="platform", error="invalid_token", error_description="The access token is unknown, expired or revoked."',
        {
          error: 'invalid_token',
          error_description: 'The access token is unknown, expired or revoked.',
          errorMessage: 'The access token is unknown, expired or revoked.',
        },
      ],
      [
        { authorization: `Bearer ${noOpenid}` },
        403,
        'Bearer realm="platform", error="insufficient_scope", error_description="The access token was not granted the openid scope.", scope="openid"',
        {
          error: 'insufficient_scope',
          error_description: 'The access token was not granted the openid scope.',
          errorMessage: 'The access token was not granted the openid scope.',
        },
      ],
    ];
    for (const [headers, status, challenge, body] of cases) {
      for (const method of ['GET', 'POST']) {
        const res = await t.request(method, USERINFO, { headers, ...(method === 'POST' ? { body: {} } : {}) });
        assert.equal(res.statusCode, status, `${method} ${JSON.stringify(headers)}: ${res.body}`);
        assert.equal(res.headers['www-authenticate'], challenge);
        assert.deepEqual(res.json(), body);
      }
    }
    // the access token expires after a day: userinfo then refuses it too
    clock.advance(24 * 3600_000);
    const expired = await t.request('GET', USERINFO, { token: live });
    assert.equal(expired.statusCode, 401);
    assert.equal(expired.json().error, 'invalid_token');
  });

  test('userinfo sits behind the API-key gate like every /api/ route', async () => {
    const res = await t.request('GET', USERINFO, { apiKey: null, token: 'a'.repeat(32) + '.' + 'b'.repeat(64) });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), {
      errorMessage: 'Unauthorized request. This route is only accessible with an API key.',
      unauthorized: true,
    });
  });
});

describe('OpenID Connect: processes starting together on one database share one signing key', () => {
  let db: TestDatabase;
  const services: ServiceProcess[] = [];
  before(async () => {
    db = createTestDatabase();
  });
  after(async () => {
    for (const s of services) await s.stop();
    await db.drop();
  });

  test("two `platform serve` processes started at once create one key; an id_token of one verifies with the other's JWKS", async () => {
    // generous: two services starting at once on a loaded machine; whichever started is stopped after
    const started = await Promise.allSettled([0, 1].map(() => startService({ ...db.env, PUBLIC_URL: ISSUER })));
    for (const s of started) if (s.status === 'fulfilled') services.push(s.value);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const [a, b] = await Promise.all(
      services.map(async (s) => (await (await fetch(`${s.url}/.well-known/jwks.json`)).json()) as { keys: JWK[] }),
    );
    assert.equal(a.keys.length, 1);
    assert.deepEqual(a, b);

    // a sign-in through process A (its app, key and code made in this database), verified against B's keys
    const t = await startApp({ database: { env: db.env, drop: async () => {} }, env: { PUBLIC_URL: ISSUER } });
    try {
      const other = await createTestClient(t, { name: 'Shared' });
      const { code } = await codeWithNonce(t, other, 'openid', 'shared');
      const res = await fetch(`${services[0].url}${TOKEN}`, {
        method: 'POST',
        headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(codeExchangeBody(other, code)),
      });
      assert.equal(res.status, 200);
      const { id_token } = (await res.json()) as { id_token: string };
      const { payload } = await jwtVerify(id_token, createLocalJWKSet(b), { issuer: ISSUER, audience: other.clientId });
      assert.equal(payload.nonce, 'shared');
      assert.deepEqual(await jwksOf(t), a, 'a third process reads the same key');
    } finally {
      await t.close();
    }
  });
});
