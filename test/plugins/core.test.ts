// The eight core plugins through the public routes: each one's pass, and every error text of
// docs/plugins.md, exactly. Failures are checked on simulate (nothing is written) and, where state
// matters, through complete and the queue.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { signIn } from '../helpers/signin.ts';
import { claimCode } from '../../src/claims/onchain.ts';
import { nullAddress, parseAddress } from '../../src/shared/addresses.ts';
import {
  ALL_SCOPES,
  attempt,
  claimWithPlugins,
  completeAndWait,
  createClaim,
  getClaim,
  newClaimId,
  numUses,
  randomAddress,
  refusedOnBothRoutes,
} from '../claims/helpers.ts';

describe('core plugins', () => {
  // a manager: every scope
  const t = useApp({ clock: 1_700_000_000_000, signedIn: ALL_SCOPES });

  const claimWith = (plugins: unknown[], extra: Record<string, unknown> = {}) =>
    claimWithPlugins(t, t.session.accessToken, plugins, extra);

  const fails = refusedOnBothRoutes(t);

  async function passes(claimId: string, address: string, body: Record<string, unknown> = {}, token?: string) {
    const sim = await attempt(t, 'simulate', claimId, address, body, token);
    assert.equal(sim.statusCode, 200, sim.body);
    assert.equal(sim.json().claimAttemptId, '0'.repeat(32));
    const done = await completeAndWait(t, claimId, address, body, token);
    assert.equal(done.success, true, done.error);
    assert.equal(done.error, '');
    return done;
  }

  test('numUses: passes until maxUses, then "Overall max uses exceeded"', async () => {
    const claimId = await claimWith([numUses(2)]);
    await passes(claimId, randomAddress());
    await passes(claimId, randomAddress());
    await fails(claimId, randomAddress(), {}, 'Overall max uses exceeded');
    const zero = await claimWith([numUses(0)]);
    await fails(zero, randomAddress(), {}, 'Overall max uses exceeded');
  });

  test('codes (server-generated seed): pass, missing, unknown, out of range, used', async () => {
    const claimId = await claimWith([
      numUses(10),
      { pluginId: 'codes', instanceId: 'c1', publicParams: { numCodes: 3 }, privateParams: {} },
    ]);
    const doc = await getClaim(t, claimId, 'fetchPrivateParams=true', t.session.accessToken);
    const seed = doc.plugins[1].privateParams.seedCode as string;
    assert.match(seed, /^[0-9a-f]{64}$/, 'the server generated a 32-byte seed');
    await fails(claimId, randomAddress(), {}, 'Invalid code in body provided.');
    await fails(claimId, randomAddress(), { c1: {} }, 'Invalid code in body provided.');
    await fails(claimId, randomAddress(), { c1: { code: 42 } }, 'Invalid code in body provided.');
    await fails(claimId, randomAddress(), { c1: { code: 'nope' } }, 'Invalid code. Not found in list of codes.');
    await fails(
      claimId,
      randomAddress(),
      { c1: { code: claimCode(seed, 3) } },
      'Invalid code. Not found in list of codes.',
    ); // index >= numCodes
    await fails(
      claimId,
      randomAddress(),
      { c1: { code: claimCode('other seed', 1) } },
      'Invalid code. Not found in list of codes.',
    );
    const done = await passes(claimId, randomAddress(), { c1: { code: claimCode(seed, 1) } });
    assert.ok(done.success);
    await fails(claimId, randomAddress(), { c1: { code: claimCode(seed, 1) } }, 'Code already used.');
    const after = await getClaim(t, claimId);
    assert.deepEqual(after.plugins[1].publicState.usedCodeRanges, [{ start: '1', end: '1' }]);
  });

  test('codes (explicit list): pass, not found, used; codes.length must equal numCodes', async () => {
    const claimId = await claimWith([
      numUses(10),
      {
        pluginId: 'codes',
        instanceId: 'c1',
        publicParams: { numCodes: 2 },
        privateParams: { codes: ['alpha', 'beta'] },
      },
    ]);
    await fails(claimId, randomAddress(), { c1: { code: 'gamma' } }, 'Invalid code. Not found in list of codes.');
    await passes(claimId, randomAddress(), { c1: { code: 'beta' } });
    await fails(claimId, randomAddress(), { c1: { code: 'beta' } }, 'Code already used.');
    const bad = await t.request('POST', '/api/v0/claims', {
      token: t.session.accessToken,
      body: {
        claims: [
          {
            claimId: newClaimId(),
            plugins: [
              numUses(1),
              {
                pluginId: 'codes',
                instanceId: 'c1',
                publicParams: { numCodes: 3 },
                privateParams: { codes: ['a', 'b'] },
              },
            ],
          },
        ],
      },
    });
    assert.equal(bad.statusCode, 400);
    assert.match(
      bad.json().errorMessage,
      /claims\[0\]\.plugins\[1\]\.privateParams\.codes has 2 codes but publicParams\.numCodes is 3/,
    );
  });

  test('password: pass; "Incorrect password." for a wrong or missing one', async () => {
    const claimId = await claimWith([
      numUses(10),
      { pluginId: 'password', instanceId: 'pw', privateParams: { password: 'hunter2' } },
    ]);
    await fails(claimId, randomAddress(), { pw: { password: 'hunter3' } }, 'Incorrect password.');
    await fails(claimId, randomAddress(), { pw: { password: 'hunter' } }, 'Incorrect password.');
    await fails(claimId, randomAddress(), {}, 'Incorrect password.');
    await passes(claimId, randomAddress(), { pw: { password: 'hunter2' } });
  });

  test('transferTimes: passes inside a window only', async () => {
    const now = t.clock.now();
    const claimId = await claimWith([
      numUses(10),
      {
        pluginId: 'transferTimes',
        instanceId: 'tt',
        publicParams: {
          transferTimes: [
            { start: String(now - 1000), end: String(now + 1000) },
            { start: String(now + 5000), end: '18446744073709551615' },
          ],
        },
      },
    ]);
    await passes(claimId, randomAddress());
    t.clock.set(now + 2000);
    await fails(claimId, randomAddress(), {}, 'We are currently outside the approved time window.');
    t.clock.set(now + 5000);
    await passes(claimId, randomAddress());
    t.clock.set(now - 1001);
    await fails(claimId, randomAddress(), {}, 'We are currently outside the approved time window.');
    t.clock.set(now);
  });

  test('initiatedBy: a session of the claiming address with completeClaims', async () => {
    const claimId = await claimWith([numUses(10), { pluginId: 'initiatedBy', instanceId: 'ib' }]);
    const claimer = await signIn(t, { scopes: ['completeClaims'] });
    const noScope = await signIn(t, { scopes: ['readPrivateClaimData'] });
    await fails(claimId, claimer.address, {}, 'Must be authenticated to claim', 401);
    await fails(claimId, noScope.address, {}, 'Must be authenticated to claim', 401, noScope.accessToken);
    await fails(
      claimId,
      randomAddress(),
      {},
      'Invalid address. Provided address does not match the address of the signed in user.',
      403,
      claimer.accessToken,
    );
    // both address forms name the signed-in user
    await passes(claimId, claimer.address, {}, claimer.accessToken);
    await passes(claimId, claimer.platformAddress, {}, claimer.accessToken);
  });

  test('numUses, initiatedBy and whitelist take no user input: a field for them is refused, and their failures are not guesses', async () => {
    const claimId = await claimWith([
      numUses(1),
      { pluginId: 'initiatedBy', instanceId: 'ib' },
      { pluginId: 'whitelist', instanceId: 'wl', publicParams: { list: { addresses: [], whitelist: false } } },
    ]);
    for (const body of [{ numUses: { x: 1 } }, { ib: { x: 1 } }, { wl: { x: 1 } }]) {
      const key = Object.keys(body)[0];
      await fails(claimId, randomAddress(), body, `body.${key} has unknown field "x"`);
    }
    await fails(claimId, randomAddress(), {}, 'Must be authenticated to claim', 401);
    assert.equal(
      (await getClaim(t, claimId, '', t.session.accessToken))._failedGuesses,
      undefined,
      'the creator sees no failed guesses',
    );
  });

  test('whitelist: allow list (both address forms), denylist, per-address max', async () => {
    const member = parseAddress(randomAddress());
    const claimId = await claimWith([
      numUses(10),
      {
        pluginId: 'whitelist',
        instanceId: 'wl',
        publicParams: { list: { addresses: [member.evmAddress], whitelist: true }, maxUsesPerAddress: 2 },
      },
    ]);
    const doc = await getClaim(t, claimId);
    assert.deepEqual(doc.plugins[1].publicParams.list.addresses, [member.platformAddress], 'stored in the native form');
    await fails(claimId, randomAddress(), {}, 'User not in whitelist');
    await passes(claimId, member.evmAddress);
    await passes(claimId, member.platformAddress);
    await fails(claimId, member.evmAddress, {}, 'User already exceeded max uses');
    const priv = await getClaim(t, claimId, 'privateStatesToFetch=wl', t.session.accessToken);
    assert.deepEqual(priv.plugins[1].privateState, { addresses: { [member.platformAddress]: 2 } });

    const banned = randomAddress();
    const deny = await claimWith([
      numUses(10),
      { pluginId: 'whitelist', instanceId: 'wl', publicParams: { list: { addresses: [banned], whitelist: false } } },
    ]);
    await fails(deny, banned, {}, 'User in denylist');
    await passes(deny, randomAddress());
  });

  test('whitelist: a private list is stripped for readers without access', async () => {
    const member = randomAddress();
    const claimId = await claimWith([
      numUses(10),
      {
        pluginId: 'whitelist',
        instanceId: 'wl',
        publicParams: { hasPrivateList: true },
        privateParams: { list: { addresses: [member] } },
      },
    ]);
    const pub = await getClaim(t, claimId);
    assert.equal(pub._includesPrivateParams, false);
    assert.deepEqual(pub.plugins[1].privateParams, {});
    assert.ok(!JSON.stringify(pub).includes(member));
    await fails(claimId, randomAddress(), {}, 'User not in whitelist');
    await passes(claimId, member);
  });

  test('whitelist: dynamic store membership, wrong secret, missing store', async () => {
    const owner = await signIn(t, { scopes: ['manageClaims', 'manageDynamicStores'] });
    const created = await t.request('POST', '/api/v0/dynamicStores', {
      token: owner.accessToken,
      body: { handlerId: 'addresses', label: 'members' },
    });
    assert.equal(created.statusCode, 200, created.body);
    const store = created.json().doc as { dynamicDataId: string; dataSecret: string };
    const member = randomAddress();
    const add = await t.request('POST', '/api/v0/storeActions/single', {
      token: owner.accessToken,
      body: { dynamicDataId: store.dynamicDataId, actionName: 'add', payload: { address: member } },
    });
    assert.equal(add.statusCode, 200, add.body);
    const storePlugin = (dataSecret: string) => ({
      pluginId: 'whitelist',
      instanceId: 'wl',
      publicParams: { hasPrivateList: true },
      privateParams: { useDynamicStore: true, dynamicDataId: store.dynamicDataId, dataSecret },
    });
    const ok = newClaimId();
    await createClaim(t, owner.accessToken, { claimId: ok, plugins: [numUses(10), storePlugin(store.dataSecret)] });
    const wrong = newClaimId();
    await createClaim(t, owner.accessToken, { claimId: wrong, plugins: [numUses(10), storePlugin('not the secret')] });
    // membership may take the store's queue a moment
    for (let i = 0; i < 100; i++) {
      if ((await attempt(t, 'simulate', ok, member)).statusCode === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await passes(ok, member);
    await fails(ok, randomAddress(), {}, 'User not in whitelist');
    await fails(wrong, member, {}, 'Invalid data secret');
    const del = await t.request('DELETE', '/api/v0/dynamicStores', {
      token: owner.accessToken,
      body: { dynamicDataId: store.dynamicDataId },
    });
    assert.equal(del.statusCode, 200, del.body);
    await fails(ok, member, {}, 'Dynamic data doc not found');
    // An update checks the store again only when it names another store or secret: sent back
    // without private params (as a reader without private access must), the claim keeps its
    // (now deleted) store; a new id or a new secret is looked up and not found.
    const put = (privateParams?: Record<string, unknown>) =>
      t.request('PUT', '/api/v0/claims', {
        token: owner.accessToken,
        body: {
          claims: [
            {
              claimId: ok,
              plugins: [
                numUses(10),
                {
                  pluginId: 'whitelist',
                  instanceId: 'wl',
                  publicParams: { hasPrivateList: true },
                  ...(privateParams ? { privateParams } : {}),
                },
              ],
            },
          ],
        },
      });
    const kept = await put();
    assert.equal(kept.statusCode, 200, kept.body);
    const same = await put(storePlugin(store.dataSecret).privateParams);
    assert.equal(same.statusCode, 200, same.body);
    const otherId = await put({ useDynamicStore: true, dynamicDataId: 'nosuchstore', dataSecret: store.dataSecret });
    assert.equal(otherId.statusCode, 404, otherId.body);
    assert.deepEqual(otherId.json(), { errorMessage: 'Dynamic data doc not found: nosuchstore' });
    const otherSecret = await put(storePlugin('a new secret').privateParams);
    assert.equal(otherSecret.statusCode, 404, otherSecret.body);
    assert.deepEqual(otherSecret.json(), { errorMessage: `Dynamic data doc not found: ${store.dynamicDataId}` });
  });

  test('halt: "Claim halted" while present; removing it resumes the claim', async () => {
    const claimId = await claimWith([numUses(10), { pluginId: 'halt', instanceId: 'h' }]);
    await fails(claimId, randomAddress(), {}, 'Claim halted');
    const upd = await t.request('PUT', '/api/v0/claims', {
      token: t.session.accessToken,
      body: { claims: [{ claimId, plugins: [numUses(10)] }] },
    });
    assert.equal(upd.statusCode, 200, upd.body);
    await passes(claimId, randomAddress());
  });

  test('anonymous: only the null address, in either form', async () => {
    const claimId = await claimWith([numUses(10), { pluginId: 'anonymous', instanceId: 'an' }]);
    await fails(claimId, randomAddress(), {}, 'BitBadges address must be anonymous');
    await passes(claimId, nullAddress());
    await passes(claimId, '0x0000000000000000000000000000000000000000');
  });

  test('each plugin checks its own params at create (400 naming the field)', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ pluginId: 'numUses', instanceId: 'n', publicParams: {} }, /plugins\[0\]\.publicParams\.maxUses is required/],
      [
        { pluginId: 'numUses', instanceId: 'n', publicParams: { maxUses: -1 } },
        /plugins\[0\]\.publicParams\.maxUses must be an integer/,
      ],
      [
        { pluginId: 'numUses', instanceId: 'n', publicParams: { maxUses: 1, extra: 1 } },
        /plugins\[0\]\.publicParams has unknown field "extra"/,
      ],
      [
        { pluginId: 'password', instanceId: 'p', privateParams: {} },
        /plugins\[0\]\.privateParams\.password must be a non-empty string/,
      ],
      [
        { pluginId: 'transferTimes', instanceId: 't', publicParams: { transferTimes: [{ start: '5', end: '1' }] } },
        /transferTimes\[0\]\.start must not exceed/,
      ],
      [
        { pluginId: 'whitelist', instanceId: 'w', publicParams: { list: { addresses: ['nope'] } } },
        /publicParams\.list\.addresses\[0\] is not a valid address/,
      ],
      [{ pluginId: 'whitelist', instanceId: 'w', publicParams: {} }, /must gate on exactly one of/],
      [{ pluginId: 'codes', instanceId: 'c', publicParams: {} }, /publicParams\.numCodes is required/],
      [{ pluginId: 'halt', instanceId: 'h', publicParams: { x: 1 } }, /publicParams has unknown field "x"/],
    ];
    for (const [plugin, re] of cases) {
      const plugins = (plugin as { pluginId: string }).pluginId === 'numUses' ? [plugin] : [plugin, numUses(1, 'n2')];
      const res = await t.request('POST', '/api/v0/claims', {
        token: t.session.accessToken,
        body: { claims: [{ claimId: newClaimId(), plugins }] },
      });
      assert.equal(res.statusCode, 400, JSON.stringify(plugin));
      assert.match(res.json().errorMessage, re);
    }
  });
});
