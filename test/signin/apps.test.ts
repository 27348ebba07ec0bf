// Developer apps: the operator CLI and the HTTP routes on the reference SDK's paths.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { runCliInProcess } from '../helpers/cli.ts';
import { authorizeCode, codeExchangeBody, signIn, type TestClient } from '../helpers/signin.ts';
import { sha256Hex } from '../../src/shared/crypto.ts';

describe('platform app create', () => {
  const t = useApp();

  test('prints { client_id, client_secret, redirect_uris }; the secret is stored only as a hash and works', async () => {
    const r = await runCliInProcess(
      [
        'app',
        'create',
        '--name',
        'CLI App',
        '--redirect-uri',
        'https://cli.example/cb',
        '--redirect-uri',
        'http://localhost:8080/cb',
      ],
      t.database.env,
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(out), ['client_id', 'client_secret', 'redirect_uris']);
    assert.match(out.client_id, /^[0-9a-f]{64}$/);
    assert.match(out.client_secret, /^[0-9a-f]{64}$/);
    assert.deepEqual(out.redirect_uris, ['https://cli.example/cb', 'http://localhost:8080/cb']);
    const row = await t.ctx.db
      .selectFrom('signin_apps')
      .selectAll()
      .where('client_id', '=', out.client_id)
      .executeTakeFirstOrThrow();
    assert.equal(row.client_secret_hash, sha256Hex(out.client_secret));
    assert.ok(!JSON.stringify(row).includes(out.client_secret));
    assert.equal(row.created_by, null);

    const client: TestClient = {
      clientId: out.client_id,
      clientSecret: out.client_secret,
      redirectUri: 'http://localhost:8080/cb',
    };
    const { code } = await authorizeCode(t, { client });
    assert.equal(
      (await t.request('POST', '/api/v0/signin/token', { body: codeExchangeBody(client, code) })).statusCode,
      200,
    );
  });

  test('bad input is a usage error naming the problem', async () => {
    const noName = await runCliInProcess(['app', 'create', '--redirect-uri', 'https://x.example/cb'], t.database.env);
    assert.equal(noName.code, 2);
    assert.match(noName.stderr, /--name/);
    const badUri = await runCliInProcess(
      ['app', 'create', '--name', 'X', '--redirect-uri', 'http://evil.example/cb'],
      t.database.env,
    );
    assert.equal(badUri.code, 2);
    assert.match(badUri.stderr, /https/);
    const badGrant = await runCliInProcess(
      ['app', 'create', '--name', 'X', '--grant-type', 'password'],
      t.database.env,
    );
    assert.equal(badGrant.code, 2);
  });
});

