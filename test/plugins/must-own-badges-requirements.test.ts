// must-own-badges edges, through the direct integrations route (POST /api/v0/integrations/query/
// {pluginId}, plugins/standalone.ts) and claim creation: the exact 400 text of every invalid field
// of `ownershipRequirements` (requirement, groups, options, numMatchesForVerification, assets), the
// 100-asset and 5-level limits at their edges, UintRange bounds (amounts, times) inclusive at both
// ends in both modes, $and / $or / numMatchesForVerification logic with exact answers, which ids
// the route takes as hosted (localised or not), and the registry's unknown-plugin answers.
import { describe, test, before } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { addressOf } from '../helpers/fake-chain.ts';
import { getClaim, manager, newClaimId, numUses } from '../claims/helpers.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { asset as assetOf, importCollection7, range } from './badges.ts';
import type { ManualClock } from '../../src/shared/clock.ts';

const A = addressOf(11);
const B = addressOf(12);
const C = addressOf(13);
const NOW = 1_800_000_000_000;
const P = 'body.ownershipRequirements';
const HOSTED =
  'must-own-badges, min-badge, satisfies-claim, username-set, url-clicker, custom-instructions, github-contributions';

const asset = (
  ids: [number, number],
  amounts: [number | string, number | string],
  times: Array<[number, number]> = [],
  collectionId = '7',
) => assetOf(collectionId, ids, amounts, times);
/** A leaf group A passes (A owns 5 of tokens 1-10). */
const PASS = { assets: [asset([1, 10], [5, 5])] };
const FAIL_LOW = { assets: [asset([1, 10], [6, 6])] };
const LOW_TEXT = 'Address does not own enough of IDs 1-10 in collection 7 to meet minimum balance requirement of 6';
const FAIL_HIGH = { assets: [asset([1, 10], [1, 4])] };
const HIGH_TEXT = 'Address owns too much of IDs 1-10 in collection 7 to meet maximum balance requirement of 4';

