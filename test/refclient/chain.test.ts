// The reference client's collection and account calls, unchanged, against a running service
// that indexes a fake chain REST API: response shapes the client maps (getCollection's arrays and
// metadata, getBalanceByAddress's balance document, accounts' tracker arrays).
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { bal, balanceStore, collectionDoc, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { attempt, claimWithPlugins, numUses, randomAddress } from '../claims/helpers.ts';
import { drainQueue } from '../../src/claims/queue.ts';
import { createIndexer } from '../../src/chain/loops.ts';
import { refusal, sdkClient, type SdkClient } from './sdk.ts';

/** Every collection permission the chain answers (the fake's default lists only one). */
export const FULL_PERMISSIONS = Object.fromEntries(
  [
    'canDeleteCollection',
    'canArchiveCollection',
    'canUpdateManager',
    'canUpdateCollectionMetadata',
    'canUpdateTokenMetadata',
    'canUpdateCustomData',
    'canUpdateStandards',
    'canUpdateValidTokenIds',
    'canUpdateCollectionApprovals',
    'canAddMoreAliasPaths',
    'canAddMoreCosmosCoinWrapperPaths',
  ].map((k) => [k, []]),
);
/** A collection as the chain answers it, complete enough for the client's classes (no approvals). */
export const chainCollection = (id: string, manager: string, over: Record<string, unknown> = {}) =>
  collectionDoc(id, manager, { collectionPermissions: FULL_PERMISSIONS, collectionApprovals: [], ...over });

describe('reference client: collections and accounts', () => {
  let chain: FakeChain;
  let alice: SignedIn;
  let bob: SignedIn;
  let sdk: SdkClient;
  let indexer: NonNullable<ReturnType<typeof createIndexer>>;
  const carol = randomAddress();

  before(async () => {
    chain = await startFakeChain();
  });
  const t = useApp({ listen: true, env: () => ({ CHAIN_REST_URL: chain.url, RUN_WORKER: 'false' }) });
  before(async () => {
    alice = await signIn(t, { scopes: ['manageAccount', 'manageClaims'] });
    bob = await signIn(t, { scopes: ['manageAccount'] });
    chain.nativeBalances.set(alice.platformAddress, '2000000000');
    // collection 1: alice creates and manages it, mints 5 of tokens 1–10, sends 2 of token 3 to bob
    chain.setCollection('1', chainCollection('1', alice.platformAddress));
    chain.addBlock([
      chain.transfer({ collectionId: '1', from: 'Mint', to: alice.platformAddress, tokenId: 1, amount: 5 }),
    ]);
    for (let id = 2; id <= 10; id++)
      chain.addBlock([
        chain.transfer({ collectionId: '1', from: 'Mint', to: alice.platformAddress, tokenId: id, amount: 5 }),
      ]);
    chain.addBlock([
      chain.transfer({
        collectionId: '1',
        from: alice.platformAddress,
        to: bob.platformAddress,
        tokenId: 3,
        amount: 2,
      }),
    ]);
    indexer = createIndexer(t.ctx)!;
    await indexer.catchUp();
    sdk = sdkClient(t);
  });
  after(() => chain.close());

  test('getCollection: the collection with every array the client maps (empty) and the top-level metadata', async () => {
    const res = await sdk.api.getCollection('1', {});
    assert.equal(res.collection.collectionId, '1');
    assert.equal(res.collection.manager, alice.platformAddress);
    for (const key of ['activity', 'owners', 'challengeTrackers', 'approvalTrackers', 'listings', 'claims'] as const)
      assert.deepEqual(res.collection[key], [], key);
    assert.deepEqual(res.collection.views, {});
    const raw = (await t.request('GET', '/api/v0/collection/1')).json();
    assert.deepEqual(raw.metadata, {}, 'off-chain metadata is not fetched by this service');
    assert.deepEqual(Object.keys(raw).sort(), ['collection', 'metadata']);
    assert.deepEqual(await refusal(sdk.api.getCollection('999', {})), {
      errorMessage: 'Collection 999 not found (not on chain, or not indexed yet)',
    });
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
    assert.deepEqual(
      JSON.parse(JSON.stringify((await sdk.api.getBalanceByAddress('1', carol, {})).balances)),
      balanceStore().balances,
    );
    assert.deepEqual(await refusal(sdk.api.getBalanceByAddress('1', 'not-an-address', {})), {
      errorMessage: 'Invalid address in address: "not-an-address" is neither a 0x address nor a bb1… address',
    });
  });

  test('getAccount and getAccounts: the client maps every account, with every array it reads unconditionally', async () => {
    // the arrays the client's account class maps without a check: collected, activity,
    // challengeTrackers, approvalTrackers and siwbbRequests (its name for signinRequests)
    const mapped = ['collected', 'activity', 'challengeTrackers', 'approvalTrackers', 'siwbbRequests'];
    const raw = (await t.request('GET', `/api/v0/user?address=${carol}`)).json().account;
    for (const key of mapped) assert.deepEqual(raw[key], [], key);
    const { account: one } = await sdk.api.getAccount({ address: alice.platformAddress });
    assert.equal(one._docId, alice.platformAddress);
    assert.deepEqual(one.balances, [], 'the client reads balances[]; this service answers balance');
    for (const key of mapped) assert.deepEqual((one as unknown as Record<string, unknown>)[key], [], key);
    assert.deepEqual(sdk.paths.at(-1), 'GET /api/v0/user');

    // every view type the client offers, in one request, as the account itself
    const mine = sdkClient(t, alice.accessToken).api;
    const viewTypes = [
      'transferActivity',
      'siwbbRequests',
      'tokensCollected',
      'createdTokens',
      'managingTokens',
      'publicClaimActivity',
      'allClaimActivity',
      'pointsActivity',
    ] as const;
    const { accounts } = await mine.getAccounts({
      accountsToFetch: [
        {
          address: alice.platformAddress,
          viewsToFetch: viewTypes.map((viewType) => ({ viewType, viewId: viewType, bookmark: '' })),
        },
        { address: carol },
      ],
    });
    const [a, c] = accounts;
    assert.deepEqual(Object.keys(a.views).sort(), [...viewTypes].sort());
    for (const v of viewTypes) assert.equal(a.views[v]!.type, v);
    assert.deepEqual(a.views.tokensCollected!.ids, [`1:${alice.platformAddress}`]);
    assert.deepEqual(
      a.collected.map((d) => d._docId),
      [`1:${alice.platformAddress}`],
    );
    assert.equal(a.activity.length, 11, 'ten mints and one transfer');
    assert.deepEqual(a.views.siwbbRequests!.ids.length, 1, 'the session that made this request');
    assert.deepEqual(
      a.siwbbRequests.map((r) => r._docId),
      a.views.siwbbRequests!.ids,
    );
    assert.deepEqual(a.views.createdTokens!.ids, ['1']);
    assert.deepEqual([a.views.pointsActivity!.ids, a.pointsActivity], [[], []]);
    assert.deepEqual([a.challengeTrackers, a.approvalTrackers], [[], []]);
    assert.equal(c._docId, carol);
    for (const key of mapped) assert.deepEqual((c as unknown as Record<string, unknown>)[key], [], key);

    // refusals: the sign-in view of another account; an unknown username
    assert.deepEqual(
      await refusal(
        sdkClient(t, bob.accessToken).api.getAccounts({
          accountsToFetch: [
            {
              address: alice.platformAddress,
              viewsToFetch: [{ viewType: 'siwbbRequests', viewId: 's', bookmark: '' }],
            },
          ],
        }),
      ),
      {
        errorMessage: `body.accountsToFetch[0].viewsToFetch[0]: siwbbRequests is visible only to the account itself (a session of ${alice.platformAddress} holding the manageAccount scope); the session belongs to ${bob.platformAddress}.`,
      },
    );
    assert.deepEqual(await refusal(sdk.api.getAccount({ username: 'nobody_here' })), {
      errorMessage: 'No account has the username "nobody_here"',
    });
  });

  test('collection views on their own routes agree with getCollections: owners, transfer activity, amount and challenge trackers', async () => {
    const viewIds = async (viewType: string) =>
      (
        await sdk.api.getCollections({
          collectionsToFetch: [{ collectionId: '1', viewsToFetch: [{ viewType, viewId: 'v', bookmark: '' }] }],
        } as never)
      ).collections[0]!.views.v!.ids;
    const owners = await sdk.api.getCollectionOwners('1', {} as never);
    assert.deepEqual(
      owners.owners.map((o) => o._docId),
      await viewIds('owners'),
    );
    assert.equal(owners.owners.length, 2);
    const activity = await sdk.api.getCollectionTransferActivity('1', {} as never);
    assert.deepEqual(
      activity.activity.map((a) => a._docId),
      await viewIds('transferActivity'),
    );
    assert.equal(activity.activity.length, 11);
    const amounts = await sdk.api.getCollectionAmountTrackers('1', {} as never);
    assert.deepEqual(
      amounts.amountTrackers.map((a) => a._docId),
      await viewIds('amountTrackers'),
    );
    const challenges = await sdk.api.getCollectionChallengeTrackers('1', {} as never);
    assert.deepEqual(
      challenges.challengeTrackers.map((a) => a._docId),
      await viewIds('challengeTrackers'),
    );
    assert.deepEqual(sdk.paths.filter((p) => !p.endsWith('/collections')).slice(-4), [
      'GET /api/v0/collection/1/owners',
      'GET /api/v0/collection/1/activity',
      'GET /api/v0/collection/1/amountTrackers',
      'GET /api/v0/collection/1/challengeTrackers',
    ]);
    // refusals: an unknown collection; a bookmark of another list
    const unknown = { errorMessage: 'Collection 999 not found (not on chain, or not indexed yet)' };
    assert.deepEqual(await refusal(sdk.api.getCollectionOwners('999', {} as never)), unknown);
    assert.deepEqual(await refusal(sdk.api.getCollectionAmountTrackers('999', {} as never)), unknown);
    assert.deepEqual(await refusal(sdk.api.getCollectionChallengeTrackers('999', {} as never)), unknown);
    assert.deepEqual(await refusal(sdk.api.getCollectionTransferActivity('1', { bookmark: 'x.y' } as never)), {
      errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.',
    });
  });

  test('updateAccountInfo sets the username that getAccount answers; checkIfSignedIn', async () => {
    const api = sdkClient(t, bob.accessToken).api;
    const name = `b${Date.now().toString(36)}`.slice(0, 15);
    await api.updateAccountInfo({ username: name });
    const { account } = await sdk.api.getAccount({ username: name.toUpperCase() });
    assert.deepEqual([account.username, account._docId], [name, bob.platformAddress]);
    const status = await api.checkIfSignedIn({});
    assert.equal(status.signedIn, true);
    assert.equal((await sdk.api.checkIfSignedIn({})).signedIn, false);
    assert.deepEqual(await refusal(api.updateAccountInfo({ username: 'no spaces' })), {
      errorMessage:
        'body.username is invalid: Username must be 1 to 15 characters long and can only contain letters, numbers, and underscores.',
    });
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
    assert.deepEqual(await refusal(sdk.api.getCollectionListings('999', {} as never)), {
      errorMessage: 'Collection 999 not found (not on chain, or not indexed yet)',
    });
    // a bookmark these lists never issued is refused like any other list's
    assert.deepEqual(
      await refusal(
        sdk.api.getCollections({
          collectionsToFetch: [
            { collectionId: '1', viewsToFetch: [{ viewType: 'listings', viewId: 'l', bookmark: 'abc.def' }] },
          ],
        } as never),
      ),
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
    const forged = await t.request('POST', '/api/v0/users', {
      body: {
        accountsToFetch: [
          {
            address: alice.platformAddress,
            viewsToFetch: [{ viewType: 'pointsActivity', viewId: 'p', bookmark: 'x.y' }],
          },
        ],
      },
    });
    assert.deepEqual(
      [forged.statusCode, forged.json()],
      [
        400,
        {
          errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.',
        },
      ],
    );
  });
  test('per token: balance, owners and activity of one token id, each agreeing with the view it narrows', async () => {
    const b = await sdk.api.getBalanceByAddressSpecificToken('1', '3', bob.platformAddress);
    assert.equal(b._docId, `1:${bob.platformAddress}`);
    assert.deepEqual(JSON.parse(JSON.stringify(b.balances)), [bal('2', '3')]);
    const aliceToken3 = await sdk.api.getBalanceByAddressSpecificToken('1', '3', alice.platformAddress);
    assert.deepEqual(JSON.parse(JSON.stringify(aliceToken3.balances)), [bal('3', '3')]);
    const owners = await sdk.api.getOwners('1', '3', {});
    assert.deepEqual(
      owners.owners.map((o) => o._docId),
      [`1:${bob.platformAddress}`, `1:${alice.platformAddress}`],
      'newest first, as the owners view',
    );
    assert.deepEqual(owners.pagination, { bookmark: '', hasMore: false });
    assert.deepEqual(
      (await sdk.api.getOwners('1', '7', {})).owners.map((o) => o._docId),
      [`1:${alice.platformAddress}`],
    );
    const activity = await sdk.api.getTokenActivity('1', '3', {});
    assert.deepEqual(
      activity.activity.map((a) => [a.from, a.to]),
      [
        [alice.platformAddress, [bob.platformAddress]],
        ['Mint', [alice.platformAddress]],
      ],
    );
    assert.deepEqual(sdk.paths.slice(-5), [
      `GET /api/v0/collection/1/3/balance/${bob.platformAddress}`,
      `GET /api/v0/collection/1/3/balance/${alice.platformAddress}`,
      'GET /api/v0/collection/1/3/owners',
      'GET /api/v0/collection/1/7/owners',
      'GET /api/v0/collection/1/3/activity',
    ]);
    // (the client itself refuses a token id that is not a positive integer before sending)
    assert.deepEqual(
      await refusal(sdk.api.getBalanceByAddressSpecificToken('1', '18446744073709551616', bob.platformAddress)),
      {
        errorMessage:
          'tokenId must be a token id: a positive integer up to 2^64 - 1 as a decimal string (got "18446744073709551616")',
      },
    );
    const zero = await t.request('GET', '/api/v0/collection/1/0/owners');
    assert.deepEqual(
      [zero.statusCode, zero.json()],
      [
        400,
        { errorMessage: 'tokenId must be a token id: a positive integer up to 2^64 - 1 as a decimal string (got "0")' },
      ],
    );
    assert.deepEqual(await refusal(sdk.api.getOwners('999', '1', {})), {
      errorMessage: 'Collection 999 not found (not on chain, or not indexed yet)',
    });
    assert.deepEqual(await refusal(sdk.api.getTokenActivity('1', '3', { bookmark: 'x.y' } as never)), {
      errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.',
    });
  });

  test('per token: pages of 25 with the bookmark rules, a filtered list covering every holder once', async () => {
    // 30 holders of token 5, 10 holders of token 6 only, interleaved
    const holders5 = Array.from({ length: 30 }, () => randomAddress());
    const holders6 = Array.from({ length: 10 }, () => randomAddress());
    chain.setCollection('2', chainCollection('2', alice.platformAddress));
    for (let i = 0; i < 30; i++) {
      const txs = [chain.transfer({ collectionId: '2', from: 'Mint', to: holders5[i], tokenId: 5, amount: 1 })];
      if (i % 3 === 0)
        txs.push(chain.transfer({ collectionId: '2', from: 'Mint', to: holders6[i / 3], tokenId: 6, amount: 1 }));
      chain.addBlock(txs);
    }
    await indexer.catchUp();
    const p1 = await sdk.api.getOwners('2', '5', { bookmark: '' });
    assert.equal(p1.owners.length, 25);
    assert.equal(p1.pagination.hasMore, true);
    const p2 = await sdk.api.getOwners('2', '5', { bookmark: p1.pagination.bookmark });
    assert.deepEqual(p2.pagination, { bookmark: '', hasMore: false });
    const ids = [...p1.owners, ...p2.owners].map((o) => o._docId);
    assert.deepEqual(
      ids,
      [...holders5].reverse().map((a) => `2:${a}`),
    );
    // the bookmark belongs to its list: not the token 6 list, not the collection's owners view
    assert.deepEqual(await refusal(sdk.api.getOwners('2', '6', { bookmark: p1.pagination.bookmark })), {
      errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.',
    });
    const tokens6 = await sdk.api.getOwners('2', '6', {});
    assert.deepEqual(
      tokens6.owners.map((o) => o._docId),
      [...holders6].reverse().map((a) => `2:${a}`),
    );
  });

  test('verifyOwnershipRequirements: the must-own-badges evaluation, with each group passing or not and why', async () => {
    const asset = (ids: [number, number], min: number) => ({
      chain: 'BitBadges',
      collectionId: '1',
      assetIds: [{ start: String(ids[0]), end: String(ids[1]) }],
      ownershipTimes: [],
      mustOwnAmounts: { start: String(min), end: '1000' },
    });
    const requirement = {
      $or: [
        { assets: [asset([3, 3], 5)], options: {} },
        { assets: [asset([3, 3], 1)], options: {} },
      ],
    };
    const res = (
      await t.request('POST', '/api/v0/verifyOwnershipRequirements', {
        body: { address: bob.platformAddress, assetOwnershipRequirements: requirement },
      })
    ).json();
    assert.deepEqual(res, {
      success: true,
      groups: [
        {
          group: 'body.assetOwnershipRequirements.$or[0]',
          success: false,
          error: 'Address does not own enough of IDs 3 in collection 1 to meet minimum balance requirement of 5',
        },
        { group: 'body.assetOwnershipRequirements.$or[1]', success: true },
      ],
    });
    const viaSdk = await sdk.api.verifyOwnershipRequirements({
      address: bob.platformAddress,
      assetOwnershipRequirements: requirement,
    } as never);
    assert.equal(viaSdk.success, true);
    const fails = await sdk.api.verifyOwnershipRequirements({
      address: carol,
      assetOwnershipRequirements: { $and: [{ assets: [asset([1, 2], 1)], options: {} }] },
    } as never);
    assert.deepEqual(
      [fails.success, fails.errorMessage],
      [false, 'Address does not own enough of IDs 1-2 in collection 1 to meet minimum balance requirement of 1'],
    );
    // the plugin refuses the same requirement at claim creation with the same text
    const bad = { assets: [{ ...asset([1, 1], 1), chain: 'Ethereum' }], options: {} };
    assert.deepEqual(
      await refusal(
        sdk.api.verifyOwnershipRequirements({ address: bob.platformAddress, assetOwnershipRequirements: bad } as never),
      ),
      {
        errorMessage:
          'body.assetOwnershipRequirements.assets[0].chain "Ethereum" is not supported: this service reads only its own chain ("BitBadges")',
      },
    );
  });

  test('per account: claim activity, transfer activity, tokens and sign-in requests, each the view of the same name', async () => {
    const claimId = await claimWithPlugins(t, alice.accessToken, [numUses(10)], { showInSearchResults: true });
    assert.equal((await attempt(t, 'complete', claimId, bob.platformAddress)).statusCode, 200);
    await drainQueue(t.ctx);
    const view = async (address: string, viewType: string, token?: string) => {
      const r = await t.request('POST', '/api/v0/users', {
        token,
        body: { accountsToFetch: [{ address, viewsToFetch: [{ viewType, viewId: 'v', bookmark: '' }] }] },
      });
      assert.equal(r.statusCode, 200, r.body);
      return r.json().accounts[0].views.v.ids as string[];
    };
    const claims = await sdk.api.getClaimActivityForUser(bob.platformAddress, {});
    assert.deepEqual(
      claims.activity.map((a) => [a.claimId, a.success]),
      [[claimId, true]],
    );
    assert.deepEqual(
      claims.activity.map((a) => a._docId),
      await view(bob.platformAddress, 'publicClaimActivity'),
    );
    const transfers = await sdk.api.getTransferActivityForUser(bob.platformAddress, {});
    assert.deepEqual(
      transfers.activity.map((a) => a._docId),
      await view(bob.platformAddress, 'transferActivity'),
    );
    assert.equal(transfers.activity.length, 1);
    const collected = await sdk.api.getTokensViewForUser(alice.platformAddress, { viewType: 'collected' });
    assert.deepEqual(
      collected.tokens.map((d) => d._docId),
      await view(alice.platformAddress, 'tokensCollected'),
    );
    // created / managing: the account's owner document in each collection of the view, in its order
    for (const [viewType, name] of [
      ['created', 'createdTokens'],
      ['managing', 'managingTokens'],
    ] as const) {
      const res = await sdk.api.getTokensViewForUser(alice.platformAddress, { viewType });
      const ids = await view(alice.platformAddress, name);
      assert.deepEqual(ids, ['2', '1'], name);
      assert.deepEqual(
        res.tokens.map((d) => d._docId),
        ids.map((id) => `${id}:${alice.platformAddress}`),
      );
      assert.deepEqual(res.pagination, { bookmark: '', hasMore: false });
    }
    const createdRaw = (
      await t.request('GET', `/api/v0/account/${alice.platformAddress}/badges?viewType=created`)
    ).json().tokens;
    assert.deepEqual(
      createdRaw[1],
      (await t.request('GET', `/api/v0/collection/1/balance/${alice.platformAddress}`)).json(),
      'the same document as getBalanceByAddress',
    );
    assert.deepEqual(createdRaw[0].balances, [], 'never touched in collection 2: its default balances');
    const none = await sdk.api.getTokensViewForUser(carol, { viewType: 'managing' });
    assert.deepEqual([none.tokens, none.pagination], [[], { bookmark: '', hasMore: false }]);
    const mine = await sdkClient(t, alice.accessToken).api.getSiwbbRequestsForUser(alice.platformAddress, {});
    assert.deepEqual(
      mine.requests.map((r) => r._docId),
      await view(alice.platformAddress, 'signinRequests', alice.accessToken),
    );
    assert.equal(mine.requests.length, 1);
    const all = await sdkClient(t, bob.accessToken).api.getClaimActivityForUser(bob.platformAddress, {
      viewType: 'all',
    });
    assert.equal(all.activity.length, 1);
    assert.deepEqual(sdk.paths.slice(-6), [
      `GET /api/v0/account/${bob.platformAddress}/activity/claims`,
      `GET /api/v0/account/${bob.platformAddress}/activity/badges`,
      `GET /api/v0/account/${alice.platformAddress}/badges`,
      `GET /api/v0/account/${alice.platformAddress}/badges`,
      `GET /api/v0/account/${alice.platformAddress}/badges`,
      `GET /api/v0/account/${carol}/badges`,
    ]);
    // refusals: another user's sign-ins; all claim activity without a session; a bad bookmark
    assert.deepEqual(
      await refusal(sdkClient(t, bob.accessToken).api.getSiwbbRequestsForUser(alice.platformAddress, {})),
      {
        errorMessage: `querystring: signinRequests is visible only to the account itself (a session of ${alice.platformAddress} holding the manageAccount scope); the session belongs to ${bob.platformAddress}.`,
      },
    );
    assert.deepEqual(await refusal(sdk.api.getClaimActivityForUser(bob.platformAddress, { viewType: 'all' })), {
      errorMessage: `Unauthorized request. querystring: allClaimActivity is visible only to the account itself (a session of ${bob.platformAddress} holding the manageAccount scope).`,
      unauthorized: true,
    });
    assert.deepEqual(
      await refusal(sdk.api.getTransferActivityForUser(bob.platformAddress, { bookmark: 'nope.nope' })),
      {
        errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.',
      },
    );
    // points: no ledger here, so always one empty page, as the pointsActivity view
    const points = await sdk.api.getPointsActivityForUser(alice.platformAddress, {});
    assert.deepEqual([points.activity, points.pagination], [[], { bookmark: '', hasMore: false }]);
    assert.deepEqual(await view(alice.platformAddress, 'pointsActivity'), []);
    assert.deepEqual(sdk.paths.at(-1), `GET /api/v0/account/${alice.platformAddress}/activity/points`);
    assert.deepEqual(await refusal(sdk.api.getPointsActivityForUser(alice.platformAddress, { bookmark: 'x.y' })), {
      errorMessage: 'Invalid bookmark: it was not issued by this list. Send an empty bookmark for the first page.',
    });
    assert.deepEqual(await refusal(sdk.api.getTokensViewForUser('0x1234', {})), {
      errorMessage: 'Invalid address in address: "0x1234" is neither a 0x address nor a bb1… address',
    });
  });
});