describe('developer app routes', () => {
  const t = useApp();

  test('create, get, fetch, update (rotate secret), delete — owner only, with manageDeveloperApps', async () => {
    const owner = await signIn(t, { scopes: ['manageDeveloperApps'] });
    const created = await t.request('POST', '/api/v0/developerApps', {
      token: owner.accessToken,
      body: {
        name: 'My dApp',
        description: 'Demo',
        image: 'https://img.example/logo.png',
        redirectUris: ['https://dapp.example/cb'],
      },
    });
    assert.equal(created.statusCode, 200, created.body);
    const { clientId, clientSecret } = created.json();
    assert.match(clientId, /^[0-9a-f]{64}$/);
    assert.match(clientSecret, /^[0-9a-f]{64}$/);

    const got = await t.request('GET', `/api/v0/developerApp/${clientId}`);
    assert.equal(got.statusCode, 200);
    const doc = got.json().developerApp;
    assert.deepEqual(
      { ...doc, createdAt: undefined, updatedAt: undefined },
      {
        clientId,
        name: 'My dApp',
        description: 'Demo',
        image: 'https://img.example/logo.png',
        redirectUris: ['https://dapp.example/cb'],
        grantTypes: ['authorization_code', 'refresh_token'],
        createdBy: owner.platformAddress,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.ok(!got.body.includes(clientSecret));
    const unknown = await t.request('GET', '/api/v0/developerApp/unknown');
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(unknown.json(), { errorMessage: 'No developer app with clientId unknown' });

    const one = await t.request('POST', '/api/v0/developerApps/fetch', { body: { clientId } });
    assert.equal(one.statusCode, 200);
    assert.deepEqual(
      one.json(),
      { developerApps: [got.json().developerApp], pagination: { bookmark: '', hasMore: false } },
      'one app, no further page',
    );
    const none = await t.request('POST', '/api/v0/developerApps/fetch', { body: { clientId: 'f'.repeat(64) } });
    assert.equal(none.statusCode, 404);
    assert.deepEqual(none.json(), { errorMessage: `No developer app with clientId ${'f'.repeat(64)}` });
    const mine = await t.request('POST', '/api/v0/developerApps/fetch', { token: owner.accessToken, body: {} });
    assert.equal(mine.statusCode, 200);
    assert.deepEqual(
      mine.json().developerApps.map((a: { clientId: string }) => a.clientId),
      [clientId],
    );
    assert.deepEqual(mine.json().pagination, { bookmark: '', hasMore: false });
    assert.equal((await t.request('POST', '/api/v0/developerApps/fetch', { body: {} })).statusCode, 401);

    const updated = await t.request('PUT', '/api/v0/developerApps', {
      token: owner.accessToken,
      body: {
        clientId,
        name: 'My dApp 2',
        redirectUris: ['https://dapp.example/cb', 'https://dapp.example/cb2'],
        rotateClientSecret: true,
      },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    const u = updated.json();
    assert.equal(u.developerApp.name, 'My dApp 2');
    assert.deepEqual(u.developerApp.redirectUris, ['https://dapp.example/cb', 'https://dapp.example/cb2']);
    assert.match(u.clientSecret, /^[0-9a-f]{64}$/);
    assert.notEqual(u.clientSecret, clientSecret);

    // the rotated secret is the one that authenticates
    const client: TestClient = { clientId, clientSecret, redirectUri: 'https://dapp.example/cb2' };
    const { code } = await authorizeCode(t, { client });
    assert.equal(
      (await t.request('POST', '/api/v0/signin/token', { body: codeExchangeBody(client, code) })).statusCode,
      401,
    );
    const tok = await t.request('POST', '/api/v0/signin/token', {
      body: codeExchangeBody({ ...client, clientSecret: u.clientSecret }, code),
    });
    assert.equal(tok.statusCode, 200);

    // someone else cannot update or delete it; a session without the scope gets 403
    const stranger = await signIn(t, { scopes: ['manageDeveloperApps'] });
    assert.equal(
      (
        await t.request('PUT', '/api/v0/developerApps', {
          token: stranger.accessToken,
          body: { clientId, name: 'Mine now' },
        })
      ).statusCode,
      403,
    );
    assert.equal(
      (await t.request('DELETE', '/api/v0/developerApps', { token: stranger.accessToken, body: { clientId } }))
        .statusCode,
      403,
    );
    const noScope = await signIn(t, { privateKey: owner.privateKey, scopes: ['completeClaims'] });
    assert.equal(
      (await t.request('DELETE', '/api/v0/developerApps', { token: noScope.accessToken, body: { clientId } }))
        .statusCode,
      403,
    );
    assert.equal(
      (await t.request('POST', '/api/v0/developerApps', { body: { name: 'x', redirectUris: [] } })).statusCode,
      401,
    );

    // delete revokes the tokens issued to the app
    const del = await t.request('DELETE', '/api/v0/developerApps', { token: owner.accessToken, body: { clientId } });
    assert.equal(del.statusCode, 200);
    assert.equal((await t.request('GET', `/api/v0/developerApp/${clientId}`)).statusCode, 404);
    const st = await t.request('POST', '/api/v0/auth/status', { token: tok.json().access_token, body: {} });
    assert.equal(st.json().signedIn, false);
    assert.equal(
      (await t.request('DELETE', '/api/v0/developerApps', { token: owner.accessToken, body: { clientId } })).statusCode,
      404,
    );
  });

  test('validation: names that would break the signed statement, unsafe redirect URIs, unknown fields', async () => {
    const owner = await signIn(t, { scopes: ['manageDeveloperApps'] });
    const create = (body: Record<string, unknown>) =>
      t.request('POST', '/api/v0/developerApps', { token: owner.accessToken, body });
    for (const name of ['', ' padded', 'line\nbreak', 'quote"s', 'x'.repeat(65)]) {
      assert.equal((await create({ name, redirectUris: [] })).statusCode, 400, JSON.stringify(name));
    }
    for (const uri of [
      'http://evil.example/cb',
      'javascript:alert(1)',
      'https://x.example/cb#frag',
      'relative/cb',
      'data:text/html,hi',
    ]) {
      const res = await create({ name: 'Ok', redirectUris: [uri] });
      assert.equal(res.statusCode, 400, uri);
      assert.match(res.json().errorMessage, /redirectUris\[0\]/);
    }
    assert.equal(
      (await create({ name: 'Ok', redirectUris: ['https://a.example/cb', 'https://a.example/cb'] })).statusCode,
      400,
    );
    for (const uri of [
      'https://a.example/cb?x=1',
      'http://127.0.0.1:3000/cb',
      'http://[::1]/cb',
      'com.example.app:/oauth',
    ]) {
      assert.equal((await create({ name: 'Ok', redirectUris: [uri] })).statusCode, 200, uri);
    }
    assert.equal((await create({ name: 'Ok', redirectUris: [], surprise: true })).statusCode, 400);
  });

  test('fetch paginates an owner’s apps, 25 per page', async () => {
    const owner = await signIn(t, { scopes: ['manageDeveloperApps'] });
    const ids = new Set<string>();
    for (let i = 0; i < 27; i++) {
      const r = await t.request('POST', '/api/v0/developerApps', {
        token: owner.accessToken,
        body: { name: `App ${i}`, redirectUris: [] },
      });
      ids.add(r.json().clientId);
    }
    const p1 = (
      await t.request('POST', '/api/v0/developerApps/fetch', { token: owner.accessToken, body: { bookmark: '' } })
    ).json();
    assert.equal(p1.developerApps.length, 25);
    assert.equal(p1.pagination.hasMore, true);
    const p2 = (
      await t.request('POST', '/api/v0/developerApps/fetch', {
        token: owner.accessToken,
        body: { bookmark: p1.pagination.bookmark },
      })
    ).json();
    assert.equal(p2.developerApps.length, 2);
    assert.equal(p2.pagination.hasMore, false);
    const seen = [...p1.developerApps, ...p2.developerApps].map((a: { clientId: string }) => a.clientId);
    assert.deepEqual(new Set(seen), ids);
  });
});
