// The reference client's plugin calls, unchanged, against a running service: createPlugin and
// updatePlugin (the client always sends verificationCall.method and postProcessingJs),
// getPlugin / getPlugins / searchPlugins (documents under `plugins`), deletePlugin, and
// getPluginErrors (the client sends no query: the caller's plugins' errors, paged).
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startHttpsEndpoint, type HttpsEndpoint } from '../helpers/https-endpoint.ts';
import { loopbackEgressEnv, newPluginId, owner, versionConfig } from '../helpers/plugins.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, numUses, randomAddress } from '../claims/helpers.ts';
import { refusal, sdkClient, type SdkClient } from './sdk.ts';

/** A version config as the reference client's users write it (every field it types as required). */
const sdkVersion = (uri: string, verificationCall: Record<string, unknown> = {}) => ({
  ...versionConfig(uri),
  verificationCall: {
    uri,
    method: 'POST',
    hardcodedInputs: [],
    passAddress: false,
    postProcessingJs: '',
    ...verificationCall,
  },
  finalized: true,
});
const metadata = (name: string) => ({
  name,
  description: 'made with the reference client',
  image: '',
  createdBy: 'tester',
});

describe('reference client: plugin documents', () => {
  let ep: HttpsEndpoint;
  let alice: SignedIn;
  let bob: SignedIn;
  let aliceSdk: SdkClient;
  let bobSdk: SdkClient;
  before(async () => {
    ep = await startHttpsEndpoint();
  });
  const t = useApp({ listen: true, env: loopbackEgressEnv() });
  before(async () => {
    alice = await owner(t);
    bob = await owner(t);
    aliceSdk = sdkClient(t, alice.accessToken);
    bobSdk = sdkClient(t, bob.accessToken);
  });
  after(() => ep.close());

  test('createPlugin with method POST and an empty postProcessingJs; updatePlugin appends a version the same way', async () => {
    const pluginId = newPluginId('sdk');
    await aliceSdk.api.createPlugin({
      pluginId,
      metadata: metadata('Made by the SDK'),
      toPublish: false,
      initialVersion: sdkVersion(ep.url),
    } as never);
    await aliceSdk.api.updatePlugin({ pluginId, versionCreate: sdkVersion(ep.url) } as never);
    const { plugin } = (await t.request('GET', `/api/v0/plugins/${pluginId}`)).json();
    assert.deepEqual(
      plugin.versions.map((v: { version: string; verificationCall: unknown }) => [v.version, v.verificationCall]),
      [
        ['1', { uri: ep.url, hardcodedInputs: [], passAddress: false }],
        ['2', { uri: ep.url, hardcodedInputs: [], passAddress: false }],
      ],
      'calls are always POST and no script is kept: neither field is stored',
    );
    assert.deepEqual(aliceSdk.paths, ['POST /api/v0/plugins', 'PUT /api/v0/plugins']);
  });

  test('another method, or a non-empty postProcessingJs, is a 400 that says why', async () => {
    const pluginId = newPluginId('sdk');
    assert.deepEqual(
      await refusal(
        aliceSdk.api.createPlugin({
          pluginId,
          metadata: metadata('GET'),
          toPublish: false,
          initialVersion: sdkVersion(ep.url, { method: 'GET' }),
        } as never),
      ),
      {
        errorMessage:
          'initialVersion.verificationCall.method must be "POST": this service always calls plugin endpoints with POST (got "GET")',
      },
    );
    assert.deepEqual(
      await refusal(
        aliceSdk.api.createPlugin({
          pluginId,
          metadata: metadata('JS'),
          toPublish: false,
          initialVersion: sdkVersion(ep.url, { postProcessingJs: 'return 1' }),
        } as never),
      ),
      {
        errorMessage:
          'initialVersion.verificationCall.postProcessingJs must be empty: this service runs no creator-supplied code',
      },
    );
    await aliceSdk.api.createPlugin({
      pluginId,
      metadata: metadata('ok'),
      toPublish: false,
      initialVersion: sdkVersion(ep.url),
    } as never);
    assert.deepEqual(
      await refusal(
        aliceSdk.api.updatePlugin({ pluginId, versionCreate: sdkVersion(ep.url, { method: 'PUT' }) } as never),
      ),
      {
        errorMessage:
          'versionCreate.verificationCall.method must be "POST": this service always calls plugin endpoints with POST (got "PUT")',
      },
    );
  });

  test('getPlugin, getPlugins and searchPlugins read documents; getPlugins lists them under plugins', async () => {
    const pluginId = newPluginId('sdk');
    await aliceSdk.api.createPlugin({
      pluginId,
      metadata: metadata(`Findable ${pluginId}`),
      toPublish: false,
      initialVersion: sdkVersion(ep.url),
    } as never);
    const one = await aliceSdk.api.getPlugin(pluginId, {} as never);
    assert.equal(one.plugin.pluginId, pluginId);
    const many = await aliceSdk.api.getPlugins({ pluginIds: [pluginId, 'no-such-plugin'] } as never);
    assert.deepEqual(
      many.plugins.map((p) => p.pluginId),
      [pluginId],
    );
    const mine = await aliceSdk.api.searchPlugins({ pluginsForSignedInUser: true, searchValue: pluginId } as never);
    assert.deepEqual(
      mine.plugins.map((p) => p.pluginId),
      [pluginId],
    );
    assert.equal(mine.bookmark, '');
    // refusals: an unknown id; a search for your own plugins without a session
    assert.deepEqual(await refusal(aliceSdk.api.getPlugin('no-such-plugin', {} as never)), {
      errorMessage: 'Plugin no-such-plugin not found',
    });
    assert.deepEqual(await refusal(sdkClient(t).api.searchPlugins({ pluginsForSignedInUser: true } as never)), {
      errorMessage:
        'Unauthorized request. pluginsForSignedInUser needs a signed-in session (Authorization: Bearer <access token>).',
      unauthorized: true,
    });
    assert.deepEqual(await refusal(aliceSdk.api.getPlugins({ pluginIds: ['bad id!'] } as never)), {
      errorMessage: 'body.pluginIds.0 must match pattern "^[A-Za-z0-9][A-Za-z0-9_-]*$"',
    });
  });

  test('deletePlugin: the owner deletes; another user is refused', async () => {
    const pluginId = newPluginId('sdk');
    await aliceSdk.api.createPlugin({
      pluginId,
      metadata: metadata('to delete'),
      toPublish: false,
      initialVersion: sdkVersion(ep.url),
    } as never);
    assert.deepEqual(await refusal(bobSdk.api.deletePlugin({ pluginId })), {
      errorMessage: `Only the creator or manager of plugin ${pluginId} may edit it`,
    });
    await aliceSdk.api.deletePlugin({ pluginId });
    assert.equal((await t.request('GET', `/api/v0/plugins/${pluginId}`)).statusCode, 404);
  });

  test('getPluginErrors without pluginId: the errors of every plugin the caller owns or manages, newest first, paged', async () => {
    ep.respond(() => ({ status: 400, body: { message: 'nope' } }));
    const first = newPluginId('errs');
    const second = newPluginId('errs');
    const bobs = newPluginId('errs');
    await aliceSdk.api.createPlugin({
      pluginId: first,
      metadata: metadata('one'),
      toPublish: false,
      initialVersion: sdkVersion(ep.url),
    } as never);
    // managed by alice, created by bob: alice reads its errors too
    await bobSdk.api.createPlugin({
      pluginId: second,
      metadata: metadata('two'),
      toPublish: false,
      initialVersion: sdkVersion(ep.url),
      managedBy: alice.platformAddress,
    } as never);
    await bobSdk.api.createPlugin({
      pluginId: bobs,
      metadata: metadata('bob only'),
      toPublish: false,
      initialVersion: sdkVersion(ep.url),
    } as never);
    const claim = async (pluginId: string, token: string) =>
      claimWithPlugins(t, token, [
        numUses(100),
        { pluginId, instanceId: 'cp', version: '1', publicParams: {}, privateParams: {} },
      ]);
    const [c1, c2, c3] = [
      await claim(first, alice.accessToken),
      await claim(second, bob.accessToken),
      await claim(bobs, bob.accessToken),
    ];
    const fail = async (claimId: string) =>
      assert.equal((await attempt(t, 'simulate', claimId, randomAddress())).statusCode, 400);
    for (let i = 0; i < 20; i++) await fail(c1);
    for (let i = 0; i < 7; i++) await fail(c2);
    await fail(c3);

    // the client requires a pluginId but never sends it: the answer covers all of alice's plugins
    const p1 = await aliceSdk.api.getPluginErrors({ pluginId: first });
    assert.equal(aliceSdk.paths.at(-1), 'GET /api/v0/plugins/errors');
    assert.equal(p1.docs.length, 25);
    assert.equal(p1.total, 27);
    const raw = (
      await t.request('GET', `/api/v0/plugins/errors?bookmark=${encodeURIComponent(p1.bookmark!)}`, {
        token: alice.accessToken,
      })
    ).json();
    assert.equal(raw.docs.length, 2);
    assert.equal(raw.hasMore, false);
    assert.equal(raw.bookmark, '');
    const all = [...p1.docs, ...raw.docs];
    assert.deepEqual(new Set(all.map((d) => d.pluginId)), new Set([first, second]), "bob's own plugin is not listed");
    assert.deepEqual(all.map((d) => d.pluginId).slice(0, 7), Array(7).fill(second), 'newest first across plugins');
    assert.equal(new Set(all.map((d) => d._docId)).size, 27);
    assert.deepEqual(all[0].context, { claimId: c2, claimAttemptId: '', instanceId: 'cp' });

    // bob sees his two plugins' errors; without a session it is a 401
    assert.equal((await bobSdk.api.getPluginErrors({ pluginId: bobs })).total, 8);
    assert.deepEqual(await refusal(sdkClient(t).api.getPluginErrors({ pluginId: first })), {
      errorMessage:
        'Unauthorized request. This route requires a signed-in session (Authorization: Bearer <access token>).',
      unauthorized: true,
    });
  });

  test('the social plugins and github-contributions have plugin documents listing their params', async () => {
    const keys = (fields: Array<{ key: string }>) => fields.map((f) => f.key);
    for (const id of ['discord', 'github', 'google', 'twitch', 'twitter']) {
      const raw = await t.request('GET', `/api/v0/plugin/${id}`);
      assert.equal(raw.statusCode, 200, `${id}: ${raw.body}`);
      const { plugin } = await aliceSdk.api.getPlugin(id, {} as never);
      assert.deepEqual(JSON.parse(JSON.stringify(plugin)), raw.json().plugin, id);
      assert.deepEqual(
        [plugin.pluginId, plugin.locale, plugin.toPublish, plugin.reviewCompleted, plugin.versions.length],
        [id, 'en', true, true, 1],
      );
      const [v] = plugin.versions;
      assert.equal(v.finalized, true);
      assert.equal(v.reuseForNonIndexed, false, 'stateful: not for on-demand claims');
      assert.equal(v.verificationCall, undefined, 'run in-process: nothing is called');
      assert.deepEqual(keys(v.publicParamsSchema), ['users', 'maxUsesPerUser', 'hasPrivateList']);
      assert.deepEqual(keys(v.privateParamsSchema), ['usernames']);
      assert.deepEqual(
        v.publicParamsSchema.map((f) => [f.type, f.arrayField ?? false]),
        [
          ['string', true],
          ['number', false],
          ['boolean', false],
        ],
      );
    }
    const gh = (await aliceSdk.api.getPlugin('github-contributions', {} as never)).plugin.versions[0];
    assert.deepEqual(
      gh.publicParamsSchema.map((f) => [f.key, f.type, f.required ?? false]),
      [
        ['repository', 'string', true],
        ['minContributions', 'number', false],
      ],
    );
    assert.deepEqual(gh.privateParamsSchema, []);
    // search lists them; a claim naming the document's id and version runs the core plugin
    const found = await aliceSdk.api.searchPlugins({ searchValue: 'twitch' } as never);
    assert.ok(
      found.plugins.some((p) => p.pluginId === 'twitch'),
      JSON.stringify(found.plugins.map((p) => p.pluginId)),
    );
    const claimId = await claimWithPlugins(t, alice.accessToken, [
      numUses(5),
      {
        pluginId: 'discord',
        instanceId: 'dc',
        version: '1',
        publicParams: { maxUsesPerUser: 1, users: [] },
        privateParams: {},
      },
    ]);
    const sim = await attempt(t, 'simulate', claimId, randomAddress());
    assert.deepEqual([sim.statusCode, sim.json().errorMessage], [400, 'Invalid details. Could not get user.']);
    // refusals: nobody edits them; no localised social document; a core id is not a document
    assert.equal(
      (
        await t.request('PUT', '/api/v0/plugins', {
          token: alice.accessToken,
          body: { pluginId: 'discord', toPublish: false },
        })
      ).statusCode,
      403,
    );
    assert.deepEqual(await refusal(aliceSdk.api.getPlugin('discord-es', {} as never)), {
      errorMessage: 'Plugin discord-es not found',
    });
    assert.deepEqual(await refusal(aliceSdk.api.getPlugin('numUses', {} as never)), {
      errorMessage: 'Plugin numUses not found',
    });
  });
});
