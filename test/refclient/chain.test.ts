// The reference client's collection and account calls, unchanged, against a running service
// that indexes a fake chain REST API: response shapes the client maps (getCollection's arrays and
// metadata, getBalanceByAddress's balance document, accounts' tracker arrays).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.ts';
import { bal, balanceStore, collectionDoc, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { randomAddress } from '../claims/helpers.ts';
import { createIndexer } from '../../src/chain/loops.ts';
import { refusal, sdkClient, type SdkClient } from './sdk.ts';

/** Every collection permission the chain answers (the fake's default lists only one). */
export const FULL_PERMISSIONS = Object.fromEntries(
  ['canDeleteCollection', 'canArchiveCollection', 'canUpdateManager', 'canUpdateCollectionMetadata', 'canUpdateTokenMetadata', 'canUpdateCustomData', 'canUpdateStandards', 'canUpdateValidTokenIds', 'canUpdateCollectionApprovals', 'canAddMoreAliasPaths', 'canAddMoreCosmosCoinWrapperPaths'].map((k) => [k, []]),
);
/** A collection as the chain answers it, complete enough for the client's classes (no approvals). */
export const chainCollection = (id: string, manager: string, over: Record<string, unknown> = {}) =>
  collectionDoc(id, manager, { collectionPermissions: FULL_PERMISSIONS, collectionApprovals: [], ...over });

describe('reference client: collections and accounts', { timeout: 120_000 }, () => {
  let chain: FakeChain;
  let t: TestApp;
  let alice: SignedIn;
  let bob: SignedIn;
  let sdk: SdkClient;
  const carol = randomAddress();

  before(async () => {
    chain = await startFakeChain();
    t = await startApp({ listen: true, env: { CHAIN_REST_URL: chain.url, RUN_WORKER: 'false' } });
    alice = await signIn(t, { scopes: ['manageAccount'] });
    bob = await signIn(t, { scopes: ['manageAccount'] });
    chain.nativeBalances.set(alice.platformAddress, '2000000000');
    // collection 1: alice creates and manages it, mints 5 of tokens 1–10, sends 2 of token 3 to bob
    chain.setCollection('1', chainCollection('1', alice.platformAddress));
    chain.addBlock([chain.transfer({ collectionId: '1', from: 'Mint', to: alice.platformAddress, tokenId: 1, amount: 5 })]);
    for (let id = 2; id <= 10; id++) chain.addBlock([chain.transfer({ collectionId: '1', from: 'Mint', to: alice.platformAddress, tokenId: id, amount: 5 })]);
    chain.addBlock([chain.transfer({ collectionId: '1', from: alice.platformAddress, to: bob.platformAddress, tokenId: 3, amount: 2 })]);
    await createIndexer(t.ctx)!.catchUp();
    sdk = sdkClient(t);
  });
  after(async () => {
    await t.close();
    await chain.close();
  });

  test('getCollection: the collection with every array the client maps (empty) and the top-level metadata', async () => {
    const res = await sdk.api.getCollection('1', {});
    assert.equal(res.collection.collectionId, '1');
    assert.equal(res.collection.manager, alice.platformAddress);
    for (const key of ['activity', 'owners', 'challengeTrackers', 'approvalTrackers', 'listings', 'claims'] as const) assert.deepEqual(res.collection[key], [], key);
    assert.deepEqual(res.collection.views, {});
    const raw = (await t.request('GET', '/api/v0/collection/1')).json();
    assert.deepEqual(raw.metadata, {}, 'off-chain metadata is not fetched by this service');
    assert.deepEqual(Object.keys(raw).sort(), ['collection', 'metadata']);
    assert.deepEqual(await refusal(sdk.api.getCollection('999', {})), { errorMessage: 'Collection 999 not found (not on chain, or not indexed yet)' });
  });

  test('getBalanceByAddress: the balance document itself', async () => {
    const doc = await sdk.api.getBalanceByAddress('1', bob.platformAddress, {});
    assert.equal(doc._docId, `1:${bob.platformAddress}`);
    assert.equal(doc.bitbadgesAddress, undefined, 'the field is platformAddress here (the body is not renamed)');
    assert.deepEqual(JSON.parse(JSON.stringify(doc.balances)), [bal('2', '3')]);
    const raw = (await t.request('GET', `/api/v0/collection/1/balance/${bob.platformAddress}`)).json();
    assert.equal(raw._docId, `1:${bob.platformAddress}`);
    assert.equal(raw.balance, undefined);
    // never touched: the collection's default store
    assert.deepEqual(JSON.parse(JSON.stringify((await sdk.api.getBalanceByAddress('1', carol, {})).balances)), balanceStore().balances);
    assert.deepEqual(await refusal(sdk.api.getBalanceByAddress('1', 'not-an-address', {})), {
      errorMessage: 'Invalid address in address: "not-an-address" is neither a 0x address nor a bb1… address',
    });
  });

  test('getAccount and getAccounts: every account carries challengeTrackers and approvalTrackers', async () => {
    const one = (await t.request('GET', `/api/v0/user?address=${alice.platformAddress}`)).json().account;
    assert.deepEqual([one.challengeTrackers, one.approvalTrackers], [[], []]);
    const many = (
      await t.request('POST', '/api/v0/users', {
        token: alice.accessToken,
        body: { accountsToFetch: [{ address: alice.platformAddress, viewsToFetch: [{ viewType: 'tokensCollected', viewId: 'mine', bookmark: '' }] }, { address: carol }] },
      })
    ).json().accounts;
    assert.deepEqual(many.map((a: Record<string, unknown>) => [a.challengeTrackers, a.approvalTrackers]), [[[], []], [[], []]]);
    assert.equal(many[0].collected.length, 1);
    // The client's account class also maps `siwbbRequests`, a brand-word field this service names
    // `signinRequests` (bodies are not renamed): with that one key renamed, it maps our account.
    const { BitBadgesUserInfo } = await import('bitbadgesjs-sdk');
    const { signinRequests, ...rest } = many[0];
    const mapped = new BitBadgesUserInfo({ ...rest, siwbbRequests: signinRequests });
    assert.deepEqual([mapped.challengeTrackers, mapped.approvalTrackers, mapped.collected.length], [[], [], 1]);
    await assert.rejects(sdk.api.getAccount({ address: alice.platformAddress }), /Cannot read properties of undefined \(reading 'map'\)/, 'the client itself stops at siwbbRequests');
    assert.deepEqual(await refusal(sdk.api.getAccount({ username: 'nobody_here' })), { errorMessage: 'No account has the username "nobody_here"' });
  });
  test('listings and tokenFloorPrices views are empty pages, and the other views of the request are served', async () => {
    const res = await sdk.api.getCollections({
      collectionsToFetch: [
        {
          collectionId: '1',
          viewsToFetch: [
            { viewType: 'listings', viewId: 'l', bookmark: '' },
            { viewType: 'owners', viewId: 'o', bookmark: '' },
            { viewType: 'tokenFloorPrices', viewId: 'f', bookmark: '' },
          ],
        },
      ],
    } as never);
    const c = res.collections[0]!;
    const empty = { bookmark: '', hasMore: false };
    assert.deepEqual(c.views.l, { ids: [], type: 'listings', pagination: empty });
    assert.deepEqual(c.views.f, { ids: [], type: 'tokenFloorPrices', pagination: empty });
    assert.deepEqual(c.views.o!.ids, [`1:${bob.platformAddress}`, `1:${alice.platformAddress}`]);
    assert.deepEqual([c.listings, c.tokenFloorPrices], [[], []]);
    assert.equal(c.owners.length, 2);
    // the SDK-style route of the same view agrees
    const listings = await sdk.api.getCollectionListings('1', {} as never);
    assert.deepEqual(listings.listings, []);
    assert.deepEqual(listings.pagination, empty);
    // a bookmark these lists never issued is refused like any other list's
    assert.deepEqual(
      await refusal(sdk.api.getCollections({ collectionsToFetch: [{ collectionId: '1', viewsToFetch: [{ viewType: 'listings', viewId: 'l', bookmark: 'abc.def' }] }] } as never)),
      { errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.' },
    );
  });

  test('the pointsActivity account view is an empty page, served with the other views of the request', async () => {
    const res = await t.request('POST', '/api/v0/users', {
      body: {
        accountsToFetch: [
          {
            address: alice.platformAddress,
            viewsToFetch: [
              { viewType: 'pointsActivity', viewId: 'p', bookmark: '' },
              { viewType: 'tokensCollected', viewId: 'c', bookmark: '' },
            ],
          },
        ],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const [a] = res.json().accounts;
    assert.deepEqual(a.views.p, { ids: [], type: 'pointsActivity', pagination: { bookmark: '', hasMore: false } });
    assert.deepEqual(a.pointsActivity, []);
    assert.deepEqual(a.views.c.ids, [`1:${alice.platformAddress}`]);
    const forged = await t.request('POST', '/api/v0/users', { body: { accountsToFetch: [{ address: alice.platformAddress, viewsToFetch: [{ viewType: 'pointsActivity', viewId: 'p', bookmark: 'x.y' }] }] } });
    assert.deepEqual([forged.statusCode, forged.json()], [400, { errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.' }]);
  });
});
