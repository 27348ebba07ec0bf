// A plugin's secret and error log are what the managePlugins scope covers ("read their secrets and
// error logs", as the consent page says): a session of the owner without that scope, such as the
// token a third-party app obtained with completeClaims only, reads neither. And the two paths of
// one plugin document answer a visitor cookie alike.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createTestClient, signIn, type SignedIn } from '../helpers/signin.ts';
import { createPlugin, owner } from '../helpers/plugins.ts';

const URI = 'https://127.0.0.1:9/hook';

describe('plugin secrets and error logs need managePlugins', () => {
  let alice: SignedIn;
  let thirdParty: SignedIn;
  let pluginId: string;
  const t = useApp({ plugins: true });
  before(async () => {
    alice = await owner(t);
    // the same wallet, signed in to another developer app that asked for completeClaims only
    thirdParty = await signIn(t, {
      privateKey: alice.privateKey,
      scopes: ['completeClaims'],
      client: await createTestClient(t, { name: 'Third Party' }),
    });
    pluginId = await createPlugin(t, alice.accessToken, URI);
  });

  const fetchSecret = (o: { token?: string }) =>
    t.request('POST', '/api/v0/plugins/fetch', { ...o, body: { pluginIds: [pluginId], returnSensitiveData: true } });

  test("a third-party app's token of the owner holding only completeClaims gets no secret: 403 naming the scope", async () => {
    const res = await fetchSecret({ token: thirdParty.accessToken });
    assert.equal(res.statusCode, 403, res.body);
    assert.deepEqual(res.json(), {
      errorMessage: 'returnSensitiveData requires the session to hold the scope(s): managePlugins',
    });
  });

  test('returnSensitiveData without a session is a 401; without the flag the same caller reads the document', async () => {
    const res = await fetchSecret({});
    assert.equal(res.statusCode, 401, res.body);
    assert.deepEqual(res.json(), {
      errorMessage:
        'Unauthorized request. returnSensitiveData needs a signed-in session (Authorization: Bearer <access token>).',
      unauthorized: true,
    });
    for (const token of [undefined, thirdParty.accessToken]) {
      const plain = await t.request('POST', '/api/v0/plugins/fetch', {
        ...(token ? { token } : {}),
        body: { pluginIds: [pluginId] },
      });
      assert.equal(plain.statusCode, 200, plain.body);
      assert.equal(plain.json().plugins[0].pluginId, pluginId);
      assert.equal(plain.json().plugins[0].pluginSecret, undefined);
    }
  });

  test("the owner's managePlugins session gets the secret; another user's gets the document without it", async () => {
    const mine = await fetchSecret({ token: alice.accessToken });
    assert.equal(mine.statusCode, 200, mine.body);
    assert.match(mine.json().plugins[0].pluginSecret, /^[0-9a-f]{64}$/);
    const bob = await owner(t);
    const theirs = await fetchSecret({ token: bob.accessToken });
    assert.equal(theirs.statusCode, 200, theirs.body);
    assert.equal(theirs.json().plugins[0].pluginId, pluginId);
    assert.equal(theirs.json().plugins[0].pluginSecret, undefined);
  });

  test('the error log needs managePlugins too', async () => {
    const refused = await t.request('GET', `/api/v0/plugins/errors?pluginId=${pluginId}`, {
      token: thirdParty.accessToken,
    });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.deepEqual(refused.json(), {
      errorMessage: 'This route requires the session to hold the scope(s): managePlugins',
    });
    const mine = await t.request('GET', `/api/v0/plugins/errors?pluginId=${pluginId}`, { token: alice.accessToken });
    assert.equal(mine.statusCode, 200, mine.body);
    assert.deepEqual(mine.json(), { docs: [], bookmark: mine.json().bookmark, hasMore: false, total: 0 });
  });

  test('GET /api/v0/plugins/{id} and GET /api/v0/plugin/{id} both answer a visitor cookie', async () => {
    const page = await t.request('GET', '/claim/anything', { apiKey: null });
    const cookie = String(page.headers['set-cookie']).split(';')[0];
    assert.match(cookie, /^platform_console=v\./);
    for (const path of [`/api/v0/plugin/${pluginId}`, `/api/v0/plugins/${pluginId}`]) {
      const res = await t.request('GET', path, { apiKey: null, headers: { cookie } });
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      assert.equal(res.json().plugin.pluginId, pluginId);
      assert.equal(res.json().plugin.pluginSecret, undefined);
    }
  });
});
