// What each core plugin accepts at claim creation, to the exact message: its flags as docs/plugins.md's
// table gives them (duplicates, on-demand use), its known fields, and every bound on both sides.
// Written against the mutants `npm run mutate -- src/plugins` left alive (docs/contributing.md).
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { newClaimId, numUses, randomAddress, ALL_SCOPES } from '../claims/helpers.ts';

const P = 'claims[0].plugins[1]';
const minimal: Record<string, Record<string, unknown>> = {
  numUses: { publicParams: { maxUses: 1 } },
  codes: { publicParams: { numCodes: 1 } },
  password: { privateParams: { password: 'pw' } },
  transferTimes: { publicParams: { transferTimes: [{ start: '1', end: '2' }] } },
  initiatedBy: {},
  whitelist: { publicParams: { list: { addresses: [] } } },
  halt: {},
  anonymous: {},
};
const instance = (pluginId: string, instanceId: string, params = minimal[pluginId]) => ({
  pluginId,
  instanceId,
  ...params,
});

describe('core plugin params', () => {
  const t = useApp({ signedIn: ALL_SCOPES });

  const create = (plugins: unknown[]) =>
    t.request('POST', '/api/v0/claims', {
      token: t.session.accessToken,
      body: { claims: [{ claimId: newClaimId(), plugins }] },
    });
  async function accepted(plugins: unknown[]) {
    const res = await create(plugins);
    assert.equal(res.statusCode, 200, `${JSON.stringify(plugins).slice(0, 300)}: ${res.body}`);
  }
  async function refused(plugins: unknown[], errorMessage: string) {
    const res = await create(plugins);
    assert.equal(res.statusCode, 400, `${JSON.stringify(plugins).slice(0, 300)}: ${res.body}`);
    assert.deepEqual(res.json(), { errorMessage });
  }
  /** The plugin as the second instance, after a numUses. */
  const second = (pluginId: string, params: Record<string, unknown>) => [
    numUses(1, 'n'),
    { pluginId, instanceId: 'x', ...params },
  ];

  test('duplicates: allowed for all but numUses and anonymous (docs/plugins.md)', async () => {
    for (const id of Object.keys(minimal)) {
      const plugins =
        id === 'numUses'
          ? [instance(id, 'a'), instance(id, 'b')]
          : [numUses(1, 'n'), instance(id, 'a'), instance(id, 'b')];
      if (id === 'numUses' || id === 'anonymous')
        await refused(
          plugins,
          `claims[0].plugins[${id === 'numUses' ? 1 : 2}]: duplicate plugins are not allowed for type: ${id}`,
        );
      else await accepted(plugins);
    }
  });

  test('on-demand claims (no numUses) take only stateless plugins without input or session', async () => {
    for (const id of ['transferTimes', 'halt', 'anonymous']) await accepted([instance(id, 'a')]);
    for (const id of ['codes', 'password', 'initiatedBy', 'whitelist']) {
      await refused(
        [instance(id, 'a')],
        `claims[0]: numUses plugin is required: plugin "a" (${id}) is stateful or needs user input or a session; a claim without numUses is an on-demand claim and takes only stateless plugins without inputs`,
      );
    }
  });

  test('unknown fields are refused with the allowed list, in public and private params', async () => {
    const allowed: Record<string, [string, string]> = {
      codes: ['numCodes, hideCurrentState', 'codes, seedCode'],
      password: ['', 'password'],
      transferTimes: ['transferTimes', ''],
      initiatedBy: ['', ''],
      whitelist: [
        'listId, list, maxUsesPerAddress, hasPrivateList',
        'useDynamicStore, dynamicDataId, dataSecret, listId, list',
      ],
      halt: ['', ''],
      anonymous: ['', ''],
    };
    const why = (list: string) => (list ? `(allowed: ${list})` : '(this plugin takes no params here)');
    for (const [id, [pub, priv]] of Object.entries(allowed)) {
      const base = minimal[id]!;
      await refused(
        second(id, { ...base, publicParams: { ...(base.publicParams as object), zz: 1 } }),
        `${P}.publicParams has unknown field "zz" ${why(pub)}`,
      );
      await refused(
        second(id, { ...base, privateParams: { ...(base.privateParams as object), zz: 1 } }),
        `${P}.privateParams has unknown field "zz" ${why(priv)}`,
      );
    }
    await refused(
      [instance('numUses', 'n', { publicParams: { maxUses: 1, zz: 1 } })],
      'claims[0].plugins[0].publicParams has unknown field "zz" (allowed: maxUses, hideCurrentState, displayAsUnlimited)',
    );
    await refused(
      [instance('numUses', 'n', { publicParams: { maxUses: 1 }, privateParams: { zz: 1 } })],
      'claims[0].plugins[0].privateParams has unknown field "zz" (this plugin takes no params here)',
    );
    await refused(
      second('whitelist', { publicParams: { list: { addresses: [], zz: 1 } } }),
      `${P}.publicParams.list has unknown field "zz" (allowed: addresses, whitelist, listId, label, description, uri, customData)`,
    );
  });

  test('params with several problems: the objects and their unknown fields first, then each field in the allowed order (docs/plugins.md)', async () => {
    // every core plugin checks in this one order: codes' missing numCodes waits for its private params
    await refused(
      second('codes', { publicParams: {}, privateParams: { zz: 1 } }),
      `${P}.privateParams has unknown field "zz" (allowed: codes, seedCode)`,
    );
    await refused(
      second('codes', { publicParams: { numCodes: 1, hideCurrentState: 1 }, privateParams: { seedCode: '' } }),
      `${P}.publicParams.hideCurrentState must be a boolean`,
    );
    await refused(
      second('codes', { publicParams: {}, privateParams: { seedCode: '' } }),
      `${P}.publicParams.numCodes is required`,
    );
    await refused(
      second('whitelist', { publicParams: { maxUsesPerAddress: -1, hasPrivateList: 1 }, privateParams: { listId: 2 } }),
      `${P}.publicParams.maxUsesPerAddress must be an integer from 0 to 2147483647`,
    );
    await refused(
      second('whitelist', { publicParams: { hasPrivateList: 1 }, privateParams: { listId: 2 } }),
      `${P}.publicParams.hasPrivateList must be a boolean`,
    );
    await refused(
      second('whitelist', { publicParams: {}, privateParams: { listId: 2, list: { addresses: [] } } }),
      `${P}.privateParams.listId must be a string`,
    );
    await refused(
      second('whitelist', { publicParams: { list: { addresses: [] } }, privateParams: { list: { addresses: [] } } }),
      `${P} must gate on exactly one of publicParams.list, privateParams.list or a dynamic store (privateParams.useDynamicStore with dynamicDataId)`,
    );
  });

  test('numUses bounds and flags', async () => {
    const n = (publicParams: Record<string, unknown>) => [{ pluginId: 'numUses', instanceId: 'n', publicParams }];
    await accepted(n({ maxUses: 0 }));
    await accepted(n({ maxUses: 2_147_483_647, hideCurrentState: true, displayAsUnlimited: false }));
    await refused(
      n({ maxUses: 2_147_483_648 }),
      'claims[0].plugins[0].publicParams.maxUses must be an integer from 0 to 2147483647',
    );
    await refused(
      n({ maxUses: 1.5 }),
      'claims[0].plugins[0].publicParams.maxUses must be an integer from 0 to 2147483647',
    );
    await refused(
      n({ maxUses: '1' }),
      'claims[0].plugins[0].publicParams.maxUses must be an integer from 0 to 2147483647',
    );
    await refused(n({}), 'claims[0].plugins[0].publicParams.maxUses is required');
    await refused(
      n({ maxUses: 1, hideCurrentState: 'yes' }),
      'claims[0].plugins[0].publicParams.hideCurrentState must be a boolean',
    );
    await refused(
      n({ maxUses: 1, displayAsUnlimited: 1 }),
      'claims[0].plugins[0].publicParams.displayAsUnlimited must be a boolean',
    );
  });

  test('password bounds', async () => {
    await accepted(second('password', { privateParams: { password: 'p'.repeat(1024) } }));
    await accepted(second('password', { privateParams: { password: 'p' } }));
    const msg = `${P}.privateParams.password must be a non-empty string of at most 1024 characters`;
    for (const password of ['p'.repeat(1025), '', 7, null])
      await refused(second('password', { privateParams: { password } }), msg);
    await refused(second('password', {}), msg);
  });

  test('codes bounds', async () => {
    const codes = (publicParams: Record<string, unknown>, privateParams: Record<string, unknown> = {}) =>
      second('codes', { publicParams, privateParams });
    await accepted(codes({ numCodes: 10_000_000 }));
    await accepted(codes({ numCodes: 1, hideCurrentState: true }, { seedCode: 's'.repeat(256) }));
    await refused(codes({ numCodes: 0 }), `${P}.publicParams.numCodes must be an integer from 1 to 10000000`);
    await refused(codes({ numCodes: 10_000_001 }), `${P}.publicParams.numCodes must be an integer from 1 to 10000000`);
    await refused(codes({}), `${P}.publicParams.numCodes is required`);
    await refused(codes({ numCodes: 1, hideCurrentState: 0 }), `${P}.publicParams.hideCurrentState must be a boolean`);
    for (const seedCode of ['', 's'.repeat(257), 5])
      await refused(
        codes({ numCodes: 1 }, { seedCode }),
        `${P}.privateParams.seedCode must be a non-empty string of at most 256 characters`,
      );
    await accepted(codes({ numCodes: 2 }, { codes: ['c'.repeat(512), 'd'] }));
    for (const bad of ['', 'c'.repeat(513), 3])
      await refused(
        codes({ numCodes: 2 }, { codes: ['ok', bad] }),
        `${P}.privateParams.codes[1] must be a non-empty string of at most 512 characters`,
      );
    await refused(codes({ numCodes: 2 }, { codes: 'ab' }), `${P}.privateParams.codes must be an array of strings`);
    await refused(codes({ numCodes: 2 }, { codes: ['a', 'a'] }), `${P}.privateParams.codes must not repeat a code`);
    await refused(
      codes({ numCodes: 2 }, { codes: Array.from({ length: 100_001 }, (_, i) => `k${i}`) }),
      `${P}.privateParams.codes must hold at most 100000 codes`,
    );
    // with a seed, a list of another length is fine (the seed wins, the list is dropped)
    await accepted(codes({ numCodes: 3 }, { seedCode: 'seed', codes: ['a'] }));
  });

  test('transferTimes bounds', async () => {
    const tt = (transferTimes: unknown) => second('transferTimes', { publicParams: { transferTimes } });
    const ranges = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ start: String(i * 10), end: String(i * 10 + 5) }));
    await accepted(tt(ranges(1000)));
    await accepted(tt([]));
    await refused(tt(ranges(1001)), `${P}.publicParams.transferTimes must hold at most 1000 ranges`);
    await refused(second('transferTimes', { publicParams: {} }), `${P}.publicParams.transferTimes is required`);
  });

  test('whitelist bounds', async () => {
    const wl = (publicParams: Record<string, unknown>, privateParams: Record<string, unknown> = {}) =>
      second('whitelist', { publicParams, privateParams });
    const list = (extra: Record<string, unknown> = {}) => ({ addresses: [randomAddress()], ...extra });
    await accepted(
      wl({
        list: list({
          listId: 'l'.repeat(1024),
          label: 'l'.repeat(1024),
          description: 'd'.repeat(10_000),
          uri: 'u'.repeat(4096),
          customData: 'c'.repeat(10_000),
        }),
        listId: 'i',
        maxUsesPerAddress: 2_147_483_647,
        hasPrivateList: false,
      }),
    );
    const L = `${P}.publicParams.list`;
    await refused(wl({ list: list({ listId: 'l'.repeat(1025) }) }), `${L}.listId must be at most 1024 characters`);
    await refused(wl({ list: list({ label: 'l'.repeat(1025) }) }), `${L}.label must be at most 1024 characters`);
    await refused(
      wl({ list: list({ description: 'd'.repeat(10_001) }) }),
      `${L}.description must be at most 10000 characters`,
    );
    await refused(wl({ list: list({ uri: 'u'.repeat(4097) }) }), `${L}.uri must be at most 4096 characters`);
    await refused(
      wl({ list: list({ customData: 'c'.repeat(10_001) }) }),
      `${L}.customData must be at most 10000 characters`,
    );
    await refused(wl({ list: list({ label: 5 }) }), `${L}.label must be a string`);
    await refused(wl({ list: list({ whitelist: 'no' }) }), `${L}.whitelist must be a boolean`);
    await refused(wl({ list: { addresses: 'x' } }), `${L}.addresses must be an array of addresses`);
    await refused(
      wl({ list: { addresses: Array(100_001).fill('x') } }),
      `${L}.addresses must hold at most 100000 addresses`,
    );
    await refused(wl({ list: [] }), `${L} must be an object`);
    await refused(
      wl({ list: list(), maxUsesPerAddress: -1 }),
      `${P}.publicParams.maxUsesPerAddress must be an integer from 0 to 2147483647`,
    );
    await refused(wl({ list: list(), hasPrivateList: 1 }), `${P}.publicParams.hasPrivateList must be a boolean`);
    const a = randomAddress();
    await refused(
      wl({ list: { addresses: [a, a] } }),
      `${L}.addresses[1] repeats ${a} (both address forms name one user)`,
    );
    await refused(
      wl({ list: list(), listId: 'l'.repeat(1025) }),
      `${P}.publicParams.listId must be at most 1024 characters`,
    );
    const S = `${P}.privateParams`;
    await refused(
      wl({}, { useDynamicStore: true, dynamicDataId: 'd'.repeat(257) }),
      `${S}.dynamicDataId must be at most 256 characters`,
    );
    await refused(
      wl({}, { useDynamicStore: true, dynamicDataId: 'd', dataSecret: 's'.repeat(1025) }),
      `${S}.dataSecret must be at most 1024 characters`,
    );
    await refused(wl({}, { useDynamicStore: true }), `${S}.dynamicDataId is required when useDynamicStore is true`);
    await refused(wl({}, { useDynamicStore: 'yes' }), `${S}.useDynamicStore must be a boolean`);
    await refused(wl({}, { list: list(), listId: 'l'.repeat(1025) }), `${S}.listId must be at most 1024 characters`);
    await refused(wl({}, { list: { addresses: ['nope'] } }), `${S}.list.addresses[0] is not a valid address: "nope"`);
    const both = `${P} must gate on exactly one of publicParams.list, privateParams.list or a dynamic store (privateParams.useDynamicStore with dynamicDataId)`;
    await refused(wl({ list: list() }, { list: list() }), both);
    await refused(wl({}, { useDynamicStore: false }), both);
    const unknownStore = await create(
      second('whitelist', { privateParams: { useDynamicStore: true, dynamicDataId: 'nosuchstore' } }),
    );
    assert.equal(unknownStore.statusCode, 404, unknownStore.body);
    assert.deepEqual(unknownStore.json(), { errorMessage: 'Dynamic data doc not found: nosuchstore' });
  });
});
