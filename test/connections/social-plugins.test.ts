// The social plugins (discord, github, google, twitch, twitter) on accounts linked through the real
// connections flow: list and private list, maxUsesPerUser counted per provider account across
// wallets, the reference's error texts and state shape, and parameter validation.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, getClaim, manager, numUses, resolved } from '../claims/helpers.ts';
import { link, providerEnv, startMockProvider, type MockProvider } from './helpers.ts';

const social = (pluginId: string, publicParams: Record<string, unknown>, privateParams: Record<string, unknown> = {}, instanceId = 's') => ({ pluginId, instanceId, publicParams, privateParams });

describe('social plugins', () => {
  let mock: MockProvider;
  let t: TestApp;
  let owner: SignedIn;
  let alice: SignedIn;
  let bob: SignedIn;
  let carol: SignedIn;
  before(async () => {
    mock = await startMockProvider();
    t = await startApp({ env: providerEnv(mock) });
    owner = await manager(t);
    [alice, bob, carol] = await Promise.all([signIn(t), signIn(t), signIn(t)]);
    // alice and bob link the SAME discord account; carol links another; nobody links twitter
    await link(t, mock, alice.accessToken, 'discord', { id: '1001', username: 'Nelly.Dev' });
    await link(t, mock, bob.accessToken, 'discord', { id: '1001', username: 'Nelly.Dev' });
    await link(t, mock, carol.accessToken, 'discord', { id: '2002', username: 'carol' });
    await link(t, mock, carol.accessToken, 'github', { id: '583231', username: 'octocat' });
  });
  after(async () => {
    await t.close();
    await mock.stop();
  });

  async function complete(claimId: string, who: SignedIn) {
    const res = await attempt(t, 'complete', claimId, who.platformAddress);
    if (res.statusCode !== 200) return { success: false, error: res.json().errorMessage as string };
    const s = await resolved(t, res.json().claimAttemptId);
    return { success: s.success === true, error: s.error };
  }

  test('a public list admits listed accounts (usernames case-insensitively, or ids) and refuses others', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), social('discord', { users: ['nelly.dev'], maxUsesPerUser: 5 })]);
    assert.deepEqual(await complete(claimId, alice), { success: true, error: '' });
    assert.deepEqual(await complete(claimId, carol), { success: false, error: 'User not in list of whitelisted users.' });
    const byId = await claimWithPlugins(t, owner.accessToken, [numUses(10), social('discord', { users: ['2002'] })]);
    assert.deepEqual(await complete(byId, carol), { success: true, error: '' });
  });

  test('an address without a linked account fails with the reference text', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), social('twitter', {})]);
    const r = await attempt(t, 'simulate', claimId, alice.platformAddress);
    assert.equal(r.statusCode, 400);
    assert.equal(r.json().errorMessage, 'Invalid details. Could not get user.');
  });

  test('maxUsesPerUser counts the provider account, not the wallet: a second wallet on the same account is refused', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), social('discord', { maxUsesPerUser: 1 })]);
    assert.deepEqual(await complete(claimId, alice), { success: true, error: '' });
    assert.deepEqual(await complete(claimId, bob), { success: false, error: 'User already exceeded max uses' });
    assert.deepEqual(await complete(claimId, carol), { success: true, error: '' });
    // the state, in the reference's shape, with dots written [dot]; private to the owner
    const doc = await getClaim(t, claimId, 'privateStatesToFetch=s', owner.accessToken);
    const s = doc.plugins.find((p: { instanceId: string }) => p.instanceId === 's');
    assert.deepEqual(s.privateState, { ids: { '1001': 1, '2002': 1 }, usernames: { 'nelly[dot]dev': '1001', carol: '2002' } });
    assert.deepEqual(s.publicState, {});
  });

  test('a private list is used when hasPrivateList is true, and is not shown to the public', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), social('discord', { hasPrivateList: true }, { usernames: ['CAROL'] })]);
    assert.deepEqual(await complete(claimId, carol), { success: true, error: '' });
    assert.deepEqual(await complete(claimId, alice), { success: false, error: 'User not in list of whitelisted users.' });
    const pub = await getClaim(t, claimId);
    assert.deepEqual(pub.plugins.find((p: { instanceId: string }) => p.instanceId === 's').privateParams ?? {}, {});
  });

  test('an unlinked account stops passing', async () => {
    const dave = await signIn(t);
    await link(t, mock, dave.accessToken, 'github', { id: '77', username: 'dave' });
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), social('github', {})]);
    assert.equal((await attempt(t, 'simulate', claimId, dave.platformAddress)).statusCode, 200);
    await t.request('DELETE', '/api/v0/connections/github', { token: dave.accessToken });
    assert.equal((await attempt(t, 'simulate', claimId, dave.platformAddress)).json().errorMessage, 'Invalid details. Could not get user.');
  });

  test('params are validated with 400s naming the field', async () => {
    const bad = async (pub: Record<string, unknown>, priv: Record<string, unknown>, re: RegExp) => {
      const res = await t.request('POST', '/api/v0/claims', { token: owner.accessToken, body: { claims: [{ claimId: `v${Math.random().toString(36).slice(2)}`, plugins: [numUses(1), social('google', pub, priv)] }] } });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().errorMessage, re);
    };
    await bad({ users: ['a'], hasPrivateList: true }, { usernames: ['b'] }, /publicParams\.users must be empty when hasPrivateList is true/);
    await bad({}, { usernames: ['b'] }, /privateParams\.usernames needs publicParams\.hasPrivateList: true/);
    await bad({ users: 'alice' }, {}, /publicParams\.users must be an array of usernames/);
    await bad({ users: ['a[dot]b'] }, {}, /Invalid reserved sequence in ID \(\[dot\]\)/);
    await bad({ maxUsesPerUser: -1 }, {}, /maxUsesPerUser must be an integer/);
    await bad({ extra: 1 }, {}, /unknown field "extra"/);
    // stateful: needs numUses
    const res = await t.request('POST', '/api/v0/claims', { token: owner.accessToken, body: { claims: [{ claimId: 'nouses1', plugins: [social('google', {})] }] } });
    assert.equal(res.statusCode, 400);
  });
});
