// Eligibility kept current by chain events: when the indexer commits a block that changes a
// balance, the next eligibility answer reflects it, and min-badge's kept result for that address
// (10 s after a failure) is dropped then instead of waiting out its window.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.ts';
import { addressOf, collectionDoc, messageEvent, type FakeChain } from '../helpers/fake-chain.ts';
import { startIndexedApp, waitIndexed } from '../chain/helpers.ts';
import { attempt, claimWithPlugins, manager, numUses } from '../claims/helpers.ts';

const MANAGER = addressOf(100);
const A = addressOf(1);
const B = addressOf(2);
const WHOLE = 1_000_000_000n;
const range = (s: number, e = s) => ({ start: String(s), end: String(e) });

describe('eligibility and chain events', () => {
  let t: TestApp;
  let chain: FakeChain;
  let token: string;
  before(async () => {
    ({ t, chain } = await startIndexedApp());
    chain.setCollection('1', collectionDoc('1', MANAGER));
    chain.addBlock([
      chain.tx([messageEvent({ msgType: 'universal_update_collection', collectionId: '1', sender: MANAGER })]),
    ]);
    chain.addBlock([chain.transfer({ collectionId: '1', from: 'Mint', to: A, tokenId: 1, amount: 10 })]);
    await waitIndexed(t, 2);
    token = (await manager(t)).accessToken;
  });
  after(async () => {
    await t.close();
    await chain.close();
  });

  const stateOf = async (address: string, claimId: string) => {
    const res = await t.request('POST', '/api/v0/eligibility', {
      body: { address, claimIds: [claimId], includeOutbound: true },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().docs[0] as { state: string; error?: string };
  };

  test('a transfer indexed in a block turns "not eligible" into "eligible" in the next answer', async () => {
    const claimId = await claimWithPlugins(
      t,
      token,
      [
        numUses(10),
        {
          pluginId: 'must-own-badges',
          instanceId: 'own',
          publicParams: {
            ownershipRequirements: {
              assets: [
                {
                  chain: 'BitBadges',
                  collectionId: '1',
                  assetIds: [range(1)],
                  ownershipTimes: [],
                  mustOwnAmounts: range(2, 100),
                },
              ],
            },
          },
          privateParams: {},
        },
      ],
      { showInSearchResults: true },
    );
    assert.equal((await stateOf(A, claimId)).state, 'eligible');
    assert.deepEqual(await stateOf(B, claimId), {
      claimId,
      name: '',
      state: 'notEligible',
      error: 'Address does not own enough of IDs 1 in collection 1 to meet minimum balance requirement of 2',
    });
    const h = chain.addBlock([chain.transfer({ collectionId: '1', from: A, to: B, tokenId: 1, amount: 9 })]);
    await waitIndexed(t, h);
    assert.equal((await stateOf(B, claimId)).state, 'eligible');
    const a = await stateOf(A, claimId);
    assert.equal(a.state, 'notEligible');
    const sim = await attempt(t, 'simulate', claimId, A);
    assert.equal(sim.json().errorMessage, a.error);
  });

  test("min-badge's kept failure for an address is dropped when a block changes that address's balances", async () => {
    chain.nativeBalances.set(B, (1n * WHOLE).toString());
    const claimId = await claimWithPlugins(
      t,
      token,
      [numUses(10), { pluginId: 'min-badge', instanceId: 'mb', publicParams: { minBalance: 5 }, privateParams: {} }],
      { showInSearchResults: true },
    );
    assert.equal((await attempt(t, 'simulate', claimId, B)).json().errorMessage, 'Insufficient balance');
    chain.nativeBalances.set(B, (7n * WHOLE).toString());
    // past the chain client's own 2 s reuse of a native balance: only min-badge's 10 s window is left
    await new Promise((r) => setTimeout(r, 2100));
    assert.equal((await attempt(t, 'simulate', claimId, B)).json().errorMessage, 'Insufficient balance');
    assert.equal((await stateOf(B, claimId)).state, 'notEligible');
    const h = chain.addBlock([chain.transfer({ collectionId: '1', from: 'Mint', to: B, tokenId: 2, amount: 1 })]);
    await waitIndexed(t, h);
    assert.equal((await stateOf(B, claimId)).state, 'eligible');
    assert.equal((await attempt(t, 'simulate', claimId, B)).statusCode, 200);
  });
});
