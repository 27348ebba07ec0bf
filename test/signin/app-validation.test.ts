// What a developer app may be: redirect URIs (https anywhere, http only on loopback, private-use
// schemes with a dot, no fragment, no duplicates, at most 20 of at most 2,048 characters each) and
// names (the EIP-4361 statement's characters), each refusal naming the field; and who may change
// or delete an app. Over HTTP, and through the CLI where the route's schema would answer first.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { cliJson, runCliInProcess } from '../helpers/cli.ts';
import { authorizeCode, codeExchangeBody, signIn, type SignedIn } from '../helpers/signin.ts';

const APPS = '/api/v0/developerApps';

describe('developer app validation and ownership', () => {
  let owner: SignedIn;
  let stranger: SignedIn;
  const t = useApp();
  before(async () => {
    owner = await signIn(t, { scopes: ['manageDeveloperApps'] });
    stranger = await signIn(t, { scopes: ['manageDeveloperApps'] });
  });

  const create = (body: Record<string, unknown>, who = owner) =>
    t.request('POST', APPS, { token: who.accessToken, body: { name: 'App', redirectUris: [], ...body } });

  test('redirect URIs: https anywhere, http on loopback only, private-use schemes with a dot', async () => {
    const accepted = [
      'https://a.example/cb',
      'https://a.example:8443/cb?x=1',
      'http://localhost:8080/cb',
      'http://127.0.0.1/cb',
      'http://127.1.2.3:9/cb',
      'http://127.10.200.1/cb',
      'http://[::1]:8080/cb',
      'com.example.app:/oauth',
    ];
    const ok = await create({ redirectUris: accepted });
    assert.equal(ok.statusCode, 200, ok.body);
    const doc = (await t.request('GET', `/api/v0/developerApp/${ok.json().clientId}`)).json().developerApp;
    assert.deepEqual(doc.redirectUris, accepted, 'stored as given, in order');

    const https =
      'must use https (http only on localhost / 127.0.0.1 / [::1], or a private-use scheme such as com.example.app:)';
    const refused: Array<[string, string]> = [
      ['http://a.example/cb', `Invalid redirectUris[1]: "http://a.example/cb" ${https}`],
      ['http://localhost.evil.example/cb', `Invalid redirectUris[1]: "http://localhost.evil.example/cb" ${https}`],
      ['http://127.0.0.1.evil.example/cb', `Invalid redirectUris[1]: "http://127.0.0.1.evil.example/cb" ${https}`],
      ['http://[::2]/cb', `Invalid redirectUris[1]: "http://[::2]/cb" ${https}`],
      ['myapp:/cb', `Invalid redirectUris[1]: "myapp:/cb" ${https}`],
      ['ftp://a.example/cb', `Invalid redirectUris[1]: "ftp://a.example/cb" ${https}`],
      ['ws://localhost/cb', `Invalid redirectUris[1]: "ws://localhost/cb" ${https}`],
      ['https://a.example/cb#frag', 'Invalid redirectUris[1]: a redirect URI must not contain a fragment'],
      ['/relative/cb', 'Invalid redirectUris[1]: "/relative/cb" is not an absolute URI'],
    ];
    for (const [uri, message] of refused) {
      const res = await create({ redirectUris: ['https://fine.example/cb', uri] });
      assert.equal(res.statusCode, 400, uri);
      assert.deepEqual(res.json(), { errorMessage: message }, uri);
    }
    const dup = await create({ redirectUris: ['https://a.example/cb', 'https://a.example/cb'] });
    assert.deepEqual(
      [dup.statusCode, dup.json()],
      [400, { errorMessage: 'Invalid redirectUris: duplicate redirect URI' }],
    );
    // an update is checked the same way
    const put = await t.request('PUT', APPS, {
      token: owner.accessToken,
      body: { clientId: ok.json().clientId, redirectUris: ['http://a.example/cb'] },
    });
    assert.deepEqual(
      [put.statusCode, put.json()],
      [400, { errorMessage: `Invalid redirectUris[0]: "http://a.example/cb" ${https}` }],
    );
  });

  test('the limits the route schema does not see first: 20 URIs of at most 2,048 characters (CLI)', async () => {
    const many = Array.from({ length: 21 }, (_, i) => ['--redirect-uri', `https://a.example/cb${i}`]).flat();
    const tooMany = await runCliInProcess(['app', 'create', '--name', 'Many', ...many], t.database.env);
    assert.equal(tooMany.code, 2);
    assert.match(tooMany.stderr, /Invalid redirectUris: at most 20 redirect URIs/);
    const twenty = await runCliInProcess(['app', 'create', '--name', 'Twenty', ...many.slice(0, 40)], t.database.env);
    assert.equal(twenty.code, 0, twenty.stderr);

    const base = 'https://a.example/';
    const long = await runCliInProcess(
      ['app', 'create', '--name', 'Long', '--redirect-uri', base + 'x'.repeat(2049 - base.length)],
      t.database.env,
    );
    assert.equal(long.code, 2);
    assert.match(long.stderr, /Invalid redirectUris\[0\]: longer than 2048 characters/);
    const atLimit = await runCliInProcess(
      ['app', 'create', '--name', 'At Limit', '--redirect-uri', base + 'x'.repeat(2048 - base.length)],
      t.database.env,
    );
    assert.equal(atLimit.code, 0, atLimit.stderr);
  });

  test('names: 1 to 64 of the statement characters, no surrounding spaces', async () => {
    const punctuation = "A.b_c~d:/?#[]@!$&'()*+,;= -z";
    for (const name of ['A', 'x'.repeat(64), punctuation, 'Two  spaces inside']) {
      const res = await create({ name });
      assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
    }
    const message =
      "Invalid name: 1 to 64 characters from letters, digits, spaces and . _ ~ : / ? # [ ] @ ! $ & ' ( ) * + , ; = - , without leading or trailing spaces";
    for (const name of ['', ' lead', 'trail ', 'quote"', 'new\nline', 'émoji', '<b>']) {
      const res = await create({ name });
      assert.deepEqual([res.statusCode, res.json()], [400, { errorMessage: message }], JSON.stringify(name));
    }
    const put = await t.request('PUT', APPS, {
      token: owner.accessToken,
      body: { clientId: (await create({})).json().clientId, name: 'bad<' },
    });
    assert.deepEqual([put.statusCode, put.json()], [400, { errorMessage: message }]);
  });

  test('only the owner changes or deletes an app; an unknown app is a 404 naming it', async () => {
    const { clientId } = (await create({ name: 'Mine' })).json();
    const fresh = (await t.request('GET', `/api/v0/developerApp/${clientId}`)).json().developerApp;
    assert.deepEqual([fresh.description, fresh.image], ['', ''], 'what was not given is empty');
    const forbidden = { errorMessage: 'You must be the owner of the developer app.' };
    const put = await t.request('PUT', APPS, { token: stranger.accessToken, body: { clientId, name: 'Theirs' } });
    assert.deepEqual([put.statusCode, put.json()], [403, forbidden]);
    const del = await t.request('DELETE', APPS, { token: stranger.accessToken, body: { clientId } });
    assert.deepEqual([del.statusCode, del.json()], [403, forbidden]);
    assert.equal(
      (await t.request('GET', `/api/v0/developerApp/${clientId}`)).json().developerApp.name,
      'Mine',
      'unchanged',
    );

    const unknown = 'f'.repeat(64);
    const missing = { errorMessage: `No developer app with clientId ${unknown}` };
    const put404 = await t.request('PUT', APPS, { token: owner.accessToken, body: { clientId: unknown, name: 'X' } });
    assert.deepEqual([put404.statusCode, put404.json()], [404, missing]);
    const del404 = await t.request('DELETE', APPS, { token: owner.accessToken, body: { clientId: unknown } });
    assert.deepEqual([del404.statusCode, del404.json()], [404, missing]);

    // the owner's update keeps what it does not name, and moves updatedAt
    const before = (await t.request('GET', `/api/v0/developerApp/${clientId}`)).json().developerApp;
    await new Promise((r) => setTimeout(r, 5));
    const upd = await t.request('PUT', APPS, {
      token: owner.accessToken,
      body: { clientId, description: 'new text', image: 'https://img.example/i.png' },
    });
    assert.equal(upd.statusCode, 200, upd.body);
    const after = upd.json().developerApp;
    assert.deepEqual(
      { ...after, updatedAt: undefined },
      { ...before, description: 'new text', image: 'https://img.example/i.png', updatedAt: undefined },
    );
    assert.ok(Number(after.updatedAt) > Number(before.updatedAt));
    assert.equal(upd.json().clientSecret, undefined, 'no secret unless rotated');
  });

  test("a bookmark of one owner's app list is refused for another owner", async () => {
    for (let i = 0; i < 26; i++) assert.equal((await create({ name: `Paged ${i}` })).statusCode, 200);
    const first = await t.request('POST', `${APPS}/fetch`, { token: owner.accessToken, body: {} });
    assert.equal(first.json().pagination.hasMore, true);
    const bookmark = first.json().pagination.bookmark as string;
    const theirs = await t.request('POST', `${APPS}/fetch`, { token: stranger.accessToken, body: { bookmark } });
    assert.deepEqual(
      [theirs.statusCode, theirs.json()],
      [
        400,
        {
          errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.',
        },
      ],
    );
    assert.equal(
      (await t.request('POST', `${APPS}/fetch`, { token: owner.accessToken, body: { bookmark } })).statusCode,
      200,
    );
  });

  test('the token endpoint sees a secret rotated in this process at once, and one rotated by another process within a second', async () => {
    const created = (await create({ name: 'Cached', redirectUris: ['https://cached.example/cb'] })).json();
    const client = {
      clientId: created.clientId as string,
      clientSecret: created.clientSecret as string,
      redirectUri: 'https://cached.example/cb',
    };
    const exchange = async (secret: string) => {
      const { code } = await authorizeCode(t, { client });
      return (
        await t.request('POST', '/api/v0/signin/token', {
          body: codeExchangeBody({ ...client, clientSecret: secret }, code),
        })
      ).statusCode;
    };
    assert.equal(await exchange(client.clientSecret), 200, 'the client row is now cached');
    const rotated = await t.request('PUT', APPS, {
      token: owner.accessToken,
      body: { clientId: client.clientId, rotateClientSecret: true },
    });
    const second = rotated.json().clientSecret as string;
    assert.equal(await exchange(client.clientSecret), 401, 'this process forgot the cached row at once');
    assert.equal(await exchange(second), 200);

    // another process (the CLI) rotates: the cached row serves for at most a second
    const third = cliJson(await runCliInProcess(['app', 'rotate-secret', client.clientId], t.database.env))
      .client_secret as string;
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal(await exchange(second), 401, 'the row cached before the rotation expired');
    assert.equal(await exchange(third), 200);
  });
});
