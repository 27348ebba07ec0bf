// The social plugins (discord, github, google, twitch, twitter) on accounts linked through the real
// connections flow: list and private list, maxUsesPerUser counted per provider account across
// wallets, the reference's error texts and state shape, and parameter validation.
import { describe, test, before, after } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, getClaim, manager, numUses, resolved } from '../claims/helpers.ts';
import { link, providerEnv, startMockProvider, type MockProvider } from './helpers.ts';

const social = (
  pluginId: string,
  publicParams: Record<string, unknown>,
  privateParams: Record<string, unknown> = {},
  instanceId = 's',
) => ({ pluginId, instanceId, publicParams, privateParams });

describe('social plugins', () => {
  let mock: MockProvider;
  let owner: SignedIn;
  let alice: SignedIn;
  let bob: SignedIn;
  let carol: SignedIn;
  before(async () => {
    mock = await startMockProvider();
  });
  const t = useApp({ env: () => providerEnv(mock) });
  before(async () => {
    owner = await manager(t);
    [alice, bob, carol] = await Promise.all([signIn(t), signIn(t), signIn(t)]);
    // alice and bob link the SAME discord account; carol links another; nobody links twitter
    await link(t, mock, alice, 'discord', { id: '1001', username: 'Nelly.Dev' });
    await link(t, mock, bob, 'discord', { id: '1001', username: 'Nelly.Dev' });
    await link(t, mock, carol, 'discord', { id: '2002', username: 'carol' });
    await link(t, mock, carol, 'github', { id: '583231', username: 'octocat' });
  });
  after(() => mock.stop());

  async function complete(claimId: string, who: SignedIn) {
    const res = await attempt(t, 'complete', claimId, who.platformAddress);
    if (res.statusCode !== 200) return { success: false, error: res.json().errorMessage as string };
    const s = await resolved(t, res.json().claimAttemptId);
    return { success: s.success === true, error: s.error };
  }

  test('a public list admits listed accounts (usernames case-insensitively, or ids) and refuses others', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      social('discord', { users: ['nelly.dev'], maxUsesPerUser: 5 }),
    ]);
    assert.deepEqual(await complete(claimId, alice), { success: true, error: '' });
    assert.deepEqual(await complete(claimId, carol), {
      success: false,
      error: 'User not in list of whitelisted users.',
    });
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
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      social('discord', { maxUsesPerUser: 1 }),
    ]);
    assert.deepEqual(await complete(claimId, alice), { success: true, error: '' });
    assert.deepEqual(await complete(claimId, bob), { success: false, error: 'User already exceeded max uses' });
    assert.deepEqual(await complete(claimId, carol), { success: true, error: '' });
    // the state, in the reference's shape, with dots written [dot]; private to the owner
    const doc = await getClaim(t, claimId, 'privateStatesToFetch=s', owner.accessToken);
    const s = doc.plugins.find((p: { instanceId: string }) => p.instanceId === 's');
    assert.deepEqual(s.privateState, {
      ids: { '1001': 1, '2002': 1 },
      usernames: { 'nelly[dot]dev': '1001', carol: '2002' },
    });
    assert.deepEqual(s.publicState, {});
  });

  test('a private list is used when hasPrivateList is true, and is not shown to the public', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      social('discord', { hasPrivateList: true }, { usernames: ['CAROL'] }),
    ]);
    assert.deepEqual(await complete(claimId, carol), { success: true, error: '' });
    assert.deepEqual(await complete(claimId, alice), {
      success: false,
      error: 'User not in list of whitelisted users.',
    });
    const pub = await getClaim(t, claimId);
    assert.deepEqual(pub.plugins.find((p: { instanceId: string }) => p.instanceId === 's').privateParams ?? {}, {});
  });

  test('an unlinked account stops passing', async () => {
    const dave = await signIn(t);
    await link(t, mock, dave, 'github', { id: '77', username: 'dave' });
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), social('github', {})]);
    assert.equal((await attempt(t, 'simulate', claimId, dave.platformAddress)).statusCode, 200);
    await t.request('DELETE', '/api/v0/connections/github', { token: dave.accessToken });
    assert.equal(
      (await attempt(t, 'simulate', claimId, dave.platformAddress)).json().errorMessage,
      'Invalid details. Could not get user.',
    );
  });

  test('params are validated with 400s naming the field', async () => {
    const bad = async (pub: Record<string, unknown>, priv: Record<string, unknown>, re: RegExp) => {
      const res = await t.request('POST', '/api/v0/claims', {
        token: owner.accessToken,
        body: {
          claims: [
            { claimId: `v${Math.random().toString(36).slice(2)}`, plugins: [numUses(1), social('google', pub, priv)] },
          ],
        },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().errorMessage, re);
    };
    await bad(
      { users: ['a'], hasPrivateList: true },
      { usernames: ['b'] },
      /publicParams\.users must be empty when hasPrivateList is true/,
    );
    await bad({}, { usernames: ['b'] }, /privateParams\.usernames needs publicParams\.hasPrivateList: true/);
    await bad({ users: 'alice' }, {}, /publicParams\.users must be an array of usernames/);
    await bad({ users: ['a[dot]b'] }, {}, /Invalid reserved sequence in ID \(\[dot\]\)/);
    await bad({ maxUsesPerUser: -1 }, {}, /maxUsesPerUser must be an integer/);
    await bad({ extra: 1 }, {}, /unknown field "extra"/);
    // stateful: needs numUses
    const res = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: 'nouses1', plugins: [social('google', {})] }] },
    });
    assert.equal(res.statusCode, 400);
  });

  const put = (claimId: string, plugins: unknown[]) =>
    t.request('PUT', '/api/v0/claims', { token: owner.accessToken, body: { claims: [{ claimId, plugins }] } });
  async function putRefused(claimId: string, plugins: unknown[], errorMessage: string) {
    const res = await put(claimId, plugins);
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(res.json(), { errorMessage });
  }

  test('newState sets the per-account counts and the usernames ([dot] read back as dots), and is checked', async () => {
    const plugin = social('discord', { maxUsesPerUser: 1 });
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), plugin]);
    const set = await put(claimId, [
      numUses(10),
      { ...plugin, newState: { ids: { '1001': 1, '9[dot]9': 0 }, usernames: { 'nelly[dot]dev': '1001' } } },
    ]);
    assert.equal(set.statusCode, 200, set.body);
    // the account 1001 has used its one claim: neither of its wallets may claim; carol's account may
    assert.deepEqual(await complete(claimId, alice), { success: false, error: 'User already exceeded max uses' });
    assert.deepEqual(await complete(claimId, bob), { success: false, error: 'User already exceeded max uses' });
    assert.deepEqual(await complete(claimId, carol), { success: true, error: '' });
    const doc = await getClaim(t, claimId, 'privateStatesToFetch=s', owner.accessToken);
    assert.deepEqual(doc.plugins.find((p: { instanceId: string }) => p.instanceId === 's').privateState, {
      ids: { '1001': 1, '9[dot]9': 0, '2002': 1 },
      usernames: { 'nelly[dot]dev': '1001', carol: '2002' },
    });

    const N = 'claims[0].plugins[1].newState';
    const with_ = (newState: unknown) => [numUses(10), { ...plugin, newState }];
    await putRefused(claimId, with_({ ids: {}, other: 1 }), `${N} has unknown field "other" (allowed: ids, usernames)`);
    await putRefused(claimId, with_({ ids: { '1001': -1 } }), `${N}.ids.1001 must be a non-negative integer`);
    await putRefused(claimId, with_({ ids: { '1001': 1.5 } }), `${N}.ids.1001 must be a non-negative integer`);
    await putRefused(claimId, with_({ ids: { '1001': '1' } }), `${N}.ids.1001 must be a non-negative integer`);
    await putRefused(
      claimId,
      with_({ usernames: { carol: 2002 } }),
      `${N}.usernames.carol must be an account id string`,
    );
    await putRefused(claimId, with_({ ids: [] }), `${N}.ids must be an object`);
    await putRefused(claimId, with_({ usernames: [] }), `${N}.usernames must be an object`);
    await putRefused(claimId, with_({ ids: 5 }), `${N}.ids must be an object`);
    // null reads as empty, like an absent field
    assert.equal((await put(claimId, with_({ ids: null, usernames: {} }))).statusCode, 200);
    await putRefused(claimId, with_('x'), 'body.claims.0.plugins.1.newState must be object');
    // an empty newState clears the state: the account may claim again
    assert.equal((await put(claimId, with_({}))).statusCode, 200);
    assert.deepEqual(await complete(claimId, alice), { success: true, error: '' });
  });

  test('newState keys name account ids with dots written [dot]', async () => {
    const frank = await signIn(t);
    await link(t, mock, frank, 'twitch', { id: '4.5', username: 'frank' });
    const plugin = social('twitch', { maxUsesPerUser: 1 });
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), plugin]);
    assert.equal(
      (await put(claimId, [numUses(10), { ...plugin, newState: { ids: { '4[dot]5': 1 } } }])).statusCode,
      200,
    );
    assert.deepEqual(await complete(claimId, frank), { success: false, error: 'User already exceeded max uses' });
  });

  test('maxUsesPerUser 0, or absent, puts no limit on one account', async () => {
    for (const pub of [{ maxUsesPerUser: 0 }, {}]) {
      const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), social('discord', pub)]);
      assert.deepEqual(await complete(claimId, alice), { success: true, error: '' });
      assert.deepEqual(await complete(claimId, bob), { success: true, error: '' });
    }
    // the bound: 2 uses allow a second claim of the same account, not a third
    const two = await claimWithPlugins(t, owner.accessToken, [numUses(10), social('discord', { maxUsesPerUser: 2 })]);
    assert.deepEqual(await complete(two, alice), { success: true, error: '' });
    assert.deepEqual(await complete(two, bob), { success: true, error: '' });
    assert.deepEqual(await complete(two, alice), { success: false, error: 'User already exceeded max uses' });
  });

  test('list entries are trimmed, and every entry is checked', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      social('discord', { users: ['  Nelly.Dev  '] }),
    ]);
    assert.deepEqual(
      (await getClaim(t, claimId)).plugins.find((p: { instanceId: string }) => p.instanceId === 's').publicParams,
      { users: ['Nelly.Dev'] },
    );
    assert.deepEqual(await complete(claimId, alice), { success: true, error: '' });
    const create = (pub: Record<string, unknown>, priv: Record<string, unknown> = {}) =>
      t.request('POST', '/api/v0/claims', {
        token: owner.accessToken,
        body: {
          claims: [
            { claimId: `v${Math.random().toString(36).slice(2)}`, plugins: [numUses(1), social('twitch', pub, priv)] },
          ],
        },
      });
    const refused = async (pub: Record<string, unknown>, priv: Record<string, unknown>, errorMessage: string) => {
      const res = await create(pub, priv);
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), { errorMessage });
    };
    const P = 'claims[0].plugins[1].publicParams';
    await refused({ users: ['ok', ' '] }, {}, `${P}.users[1] must be a non-empty string of at most 320 characters`);
    await refused({ users: ['ok', 7] }, {}, `${P}.users[1] must be a non-empty string of at most 320 characters`);
    await refused(
      { users: ['x'.repeat(321)] },
      {},
      `${P}.users[0] must be a non-empty string of at most 320 characters`,
    );
    assert.equal((await create({ users: ['x'.repeat(320)] })).statusCode, 200);
    await refused(
      { hasPrivateList: true },
      { usernames: ['ok', ''] },
      'claims[0].plugins[1].privateParams.usernames[1] must be a non-empty string of at most 320 characters',
    );
    await refused({ hasPrivateList: 'yes' }, {}, `${P}.hasPrivateList must be a boolean`);
    await refused(
      {},
      { other: 1 },
      'claims[0].plugins[1].privateParams has unknown field "other" (allowed: usernames)',
    );
    await refused({ maxUsesPerUser: 2_147_483_648 }, {}, `${P}.maxUsesPerUser must be an integer from 0 to 2147483647`);
  });

  test('a provider account whose username or id holds the reserved [dot] sequence cannot claim', async () => {
    const eve = await signIn(t);
    await link(t, mock, eve, 'google', { id: '31', username: 'eve[dot]x' });
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), social('google', {})]);
    const r = await attempt(t, 'simulate', claimId, eve.platformAddress);
    assert.deepEqual(r.json(), { errorMessage: 'Invalid reserved sequence in ID ([dot])' });
    // and an account id holding it
    const gil = await signIn(t);
    await link(t, mock, gil, 'google', { id: '8[dot]8', username: 'gil' });
    assert.deepEqual((await attempt(t, 'simulate', claimId, gil.platformAddress)).json(), {
      errorMessage: 'Invalid reserved sequence in ID ([dot])',
    });
  });

  test('lists hold at most 100,000 names; ids with letters match case-insensitively; two instances may share a claim; inputs are refused', async () => {
    const create = (users: string[]) =>
      t.request('POST', '/api/v0/claims', {
        token: owner.accessToken,
        body: {
          claims: [
            { claimId: `l${Math.random().toString(36).slice(2)}`, plugins: [numUses(1), social('discord', { users })] },
          ],
        },
      });
    const over = await create(Array.from({ length: 100_001 }, () => 'a'));
    assert.deepEqual(over.json(), {
      errorMessage: 'claims[0].plugins[1].publicParams.users must hold at most 100000 usernames',
    });
    assert.equal((await create(Array.from({ length: 100_000 }, () => 'a'))).statusCode, 200);

    const zed = await signIn(t);
    await link(t, mock, zed, 'twitch', { id: 'Zed7', username: 'zed' });
    const claimId = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      social('twitch', { users: ['ZED7'] }),
      social('discord', {}, {}, 'd'),
    ]);
    // zed has no discord account: the second instance fails with its own text, the first passes
    assert.deepEqual((await attempt(t, 'simulate', claimId, zed.platformAddress)).json(), {
      errorMessage: 'Invalid details. Could not get user.',
    });
    const twitchOnly = await claimWithPlugins(t, owner.accessToken, [
      numUses(10),
      social('twitch', { users: ['ZED7'] }),
      social('twitch', {}, {}, 't2'),
    ]);
    assert.equal((await attempt(t, 'simulate', twitchOnly, zed.platformAddress)).statusCode, 200);
    const input = await attempt(t, 'simulate', twitchOnly, zed.platformAddress, { s: { x: 1 } });
    assert.deepEqual(input.json(), { errorMessage: 'body.s has unknown field "x"' });
  });
});