describe('must-own-badges edges', () => {
  let owner: SignedIn;
  const t = useApp({ clock: true, env: { RUN_WORKER: 'false' } });
  before(async () => {
    (t.clock as ManualClock).set(NOW);
    owner = await manager(t);
    // collection 7: A owns 5 of tokens 1-10 and 3 of token 20 only during [1000, 2000]; B owns 9 of tokens 1-10
    await importCollection7(t.ctx.db, NOW, A, B);
  });

  const query = (ownershipRequirements: unknown, address = A, pluginId = 'must-own-badges') =>
    t.request('POST', `/api/v0/integrations/query/${pluginId}`, {
      body: { ownershipRequirements, platformAddress: address },
    });
  /** The check of the direct route: null on a pass, else the failure text (400 `{ errorMessage, message }`). */
  async function check(req: unknown, address = A): Promise<string | null> {
    const r = await query(req, address);
    if (r.statusCode === 200) {
      assert.deepEqual(r.json(), {});
      return null;
    }
    assert.equal(r.statusCode, 400, r.body);
    const body = r.json();
    assert.deepEqual(body, { errorMessage: body.errorMessage, message: body.errorMessage });
    return body.errorMessage;
  }
  /** A validation refusal: 400 `{ errorMessage }` only. */
  async function refused(req: unknown, errorMessage: string) {
    const r = await query(req);
    assert.equal(r.statusCode, 400, r.body);
    assert.deepEqual(r.json(), { errorMessage }, JSON.stringify(req));
  }

  test('the requirement, a group, an asset and the options must be objects (not null, a string, a number or an array)', async () => {
    for (const v of [null, 'x', 5, [], [PASS]]) await refused(v, `${P} must be an object with $and, $or or assets`);
    for (const v of [null, 'x', []])
      await refused({ $and: [PASS, v] }, `${P}.$and[1] must be an object with $and, $or or assets`);
    for (const v of [null, 'x', 5, []])
      await refused({ assets: [asset([1, 1], [1, 1]), v] }, `${P}.assets[1] must be an object`);
    for (const v of [null, 'x', []]) await refused({ ...PASS, options: v }, `${P}.options must be an object`);
  });

  test('groups: one operator alone, a non-empty array of groups, unknown fields named, paths through $and and $or', async () => {
    await refused({ $and: [PASS], assets: PASS.assets }, `${P} has unknown field "assets" beside $and`);
    await refused({ $or: [PASS], x: 1 }, `${P} has unknown field "x" beside $or`);
    await refused({ $and: [] }, `${P}.$and must be a non-empty array of groups`);
    await refused({ $or: [] }, `${P}.$or must be a non-empty array of groups`);
    await refused({ $and: 'ab' }, `${P}.$and must be a non-empty array of groups`);
    await refused({ $or: { 0: PASS } }, `${P}.$or must be a non-empty array of groups`);
    await refused({ $or: [PASS, { assets: [] }] }, `${P}.$or[1].assets must be a non-empty array`);
    await refused(
      { $and: [PASS, { $or: [PASS, { assets: [{ ...asset([1, 1], [1, 1]), chain: 'X' }] }] }] },
      `${P}.$and[1].$or[1].assets[0].chain "X" is not supported: this service reads only its own chain ("BitBadges")`,
    );
    await refused(
      { assets: PASS.assets, extra: 1 },
      `${P} has unknown field "extra" (a group is $and, $or, or assets with options)`,
    );
    await refused({ ...PASS, options: { foo: 1 } }, `${P}.options has unknown field "foo"`);
    await refused(
      { ...PASS, options: { numMatchesForVerification: 1, foo: 2 } },
      `${P}.options has unknown field "foo"`,
    );
  });

  test('nesting: a leaf at level 5 is accepted, at level 6 refused', async () => {
    const nest = (levels: number): unknown =>
      levels === 1 ? PASS : { [levels % 2 ? '$or' : '$and']: [nest(levels - 1)] };
    assert.equal(await check(nest(5)), null);
    assert.equal(await check(nest(5), B), 'Address did not meet the asset ownership requirements.');
    await refused(nest(6), `${P}.$and[0].$or[0].$and[0].$or[0].$and[0] nests groups deeper than 5 levels`);
  });

  test('at most 100 assets in the whole requirement: 100 pass, 101 (in one group or across groups) are refused', async () => {
    const many = (n: number) => Array.from({ length: n }, () => asset([1, 10], [1, 5]));
    assert.equal(await check({ $and: [{ assets: many(50) }, { assets: many(50) }] }), null);
    assert.equal(await check({ assets: many(100) }), null);
    await refused({ assets: many(101) }, 'ownershipRequirements may name at most 100 assets');
    await refused(
      { $and: [{ assets: many(50) }, { assets: many(51) }] },
      'ownershipRequirements may name at most 100 assets',
    );
  });

  test('numMatchesForVerification: a safe non-negative integer number or a string of 1-20 digits', async () => {
    for (const n of [
      -1,
      1.5,
      2 ** 53,
      true,
      null,
      [5],
      {},
      'abc',
      '-1',
      '1.5',
      'a1',
      '1a',
      '',
      ' 1',
      '123456789012345678901',
    ]) {
      await refused(
        { ...PASS, options: { numMatchesForVerification: n } },
        `${P}.options.numMatchesForVerification must be a non-negative integer`,
      );
    }
    // 0 (number or string) means "every piece must be in range"
    for (const n of [0, '0'])
      assert.equal(
        await check({ assets: [asset([1, 10], [1, 5])], options: { numMatchesForVerification: n } }, C),
        'Address does not own enough of IDs 1-10 in collection 7 to meet minimum balance requirement of 1',
      );
    for (const n of [10, '10'])
      assert.equal(await check({ assets: [asset([1, 10], [1, 5])], options: { numMatchesForVerification: n } }), null);
    for (const n of [11, '11', '99999999999999999999'])
      assert.equal(
        await check({ assets: [asset([1, 10], [1, 5])], options: { numMatchesForVerification: n } }),
        `Address ${A} did not meet the ownership requirements.`,
      );
  });

  test('asset fields: unknown field, chain, collectionId, assetIds, ownershipTimes and mustOwnAmounts', async () => {
    const a = asset([1, 10], [1, 5]);
    const bad = (over: Record<string, unknown>, text: string) =>
      refused({ assets: [{ ...a, ...over }] }, `${P}.assets[0]${text}`);
    await bad({ foo: 1 }, ' has unknown field "foo"');
    await bad(
      { chain: 'Ethereum' },
      '.chain "Ethereum" is not supported: this service reads only its own chain ("BitBadges")',
    );
    await bad({ chain: 5 }, '.chain 5 is not supported: this service reads only its own chain ("BitBadges")');
    await bad({ chain: '' }, '.chain "" is not supported: this service reads only its own chain ("BitBadges")');
    for (const id of [7, '0', '07', 'a7', '7a', '', '123456789012345678901'])
      await bad({ collectionId: id }, '.collectionId must be a positive integer string (lists are not supported)');
    await bad({ assetIds: undefined }, '.assetIds must be an array of { start, end }');
    await bad({ assetIds: [] }, '.assetIds must name at least one token id range');
    await bad({ assetIds: [range(1, 2), range(0, 3)] }, '.assetIds start at token id 1');
    await bad({ assetIds: [range(3, 2)] }, '.assetIds[0].start must not exceed ' + `${P}.assets[0].assetIds[0].end`);
    await bad({ ownershipTimes: 'x' }, '.ownershipTimes must be an array of { start, end }');
    await bad(
      { ownershipTimes: [{ start: '1' }] },
      '.ownershipTimes[0].end must be an unsigned integer string (got undefined)',
    );
    await bad({ mustOwnAmounts: undefined }, '.mustOwnAmounts must be an object { start, end }');
    // chain and ownershipTimes may be left out (the service's chain; now)
    const { chain: _chain, ownershipTimes: _times, ...bare } = a;
    assert.equal(await check({ assets: [bare] }), null);
    assert.equal(
      await check({ assets: [bare] }, C),
      'Address does not own enough of IDs 1-10 in collection 7 to meet minimum balance requirement of 1',
    );
    // collection ids of two and twenty digits are valid (here: not indexed, and no chain to read them from)
    for (const id of ['17', '12345678901234567890']) {
      assert.equal(
        await check({ assets: [{ ...a, collectionId: id }] }),
        `Collection ${id} is not indexed by this service and no chain is configured to read it from.`,
      );
    }
  });

  test('amount bounds are inclusive at both ends, in every-piece mode and in numMatchesForVerification mode', async () => {
    for (const amounts of [
      [5, 5],
      [1, 5],
      [5, 9],
    ] as Array<[number, number]>)
      assert.equal(await check({ assets: [asset([1, 10], amounts)] }), null, String(amounts));
    assert.equal(await check(FAIL_LOW), LOW_TEXT);
    assert.equal(await check(FAIL_HIGH), HIGH_TEXT);
    assert.equal(
      await check({ assets: [asset([3, 3], [6, 6])] }),
      'Address does not own enough of IDs 3 in collection 7 to meet minimum balance requirement of 6',
    );
    const n = (amounts: [number, number], need: number) => ({
      assets: [asset([1, 10], amounts)],
      options: { numMatchesForVerification: need },
    });
    assert.equal(await check(n([5, 5], 10)), null);
    assert.equal(await check(n([1, 5], 10)), null);
    assert.equal(await check(n([5, 9], 10)), null);
    assert.equal(await check(n([6, 9], 1)), `Address ${A} did not meet the ownership requirements.`);
    assert.equal(await check(n([1, 4], 1)), `Address ${A} did not meet the ownership requirements.`);
    assert.equal(await check(n([1, 5], 1), B), `Address ${B} did not meet the ownership requirements.`);
    // ids out of range do not count; ids in range do, across the assets of the group
    assert.equal(await check({ assets: [asset([1, 12], [1, 5])], options: { numMatchesForVerification: 10 } }), null);
    assert.equal(
      await check({ assets: [asset([1, 12], [1, 5])], options: { numMatchesForVerification: 11 } }),
      `Address ${A} did not meet the ownership requirements.`,
    );
    assert.equal(
      await check({
        assets: [asset([1, 4], [1, 5]), asset([5, 10], [5, 5])],
        options: { numMatchesForVerification: 10 },
      }),
      null,
    );
    assert.equal(
      await check({
        assets: [asset([1, 4], [1, 5]), asset([5, 10], [6, 9])],
        options: { numMatchesForVerification: 5 },
      }),
      `Address ${A} did not meet the ownership requirements.`,
    );
  });

  test('ownership time bounds are inclusive at both ends', async () => {
    const at = (s: number, e: number) => ({ assets: [asset([20, 20], [3, 3], [[s, e]])] });
    const short = 'Address does not own enough of IDs 20 in collection 7 to meet minimum balance requirement of 3';
    assert.equal(await check(at(1000, 1000)), null);
    assert.equal(await check(at(2000, 2000)), null);
    assert.equal(await check(at(1000, 2000)), null);
    assert.equal(await check(at(999, 999)), short);
    assert.equal(await check(at(2001, 2001)), short);
    assert.equal(await check(at(999, 2000)), short);
    assert.equal(await check({ assets: [asset([20, 20], [3, 3])] }), short, 'no times: now, past 2000');
  });

  test('$and needs every group (first failure answered), $or any (else the group text); assets of a group all count', async () => {
    assert.equal(await check({ $and: [PASS, PASS] }), null);
    assert.equal(await check({ $and: [PASS, FAIL_LOW] }), LOW_TEXT);
    assert.equal(await check({ $and: [FAIL_HIGH, FAIL_LOW] }), HIGH_TEXT);
    assert.equal(await check({ $or: [FAIL_LOW, PASS] }), null);
    assert.equal(await check({ $or: [PASS, FAIL_LOW] }), null);
    assert.equal(await check({ $or: [FAIL_LOW, FAIL_HIGH] }), 'Address did not meet the asset ownership requirements.');
    assert.equal(await check({ assets: [...PASS.assets, ...FAIL_HIGH.assets, ...FAIL_LOW.assets] }), HIGH_TEXT);
    assert.equal(await check({ $or: [{ $and: [PASS, FAIL_LOW] }, { $and: [PASS, PASS] }] }), null);
    assert.equal(
      await check({ $and: [{ $or: [FAIL_LOW, PASS] }, { $or: [FAIL_HIGH, FAIL_LOW] }] }),
      'Address did not meet the asset ownership requirements.',
    );
  });

  test('the route takes a hosted id, bare or with a two-letter locale; anything else is a 404 listing the hosted plugins', async () => {
    assert.deepEqual((await query(PASS, A, 'must-own-badges-es')).json(), {});
    assert.deepEqual((await query(FAIL_LOW, A, 'must-own-badges-fr')).json(), {
      errorMessage: LOW_TEXT,
      message: LOW_TEXT,
    });
    for (const [pluginId, shown] of [
      ['must-own-badges-es1', 'must-own-badges-es1'],
      ['must-own-badges-esx', 'must-own-badges-esx'],
      ['must-own-badges-ES', 'must-own-badges-ES'],
      ['x%0Amust-own-badges-es', 'x\nmust-own-badges-es'],
      ['numUses-es', 'numUses-es'],
    ]) {
      const r = await query(PASS, A, pluginId);
      assert.equal(r.statusCode, 404, pluginId);
      assert.deepEqual(r.json(), { errorMessage: `No hosted plugin "${shown}" (hosted plugins: ${HOSTED})` });
    }
  });

  test('claims: the requirement is stored normalised, each operator kept (chain and times filled in, a zero count dropped)', async () => {
    const claimId = newClaimId('oe');
    const { chain: _chain, ownershipTimes: _times, ...bare } = asset([3, 4], [1, 5]);
    const req = {
      $and: [
        {
          $or: [
            PASS,
            { assets: [{ ...bare, assetIds: [range(5, 6), range(1, 4)] }], options: { numMatchesForVerification: 0 } },
          ],
        },
        { ...PASS, options: { numMatchesForVerification: '2' } },
      ],
    };
    const res = await t.request('POST', '/api/v0/claims', {
      token: owner.accessToken,
      body: {
        claims: [
          {
            claimId,
            plugins: [
              numUses(1),
              {
                pluginId: 'must-own-badges',
                instanceId: 'own',
                publicParams: { ownershipRequirements: req },
                privateParams: {},
              },
            ],
          },
        ],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const stored = (await getClaim(t, claimId)).plugins.find(
      (p: { instanceId: string }) => p.instanceId === 'own',
    ).publicParams;
    const leaf = {
      chain: 'BitBadges',
      collectionId: '7',
      assetIds: [range(1, 10)],
      ownershipTimes: [],
      mustOwnAmounts: range(5, 5),
    };
    assert.deepEqual(stored, {
      ownershipRequirements: {
        $and: [
          {
            $or: [
              { assets: [leaf], options: {} },
              { assets: [{ ...leaf, assetIds: [range(1, 6)], mustOwnAmounts: range(1, 5) }], options: {} },
            ],
          },
          { assets: [leaf], options: { numMatchesForVerification: '2' } },
        ],
      },
    });
  });

  test('claims: a localised hosted id runs the hosted plugin; an unknown id or version is a 400 listing the core plugins', async () => {
    const create = (plugin: Record<string, unknown>) =>
      t.request('POST', '/api/v0/claims', {
        token: owner.accessToken,
        body: {
          claims: [
            {
              claimId: newClaimId('oe'),
              plugins: [
                numUses(1),
                { instanceId: 'own', publicParams: { ownershipRequirements: PASS }, privateParams: {}, ...plugin },
              ],
            },
          ],
        },
      });
    assert.equal((await create({ pluginId: 'must-own-badges-es' })).statusCode, 200);
    const core =
      'numUses, codes, password, transferTimes, initiatedBy, whitelist, halt, anonymous, discord, github, google, twitch, twitter, github-contributions, must-own-badges, min-badge, satisfies-claim, username-set, url-clicker, custom-instructions';
    const unknown = await create({ pluginId: 'must-own-badges-es1' });
    assert.equal(unknown.statusCode, 400);
    assert.deepEqual(unknown.json(), {
      errorMessage: `claims[0].plugins[1].pluginId: unknown plugin "must-own-badges-es1" (valid: ${core}; or the id of a plugin document)`,
    });
    const versioned = await create({ pluginId: 'nosuch', version: '2' });
    assert.equal(versioned.statusCode, 400);
    assert.deepEqual(versioned.json(), {
      errorMessage: `claims[0].plugins[1].pluginId: unknown plugin "nosuch" version 2 (valid: ${core}; or the id of a plugin document with that version)`,
    });
  });
});
