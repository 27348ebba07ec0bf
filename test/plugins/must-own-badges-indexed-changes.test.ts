// must-own-badges reads balances from the chain read model, which another process may be writing:
// here one app indexes a fake chain and a second app on the same database (as a second process
// would be, with its own connections and caches) evaluates. Every balance change the indexer
// commits is in the evaluator's next verdict, through the simulate route and
// verifyOwnershipRequirements, for the changed store and after unchanged reads of it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.ts';
import { addressOf, collectionDoc, messageEvent, type FakeChain } from '../helpers/fake-chain.ts';
import { startIndexedApp, waitIndexed } from '../chain/helpers.ts';
import { claimWithPlugins, manager, numUses } from '../claims/helpers.ts';

const MANAGER = addressOf(100);
const A = addressOf(1);
const B = addressOf(2);
const range = (s: number, e = s) => ({ start: String(s), end: String(e) });
const asset = (collectionId: string, min: number) => ({
  chain: 'BitBadges',
  collectionId,
  assetIds: [range(1)],
  ownershipTimes: [],
  mustOwnAmounts: range(min, 1000),
});
// A must own 2 of token 1 in collection 1, or 1 of token 1 in collection 2
const requirement = { $or: [{ assets: [asset('1', 2)] }, { assets: [asset('2', 1)] }] };

describe('must-own-badges sees what the indexer of another process commits', () => {
  let indexer: TestApp;
  let evaluator: TestApp;
  let chain: FakeChain;
  let claimId: string;
  before(async () => {
    ({ t: indexer, chain } = await startIndexedApp());
    // no chain of its own: it reads only the read model the other app writes
    evaluator = await startApp({ database: indexer.database });
    for (const c of ['1', '2']) {
      chain.setCollection(c, collectionDoc(c, MANAGER));
      chain.addBlock([
        chain.tx([messageEvent({ msgType: 'universal_update_collection', collectionId: c, sender: MANAGER })]),
      ]);
    }
    const h = chain.addBlock([chain.transfer({ collectionId: '1', from: 'Mint', to: A, tokenId: 1, amount: 1 })]);
    await waitIndexed(indexer, h);
    const { accessToken } = await manager(evaluator);
    claimId = await claimWithPlugins(evaluator, accessToken, [
      numUses(10),
      {
        pluginId: 'must-own-badges',
        instanceId: 'own',
        publicParams: { ownershipRequirements: requirement },
        privateParams: {},
      },
    ]);
  });
  after(async () => {
    await evaluator.app.close();
    await evaluator.ctx.close();
    await indexer.close();
    await chain.close();
  });

  const simulate = async (address: string) => {
    const r = await evaluator.request('POST', `/api/v0/claims/simulate/${claimId}/${address}`, {
      body: { _expectedVersion: -1 },
    });
    return r.statusCode === 200 ? null : (r.json().errorMessage as string);
  };
  const groups = async (address: string) => {
    const r = await evaluator.request('POST', '/api/v0/verifyOwnershipRequirements', {
      body: { address, assetOwnershipRequirements: requirement },
    });
    assert.equal(r.statusCode, 200, r.body);
    return (r.json().groups as { success: boolean }[]).map((g) => g.success);
  };
  const commit = async (transfer: Parameters<FakeChain['transfer']>[0]) =>
    waitIndexed(indexer, chain.addBlock([chain.transfer(transfer)]));

  test('a store rewritten by a block is read anew; one read unchanged since is not stale', async () => {
    const refused = 'Address did not meet the asset ownership requirements.';
    // read twice unchanged: the second read is the one a stale copy would answer
    assert.equal(await simulate(A), refused);
    assert.equal(await simulate(A), refused);
    assert.deepEqual(await groups(A), [false, false]);

    await commit({ collectionId: '1', from: 'Mint', to: A, tokenId: 1, amount: 1 });
    assert.equal(await simulate(A), null);
    assert.deepEqual(await groups(A), [true, false]);

    // A's store in collection 1 changes again (down to 1), and B's appears
    await commit({ collectionId: '1', from: A, to: B, tokenId: 1, amount: 1 });
    assert.equal(await simulate(A), refused);
    assert.equal(await simulate(B), refused);
    assert.deepEqual(await groups(A), [false, false]);

    // a store in the other collection, never read with a balance before
    await commit({ collectionId: '2', from: 'Mint', to: A, tokenId: 1, amount: 1 });
    assert.equal(await simulate(A), null);
    assert.deepEqual(await groups(A), [false, true]);
  });
});
