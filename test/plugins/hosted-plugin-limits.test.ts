// Edges of the hosted plugins that hosted-plugins.test.ts and must-own-badges.test.ts leave unasserted:
// the exact 400 texts of every invalid param (min-badge, url-clicker, custom-instructions,
// satisfies-claim, must-own-badges), the limits met exactly and one past, which plugins may stand
// alone on an on-demand claim or appear twice, the params a claim shows, what the display-only
// plugins accept as input, min-badge's failure window ending exactly at 10 s (a second app, so no
// chain-client cache is in the way), a service without a chain, a target deleted after the fact,
// what counts toward a satisfies-claim chain's length (ids with `_`, several ways down, a deleted
// link, claims above the changed one, a custom plugin's look-alike param), read-model collections
// without default balances, and a must-own-badges claim completed by the queue.
import { describe, test, before, after } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.ts';
import { addressOf, bal, balanceStore, collectionDoc, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { attempt, completeAndWait, getClaim, manager, newClaimId, numUses, randomAddress } from '../claims/helpers.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { createPlugin } from '../helpers/plugins.ts';
import { importSnapshot, parseSnapshot } from '../../src/chain/import.ts';
import type { ManualClock } from '../../src/shared/clock.ts';

const plugin = (
  pluginId: string,
  publicParams: Record<string, unknown> = {},
  instanceId = 'h',
  privateParams: Record<string, unknown> = {},
) => ({ pluginId, instanceId, publicParams, privateParams });
const WHOLE = 1_000_000_000n;
const NOW = 1_800_000_000_000;
const P1 = 'claims[0].plugins[1]';
const range = (start: number | string, end: number | string = start) => ({ start: String(start), end: String(end) });
const asset = (collectionId: string, ids: [number, number], amounts: [number, number]) => ({
  chain: 'BitBadges',
  collectionId,
  assetIds: [range(ids[0], ids[1])],
  ownershipTimes: [],
  mustOwnAmounts: range(amounts[0], amounts[1]),
});
const mob = (collectionId: string, amounts: [number, number] = [1, 1], instanceId = 'own') =>
  plugin('must-own-badges', { ownershipRequirements: { assets: [asset(collectionId, [1, 1], amounts)] } }, instanceId);
const err = (errorMessage: string) => ({ errorMessage });

describe('hosted plugin edges', () => {
  let chain: FakeChain;
  let owner: SignedIn;
  let bareOwner: SignedIn;
  before(async () => {
    chain = await startFakeChain();
  });
  const t = useApp({ clock: NOW, env: () => ({ CHAIN_REST_URL: chain.url, CHAIN_TIMEOUT_MS: '1000' }) });
  const bare = useApp({ clock: NOW }); // no chain configured
  before(async () => {
    owner = await manager(t);
    bareOwner = await manager(bare);
  });
  after(() => chain.close());

  /** Creates a claim of numUses plus these plugins; returns status and body. */
  async function create(plugins: unknown[], app: TestApp = t, token = owner.accessToken, claimId = newClaimId()) {
    const res = await app.request('POST', '/api/v0/claims', { token, body: { claims: [{ claimId, plugins }] } });
    return { status: res.statusCode, body: res.json() };
  }
  async function refused(plugins: unknown[], errorMessage: string, app: TestApp = t, token = owner.accessToken) {
    assert.deepEqual(await create(plugins, app, token), { status: 400, body: err(errorMessage) });
  }
  async function accepted(plugins: unknown[], app: TestApp = t, token = owner.accessToken): Promise<string> {
    const claimId = newClaimId();
    assert.deepEqual(await create(plugins, app, token, claimId), { status: 200, body: {} });
    return claimId;
  }
  async function simulate(claimId: string, address: string, body: Record<string, unknown> = {}, app: TestApp = t) {
    const r = await attempt(app, 'simulate', claimId, address, body);
    return { status: r.statusCode, body: r.json() };
  }
  const passes = { status: 200, body: { claimAttemptId: '0'.repeat(32) } };
  const fails = (errorMessage: string) => ({ status: 400, body: err(errorMessage) });
  async function successCount(claimId: string, address: string, app: TestApp = t): Promise<number> {
    const r = await app.request('GET', `/api/v0/claims/success/${claimId}/${address}`);
    assert.equal(r.statusCode, 200, r.body);
    return r.json().successCount;
  }

  test('min-badge, must-own-badges, satisfies-claim and username-set may stand alone on an on-demand claim, twice', async () => {
    const target = await accepted([numUses(1)]);
    const who = randomAddress();
    chain.nativeBalances.set(who, (2n * WHOLE).toString());
    const claimId = await accepted([
      plugin('min-badge', { minBalance: 1 }, 'mb1'),
      plugin('min-badge', { minBalance: 2 }, 'mb2'),
      mob('1', [0, 0], 'own1'),
      mob('2', [0, 0], 'own2'),
      plugin('satisfies-claim', { claimIdToCheck: target }, 'sc1'),
      plugin('satisfies-claim', { claimIdToCheck: target }, 'sc2'),
      plugin('username-set', {}, 'us1'),
      plugin('username-set', {}, 'us2'),
    ]);
    assert.equal(await successCount(claimId, who), 0);
    // the display-only plugins need the claimer's interaction: not alone, but twice with numUses
    await refused(
      [plugin('url-clicker', { url: 'https://example.com' }, 'link')],
      'claims[0]: numUses plugin is required: plugin "link" (url-clicker) is stateful or needs user input or a session; a claim without numUses is an on-demand claim and takes only stateless plugins without inputs',
    );
    const twice = await accepted([
      numUses(5),
      plugin('url-clicker', { url: 'https://example.com/a' }, 'a'),
      plugin('url-clicker', { url: 'http://example.com/b' }, 'b'),
      plugin('custom-instructions', { instructions: 'one' }, 'c'),
      plugin('custom-instructions', { instructions: 'two' }, 'd'),
    ]);
    assert.deepEqual(
      (await getClaim(t, twice)).plugins.map((p: { publicParams: unknown }) => p.publicParams),
      [
        { maxUses: 5 },
        { url: 'https://example.com/a' },
        { url: 'http://example.com/b' },
        { instructions: 'one' },
        { instructions: 'two' },
      ],
    );
  });

  test('min-badge: params are a non-negative safe integer, 0 included; exact texts', async () => {
    const text = `${P1}.publicParams.minBalance must be a non-negative integer number of whole units`;
    for (const minBalance of [-1, 1.5, 2 ** 53, '5', null])
      await refused([numUses(1), plugin('min-badge', { minBalance })], text);
    await refused([numUses(1), plugin('min-badge', {})], text);
    await refused(
      [numUses(1), plugin('min-badge', { minBalance: 1 }, 'h', { x: 1 })],
      `${P1}.privateParams has unknown field "x" (this plugin takes no params here)`,
    );
    await refused(
      [numUses(1), plugin('min-badge', { minBalance: 1, x: 1 })],
      `${P1}.publicParams has unknown field "x" (allowed: minBalance, combineLinkedWallets)`,
    );
    const zero = await accepted([numUses(5), plugin('min-badge', { minBalance: 0 })]);
    const big = await accepted([numUses(5), plugin('min-badge', { minBalance: 2 ** 53 - 1 })]);
    assert.deepEqual((await getClaim(t, zero)).plugins[1].publicParams, { minBalance: 0 });
    const empty = randomAddress();
    chain.nativeBalances.set(empty, '0');
    assert.deepEqual(await simulate(zero, empty), passes);
    assert.deepEqual(await simulate(big, empty), fails('Insufficient balance'));
  });

  test('min-badge: a failure is kept for less than 10 s: read again at exactly 10 s', async () => {
    const who = randomAddress();
    chain.nativeBalances.set(who, '0');
    // a service of its own, with a clock of its own: its kept results are its own (per deployment)
    const other = await startApp({ manualClock: true, env: { CHAIN_REST_URL: chain.url, CHAIN_TIMEOUT_MS: '1000' } });
    try {
      const clock = other.clock as ManualClock;
      clock.set(NOW);
      const otherOwner = await manager(other);
      const same = await accepted([numUses(5), plugin('min-badge', { minBalance: 3 })], other, otherOwner.accessToken);
      assert.deepEqual(await simulate(same, who, {}, other), fails('Insufficient balance'));
      chain.nativeBalances.set(who, (3n * WHOLE).toString());
      clock.set(NOW + 9_999);
      assert.deepEqual(await simulate(same, who, {}, other), fails('Insufficient balance'), 'kept until 10 s');
      clock.set(NOW + 10_000);
      assert.deepEqual(await simulate(same, who, {}, other), passes, 'read again at 10 s');
    } finally {
      await other.close();
    }
  });

  test('a service without a chain: min-badge and an unindexed must-own-badges collection fail with a clear text', async () => {
    const mbOnly = await accepted([numUses(5), plugin('min-badge', { minBalance: 0 })], bare, bareOwner.accessToken);
    assert.deepEqual(
      await simulate(mbOnly, randomAddress(), {}, bare),
      fails('The chain is not configured on this service, so balances cannot be checked.'),
    );
    const mobOnly = await accepted([numUses(5), mob('9', [0, 0])], bare, bareOwner.accessToken);
    assert.deepEqual(
      await simulate(mobOnly, randomAddress(), {}, bare),
      fails('Collection 9 is not indexed by this service and no chain is configured to read it from.'),
    );
  });

  test('must-own-badges: read-model collections without default balances, and with them; params texts', async () => {
    const A = addressOf(1);
    const C = addressOf(3);
    const { defaultBalances: _, ...noDefaults } = collectionDoc('8', A);
    await importSnapshot(
      bare.ctx.db,
      parseSnapshot({
        height: '1',
        blockTime: '2026-07-13T12:00:00Z',
        collections: [noDefaults, collectionDoc('6', A, { defaultBalances: balanceStore([bal(2, 1)]) })],
        balances: [{ collectionId: '8', address: A, balance: balanceStore([bal(1, 1)]) }],
      }),
      NOW,
    );
    const own8 = await accepted([numUses(5), mob('8')], bare, bareOwner.accessToken);
    const not8 = await accepted([numUses(5), mob('8', [0, 0])], bare, bareOwner.accessToken);
    const own6 = await accepted([numUses(5), mob('6', [2, 2])], bare, bareOwner.accessToken);
    assert.deepEqual(await simulate(own8, A, {}, bare), passes);
    assert.deepEqual(
      await simulate(own8, C, {}, bare),
      fails('Address does not own enough of IDs 1 in collection 8 to meet minimum balance requirement of 1'),
    );
    assert.deepEqual(await simulate(not8, C, {}, bare), passes);
    assert.deepEqual(await simulate(own6, C, {}, bare), passes, 'the default balances of an untouched address');

    await refused([numUses(1), plugin('must-own-badges', {})], `${P1}.publicParams.ownershipRequirements is required`);
    await refused(
      [numUses(1), plugin('must-own-badges', { ownershipRequirements: { assets: [] } })],
      `${P1}.publicParams.ownershipRequirements.assets must be a non-empty array`,
    );
    await refused(
      [numUses(1), { ...mob('8'), privateParams: { x: 1 } }],
      `${P1}.privateParams has unknown field "x" (this plugin takes no params here)`,
    );
  });

  test('must-own-badges: a claim completed through the queue reads the read model inside its transaction', async () => {
    const A = addressOf(1);
    const C = addressOf(3);
    const claimId = await accepted([numUses(5), mob('8')], bare, bareOwner.accessToken);
    const ok = await completeAndWait(bare, claimId, A);
    assert.equal(ok.success, true, ok.error);
    const no = await attempt(bare, 'complete', claimId, C);
    assert.deepEqual(
      { status: no.statusCode, body: no.json() },
      fails('Address does not own enough of IDs 1 in collection 8 to meet minimum balance requirement of 1'),
    );
  });

  test('url-clicker: an http(s) URL of at most 4096 characters; exact texts', async () => {
    const text = `${P1}.publicParams.url must be an http(s) URL of at most 4096 characters`;
    const long = (n: number) => `https://example.com/${'a'.repeat(n - 'https://example.com/'.length)}`;
    for (const url of [['https://example.com'], 5, long(4097), 'ftp://example.com', 'not a url', ''])
      await refused([numUses(1), plugin('url-clicker', { url }, 'link')], text);
    await refused([numUses(1), plugin('url-clicker', {}, 'link')], text);
    await refused(
      [numUses(1), plugin('url-clicker', { url: 'https://example.com', x: 1 }, 'link')],
      `${P1}.publicParams has unknown field "x" (allowed: url)`,
    );
    await refused(
      [numUses(1), plugin('url-clicker', { url: 'https://example.com' }, 'link', { x: 1 })],
      `${P1}.privateParams has unknown field "x" (this plugin takes no params here)`,
    );
    const claimId = await accepted([numUses(1), plugin('url-clicker', { url: long(4096) }, 'link')]);
    assert.deepEqual((await getClaim(t, claimId)).plugins[1].publicParams, { url: long(4096) });
    const http = await accepted([numUses(1), plugin('url-clicker', { url: 'http://example.com/x' }, 'link')]);
    assert.deepEqual((await getClaim(t, http)).plugins[1].publicParams, { url: 'http://example.com/x' });
  });

  test('custom-instructions: a non-blank string of at most 10000 characters, kept as given; exact texts', async () => {
    const text = `${P1}.publicParams.instructions must be a non-empty string of at most 10000 characters`;
    for (const instructions of [5, '', '   ', '\n\t', 'x'.repeat(10_001), ['a']])
      await refused([numUses(1), plugin('custom-instructions', { instructions }, 'howto')], text);
    await refused(
      [numUses(1), plugin('custom-instructions', { instructions: 'a' }, 'howto', { x: 1 })],
      `${P1}.privateParams has unknown field "x" (this plugin takes no params here)`,
    );
    const max = 'x'.repeat(10_000);
    const claimId = await accepted([numUses(1), plugin('custom-instructions', { instructions: max }, 'howto')]);
    const padded = await accepted([numUses(1), plugin('custom-instructions', { instructions: '  Do it.  ' }, 'howto')]);
    assert.deepEqual((await getClaim(t, claimId)).plugins[1].publicParams, { instructions: max });
    assert.deepEqual((await getClaim(t, padded)).plugins[1].publicParams, { instructions: '  Do it.  ' });
  });

  test('display-only plugins: no input or an empty object passes; any field fails', async () => {
    const claimId = await accepted([
      numUses(10),
      plugin('url-clicker', { url: 'https://example.com' }, 'link'),
      plugin('custom-instructions', { instructions: 'Read.' }, 'howto'),
    ]);
    assert.deepEqual(await simulate(claimId, randomAddress()), passes);
    assert.deepEqual(await simulate(claimId, randomAddress(), { link: {}, howto: {} }), passes);
    assert.deepEqual(
      await simulate(claimId, randomAddress(), { howto: { done: true } }),
      fails('custom-instructions takes no input'),
    );
    assert.deepEqual(
      await simulate(claimId, randomAddress(), { link: { clicked: true } }),
      fails('url-clicker takes no input'),
    );
  });

  test('satisfies-claim: claim id texts; a missing claim deeper in the chain is allowed; a deleted target fails at run time', async () => {
    const text = `${P1}.publicParams.claimIdToCheck must be a claim id (1 to 128 letters, digits, _ or -)`;
    for (const claimIdToCheck of ['a b', 'ab!', '!ab', '', 'x'.repeat(129), 5, null])
      await refused([numUses(1), plugin('satisfies-claim', { claimIdToCheck })], text);
    await refused(
      [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'abc' }, 'h', { x: 1 })],
      `${P1}.privateParams has unknown field "x" (this plugin takes no params here)`,
    );
    await refused(
      [numUses(1), plugin('satisfies-claim', { claimIdToCheck: 'abc', x: 1 })],
      `${P1}.publicParams has unknown field "x" (allowed: claimIdToCheck)`,
    );

    const user = randomAddress();
    const target = await accepted([numUses(5)]);
    const mid = await accepted([numUses(5), plugin('satisfies-claim', { claimIdToCheck: target })]);
    const del = await t.request('DELETE', '/api/v0/claims', { token: owner.accessToken, body: { claimIds: [target] } });
    assert.equal(del.statusCode, 200, del.body);
    assert.deepEqual(await simulate(mid, user), fails(`Claim ${target} to check does not exist.`));
    const top = await accepted([numUses(5), plugin('satisfies-claim', { claimIdToCheck: mid })]);
    assert.deepEqual(await simulate(top, user), fails(`Address has not satisfied claim ${mid}.`));
    await refused(
      [numUses(1), plugin('satisfies-claim', { claimIdToCheck: target })],
      `${P1}.publicParams.claimIdToCheck names claim "${target}", which does not exist`,
    );
  });

  test('satisfies-claim chain length: ids with _, the longest of several ways down, a missing claim counted as a link', async () => {
    const sat = (claimIdToCheck: string, instanceId = 'sc') =>
      plugin('satisfies-claim', { claimIdToCheck }, instanceId);
    const tooLong = (names: string[]) =>
      `${P1}.publicParams.claimIdToCheck makes a satisfies-claim chain longer than 5: ${names.join(' → ')}`;
    const put = async (claimId: string, plugins: unknown[]) => {
      const res = await t.request('PUT', '/api/v0/claims', {
        token: owner.accessToken,
        body: { claims: [{ claimId, plugins }] },
      });
      return { status: res.statusCode, body: res.json() };
    };
    // u_1 ← u_2 ← … ← u_5: the claims that check u_1 are found although "_" is a LIKE wildcard
    const u = Array.from({ length: 5 }, (_, i) => newClaimId(`u_${i + 1}_`));
    assert.equal((await create([numUses(1)], t, owner.accessToken, u[0])).status, 200);
    for (let i = 1; i < 5; i++)
      assert.equal((await create([numUses(1), sat(u[i - 1])], t, owner.accessToken, u[i])).status, 200);
    const v1 = await accepted([numUses(1)]);
    assert.deepEqual(await put(u[0], [numUses(1), sat(v1)]), {
      status: 400,
      body: err(tooLong([u[4], u[3], u[2], u[1], u[0], v1])),
    });

    // several satisfies-claim instances: the longest way down counts, whichever instance it is
    const w = [await accepted([numUses(1)])];
    for (let i = 1; i < 4; i++) w.push(await accepted([numUses(1), sat(w[i - 1])]));
    const short = await accepted([numUses(1)]);
    const both = await accepted([numUses(1), sat(w[3], 'long'), sat(short, 'short')]);
    const top = newClaimId();
    assert.deepEqual(await create([numUses(1), sat(both)], t, owner.accessToken, top), {
      status: 400,
      body: err(tooLong([top, both, w[3], w[2], w[1], w[0]])),
    });

    // a claim deleted under a chain still counts as its last link (its id may be created again)
    const m = [await accepted([numUses(1)])];
    for (let i = 1; i < 5; i++) m.push(await accepted([numUses(1), sat(m[i - 1])]));
    assert.equal(
      (await t.request('DELETE', '/api/v0/claims', { token: owner.accessToken, body: { claimIds: [m[0]] } }))
        .statusCode,
      200,
    );
    const onTop = newClaimId();
    assert.deepEqual(await create([numUses(1), sat(m[4])], t, owner.accessToken, onTop), {
      status: 400,
      body: err(tooLong([onTop, m[4], m[3], m[2], m[1], m[0]])),
    });

    // the same two rules when the claims above the changed one make the chain too long
    // (z2 → z1 → target is checked against what target would check)
    const target = await accepted([numUses(1)]);
    const z1 = await accepted([numUses(1), sat(target)]);
    const z2 = await accepted([numUses(1), sat(z1)]);
    const x0 = await accepted([numUses(1)]);
    const x1 = await accepted([numUses(1), sat(x0)]);
    const twoWays = await accepted([numUses(1), sat(x1, 'long'), sat(short, 'short')]);
    assert.deepEqual(await put(target, [numUses(1), sat(twoWays)]), {
      status: 400,
      body: err(tooLong([z2, z1, target, twoWays, x1, x0])),
    });
    const n = [await accepted([numUses(1)])];
    for (let i = 1; i < 3; i++) n.push(await accepted([numUses(1), sat(n[i - 1])]));
    assert.equal(
      (await t.request('DELETE', '/api/v0/claims', { token: owner.accessToken, body: { claimIds: [n[0]] } }))
        .statusCode,
      200,
    );
    assert.deepEqual(await put(target, [numUses(1), sat(n[2])]), {
      status: 400,
      body: err(tooLong([z2, z1, target, n[2], n[1], n[0]])),
    });
    // one claim shorter fits
    assert.deepEqual(await put(target, [numUses(1), sat(n[1])]), { status: 200, body: {} });
  });

  test('satisfies-claim chain length: a custom plugin with a claimIdToCheck param does not count as a link', async () => {
    const creator = await signIn(t, { scopes: ['manageClaims', 'managePlugins'] });
    const pluginId = await createPlugin(t, creator.accessToken, 'https://plugin.example/hook', {
      publicParamsSchema: [{ key: 'claimIdToCheck', label: 'claim', type: 'string' }],
    });
    const sat = (claimIdToCheck: string) => plugin('satisfies-claim', { claimIdToCheck }, 'sc');
    const a = [await accepted([numUses(1)])];
    for (let i = 1; i < 5; i++) a.push(await accepted([numUses(1), sat(a[i - 1])]));
    // five claims; a sixth that names a[4] only in a custom plugin's params does not check it, even
    // beside a satisfies-claim that checks another claim
    const custom = {
      pluginId,
      instanceId: 'cp',
      version: '1',
      publicParams: { claimIdToCheck: a[4] },
      privateParams: {},
    };
    const other = await accepted([numUses(1)]);
    assert.deepEqual(await create([numUses(1), custom, sat(other)], t, creator.accessToken), { status: 200, body: {} });
    const res = await t.request('PUT', '/api/v0/claims', {
      token: owner.accessToken,
      body: { claims: [{ claimId: a[4], plugins: [numUses(2), sat(a[3])] }] },
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  test('satisfies-claim at run time: an on-demand chain of 5 claims passes; one of 6 that slipped past the save-time check fails', async () => {
    // Creating and updating refuse chains longer than 5 claims. Two concurrent updates could still
    // join two chains; that is simulated by rewriting a stored claim, and the run-time guard holds.
    const leaf = () => plugin('min-badge', { minBalance: 0 }, 'mb');
    const sat = (claimIdToCheck: string) => plugin('satisfies-claim', { claimIdToCheck }, 'sc');
    async function chainOf(claims: number): Promise<string[]> {
      const ids = Array.from({ length: claims }, (_, i) => newClaimId(`c${claims}t${i}`));
      const joinAt = Math.min(3, claims - 1); // ids[joinAt - 1] first checks a leaf, then ids[joinAt]
      for (let i = claims - 1; i >= 1; i--) {
        const plugins = i === claims - 1 || i === joinAt - 1 ? [leaf()] : [sat(ids[i + 1])];
        assert.deepEqual(await create(plugins, t, owner.accessToken, ids[i]), { status: 200, body: {} });
      }
      assert.deepEqual(await create([numUses(5), sat(ids[1])], t, owner.accessToken, ids[0]), {
        status: 200,
        body: {},
      });
      const template = await t.ctx.db
        .selectFrom('claims')
        .select('plugins')
        .where('claim_id', '=', ids[1])
        .executeTakeFirstOrThrow();
      await t.ctx.db
        .updateTable('claims')
        .set((eb) => ({ plugins: template.plugins.replace(ids[2], ids[joinAt]), version: eb('version', '+', 1) }))
        .where('claim_id', '=', ids[joinAt - 1])
        .execute();
      return ids;
    }
    const who = randomAddress();
    const [five] = await chainOf(5);
    assert.deepEqual(await simulate(five, who), passes);
    const [six, first] = await chainOf(6);
    assert.deepEqual(await simulate(six, who), fails(`Address has not satisfied claim ${first}.`));
  });
});
