// The console's browser session through HTTP: the cookie replaces x-api-key for same-origin calls,
// and the refusals (cross-site, missing or wrong CSRF token, expired or signed-out session, a
// visitor writing, a proof given to another app).
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { privateKeyToAccount } from 'viem/accounts';
import { SCOPE_IDS } from '../../src/signin/scopes.ts';
import { createTestClient, signIn, testAccount } from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { consoleRequest, consoleSignIn, originOf } from './helpers.ts';

describe('console session', () => {
  const t = useApp({ clock: true, env: { API_KEY_CACHE_MS: '0' } });

  test('sign-in sets an HttpOnly SameSite=Strict cookie; the session answers who and the CSRF token', async () => {
    const s = await consoleSignIn(t);
    assert.match(
      s.setCookie,
      /^platform_console=s\.[0-9a-f]{32}\.[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/,
    );
    const res = await consoleRequest(t, s, 'GET', '/api/v0/console/session');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.signedIn, true);
    assert.equal(body.platformAddress, s.platformAddress);
    assert.equal(body.csrfToken, s.csrfToken);
    // the console acts for its user with every scope the service has
    assert.deepEqual(body.scopes, [...SCOPE_IDS]);
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  test('the cookie stands in for x-api-key and acts as the user session', async () => {
    const s = await consoleSignIn(t);
    const created = await consoleRequest(t, s, 'POST', '/api/v0/developerApps', {
      name: 'Console App',
      redirectUris: ['https://x.example/cb'],
    });
    assert.equal(created.statusCode, 200, created.body);
    const list = await consoleRequest(t, s, 'POST', '/api/v0/developerApps/fetch', {});
    assert.deepEqual(
      list.json().developerApps.map((a: { name: string; createdBy: string }) => [a.name, a.createdBy]),
      [['Console App', s.platformAddress]],
    );
  });

  test('a cross-site POST is refused, with or without the token', async () => {
    const s = await consoleSignIn(t);
    for (const headers of [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ] as Record<string, string>[]) {
      const res = await consoleRequest(
        t,
        s,
        'POST',
        '/api/v0/developerApps',
        { name: 'X', redirectUris: ['https://x.example/cb'] },
        headers,
      );
      assert.equal(res.statusCode, 403, JSON.stringify(headers));
      assert.match(res.json().errorMessage, /^Cross-site request refused/);
    }
    // and a cross-site read too (the cookie would not be sent by a browser; belt and braces)
    const read = await consoleRequest(t, s, 'GET', '/api/v0/apiKeys', undefined, { origin: 'https://evil.example' });
    assert.equal(read.statusCode, 403);
    const apps = await consoleRequest(t, s, 'POST', '/api/v0/developerApps/fetch', {});
    assert.equal(apps.json().developerApps.length, 0, 'nothing was created');
  });

  test('a state-changing call without the CSRF token (or with a wrong one) is refused', async () => {
    const s = await consoleSignIn(t);
    const missing = await t.request('POST', '/api/v0/apiKeys', {
      apiKey: null,
      body: { label: 'k' },
      headers: { cookie: s.cookie, origin: s.origin },
    });
    assert.equal(missing.statusCode, 403);
    assert.match(missing.json().errorMessage, /^Missing CSRF token/);
    const other = await consoleSignIn(t);
    const wrong = await consoleRequest(
      t,
      s,
      'POST',
      '/api/v0/apiKeys',
      { label: 'k' },
      { 'x-csrf-token': other.csrfToken },
    );
    assert.equal(wrong.statusCode, 403);
    assert.equal(wrong.json().errorMessage, 'Invalid CSRF token.');
    const list = await consoleRequest(t, s, 'GET', '/api/v0/apiKeys');
    assert.deepEqual(list.json().apiKeys, []);
  });

  test('an expired session and a signed-out session are refused with 401', async () => {
    const s = await consoleSignIn(t);
    const out = await consoleSignIn(t);
    assert.equal((await consoleRequest(t, out, 'DELETE', '/api/v0/console/session', {})).statusCode, 200);
    const afterOut = await consoleRequest(t, out, 'GET', '/api/v0/apiKeys');
    assert.equal(afterOut.statusCode, 401);
    (t.clock as ManualClock).advance(12 * 60 * 60 * 1000);
    const res = await consoleRequest(t, s, 'GET', '/api/v0/apiKeys');
    assert.equal(res.statusCode, 401);
    assert.match(res.json().errorMessage, /expired or was signed out/);
  });

  test('sessions ended more than a day ago are deleted at the next sign-in', async () => {
    const old = await consoleSignIn(t);
    const id = old.cookie.split('.')[1];
    (t.clock as ManualClock).advance(12 * 60 * 60 * 1000 + 24 * 60 * 60 * 1000 + 1);
    const rows = () =>
      t.ctx.db.selectFrom('console_sessions').select('session_id').where('session_id', '=', id).execute();
    assert.equal((await rows()).length, 1);
    await consoleSignIn(t);
    assert.equal((await rows()).length, 0);
  });

  test('a garbled cookie is a 401, no cookie is the API-key 401', async () => {
    const res = await t.request('GET', '/api/v0/apiKeys', {
      apiKey: null,
      headers: { cookie: 'platform_console=s.00.11' },
    });
    assert.equal(res.statusCode, 401);
    const none = await t.request('GET', '/api/v0/apiKeys', { apiKey: null, headers: { cookie: 'other=1' } });
    assert.equal(none.statusCode, 401);
    assert.match(none.json().errorMessage, /only accessible with an API key/);
  });

  test('a visitor cookie (from a portal page) may read, not write', async () => {
    const page = await t.request('GET', '/claim/anything', { apiKey: null });
    const cookie = String(page.headers['set-cookie']).split(';')[0];
    assert.match(cookie, /^platform_console=v\./);
    const me = await t.request('GET', '/api/v0/console/session', {
      apiKey: null,
      headers: { cookie, origin: originOf(t) },
    });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().signedIn, false);
    const read = await t.request('GET', '/api/v0/plugins/core', { apiKey: null, headers: { cookie } });
    assert.equal(read.statusCode, 200);
    // only what the public claim page reads: a visitor cookie is no stand-in for an API key elsewhere
    for (const path of [
      '/api/v0/claims/search?searchValue=',
      '/api/v0/dynamicStores/search',
      '/api/v0/developerApp/x',
      '/api/v0/nosuchroute',
    ]) {
      const other = await t.request('GET', path, { apiKey: null, headers: { cookie } });
      assert.equal(other.statusCode, 401, `${path}: ${other.body}`);
      assert.match(other.json().errorMessage, /x-api-key|sign in/);
    }
    const write = await t.request('POST', '/api/v0/dynamicStores', {
      apiKey: null,
      body: { handlerId: 'addresses', label: 'x' },
      headers: { cookie, origin: originOf(t) },
    });
    assert.equal(write.statusCode, 401);
    const forged = cookie.slice(0, -3) + 'AAA';
    const bad = await t.request('GET', '/api/v0/plugins/core', { apiKey: null, headers: { cookie: forged } });
    assert.equal(bad.statusCode, 401);
  });

  test('sign-in itself is same-origin only, and a proof given to another app does not open a console session', async () => {
    const who = testAccount();
    const ch = await t.request('POST', '/api/v0/signin/challenge', {
      apiKey: null,
      body: { client_id: 'console', address: who.address },
    });
    const { requestId, message } = ch.json();
    const signature = await privateKeyToAccount(who.privateKey).signMessage({ message });
    const cross = await t.request('POST', '/api/v0/console/session', {
      apiKey: null,
      headers: { origin: 'https://evil.example' },
      body: { requestId, signature },
    });
    assert.equal(cross.statusCode, 403);
    const noOrigin = await t.request('POST', '/api/v0/console/session', {
      apiKey: null,
      body: { requestId, signature },
    });
    assert.equal(noOrigin.statusCode, 403);

    const other = await createTestClient(t, { name: 'Other', redirectUris: ['https://o.example/cb'] });
    await assert.rejects(
      consoleSignIn(t, { clientId: other.clientId, redirectUri: 'https://o.example/cb' }),
      (err: { response: { statusCode: number; body: string } }) => {
        assert.equal(err.response.statusCode, 400);
        assert.match(JSON.parse(err.response.body).errorMessage, /made for another app/);
        return true;
      },
    );
    // the console's own codes cannot be exchanged at the token endpoint (nobody knows its secret)
    const bad = await t.request('POST', '/api/v0/signin/token', {
      body: { grant_type: 'authorization_code', code: 'x'.repeat(64), client_id: 'console', client_secret: 'guess' },
    });
    assert.equal(bad.statusCode, 401);
  });

  test('one wallet proof opens one session, however many parallel requests present it', async () => {
    const who = testAccount();
    const ch = (
      await t.request('POST', '/api/v0/signin/challenge', {
        apiKey: null,
        body: { client_id: 'console', address: who.address },
      })
    ).json();
    const signature = await privateKeyToAccount(who.privateKey).signMessage({ message: ch.message });
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.request('POST', '/api/v0/console/session', {
          apiKey: null,
          headers: { origin: originOf(t) },
          body: { requestId: ch.requestId, signature },
        }),
      ),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 400, 400, 400, 400, 400]);
    for (const r of results.filter((x) => x.statusCode === 400))
      assert.equal(r.json().errorMessage, 'This sign-in request was already used. Start a new sign-in.');
    const rows = await t.ctx.db
      .selectFrom('console_sessions')
      .select('session_id')
      .where('platform_address', '=', who.platformAddress)
      .execute();
    assert.equal(rows.length, 1);
  });

  test('API keys: created once-shown, usable, listed with last use, revoked; only for console sessions', async () => {
    const s = await consoleSignIn(t);
    const created = await consoleRequest(t, s, 'POST', '/api/v0/apiKeys', { label: 'my backend' });
    assert.equal(created.statusCode, 200, created.body);
    const { key, apiKey } = created.json();
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.equal(apiKey.lastUsedAt, null);
    const use = await t.request('GET', '/api/v0/plugins/core', { apiKey: key });
    assert.equal(use.statusCode, 200);
    await new Promise((r) => setTimeout(r, 50)); // the last-use write is off the request path
    const list = (await consoleRequest(t, s, 'GET', '/api/v0/apiKeys')).json().apiKeys;
    assert.equal(list.length, 1);
    assert.equal(list[0].label, 'my backend');
    assert.equal(list[0].lastUsedAt, String(t.clock.now()));
    assert.equal(JSON.stringify(list).includes(key), false);

    const stranger = await consoleSignIn(t);
    assert.equal((await consoleRequest(t, stranger, 'DELETE', '/api/v0/apiKeys', { id: apiKey.id })).statusCode, 404);
    assert.deepEqual((await consoleRequest(t, stranger, 'GET', '/api/v0/apiKeys')).json().apiKeys, []);

    const bearer = await signIn(t);
    const viaBearer = await t.request('POST', '/api/v0/apiKeys', { body: { label: 'x' }, token: bearer.accessToken });
    assert.equal(viaBearer.statusCode, 401);

    assert.equal((await consoleRequest(t, s, 'DELETE', '/api/v0/apiKeys', { id: apiKey.id })).statusCode, 200);
    assert.equal((await t.request('GET', '/api/v0/plugins/core', { apiKey: key })).statusCode, 401);
    assert.notEqual((await consoleRequest(t, s, 'GET', '/api/v0/apiKeys')).json().apiKeys[0].revokedAt, null);
  });

  test('account: the apps a user signed in to, each revocable; app owners see recent sign-ins', async () => {
    const owner = await consoleSignIn(t);
    const appRes = await consoleRequest(t, owner, 'POST', '/api/v0/developerApps', {
      name: 'Owned',
      redirectUris: ['https://owned.example/cb'],
    });
    const { clientId } = appRes.json();
    const user = await consoleSignIn(t);
    const bearer = await signIn(t, { privateKey: user.privateKey, scopes: ['completeClaims'] });

    const mine = (await consoleRequest(t, user, 'GET', '/api/v0/account/authorizations')).json().authorizations;
    assert.equal(mine.length, 1);
    assert.equal(mine[0].appName, 'Test App');
    assert.deepEqual(mine[0].scopes, ['completeClaims']);

    const stranger = await consoleRequest(t, owner, 'DELETE', '/api/v0/account/authorizations', {
      authorizationId: mine[0].authorizationId,
    });
    assert.equal(stranger.statusCode, 404);
    assert.equal(
      (
        await consoleRequest(t, user, 'DELETE', '/api/v0/account/authorizations', {
          authorizationId: mine[0].authorizationId,
        })
      ).statusCode,
      200,
    );
    const status = await t.request('POST', '/api/v0/auth/status', { token: bearer.accessToken, body: {} });
    assert.equal(status.json().signedIn, false);
    assert.deepEqual(
      (await consoleRequest(t, user, 'GET', '/api/v0/account/authorizations')).json().authorizations,
      [],
    );

    const signins = await consoleRequest(t, owner, 'GET', `/api/v0/developerApps/${clientId}/signins`);
    assert.equal(signins.statusCode, 200, signins.body);
    assert.deepEqual(signins.json(), { signins: [], pagination: { bookmark: '', hasMore: false } });
    const notOwner = await consoleRequest(t, user, 'GET', `/api/v0/developerApps/${clientId}/signins`);
    assert.equal(notOwner.statusCode, 403);
  });

  test('recent sign-ins are paged, newest first, with their status', async () => {
    const owner = await consoleSignIn(t);
    const { clientId, clientSecret } = (
      await consoleRequest(t, owner, 'POST', '/api/v0/developerApps', {
        name: 'Busy',
        redirectUris: ['https://busy.example/cb'],
      })
    ).json();
    const addresses: string[] = [];
    for (let i = 0; i < 27; i++) {
      const who = testAccount();
      addresses.push(who.platformAddress);
      const ch = (
        await t.request('POST', '/api/v0/signin/challenge', {
          apiKey: null,
          body: { client_id: clientId, redirect_uri: 'https://busy.example/cb', address: who.address },
        })
      ).json();
      const signature = await privateKeyToAccount(who.privateKey).signMessage({ message: ch.message });
      const { code } = (
        await t.request('POST', '/api/v0/signin/approve', {
          apiKey: null,
          body: { requestId: ch.requestId, signature },
        })
      ).json();
      if (i === 26) {
        const tok = await t.request('POST', '/api/v0/signin/token', {
          body: {
            grant_type: 'authorization_code',
            code,
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uri: 'https://busy.example/cb',
          },
        });
        assert.equal(tok.statusCode, 200);
      }
      (t.clock as ManualClock).advance(1);
    }
    const first = (await consoleRequest(t, owner, 'GET', `/api/v0/developerApps/${clientId}/signins`)).json();
    assert.equal(first.signins.length, 25);
    assert.equal(first.pagination.hasMore, true);
    assert.equal(first.signins[0].platformAddress, addresses[26]);
    assert.equal(first.signins[0].status, 'active');
    assert.equal(first.signins[1].status, 'pending');
    const second = (
      await consoleRequest(
        t,
        owner,
        'GET',
        `/api/v0/developerApps/${clientId}/signins?bookmark=${encodeURIComponent(first.pagination.bookmark)}`,
      )
    ).json();
    assert.deepEqual(
      second.signins.map((s: { platformAddress: string }) => s.platformAddress),
      [addresses[1], addresses[0]],
    );
    assert.equal(second.pagination.hasMore, false);
  });

  test('GET /api/v0/plugins/core describes every core plugin with docs/plugins-platform.md schema fields', async () => {
    const res = await t.request('GET', '/api/v0/plugins/core');
    assert.equal(res.statusCode, 200);
    const plugins = res.json().plugins as Array<{
      pluginId: string;
      publicParamsSchema: { key: string; type: string; required?: boolean }[];
      userInputsSchema: { key: string }[];
      privateParamsSchema: { key: string }[];
    }>;
    assert.deepEqual(plugins.map((p) => p.pluginId).sort(), [
      'anonymous',
      'codes',
      'halt',
      'initiatedBy',
      'numUses',
      'password',
      'transferTimes',
      'whitelist',
    ]);
    const by = Object.fromEntries(plugins.map((p) => [p.pluginId, p]));
    assert.deepEqual(by.numUses.publicParamsSchema[0], {
      key: 'maxUses',
      label: 'Maximum uses',
      type: 'number',
      required: true,
      helper: 'How many times the claim can succeed in total.',
    });
    assert.deepEqual(
      by.password.userInputsSchema.map((f) => f.key),
      ['password'],
    );
    assert.deepEqual(
      by.password.privateParamsSchema.map((f) => f.key),
      ['password'],
    );
    assert.deepEqual(
      by.codes.userInputsSchema.map((f) => f.key),
      ['code'],
    );
    assert.equal(by.transferTimes.publicParamsSchema[0].type, 'dateRanges');
    // and GET /api/v0/plugin/{id} still never returns them (docs/plugins-platform.md)
    const single = await t.request('GET', '/api/v0/plugin/numUses');
    assert.equal(single.statusCode, 404);
  });
});
