// Second angles on checks that one test each used to guard (issue 16): the OR default and who may
// read private params and private state. Each test here was seen to fail on the bug its comment names.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, completeAndWait, getClaim, manager, numUses, randomAddress } from './helpers.ts';

const NULL_0X = '0x0000000000000000000000000000000000000000';

describe('claims edges', () => {
  let m: SignedIn;
  const t = useApp();
  before(async () => {
    m = await manager(t);
  });

  // Bug it catches: OR without options defaulting to "all conditions" (or to anything but one).
  test('satisfyMethod OR with minNumSatisfied omitted: any one condition suffices, none fails', async () => {
    const claimId = await claimWithPlugins(
      t,
      m.accessToken,
      [
        numUses(10),
        { pluginId: 'password', instanceId: 'pw', privateParams: { password: 's3cret' } },
        { pluginId: 'anonymous', instanceId: 'an' },
        { pluginId: 'transferTimes', instanceId: 'h', publicParams: { transferTimes: [{ start: '1', end: '2' }] } },
      ],
      { satisfyMethod: { type: 'OR', conditions: ['pw', 'an', 'h'] } },
    );
    const doc = await getClaim(t, claimId);
    assert.deepEqual(
      doc.satisfyMethod,
      { type: 'OR', conditions: ['pw', 'an', 'h'] },
      'no default is written into the document',
    );
    // one of three: the password alone, then the null address alone
    const byPassword = await completeAndWait(t, claimId, randomAddress(), { pw: { password: 's3cret' } });
    assert.equal(byPassword.success, true, byPassword.error);
    assert.equal((await attempt(t, 'simulate', claimId, NULL_0X)).statusCode, 200, 'the anonymous condition alone');
    // none of three: refused, nothing used
    const none = await attempt(t, 'simulate', claimId, randomAddress(), { pw: { password: 'nope' } });
    assert.equal(none.statusCode, 400, none.body);
    assert.equal((await getClaim(t, claimId)).plugins[0].publicState.numUses, 1);
  });

  // Bug it catches: private params or private state shown to a creator without readPrivateClaimData.
  test('private params and private state: the creator without readPrivateClaimData sees neither, on either read route', async () => {
    const member = randomAddress();
    const claimId = await claimWithPlugins(t, m.accessToken, [
      numUses(10),
      { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'fetch-route-secret' } },
      {
        pluginId: 'whitelist',
        instanceId: 'wl',
        publicParams: { hasPrivateList: true },
        privateParams: { list: { addresses: [member] } },
      },
    ]);
    const claimed = await completeAndWait(t, claimId, member, { pw: { password: 'fetch-route-secret' } });
    assert.equal(claimed.success, true, claimed.error);
    const creatorNoScope = await signIn(t, { privateKey: m.privateKey, scopes: ['manageClaims', 'completeClaims'] });
    const ask = { claimId, fetchPrivateParams: true, privateStatesToFetch: ['wl'] };
    const fetchAs = async (token: string) => {
      const res = await t.request('POST', '/api/v1/claims/fetch', { token, body: { claimsToFetch: [ask] } });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().claims[0];
    };
    for (const doc of [
      await fetchAs(creatorNoScope.accessToken),
      await getClaim(t, claimId, 'fetchPrivateParams=true&privateStatesToFetch=wl', creatorNoScope.accessToken),
    ]) {
      assert.equal(doc._includesPrivateParams, false);
      assert.deepEqual(
        doc.plugins.map((p: { privateParams: unknown }) => p.privateParams),
        [{}, {}, {}],
      );
      assert.equal(doc.plugins[2].privateState, undefined);
      assert.ok(!JSON.stringify(doc).includes('fetch-route-secret'));
      assert.ok(!JSON.stringify(doc).includes(member));
    }
    // the same creator with the scope sees both (so the refusal above is about the scope)
    const full = await fetchAs(m.accessToken);
    assert.equal(full._includesPrivateParams, true);
    assert.deepEqual(full.plugins[1].privateParams, { password: 'fetch-route-secret' });
    assert.deepEqual(full.plugins[2].privateState, { addresses: { [member]: 1 } });
  });
});
