// must-own-badges over the chain read model (an imported snapshot) and over the chain itself (a
// fake chain REST server): all-must-match and numMatchesForVerification, nested $and / $or,
// time-bounded ownership, amounts above 2^53, on-demand use, an unreadable chain, and validation.
import { describe, test, before, after } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { addressOf, bal, balanceStore, collectionDoc, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { claimWithPlugins, manager, numUses } from '../claims/helpers.ts';
import type { SignedIn } from '../helpers/signin.ts';
import { asset, importCollection7 } from './badges.ts';
import type { ManualClock } from '../../src/shared/clock.ts';

const A = addressOf(1);
const B = addressOf(2);
const C = addressOf(3);
const BIG = (2n ** 60n + 7n).toString(); // above 2^53: exact only in bigint
const NOW = 1_800_000_000_000;

const mob = (ownershipRequirements: unknown, instanceId = 'own') => ({
  pluginId: 'must-own-badges',
  instanceId,
  publicParams: { ownershipRequirements },
  privateParams: {},
});

describe('must-own-badges', () => {
  let chain: FakeChain;
  let owner: SignedIn;
  before(async () => {
    chain = await startFakeChain();
    // collection 9 lives only on the chain (not in the read model): A owns token 1
    chain.setCollection('9', collectionDoc('9', A));
    chain.setBalance('9', A, balanceStore([bal(1, 1)]));
    chain.advanceTo(5);
  });
  const t = useApp({
    clock: true,
    env: () => ({ CHAIN_REST_URL: chain.url, CHAIN_TIMEOUT_MS: '1000', RUN_WORKER: 'false' }),
  });
  before(async () => {
    (t.clock as ManualClock).set(NOW);
    owner = await manager(t);
    // collection 7 in the read model: A owns 5 of tokens 1-10, BIG of token 11, and 3 of token 20
    // only during [1000, 2000]; B owns 9 of tokens 1-10; C owns nothing
    await importCollection7(t.ctx.db, NOW, A, B, [bal(BIG, 11)]);
  });
  after(() => chain.close());

  async function check(req: unknown, address: string): Promise<string | null> {
    const claimId = await claimWithPlugins(t, owner.accessToken, [numUses(10), mob(req)]);
    const r = await t.request('POST', `/api/v0/claims/simulate/${claimId}/${address}`, {
      body: { _expectedVersion: -1 },
    });
    if (r.statusCode === 200) return null;
    assert.equal(r.statusCode, 400, r.body);
    return r.json().errorMessage;
  }

  test('all pieces must be in range: too little and too much are refused with the ids', async () => {
    assert.equal(await check({ assets: [asset('7', [1, 10], [1, 5])] }, A), null);
    assert.equal(
      await check({ assets: [asset('7', [1, 10], [1, 5])] }, C),
      'Address does not own enough of IDs 1-10 in collection 7 to meet minimum balance requirement of 1',
    );
    assert.equal(
      await check({ assets: [asset('7', [1, 10], [1, 5])] }, B),
      'Address owns too much of IDs 1-10 in collection 7 to meet maximum balance requirement of 5',
    );
    // must NOT own: x0-0
    assert.equal(await check({ assets: [asset('7', [1, 10], [0, 0])] }, C), null);
    assert.match((await check({ assets: [asset('7', [1, 10], [0, 0])] }, A)) ?? '', /owns too much of IDs 1-10/);
  });

  test('amounts above 2^53 compare exactly', async () => {
    assert.equal(await check({ assets: [asset('7', [11, 11], [BIG, BIG])] }, A), null);
    const next = (BigInt(BIG) + 1n).toString();
    assert.match(
      (await check({ assets: [asset('7', [11, 11], [next, next])] }, A)) ?? '',
      new RegExp(`minimum balance requirement of ${next}$`),
    );
  });

  test('ownership times: inside the held window passes, past its end fails, empty means now', async () => {
    assert.equal(await check({ assets: [asset('7', [20, 20], [3, 3], [[1500, 1500]])] }, A), null);
    assert.match(
      (await check({ assets: [asset('7', [20, 20], [3, 3], [[1500, 2500]])] }, A)) ?? '',
      /does not own enough of IDs 20/,
    );
    assert.match(
      (await check({ assets: [asset('7', [20, 20], [3, 3])] }, A)) ?? '',
      /does not own enough of IDs 20/,
      'now is past 2000',
    );
  });

  test('numMatchesForVerification counts token ids in range', async () => {
    // A holds 1-11 (11 ids) but not 12
    const req = (n: number) => ({ assets: [asset('7', [1, 12], [1, BIG])], options: { numMatchesForVerification: n } });
    assert.equal(await check(req(11), A), null);
    assert.equal(await check(req(12), A), `Address ${A} did not meet the ownership requirements.`);
  });

  test('nested $and / $or: first passing branch wins; none → the group text', async () => {
    const failing = { assets: [asset('7', [99, 99], [1, 1])] };
    const req = {
      $or: [
        failing,
        { $and: [{ assets: [asset('7', [1, 10], [1, 5])] }, { assets: [asset('7', [11, 11], [1, BIG])] }] },
      ],
    };
    assert.equal(await check(req, A), null);
    assert.equal(await check(req, B), 'Address did not meet the asset ownership requirements.');
    assert.match(
      (await check({ $and: [{ assets: [asset('7', [1, 1], [1, 100])] }, failing] }, A)) ?? '',
      /IDs 99/,
      '$and propagates the first failure',
    );
  });

  test('a collection the indexer does not hold is read from the chain; an unreachable chain fails, never passes', async () => {
    assert.equal(await check({ assets: [asset('9', [1, 1], [1, 1])] }, A), null);
    assert.match((await check({ assets: [asset('9', [1, 1], [1, 1])] }, B)) ?? '', /does not own enough/);
    chain.intercept({ match: (path) => path.includes('/get_balance/9/'), action: { status: 500, message: 'boom' } });
    const down = await check({ assets: [asset('9', [1, 1], [1, 1])] }, A);
    assert.match(down ?? '', /^Could not read balances of collection 9 from the chain: /);
    chain.clearInterceptors();
  });

  test('on-demand: a claim of must-own-badges alone is evaluated live by the success route', async () => {
    const claimId = await claimWithPlugins(t, owner.accessToken, [mob({ assets: [asset('7', [1, 10], [1, 100])] })]);
    assert.equal((await t.request('GET', `/api/v0/claims/success/${claimId}/${A}`)).json().successCount, 1);
    assert.equal((await t.request('GET', `/api/v0/claims/success/${claimId}/${C}`)).json().successCount, 0);
  });

  test('requirements are validated with 400s naming the path', async () => {
    const bad = async (req: unknown, re: RegExp) => {
      const res = await t.request('POST', '/api/v0/claims', {
        token: owner.accessToken,
        body: { claims: [{ claimId: `m${Math.random().toString(36).slice(2)}`, plugins: [numUses(1), mob(req)] }] },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().errorMessage, re);
    };
    await bad({ assets: [{ ...asset('7', [1, 1], [1, 1]), chain: 'Ethereum' }] }, /chain "Ethereum" is not supported/);
    await bad(
      { assets: [{ ...asset('7', [1, 1], [1, 1]), mustOwnAmounts: undefined }] },
      /mustOwnAmounts must be an object/,
    );
    await bad({ assets: [] }, /assets must be a non-empty array/);
    await bad(
      { $and: [{ $or: [{ $and: [{ $or: [{ $and: [{ assets: [asset('7', [1, 1], [1, 1])] }] }] }] }] }] },
      /deeper than 5 levels/,
    );
    await bad({ assets: [asset('7', [1, 1], [1, 1])], extra: 1 }, /unknown field "extra"/);
    await bad({ assets: [asset('lists', [1, 1], [1, 1])] }, /collectionId must be a positive integer string/);
  });
});
