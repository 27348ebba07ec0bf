// The minimal path every capability relies on: sign in over HTTP, then use the bearer token.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.ts';
import { signIn, testAccount } from '../helpers/signin.ts';
import { requireSession } from '../../src/shared/session.ts';
import { SCOPE_IDS, scopeName } from '../../src/signin/scopes.ts';

describe('sessions', () => {
  const t = useApp({
    extend: (app) => {
      app.get('/api/v0/test/whoami', async (req) => requireSession(req));
      app.get('/api/v0/test/claims-only', async (req) => requireSession(req, 'manageClaims'));
    },
  });

  test('signIn drives the real flow and the token opens requireSession routes', async () => {
    const key = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
    const s = await signIn(t, { privateKey: key });
    assert.equal(s.address, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    assert.equal(s.platformAddress, testAccount(key).platformAddress);
    assert.match(s.platformAddress, /^bb1/);
    // selector.verifier: the authorization id (32 hex), then 32 random bytes (64 hex)
    assert.match(s.accessToken, /^[0-9a-f]{32}\.[0-9a-f]{64}$/);
    assert.match(s.refreshToken, /^[0-9a-f]{32}\.[0-9a-f]{64}$/);
    assert.equal(s.accessToken.split('.')[0], s.refreshToken.split('.')[0], 'one authorization, one selector');
    assert.notEqual(s.accessToken, s.refreshToken);

    const me = await t.request('GET', '/api/v0/test/whoami', { token: s.accessToken });
    assert.equal(me.statusCode, 200, me.body);
    const session = me.json();
    assert.equal(session.platformAddress, s.platformAddress);
    assert.equal(session.address, s.address);
    assert.equal(session.chain, 'ETH');
    assert.deepEqual(session.scopes, [...SCOPE_IDS]);
    assert.match(session.clientId, /^[0-9a-f]{64}$/);
  });

  test('no token is a 401; a missing scope is a 403; the refresh token is not a bearer token', async () => {
    assert.equal((await t.request('GET', '/api/v0/test/whoami')).statusCode, 401);
    assert.equal((await t.request('GET', '/api/v0/test/whoami', { token: 'f'.repeat(64) })).statusCode, 401);
    const s = await signIn(t, { scopes: ['completeClaims'] });
    assert.equal((await t.request('GET', '/api/v0/test/whoami', { token: s.accessToken })).statusCode, 200);
    const denied = await t.request('GET', '/api/v0/test/claims-only', { token: s.accessToken });
    assert.equal(denied.statusCode, 403);
    assert.match(denied.json().errorMessage, /manageClaims/);
    assert.equal((await t.request('GET', '/api/v0/test/whoami', { token: s.refreshToken })).statusCode, 401);
  });

  test('auth/status answers docs/signin.md exactly, signed in or not', async () => {
    const s = await signIn(t, { scopes: ['completeClaims', 'readPrivateClaimData'] });
    const res = await t.request('POST', '/api/v0/auth/status', { token: s.accessToken, body: {} });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'address',
      'chain',
      'email',
      'message',
      'platformAddress',
      'scopes',
      'signedIn',
    ]);
    assert.equal(body.signedIn, true);
    assert.equal(body.address, s.address);
    assert.equal(body.platformAddress, s.platformAddress);
    assert.equal(body.chain, 'ETH');
    assert.equal(body.email, '');
    assert.deepEqual(body.scopes, [
      { scopeName: scopeName('completeClaims'), scopeId: 'completeClaims' },
      { scopeName: 'Read Private Claim Data', scopeId: 'readPrivateClaimData' },
    ]);
    assert.ok(
      body.message.includes(s.address) && body.message.includes('wants you to sign in with your Ethereum account'),
    );

    for (const opts of [{}, { token: 'not-a-token' }, { token: s.refreshToken }]) {
      const r = await t.request('POST', '/api/v0/auth/status', { ...opts, body: {} });
      assert.equal(r.statusCode, 200);
      assert.deepEqual(r.json(), {
        signedIn: false,
        address: '',
        platformAddress: '',
        chain: '',
        scopes: [],
        message: '',
        email: '',
      });
    }
    const noBody = await t.request('POST', '/api/v0/auth/status', { token: s.accessToken });
    assert.equal(noBody.statusCode, 200, noBody.body);
    assert.equal(noBody.json().signedIn, true);
  });

  test('signing in with no scopes still gives a session (status works without scopes)', async () => {
    const s = await signIn(t, { scopes: [] });
    const body = (await t.request('POST', '/api/v0/auth/status', { token: s.accessToken, body: {} })).json();
    assert.equal(body.signedIn, true);
    assert.deepEqual(body.scopes, []);
  });
});

describe('two apps in one process', () => {
  test('each resolves sessions against its own database', async () => {
    const probe = (app: import('../../src/server.ts').App) =>
      app.get('/api/v0/test/whoami', async (req) => requireSession(req));
    const a = await startApp({ extend: probe });
    const b = await startApp({ extend: probe });
    try {
      const sa = await signIn(a);
      const sb = await signIn(b);
      assert.equal((await a.request('GET', '/api/v0/test/whoami', { token: sa.accessToken })).statusCode, 200);
      assert.equal((await b.request('GET', '/api/v0/test/whoami', { token: sb.accessToken })).statusCode, 200);
      assert.equal((await a.request('GET', '/api/v0/test/whoami', { token: sb.accessToken })).statusCode, 401);
      assert.equal((await b.request('GET', '/api/v0/test/whoami', { token: sa.accessToken })).statusCode, 401);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
