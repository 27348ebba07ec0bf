// Plugin document rules a probe found broken: an update that appends a version and edits it in
// the same request (versionCreate applies first, all in one transaction), and localised ids (an
// English id may not end in -<locale>, so nobody can take another owner's <id>-<locale> first;
// an -en ending is named as such).
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { SignedIn } from '../helpers/signin.ts';
import {
  createPlugin,
  createPluginRequest,
  newPluginId,
  owner,
  updatePlugin,
  versionConfig,
} from '../helpers/plugins.ts';

const URI = 'https://127.0.0.1:9/hook';

describe('plugin documents: combined updates and localised ids', () => {
  let alice: SignedIn;
  let bob: SignedIn;
  const t = useApp({ plugins: true });
  before(async () => {
    alice = await owner(t);
    bob = await owner(t);
  });

  const body = (pluginId: string, extra: Record<string, unknown> = {}) => ({
    pluginId,
    metadata: { name: `Name ${pluginId}`, description: 'd', image: '' },
    toPublish: false,
    initialVersion: versionConfig(URI),
    ...extra,
  });
  const versionsOf = async (pluginId: string) =>
    (
      (await t.request('GET', `/api/v0/plugin/${pluginId}`)).json().plugin.versions as Array<{
        version: string;
        finalized: boolean;
      }>
    ).map((v) => [v.version, v.finalized]);

  test('update: versionCreate applies before versionUpdates, so the docs example appends version 2 and finalizes it; all or nothing', async () => {
    const pluginId = await createPlugin(t, alice.accessToken, URI);
    // the "Update" example of docs/plugins-platform.md, with the create example's version config
    const guestList = {
      stateFunctionPreset: 'ClaimToken',
      requiresUserInputs: true,
      userInputsSchema: [{ key: 'ticket', label: 'Ticket', type: 'string', required: true }],
      publicParamsSchema: [{ key: 'event', label: 'Event', type: 'string', required: true }],
      privateParamsSchema: [{ key: 'X-Api-Key', label: 'API key', type: 'string', headerField: true }],
      verificationCall: {
        uri: 'https://plugins.example.com/guest-list',
        passAddress: true,
        hardcodedInputs: [{ key: 'region', label: 'Region', type: 'string', value: 'eu' }],
      },
      customDetailsDisplay: 'Guests of {{event}} only',
    };
    const res = await updatePlugin(t, alice.accessToken, {
      pluginId,
      metadata: { name: 'Guest list (v2)' },
      toPublish: true,
      approvedUsers: [`0x${randomBytes(20).toString('hex')}`, bob.platformAddress],
      rotatePluginSecret: true,
      versionCreate: { ...guestList, finalized: false },
      versionUpdates: [{ version: 2, config: { requiresSessions: true, finalized: true } }],
      managedBy: alice.platformAddress,
    });
    assert.equal(res.statusCode, 200, res.body);
    const plugin = res.json().plugin;
    assert.deepEqual(
      plugin.versions.map((v: { version: string; finalized: boolean }) => [v.version, v.finalized]),
      [
        ['1', true],
        ['2', true],
      ],
    );
    assert.equal(plugin.versions[1].requiresSessions, true);
    assert.equal(plugin.versions[1].stateFunctionPreset, 'ClaimToken');
    assert.equal(plugin.metadata.name, 'Guest list (v2)');
    assert.match(plugin.pluginSecret, /^[0-9a-f]{64}$/);

    // a refused update of the new version appends nothing; a version created finalized is locked
    const refused = await updatePlugin(t, alice.accessToken, {
      pluginId,
      versionCreate: versionConfig(URI),
      versionUpdates: [
        {
          version: '3',
          config: { stateFunctionPreset: 'Stateless', reuseForNonIndexed: true, requiresSessions: true },
        },
      ],
    });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.deepEqual(refused.json(), {
      errorMessage:
        'versionUpdates[0].config.reuseForNonIndexed needs a stateless plugin without user inputs or sessions: it requires a session',
    });
    const locked = await updatePlugin(t, alice.accessToken, {
      pluginId,
      versionCreate: { ...versionConfig(URI), finalized: true },
      versionUpdates: [{ version: 3, config: { duplicatesAllowed: true } }],
    });
    assert.equal(locked.statusCode, 400, locked.body);
    assert.deepEqual(locked.json(), {
      errorMessage: `versionUpdates[0]: version 3 of plugin ${pluginId} is finalized; its config cannot change (append a new version with versionCreate)`,
    });
    assert.deepEqual(await versionsOf(pluginId), [
      ['1', true],
      ['2', true],
    ]);
    // entries apply in order: a second one for the same version merges into the first
    const twice = await updatePlugin(t, alice.accessToken, {
      pluginId,
      versionCreate: versionConfig(URI),
      versionUpdates: [
        { version: 3, config: { duplicatesAllowed: true } },
        { version: 3, config: { requiresSessions: true } },
      ],
    });
    assert.equal(twice.statusCode, 200, twice.body);
    assert.deepEqual(
      [twice.json().plugin.versions[2].duplicatesAllowed, twice.json().plugin.versions[2].requiresSessions],
      [true, true],
    );
    const afterFinal = await updatePlugin(t, alice.accessToken, {
      pluginId,
      versionCreate: versionConfig(URI),
      versionUpdates: [
        { version: 4, config: { finalized: true } },
        { version: 4, config: { duplicatesAllowed: true } },
      ],
    });
    assert.equal(afterFinal.statusCode, 400, afterFinal.body);
    assert.deepEqual(afterFinal.json(), {
      errorMessage: `versionUpdates[1]: version 4 of plugin ${pluginId} is finalized; its config cannot change (append a new version with versionCreate)`,
    });
    assert.deepEqual(await versionsOf(pluginId), [
      ['1', true],
      ['2', true],
      ['3', false],
    ]);
    const beyond = await updatePlugin(t, alice.accessToken, {
      pluginId,
      versionCreate: versionConfig(URI),
      versionUpdates: [{ version: 5, config: {} }],
    });
    assert.equal(beyond.statusCode, 404, beyond.body);
    assert.deepEqual(beyond.json(), { errorMessage: `versionUpdates[0]: plugin ${pluginId} has no version 5` });
    assert.deepEqual(await versionsOf(pluginId), [
      ['1', true],
      ['2', true],
      ['3', false],
    ]);
  });

  test('an English id may not end in -<locale>: nobody can take another owner’s <id>-<locale> before <id> exists', async () => {
    const victim = newPluginId('victim');
    for (const squat of [`${victim}-es`, `${victim}-pt-BR`, `${victim}-ES`]) {
      const res = await createPluginRequest(t, bob.accessToken, body(squat));
      assert.equal(res.statusCode, 400, `${squat}: ${res.body}`);
      assert.deepEqual(res.json(), {
        errorMessage: `pluginId "${squat}" ends in -${squat.slice(victim.length + 1)}, the form <id>-<locale> of a localised document: give that locale, or choose an English id without a -<locale> ending`,
      });
    }
    // the owner of <id> creates it and its localised documents; bob cannot
    await createPlugin(t, alice.accessToken, URI, {}, { pluginId: victim });
    assert.equal(
      (await createPluginRequest(t, bob.accessToken, body(`${victim}-es`, { locale: 'es' }))).statusCode,
      403,
    );
    for (const [id, locale] of [
      [`${victim}-es`, 'es'],
      [`${victim}-pt-BR`, 'pt-BR'],
    ]) {
      const res = await createPluginRequest(t, alice.accessToken, body(id!, { locale }));
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().plugin.locale, locale);
    }
    // a localised document is one of an English document, not of another localised one
    const chained = await createPluginRequest(t, alice.accessToken, body(`${victim}-es-fr`, { locale: 'fr' }));
    assert.equal(chained.statusCode, 400, chained.body);
    assert.deepEqual(chained.json(), {
      errorMessage: `pluginId "${victim}-es-fr": the English document "${victim}-es" does not exist; create it first`,
    });
    // other endings are English ids as before
    for (const id of [`${victim}-v2`, `${victim}-abc`, `${victim}x`])
      assert.equal((await createPluginRequest(t, bob.accessToken, body(id))).statusCode, 200, id);
  });

  test('an English id ending in -en is refused as such: English is the base document, without a suffix', async () => {
    const base = await createPlugin(t, alice.accessToken, URI, {}, { pluginId: newPluginId('basic') });
    for (const extra of [{ locale: 'en' }, {}]) {
      const res = await createPluginRequest(t, alice.accessToken, body(`${base}-en`, extra));
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), {
        errorMessage: `pluginId "${base}-en" ends in -en, but English is the base document: its id has no locale suffix ("${base}")`,
      });
    }
    const es = await createPluginRequest(t, alice.accessToken, body(`${base}-es`, { locale: 'en' }));
    assert.equal(es.statusCode, 400, es.body);
    assert.deepEqual(es.json(), {
      errorMessage: `pluginId "${base}-es" ends in -es, the form <id>-<locale> of a localised document: give that locale, or choose an English id without a -<locale> ending`,
    });
  });
});
