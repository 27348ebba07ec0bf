// Plugin documents through the public routes: create / read / fetch / search / update / delete,
// the managePlugins scope and ownership, the secret (owner only, rotatable), versions
// (append, edit while unfinalized, finalized is immutable), validation of schemas and the
// endpoint URL, localised ids, and the operator's review through the CLI.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { runCliInProcess } from '../helpers/cli.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { signIn } from '../helpers/signin.ts';
import {
  createPlugin,
  createPluginRequest,
  newPluginId,
  owner,
  pluginSecret,
  startPluginApp,
  updatePlugin,
  versionConfig,
} from '../helpers/plugins.ts';

const URI = 'https://127.0.0.1:9/hook';

describe('plugin documents', () => {
  let alice: SignedIn;
  let bob: SignedIn;
  const t = useApp({ plugins: true });
  before(async () => {
    alice = await owner(t);
    bob = await owner(t);
  });

  const body = (pluginId: string, extra: Record<string, unknown> = {}, config: Record<string, unknown> = {}) => ({
    pluginId,
    metadata: { name: `Name ${pluginId}`, description: 'd', image: '' },
    toPublish: false,
    initialVersion: versionConfig(URI, config),
    ...extra,
  });

  test('create needs a session with managePlugins; the document has every docs/plugins-platform.md field', async () => {
    const id = newPluginId();
    const anon = await t.request('POST', '/api/v0/plugins', { body: body(id) });
    assert.equal(anon.statusCode, 401, anon.body);
    const noScope = await signIn(t, { scopes: ['manageClaims'] });
    const refused = await createPluginRequest(t, noScope.accessToken, body(id));
    assert.equal(refused.statusCode, 403, refused.body);
    assert.match(refused.json().errorMessage, /managePlugins/);

    const res = await createPluginRequest(t, alice.accessToken, body(id));
    assert.equal(res.statusCode, 200, res.body);
    const doc = res.json().plugin;
    assert.equal(doc._docId, id);
    assert.equal(doc.pluginId, id);
    assert.equal(doc.createdBy, alice.platformAddress);
    assert.equal(doc.managedBy, alice.platformAddress);
    assert.equal(doc.locale, 'en');
    assert.equal(doc.toPublish, false);
    assert.equal(doc.reviewCompleted, false);
    assert.equal(doc.pluginSecret, undefined, 'the secret is only returned when asked');
    assert.match(doc.createdAt, /^\d+$/);
    assert.equal(doc.versions.length, 1);
    const v = doc.versions[0];
    assert.equal(v.version, '1');
    assert.equal(v.finalized, false);
    assert.equal(v.stateFunctionPreset, 'Stateless');
    assert.deepEqual(v.verificationCall, { uri: URI, hardcodedInputs: [], passAddress: false });

    for (const path of [`/api/v0/plugin/${id}`, `/api/v0/plugins/${id}`]) {
      const got = await t.request('GET', path);
      assert.equal(got.statusCode, 200, got.body);
      assert.equal(got.json().plugin.pluginId, id);
      assert.equal(got.json().plugin.pluginSecret, undefined);
    }
    const dup = await createPluginRequest(t, alice.accessToken, body(id));
    assert.equal(dup.statusCode, 409, dup.body);
  });

  test('parallel creates of one pluginId: exactly one wins, the others get 409', async () => {
    const id = newPluginId('race');
    const results = await Promise.all(
      Array.from({ length: 6 }, () => createPluginRequest(t, alice.accessToken, body(id))),
    );
    assert.deepEqual(
      results.map((r) => r.statusCode).sort(),
      [200, 409, 409, 409, 409, 409],
      results.map((r) => r.body).join('\n'),
    );
    const versions = await t.ctx.db
      .selectFrom('plugin_versions')
      .select('version')
      .where('plugin_id', '=', id)
      .execute();
    assert.deepEqual(versions, [{ version: 1 }]);
  });

  test('parallel versionCreate on one plugin: each gets its own number', async () => {
    const id = await createPlugin(t, alice.accessToken, URI);
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        updatePlugin(t, alice.accessToken, { pluginId: id, versionCreate: versionConfig(URI) }),
      ),
    );
    for (const r of results) assert.equal(r.statusCode, 200, r.body);
    const doc = (await t.request('GET', `/api/v0/plugin/${id}`)).json().plugin;
    assert.deepEqual(
      doc.versions.map((v: { version: string }) => v.version),
      ['1', '2', '3', '4', '5', '6'],
    );
  });

  test('the routes are in the OpenAPI document', async () => {
    const doc = (await t.request('GET', '/openapi.json', { apiKey: null })).json();
    for (const path of [
      '/api/v0/plugins',
      '/api/v0/plugin/{pluginId}',
      '/api/v0/plugins/{pluginId}',
      '/api/v0/plugins/fetch',
      '/api/v0/plugins/search',
      '/api/v0/plugins/errors',
    ]) {
      assert.ok(doc.paths[path], path);
    }
  });

  test('core plugin ids are neither documents nor available as plugin ids', async () => {
    const core = await t.request('GET', '/api/v0/plugin/numUses');
    assert.equal(core.statusCode, 404, core.body);
    const res = await createPluginRequest(t, alice.accessToken, body('numUses'));
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().errorMessage, /core plugin/);
  });

  test('pluginSecret: 32 random bytes as hex, only for the owner with returnSensitiveData, rotatable', async () => {
    const id = await createPlugin(t, alice.accessToken, URI);
    const secret = await pluginSecret(t, alice.accessToken, id);
    const asBob = await t.request('POST', '/api/v0/plugins/fetch', {
      token: bob.accessToken,
      body: { pluginIds: [id], returnSensitiveData: true },
    });
    assert.equal(asBob.statusCode, 200);
    assert.equal(asBob.json().plugins[0].pluginSecret, undefined, 'not the owner');
    const noAsk = await t.request('POST', '/api/v0/plugins/fetch', {
      token: alice.accessToken,
      body: { pluginIds: [id, 'no-such-plugin'] },
    });
    assert.equal(noAsk.json().plugins.length, 1, 'unknown ids are left out');
    assert.equal(noAsk.json().plugins[0].pluginSecret, undefined, 'not asked');

    const rotated = await updatePlugin(t, alice.accessToken, { pluginId: id, rotatePluginSecret: true });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const fresh = rotated.json().plugin.pluginSecret;
    assert.match(fresh, /^[0-9a-f]{64}$/);
    assert.notEqual(fresh, secret);
    assert.equal(await pluginSecret(t, alice.accessToken, id), fresh);
    // stored encrypted: the plaintext is nowhere in the row
    const row = await t.ctx.db
      .selectFrom('plugin_docs')
      .selectAll()
      .where('plugin_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(fresh));
  });

  test('only the creator or manager edits or deletes; managedBy may edit too', async () => {
    const id = await createPlugin(t, alice.accessToken, URI);
    const byBob = await updatePlugin(t, bob.accessToken, { pluginId: id, toPublish: true });
    assert.equal(byBob.statusCode, 403, byBob.body);
    const delByBob = await t.request('DELETE', '/api/v0/plugins', { token: bob.accessToken, body: { pluginId: id } });
    assert.equal(delByBob.statusCode, 403, delByBob.body);
    const handOver = await updatePlugin(t, alice.accessToken, { pluginId: id, managedBy: bob.address });
    assert.equal(handOver.statusCode, 200, handOver.body);
    assert.equal(handOver.json().plugin.managedBy, bob.platformAddress);
    const nowBob = await updatePlugin(t, bob.accessToken, { pluginId: id, metadata: { name: 'Renamed' } });
    assert.equal(nowBob.statusCode, 200, nowBob.body);
    assert.equal(nowBob.json().plugin.metadata.name, 'Renamed');
    const del = await t.request('DELETE', '/api/v0/plugins', { token: bob.accessToken, body: { pluginId: id } });
    assert.equal(del.statusCode, 200, del.body);
    assert.equal((await t.request('GET', `/api/v0/plugin/${id}`)).statusCode, 404);
    const again = await updatePlugin(t, alice.accessToken, { pluginId: id, toPublish: true });
    assert.equal(again.statusCode, 404, again.body);
    const reuse = await createPluginRequest(t, alice.accessToken, body(id));
    assert.equal(reuse.statusCode, 409, 'a deleted id stays taken');
  });

  test('versions: appended with auto-increment; an unfinalized one is edited and finalized; a finalized one is immutable', async () => {
    const id = newPluginId();
    assert.equal((await createPluginRequest(t, alice.accessToken, body(id))).statusCode, 200);
    const edit = await updatePlugin(t, alice.accessToken, {
      pluginId: id,
      versionUpdates: [{ version: 1, config: { duplicatesAllowed: true, finalized: true } }],
    });
    assert.equal(edit.statusCode, 200, edit.body);
    assert.equal(edit.json().plugin.versions[0].duplicatesAllowed, true);
    assert.equal(edit.json().plugin.versions[0].finalized, true);

    const locked = await updatePlugin(t, alice.accessToken, {
      pluginId: id,
      versionUpdates: [{ version: '1', config: { duplicatesAllowed: false } }],
    });
    assert.equal(locked.statusCode, 400, locked.body);
    assert.match(locked.json().errorMessage, /version 1 .* is finalized/);

    const v2 = await updatePlugin(t, alice.accessToken, {
      pluginId: id,
      versionCreate: versionConfig(URI, { stateFunctionPreset: 'ClaimToken' }),
    });
    assert.equal(v2.statusCode, 200, v2.body);
    const versions = v2.json().plugin.versions;
    assert.deepEqual(
      versions.map((v: { version: string; finalized: boolean }) => [v.version, v.finalized]),
      [
        ['1', true],
        ['2', false],
      ],
    );
    assert.equal(versions[1].stateFunctionPreset, 'ClaimToken');
    const missing = await updatePlugin(t, alice.accessToken, {
      pluginId: id,
      versionUpdates: [{ version: 7, config: {} }],
    });
    assert.equal(missing.statusCode, 404, missing.body);
    // a refused update changes nothing (one transaction): v3 is not appended
    const mixed = await updatePlugin(t, alice.accessToken, {
      pluginId: id,
      versionCreate: versionConfig(URI),
      versionUpdates: [{ version: 1, config: { requiresSessions: true } }],
    });
    assert.equal(mixed.statusCode, 400);
    assert.equal((await t.request('GET', `/api/v0/plugin/${id}`)).json().plugin.versions.length, 2);
  });

  test('validation: reserved keys, repeated keys, header fields, options, defaults, customDetailsDisplay, preset companions', async () => {
    const field = (key: string, extra: Record<string, unknown> = {}) => ({ key, label: key, type: 'string', ...extra });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { userInputsSchema: [field('claimId')], requiresUserInputs: true },
        /userInputsSchema\[0\]\.key "claimId" is reserved/,
      ],
      [{ publicParamsSchema: [field('x-platform-signature')] }, /is reserved/],
      [{ privateParamsSchema: [field('pluginSecret')] }, /privateParamsSchema\[0\]\.key "pluginSecret" is reserved/],
      [
        { verificationCall: { uri: URI, hardcodedInputs: [{ ...field('_attemptStatus'), value: 'x' }] } },
        /hardcodedInputs\[0\]\.key "_attemptStatus" is reserved/,
      ],
      [
        { publicParamsSchema: [field('a')], privateParamsSchema: [field('a')] },
        /privateParamsSchema\[0\]\.key "a" is already used by initialVersion\.publicParamsSchema\[0\]/,
      ],
      [{ publicParamsSchema: [field('a.b')] }, /no dots/],
      [{ publicParamsSchema: [field('Content-Type', { headerField: true })] }, /cannot be sent as a header/],
      [
        { publicParamsSchema: [field('tags', { headerField: true, arrayField: true })] },
        /headerField cannot be an arrayField/,
      ],
      [
        { publicParamsSchema: [field('n', { type: 'number', options: [{ label: 'one', value: 'one' }] })] },
        /options\[0\]\.value must be a number/,
      ],
      [
        { publicParamsSchema: [field('c', { options: [{ label: 'A', value: 'a' }], defaultValue: 'b' })] },
        /defaultValue must be one of the options/,
      ],
      [
        { privateParamsSchema: [field('h', { hideFromDetailsDisplay: true })] },
        /hideFromDetailsDisplay applies to publicParamsSchema fields only/,
      ],
      [
        { verificationCall: { uri: URI, hardcodedInputs: [{ ...field('n', { type: 'number' }), value: 'x' }] } },
        /hardcodedInputs\[0\]\.value must be a number/,
      ],
      [
        { publicParamsSchema: [field('a')], customDetailsDisplay: 'Needs {{a}} and {{secret}}' },
        /customDetailsDisplay references \{\{secret\}\}/,
      ],
      [{ userInputsSchema: [field('u')] }, /requiresUserInputs must be true/],
      [{ reuseForNonIndexed: true, stateFunctionPreset: 'ClaimToken' }, /reuseForNonIndexed needs a stateless plugin/],
      [{ verificationCall: undefined }, /verificationCall is required/],
    ];
    for (const [config, message] of cases) {
      const res = await createPluginRequest(t, alice.accessToken, body(newPluginId(), {}, config));
      assert.equal(res.statusCode, 400, `${JSON.stringify(config)}: ${res.body}`);
      assert.match(res.json().errorMessage, message, JSON.stringify(config));
    }
    const ok = await createPluginRequest(
      t,
      alice.accessToken,
      body(
        newPluginId(),
        {},
        {
          publicParamsSchema: [field('a'), field('X-Api-Key', { headerField: true })],
          customDetailsDisplay: 'Needs {{ a }}',
        },
      ),
    );
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('verificationCall.uri must pass the egress rules when saved', async () => {
    const strict = await startPluginApp({ env: { EGRESS_ALLOW_PRIVATE_CIDRS: '' } });
    try {
      const o = await owner(strict);
      for (const [uri, why] of [
        ['http://example.com/hook', /only https/],
        ['https://169.254.169.254/latest', /refused/],
        ['https://127.0.0.1:8443/hook', /refused/],
        ['https://user:pw@example.com/', /credentials/],
        ['https://localhost/hook', /refused/],
        ['not a url', /refused/],
      ] as const) {
        const res = await createPluginRequest(strict, o.accessToken, {
          ...body(newPluginId()),
          initialVersion: versionConfig(uri),
        });
        assert.equal(res.statusCode, 400, `${uri}: ${res.body}`);
        assert.match(res.json().errorMessage, /verificationCall\.uri is refused/, uri);
        assert.match(res.json().errorMessage, why, uri);
      }
      const pub = await createPluginRequest(strict, o.accessToken, {
        ...body(newPluginId()),
        initialVersion: versionConfig('https://plugins.example.com/hook'),
      });
      assert.equal(pub.statusCode, 200, pub.body);
    } finally {
      await strict.close();
    }
  });

  test('localised documents: <id>-<locale>, after the English one, by its owner', async () => {
    const base = newPluginId('loc');
    const orphan = await createPluginRequest(t, alice.accessToken, body(`${base}-es`, { locale: 'es' }));
    assert.equal(orphan.statusCode, 400, orphan.body);
    assert.match(orphan.json().errorMessage, /English document .* does not exist/);
    await createPlugin(t, alice.accessToken, URI, {}, { pluginId: base });
    const wrongId = await createPluginRequest(t, alice.accessToken, body(`${base}-fr`, { locale: 'es' }));
    assert.equal(wrongId.statusCode, 400);
    assert.match(wrongId.json().errorMessage, /must be <id>-es/);
    const notOwner = await createPluginRequest(t, bob.accessToken, body(`${base}-es`, { locale: 'es' }));
    assert.equal(notOwner.statusCode, 403, notOwner.body);
    const es = await createPluginRequest(t, alice.accessToken, body(`${base}-es`, { locale: 'es' }));
    assert.equal(es.statusCode, 200, es.body);
    assert.equal(es.json().plugin.locale, 'es');
    const bare = await createPluginRequest(t, alice.accessToken, body(`${base}-de`));
    assert.equal(bare.statusCode, 400, 'an English id in the <id>-<locale> form of an existing document');
  });

  test('search lists published plugins (toPublish + operator review via the CLI); pluginsForSignedInUser lists your own', async () => {
    const tag = `zq${Date.now().toString(36)}`;
    const listed = await createPlugin(
      t,
      alice.accessToken,
      URI,
      {},
      { toPublish: true, metadata: { name: `Alpha ${tag}` } },
    );
    const hidden = await createPlugin(t, alice.accessToken, URI, {}, { metadata: { name: `Beta ${tag}` } });
    const search = async (q: string, token?: string) => {
      const res = await t.get(`/api/v0/plugins/search?${q}`, token ? { token } : {});
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    assert.deepEqual((await search(`searchValue=${tag}`)).plugins, [], 'not reviewed yet');

    const cli = await runCliInProcess(['plugin', 'review', listed], t.database.env);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(JSON.parse(cli.stdout), { pluginId: listed, toPublish: true, reviewCompleted: true });
    const missing = await runCliInProcess(['plugin', 'review', 'no-such-plugin'], t.database.env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /not found/);

    const found = await search(`searchValue=${tag.toUpperCase()}&bookmark=`);
    assert.deepEqual(
      found.plugins.map((d) => d.pluginId),
      [listed],
    );
    assert.equal(found.hasMore, false);
    assert.equal(found.bookmark, '');
    const reviewed = await t.request('GET', `/api/v0/plugin/${listed}`);
    assert.equal(reviewed.json().plugin.reviewCompleted, true);

    const mine = await search(`searchValue=${tag}&pluginsForSignedInUser=true`, alice.accessToken);
    assert.deepEqual(mine.plugins.map((d) => d.pluginId).sort(), [listed, hidden].sort());
    const anonMine = await t.request('GET', `/api/v0/plugins/search?pluginsForSignedInUser=true`);
    assert.equal(anonMine.statusCode, 401);
    const es = await search(`searchValue=${tag}&locale=es`);
    assert.deepEqual(es.plugins, []);
  });

  test('search pages 25 at a time with signed bookmarks', async () => {
    const tag = `pg${Date.now().toString(36)}`;
    const ids: string[] = [];
    for (let i = 0; i < 27; i++)
      ids.push(await createPlugin(t, bob.accessToken, URI, {}, { metadata: { name: `${tag} ${i}` } }));
    const first = await t.request('GET', `/api/v0/plugins/search?searchValue=${tag}&pluginsForSignedInUser=true`, {
      token: bob.accessToken,
    });
    const p1 = first.json();
    assert.equal(p1.plugins.length, 25);
    assert.equal(p1.hasMore, true);
    const second = await t.request(
      'GET',
      `/api/v0/plugins/search?searchValue=${tag}&pluginsForSignedInUser=true&bookmark=${encodeURIComponent(p1.bookmark)}`,
      { token: bob.accessToken },
    );
    const p2 = second.json();
    assert.equal(p2.plugins.length, 2);
    assert.equal(p2.hasMore, false);
    assert.deepEqual(
      new Set([...p1.plugins, ...p2.plugins].map((d: { pluginId: string }) => d.pluginId)),
      new Set(ids),
    );
    const forged = await t.request(
      'GET',
      `/api/v0/plugins/search?searchValue=${tag}&bookmark=${encodeURIComponent(p1.bookmark)}`,
    );
    assert.equal(forged.statusCode, 400, 'a bookmark of another list');
  });
});
