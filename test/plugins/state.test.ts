// The state of the stateful core plugins (numUses, codes, whitelist) as readers see it and as
// creators set it: claim numbers each one assigns, hidden state, private state, and `newState` on
// update with its exact errors. Written against the mutants `npm run mutate -- src/plugins` left alive.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { claimCode } from '../../src/claims/onchain.ts';
import { parseAddress } from '../../src/shared/addresses.ts';
import {
  attempt,
  claimWithPlugins,
  completeAndWait,
  getClaim,
  numUses,
  randomAddress,
  ALL_SCOPES,
} from '../claims/helpers.ts';

describe('core plugin state', () => {
  const t = useApp({ signedIn: ALL_SCOPES });

  const claimWith = (plugins: unknown[], extra: Record<string, unknown> = {}) =>
    claimWithPlugins(t, t.session.accessToken, plugins, extra);
  async function claimed(claimId: string, address: string, body: Record<string, unknown> = {}) {
    const done = await completeAndWait(t, claimId, address, body);
    assert.equal(done.success, true, done.error);
  }
  async function claimNumbers(claimId: string, address: string): Promise<number[]> {
    const res = await t.request('GET', `/api/v0/claims/success/${claimId}/${address}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().claimNumbers;
  }
  const put = (claimId: string, plugins: unknown[]) =>
    t.request('PUT', '/api/v0/claims', { token: t.session.accessToken, body: { claims: [{ claimId, plugins }] } });
  async function putRefused(claimId: string, plugins: unknown[], errorMessage: string) {
    const res = await put(claimId, plugins);
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(res.json(), { errorMessage });
  }

  test('numUses: claim numbers count from 0; hideCurrentState hides the count from all but the creator', async () => {
    const [a, b] = [randomAddress(), randomAddress()];
    const claimId = await claimWith([numUses(5, 'numUses', { hideCurrentState: true })]);
    await claimed(claimId, a);
    await claimed(claimId, b);
    assert.deepEqual(await claimNumbers(claimId, a), [0]);
    assert.deepEqual(await claimNumbers(claimId, b), [1]);
    assert.deepEqual((await getClaim(t, claimId, 'fetchAllClaimedUsers=true')).plugins[0].publicState, {});
    const own = await getClaim(t, claimId, 'fetchAllClaimedUsers=true', t.session.accessToken);
    assert.deepEqual(own.plugins[0].publicState, {
      numUses: 2,
      usedClaimNumbers: [{ start: '0', end: '1' }],
      claimedUsers: { [a]: [0], [b]: [1] },
    });
    const shown = await claimWith([numUses(5)]);
    await claimed(shown, a);
    assert.deepEqual((await getClaim(t, shown)).plugins[0].publicState, { numUses: 1 });
  });

  test('numUses: newState sets the count and is checked', async () => {
    const claimId = await claimWith([numUses(3)]);
    const res = await put(claimId, [{ ...numUses(3), newState: { numUses: 3 } }]);
    assert.equal(res.statusCode, 200, res.body);
    const full = await attempt(t, 'simulate', claimId, randomAddress());
    assert.deepEqual(full.json(), { errorMessage: 'Overall max uses exceeded' });
    const N = 'claims[0].plugins[0].newState';
    await putRefused(
      claimId,
      [{ ...numUses(3), newState: { numUses: 1, other: 1 } }],
      `${N} has unknown field "other" (allowed: numUses)`,
    );
    await putRefused(claimId, [{ ...numUses(3), newState: {} }], `${N}.numUses is required`);
    await putRefused(
      claimId,
      [{ ...numUses(3), newState: { numUses: -1 } }],
      `${N}.numUses must be an integer from 0 to 2147483647`,
    );
    const zero = await put(claimId, [{ ...numUses(3), newState: { numUses: 0 } }]);
    assert.equal(zero.statusCode, 200, zero.body);
    assert.equal((await attempt(t, 'simulate', claimId, randomAddress())).statusCode, 200);
  });

  test('codes: the claim number is the code index; hidden state; the seed is kept on update', async () => {
    const codes = (extra: Record<string, unknown> = {}) => ({
      pluginId: 'codes',
      instanceId: 'c1',
      publicParams: { numCodes: 10, ...extra },
      privateParams: {},
    });
    const claimId = await claimWith([numUses(10), codes({ hideCurrentState: true })], { assignMethod: 'c1' });
    const seed = (await getClaim(t, claimId, 'fetchPrivateParams=true', t.session.accessToken)).plugins[1].privateParams
      .seedCode as string;
    const who = randomAddress();
    await claimed(claimId, who, { c1: { code: claimCode(seed, 7) } });
    assert.deepEqual(await claimNumbers(claimId, who), [7]);
    assert.deepEqual((await getClaim(t, claimId)).plugins[1].publicState, {});
    assert.deepEqual((await getClaim(t, claimId, '', t.session.accessToken)).plugins[1].publicState, {
      usedCodeRanges: [{ start: '7', end: '7' }],
    });
    // an update giving only numCodes keeps the seed (so handed-out codes stay valid)
    const upd = await put(claimId, [
      numUses(10),
      { pluginId: 'codes', instanceId: 'c1', publicParams: { numCodes: 10 } },
    ]);
    assert.equal(upd.statusCode, 200, upd.body);
    assert.equal(
      (await getClaim(t, claimId, 'fetchPrivateParams=true', t.session.accessToken)).plugins[1].privateParams.seedCode,
      seed,
    );
    // so does one whose private params are empty (no seed, no list)
    const emptyPriv = await put(claimId, [
      numUses(10),
      { pluginId: 'codes', instanceId: 'c1', publicParams: { numCodes: 10 }, privateParams: {} },
    ]);
    assert.equal(emptyPriv.statusCode, 200, emptyPriv.body);
    assert.equal(
      (await getClaim(t, claimId, 'fetchPrivateParams=true', t.session.accessToken)).plugins[1].privateParams.seedCode,
      seed,
    );
    assert.equal(
      (await attempt(t, 'simulate', claimId, randomAddress(), { c1: { code: claimCode(seed, 8) } })).statusCode,
      200,
    );
    // inputs: too long is invalid input; a valid-looking code of another index is not found
    const tooLong = await attempt(t, 'simulate', claimId, randomAddress(), { c1: { code: 'a'.repeat(513) } });
    assert.deepEqual(tooLong.json(), { errorMessage: 'Invalid code in body provided.' });
    const empty = await attempt(t, 'simulate', claimId, randomAddress(), { c1: { code: '' } });
    assert.deepEqual(empty.json(), { errorMessage: 'Invalid code in body provided.' });
    const shifted = await attempt(t, 'simulate', claimId, randomAddress(), {
      c1: { code: `${claimCode(seed, 8).split('-')[0]}-9` },
    });
    assert.deepEqual(shifted.json(), { errorMessage: 'Invalid code. Not found in list of codes.' });
    const atNum = await attempt(t, 'simulate', claimId, randomAddress(), { c1: { code: claimCode(seed, 10) } });
    assert.deepEqual(atNum.json(), { errorMessage: 'Invalid code. Not found in list of codes.' });
    assert.equal(
      (await attempt(t, 'simulate', claimId, randomAddress(), { c1: { code: claimCode(seed, 9) } })).statusCode,
      200,
      'the last index',
    );
    assert.equal(
      (await attempt(t, 'simulate', claimId, randomAddress(), { c1: { code: claimCode(seed, 0) } })).statusCode,
      200,
      'the first index',
    );
    // an explicit list: the claim number is the list index
    const listed = await claimWith(
      [
        numUses(10),
        {
          pluginId: 'codes',
          instanceId: 'c1',
          publicParams: { numCodes: 3 },
          privateParams: { codes: ['x', 'y', 'z'] },
        },
      ],
      { assignMethod: 'c1' },
    );
    await claimed(listed, who, { c1: { code: 'z' } });
    assert.deepEqual(await claimNumbers(listed, who), [2]);
  });

  test('codes: newState sets used codes and is checked', async () => {
    const plugin = {
      pluginId: 'codes',
      instanceId: 'c1',
      publicParams: { numCodes: 3 },
      privateParams: { codes: ['x', 'y', 'z'] },
    };
    const claimId = await claimWith([numUses(10), plugin]);
    const ok = await put(claimId, [
      numUses(10),
      { ...plugin, newState: { usedCodeRanges: [{ start: '0', end: '1' }] } },
    ]);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual((await attempt(t, 'simulate', claimId, randomAddress(), { c1: { code: 'y' } })).json(), {
      errorMessage: 'Code already used.',
    });
    assert.equal((await attempt(t, 'simulate', claimId, randomAddress(), { c1: { code: 'z' } })).statusCode, 200);
    const N = 'claims[0].plugins[1].newState';
    await putRefused(
      claimId,
      [numUses(10), { ...plugin, newState: { other: [] } }],
      `${N} has unknown field "other" (allowed: usedCodeRanges)`,
    );
    await putRefused(
      claimId,
      [numUses(10), { ...plugin, newState: { usedCodeRanges: [{ start: '9999990', end: '10000000' }] } }],
      `${N}.usedCodeRanges goes beyond the largest code index (9999999)`,
    );
    await putRefused(
      claimId,
      [numUses(10), { ...plugin, newState: { usedCodeRanges: [{ start: '2', end: '1' }] } }],
      `${N}.usedCodeRanges[0].start must not exceed ${N}.usedCodeRanges[0].end`,
    );
    const last = await put(claimId, [
      numUses(10),
      { ...plugin, newState: { usedCodeRanges: [{ start: '9999999', end: '9999999' }] } },
    ]);
    assert.equal(last.statusCode, 200, last.body);
    assert.deepEqual(
      (await getClaim(t, claimId)).plugins[1].publicState,
      { usedCodeRanges: [{ start: '9999999', end: '9999999' }] },
      'a used index of several digits',
    );
    const cleared = await put(claimId, [numUses(10), { ...plugin, newState: {} }]);
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.deepEqual((await getClaim(t, claimId)).plugins[1].publicState, { usedCodeRanges: [] });
  });

  test('codes: a given seed or list is used as given (index 0, codes of 512 characters, 100,000 codes); a wrong code is a failed guess', async () => {
    const codes = (numCodes: number, privateParams: Record<string, unknown>) => ({
      pluginId: 'codes',
      instanceId: 'c1',
      publicParams: { numCodes },
      privateParams,
    });
    const seeded = await claimWith([numUses(10), codes(12, { seedCode: 'my seed' })]);
    assert.equal(
      (await getClaim(t, seeded, 'fetchPrivateParams=true', t.session.accessToken)).plugins[1].privateParams.seedCode,
      'my seed',
    );
    assert.equal(
      (await attempt(t, 'simulate', seeded, randomAddress(), { c1: { code: claimCode('my seed', 0) } })).statusCode,
      200,
    );
    assert.equal(
      (await attempt(t, 'simulate', seeded, randomAddress(), { c1: { code: claimCode('my seed', 11) } })).statusCode,
      200,
      'an index of two digits',
    );
    const long = 'c'.repeat(512);
    const listed = await claimWith([numUses(10), codes(3, { codes: [long, 'd', 'e'] })]);
    assert.equal(
      (await attempt(t, 'simulate', listed, randomAddress(), { c1: { code: long } })).statusCode,
      200,
      'the first code, of 512 characters',
    );
    // codes take user input: a wrong one counts as a failed guess, which the creator sees
    assert.deepEqual((await attempt(t, 'simulate', listed, randomAddress(), { c1: { code: 'f' } })).json(), {
      errorMessage: 'Invalid code. Not found in list of codes.',
    });
    assert.deepEqual((await getClaim(t, listed, '', t.session.accessToken))._failedGuesses, { total: 1, lastHour: 1 });
    const many = Array.from({ length: 100_000 }, (_, i) => `k${i}`);
    const full = await claimWith([numUses(10), codes(100_000, { codes: many })]);
    assert.equal((await attempt(t, 'simulate', full, randomAddress(), { c1: { code: 'k99999' } })).statusCode, 200);
  });

  test('whitelist: list index as claim number, no cap at maxUsesPerAddress 0, private state per address', async () => {
    const list = [randomAddress(), randomAddress(), randomAddress()];
    const claimId = await claimWith(
      [
        numUses(10),
        { pluginId: 'whitelist', instanceId: 'wl', publicParams: { list: { addresses: list }, maxUsesPerAddress: 0 } },
      ],
      { assignMethod: 'wl' },
    );
    await claimed(claimId, list[1]);
    assert.deepEqual(await claimNumbers(claimId, list[1]), [1]);
    const uncapped = await claimWith([
      numUses(10),
      { pluginId: 'whitelist', instanceId: 'wl', publicParams: { list: { addresses: list }, maxUsesPerAddress: 0 } },
    ]);
    for (let i = 0; i < 3; i++) await claimed(uncapped, list[0]);
    const priv = await getClaim(t, uncapped, 'privateStatesToFetch=wl', t.session.accessToken);
    assert.deepEqual(priv.plugins[1].privateState, { addresses: { [list[0]]: 3 } });
    assert.deepEqual(priv.plugins[1].publicState, {});
    // a denylist never assigns claim numbers; nor does a store
    const bad = await t.request('POST', '/api/v0/claims', {
      token: t.session.accessToken,
      body: {
        claims: [
          {
            claimId: `wl${Date.now()}`,
            assignMethod: 'wl',
            plugins: [
              numUses(1),
              { pluginId: 'whitelist', instanceId: 'wl', publicParams: { list: { addresses: [], whitelist: false } } },
            ],
          },
        ],
      },
    });
    assert.deepEqual(bad.json(), {
      errorMessage: 'claims[0].assignMethod: a denylist (whitelist: false) cannot assign claim numbers',
    });
    const store = await t.request('POST', '/api/v0/dynamicStores', {
      token: t.session.accessToken,
      body: { handlerId: 'addresses', label: 'wl' },
    });
    const { dynamicDataId, dataSecret } = store.json().doc;
    const byStore = await t.request('POST', '/api/v0/claims', {
      token: t.session.accessToken,
      body: {
        claims: [
          {
            claimId: `ws${Date.now()}`,
            assignMethod: 'wl',
            plugins: [
              numUses(1),
              {
                pluginId: 'whitelist',
                instanceId: 'wl',
                privateParams: { useDynamicStore: true, dynamicDataId, dataSecret },
              },
            ],
          },
        ],
      },
    });
    assert.deepEqual(byStore.json(), {
      errorMessage:
        'claims[0].assignMethod: a whitelist backed by a dynamic store cannot assign claim numbers (it has no list order)',
    });
  });

  test('whitelist: newState sets per-address counts (either address form) and is checked', async () => {
    const member = parseAddress(randomAddress());
    const plugin = {
      pluginId: 'whitelist',
      instanceId: 'wl',
      publicParams: { list: { addresses: [member.platformAddress] }, maxUsesPerAddress: 2 },
    };
    const claimId = await claimWith([numUses(10), plugin]);
    const ok = await put(claimId, [numUses(10), { ...plugin, newState: { addresses: { [member.evmAddress]: 2 } } }]);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(
      (await getClaim(t, claimId, 'privateStatesToFetch=wl', t.session.accessToken)).plugins[1].privateState,
      {
        addresses: { [member.platformAddress]: 2 },
      },
    );
    assert.deepEqual((await attempt(t, 'simulate', claimId, member.platformAddress)).json(), {
      errorMessage: 'User already exceeded max uses',
    });
    const N = 'claims[0].plugins[1].newState';
    await putRefused(
      claimId,
      [numUses(10), { ...plugin, newState: { other: 1 } }],
      `${N} has unknown field "other" (allowed: addresses)`,
    );
    await putRefused(
      claimId,
      [numUses(10), { ...plugin, newState: { addresses: { nope: 1 } } }],
      `${N}.addresses has an invalid address key: "nope"`,
    );
    for (const n of [-1, 1.5, '1']) {
      await putRefused(
        claimId,
        [numUses(10), { ...plugin, newState: { addresses: { [member.platformAddress]: n } } }],
        `${N}.addresses.${member.platformAddress} must be a non-negative integer`,
      );
    }
    const zero = await put(claimId, [
      numUses(10),
      { ...plugin, newState: { addresses: { [member.platformAddress]: 0 } } },
    ]);
    assert.equal(zero.statusCode, 200, zero.body);
    assert.equal((await attempt(t, 'simulate', claimId, member.evmAddress)).statusCode, 200);
    await putRefused(
      claimId,
      [numUses(10), { ...plugin, newState: { addresses: [] } }],
      `${N}.addresses must be an object`,
    );
  });
});
