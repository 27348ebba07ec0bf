// Hosted plugins are plugin documents of the service: readable through the plugin routes, listed in
// search, finalized and published, in English and Spanish, with PUBLIC_URL in their URI; a claim may
// name either locale's id, and neither is editable by anyone.
import { describe, test, before } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { claimWithPlugins, manager, numUses } from '../claims/helpers.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { HOSTED_PLUGIN_IDS as HOSTED } from '../../src/plugins/hosted.ts';

describe('hosted plugin documents', () => {
  let owner: SignedIn;
  const t = useApp({ env: { PUBLIC_URL: 'https://platform.example' } });
  before(async () => {
    owner = await manager(t, ['manageClaims', 'managePlugins']);
  });

  test('each hosted plugin is a finalized, published document in en and es, run in-process', async () => {
    for (const id of HOSTED) {
      for (const [pluginId, locale] of [
        [id, 'en'],
        [`${id}-es`, 'es'],
      ]) {
        const res = await t.request('GET', `/api/v0/plugin/${pluginId}`);
        assert.equal(res.statusCode, 200, `${pluginId}: ${res.body}`);
        const doc = res.json().plugin ?? res.json();
        assert.equal(doc.pluginId, pluginId);
        assert.equal(doc.locale, locale);
        assert.equal(doc.toPublish, true);
        assert.equal(doc.reviewCompleted, true);
        assert.equal(doc.versions.length, 1);
        const v = doc.versions[0];
        assert.equal(v.finalized, true);
        assert.equal(v.stateFunctionPreset, 'Stateless');
        assert.equal(v.duplicatesAllowed, true);
        assert.equal(v.verificationCall.uri, `https://platform.example/api/v0/integrations/query/${pluginId}`);
        assert.equal(doc.pluginSecret, undefined);
      }
    }
    const es = (await t.request('GET', '/api/v0/plugin/min-badge-es')).json();
    const esDoc = es.plugin ?? es;
    assert.equal(esDoc.metadata.name, 'Saldo mínimo de BADGE');
    assert.equal(esDoc.versions[0].publicParamsSchema[0].label, 'Saldo mínimo (BADGE enteros)');
  });

  test('search lists them', async () => {
    const res = await t.request('GET', '/api/v0/plugins/search?searchValue=username');
    assert.equal(res.statusCode, 200, res.body);
    const ids = (res.json().plugins as Array<{ pluginId: string }>).map((d) => d.pluginId);
    assert.ok(ids.includes('username-set'), JSON.stringify(ids));
  });

  test('a claim may use the localised id; nobody may edit a hosted document', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(5),
      {
        pluginId: 'custom-instructions-es',
        instanceId: 'i',
        version: '1',
        publicParams: { instructions: 'Sigue las instrucciones.' },
        privateParams: {},
      },
    ]);
    const sim = await t.request('POST', `/api/v0/claims/simulate/${claimId}/${owner.platformAddress}`, {
      body: { _expectedVersion: -1 },
    });
    assert.equal(sim.statusCode, 200, sim.body);
    const edit = await t.request('PUT', '/api/v0/plugins', {
      token: owner.accessToken,
      body: { pluginId: 'min-badge', toPublish: false },
    });
    assert.equal(edit.statusCode, 403, edit.body);
  });
});
