// The indexer following a fake chain from genesis, observed through the public surface: owners and
// activity after mints and transfers, failed transactions ignored, amounts beyond 2^64 exact,
// collection messages re-reading the collection, trackers, a failing read that commits nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.ts';
import {
  addressOf,
  bal,
  balanceStore,
  challengeEvent,
  collectionDoc,
  messageEvent,
  trackerEvent,
  type FakeChain,
} from '../helpers/fake-chain.ts';
import { collectionsRequest, indexerDetails, startIndexedApp, viewPage, waitIndexed } from './helpers.ts';

const MANAGER = addressOf(100);
const A = addressOf(1);
const B = addressOf(2);
const C = addressOf(3);
const BIG = '340282366920938463463374607431768211457'; // 2^128 + 1

describe('chain indexer from genesis', () => {
  let t: TestApp;
  let chain: FakeChain;
  before(async () => {
    ({ t, chain } = await startIndexedApp());
    chain.setCollection('1', collectionDoc('1', MANAGER));
    chain.addBlock([
      chain.tx([messageEvent({ msgType: 'universal_update_collection', collectionId: '1', sender: MANAGER })]),
    ]); // 1: created
    chain.addBlock([chain.transfer({ collectionId: '1', from: 'Mint', to: A, tokenId: 1, amount: 10 })]); // 2: mint
    chain.addBlock([chain.transfer({ collectionId: '1', from: A, to: B, tokenId: 1, amount: 3, memo: 'gift' })]); // 3: transfer
    chain.addBlock([chain.transfer({ collectionId: '1', from: A, to: C, tokenId: 1, amount: 5, failed: true })]); // 4: failed
    chain.addBlock([chain.transfer({ collectionId: '1', from: 'Mint', to: C, tokenId: 2, amount: BIG })]); // 5: beyond 2^64
    await waitIndexed(t, 5);
  });
  after(async () => {
    await t.close();
    await chain.close();
  });

  test('owners are the chain balance stores of the holders, as the owner documents of docs/chain-data.md', async () => {
    const { collection, view } = await viewPage(t, '1', { viewType: 'owners', oldestFirst: true });
    assert.deepEqual(view.ids, [`1:${A}`, `1:${B}`, `1:${C}`]);
    assert.equal(view.type, 'owners');
    assert.deepEqual(view.pagination, { bookmark: '', hasMore: false });
    const byId = new Map(collection.owners.map((o: { _docId: string }) => [o._docId, o]));
    const a = byId.get(`1:${A}`) as Record<string, unknown>;
    assert.deepEqual(Object.keys(a).sort(), [
      '_docId',
      'autoApproveAllIncomingTransfers',
      'autoApproveSelfInitiatedIncomingTransfers',
      'autoApproveSelfInitiatedOutgoingTransfers',
      'balances',
      'collectionId',
      'incomingApprovals',
      'outgoingApprovals',
      'platformAddress',
      'updateHistory',
      'userPermissions',
    ]);
    assert.equal(a.platformAddress, A);
    assert.deepEqual(a.balances, [bal('7', '1')], 'failed tx at block 4 did not move anything');
    assert.deepEqual(Object.keys(a.userPermissions as object).sort(), [
      'canUpdateAutoApproveAllIncomingTransfers',
      'canUpdateAutoApproveSelfInitiatedIncomingTransfers',
      'canUpdateAutoApproveSelfInitiatedOutgoingTransfers',
      'canUpdateIncomingApprovals',
      'canUpdateOutgoingApprovals',
    ]);
    assert.deepEqual(
      (a.updateHistory as { block: string }[]).map((u) => u.block),
      ['2', '3'],
    );
    assert.deepEqual((byId.get(`1:${B}`) as { balances: unknown }).balances, [bal('3', '1')]);
    assert.deepEqual(
      (byId.get(`1:${C}`) as { balances: unknown }).balances,
      [bal(BIG, '2')],
      'amount above 2^64 kept exactly',
    );
  });

  test('transfer activity: legs of successful txs, newest first; oldestFirst; address filter', async () => {
    const newest = await viewPage(t, '1', { viewType: 'transferActivity' });
    assert.deepEqual(newest.view.ids, ['collection-1:5-0-0', 'collection-1:3-0-0', 'collection-1:2-0-0']);
    const docs = newest.collection.activity as Record<string, unknown>[];
    const transfer = docs.find((d) => d._docId === 'collection-1:3-0-0')!;
    assert.equal(transfer.from, A);
    assert.deepEqual(transfer.to, [B]);
    assert.equal(transfer.memo, 'gift');
    assert.equal(transfer.block, '3');
    assert.equal(transfer.txHash, chain.blocks[2].txs[0].hash);
    assert.equal(transfer.timestamp, String(Date.parse(chain.blocks[2].time)));
    assert.deepEqual(transfer.approvalsUsed, [
      { approvalId: 'transferable', approvalLevel: 'collection', approverAddress: '', version: '0' },
    ]);
    assert.deepEqual((docs.find((d) => d._docId === 'collection-1:5-0-0')!.balances as unknown[])[0], bal(BIG, '2'));
    const oldest = await viewPage(t, '1', { viewType: 'transferActivity', oldestFirst: true });
    assert.deepEqual(oldest.view.ids, ['collection-1:2-0-0', 'collection-1:3-0-0', 'collection-1:5-0-0']);
    const ofB = await viewPage(t, '1', { viewType: 'transferActivity', address: B });
    assert.deepEqual(ofB.view.ids, ['collection-1:3-0-0']);
    const ofC = await viewPage(t, '1', { viewType: 'transferActivity', address: C });
    assert.deepEqual(ofC.view.ids, ['collection-1:5-0-0'], 'the failed transfer to C is not activity');
  });

  test('SDK-style routes are views of the same model', async () => {
    const c = await t.request('GET', '/api/v0/collection/1');
    assert.equal(c.statusCode, 200);
    assert.equal(c.json().collection.manager, MANAGER);
    assert.equal(c.json().collection.createdBlock, '1');
    const owners = await t.request('GET', '/api/v0/collection/1/owners?oldestFirst=true');
    assert.deepEqual(
      owners.json().owners.map((o: { _docId: string }) => o._docId),
      [`1:${A}`, `1:${B}`, `1:${C}`],
    );
    assert.deepEqual(owners.json().pagination, { bookmark: '', hasMore: false });
    const act = await t.request('GET', `/api/v0/collection/1/activity?address=${B}`);
    assert.deepEqual(
      act.json().activity.map((d: { _docId: string }) => d._docId),
      ['collection-1:3-0-0'],
    );
    const b = await t.request('GET', `/api/v0/collection/1/balance/${B}`);
    assert.deepEqual(b.json().balances, [bal('3', '1')]);
    const never = await t.request('GET', `/api/v0/collection/1/balance/${addressOf(77)}`);
    assert.equal(never.statusCode, 200);
    assert.deepEqual(never.json().balances, [], "an untouched address holds the collection's defaults");
    assert.equal((await t.request('GET', '/api/v0/collection/99')).statusCode, 404);
    assert.equal((await t.request('GET', '/api/v0/collection/99/owners')).statusCode, 404);
    const bad = await t.request('GET', '/api/v0/collection/abc/owners');
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().errorMessage, /collectionId must be a collection id/);
  });

  test('a collection message re-reads the collection at that height; a manager change shows', async () => {
    chain.setCollection('1', collectionDoc('1', B, { createdBy: MANAGER }));
    const h = chain.addBlock([
      chain.tx([messageEvent({ msgType: 'set_manager', collectionId: '1', sender: MANAGER })]),
    ]);
    await waitIndexed(t, h);
    const c = (await t.request('GET', '/api/v0/collection/1')).json().collection;
    assert.equal(c.manager, B);
    assert.equal(c.createdBlock, '1', 'creation block kept');
    const blocks = c.updateHistory.map((u: { block: string }) => u.block);
    assert.equal(blocks[0], '1');
    assert.equal(blocks.at(-1), String(h));
  });

  test('amount and challenge trackers come from the chain at the block height', async () => {
    const key = {
      collectionId: '1',
      approvalLevel: 'collection',
      approverAddress: '',
      approvalId: 'public-mint',
      amountTrackerId: 'mint-tracker',
      trackerType: 'overall',
      approvedAddress: '',
    };
    chain.setTracker('1/collection//mint-tracker/overall/?approvalId=public-mint', {
      numTransfers: '4',
      amounts: [bal('4', '1')],
      lastUpdatedAt: '1700000000000',
    });
    chain.setChallenge('1/collection//codes/7?approvalId=public-mint', '1');
    const ckey = {
      collectionId: '1',
      approvalLevel: 'collection',
      approverAddress: '',
      approvalId: 'public-mint',
      challengeTrackerId: 'codes',
    };
    const h = chain.addBlock([
      chain.tx([
        trackerEvent({ ...key, numTransfers: '4' }),
        challengeEvent({ ...ckey, leafIndex: '7', creator: A, numUsed: '1' }),
      ]),
    ]);
    await waitIndexed(t, h);
    const trackers = await viewPage(t, '1', { viewType: 'amountTrackers' });
    assert.deepEqual(trackers.view.ids, ['1:collection--public-mint-mint-tracker-overall-']);
    assert.deepEqual(trackers.collection.approvalTrackers[0], {
      _docId: '1:collection--public-mint-mint-tracker-overall-',
      ...key,
      numTransfers: '4',
      amounts: [bal('4', '1')],
      lastUpdatedAt: '1700000000000',
    });
    const challenges = await viewPage(t, '1', { viewType: 'challengeTrackers' });
    assert.deepEqual(challenges.collection.challengeTrackers[0], {
      _docId: '1:collection--public-mint-codes',
      ...ckey,
      usedLeafIndices: [{ leafIndex: '7', usedBy: A }],
    });
    const viaRoute = await t.request('GET', '/api/v0/collection/1/amountTrackers');
    assert.equal(viaRoute.json().amountTrackers[0].numTransfers, '4');
    const viaRoute2 = await t.request('GET', '/api/v0/collection/1/challengeTrackers');
    assert.equal(viaRoute2.json().challengeTrackers.length, 1);
  });

  test("a user-level message re-reads the sender's balance store (approvals change, not balances)", async () => {
    const approval = {
      fromListId: 'All',
      initiatedByListId: 'All',
      approvalId: 'accept-all',
      tokenIds: [{ start: '1', end: '100' }],
    };
    chain.setBalance('1', B, {
      ...balanceStore([bal('3', '1')]),
      incomingApprovals: [approval],
      autoApproveAllIncomingTransfers: false,
    });
    const h = chain.addBlock([
      chain.tx([messageEvent({ msgType: 'set_incoming_approval', collectionId: '1', sender: B })]),
    ]);
    await waitIndexed(t, h);
    const b = (await t.request('GET', `/api/v0/collection/1/balance/${B}`)).json();
    assert.deepEqual(b.incomingApprovals, [approval]);
    assert.equal(b.autoApproveAllIncomingTransfers, false);
    assert.equal(b.updateHistory.at(-1).block, String(h));
  });

  test('a read failing inside a block commits nothing of it; the indexer retries and loses nothing', async () => {
    const before = (await indexerDetails(t))!.indexedHeight;
    chain.intercept({
      match: (p, h) => p.includes(`/get_balance/1/${B}`) && h === before + 2,
      action: { status: 500, message: 'node overloaded' },
      times: 3,
    });
    chain.addBlock([chain.transfer({ collectionId: '1', from: A, to: C, tokenId: 1, amount: 1 })]);
    chain.addBlock([
      chain.transfer({ collectionId: '1', from: A, to: B, tokenId: 1, amount: 1 }),
      chain.transfer({ collectionId: '1', from: A, to: C, tokenId: 1, amount: 1 }),
    ]);
    await waitIndexed(t, before + 2);
    const all = await viewPage(t, '1', { viewType: 'transferActivity', address: A });
    assert.deepEqual(all.view.ids.slice(0, 3), [
      `collection-1:${before + 2}-1-0`,
      `collection-1:${before + 2}-0-0`,
      `collection-1:${before + 1}-0-0`,
    ]);
    const a = (await t.request('GET', `/api/v0/collection/1/balance/${A}`)).json();
    assert.deepEqual(a.balances, [bal('4', '1')]);
    assert.ok(
      chain.requests.filter((r) => r.path.includes(`/get_balance/1/${B}`) && r.height === before + 2).length >= 2,
      'the failing read was retried',
    );
  });
});

describe('collections route: limits and unsupported views', () => {
  let t: TestApp;
  let chain: FakeChain;
  before(async () => {
    ({ t, chain } = await startIndexedApp());
    chain.setCollection('1', collectionDoc('1', MANAGER));
    chain.setBalance('1', A, balanceStore([bal('1', '1')]));
    chain.addBlock([
      chain.tx([messageEvent({ msgType: 'universal_update_collection', collectionId: '1', sender: MANAGER })]),
    ]);
    await waitIndexed(t, 1);
  });
  after(async () => {
    await t.close();
    await chain.close();
  });

  for (const viewType of ['listings', 'tokenFloorPrices']) {
    test(`${viewType} is an empty page (no marketplace data), next to the other views asked for`, async () => {
      const res = await collectionsRequest(t, [
        {
          collectionId: '1',
          viewsToFetch: [
            { viewType, viewId: 'x', bookmark: '' },
            { viewType: 'owners', viewId: 'o', bookmark: '' },
          ],
        },
      ]);
      assert.equal(res.statusCode, 200, res.body);
      const [c] = res.json().collections;
      assert.deepEqual(c.views.x, { ids: [], type: viewType, pagination: { bookmark: '', hasMore: false } });
      assert.equal(c.views.o.type, 'owners', 'the other view is served too');
      assert.deepEqual(c[viewType], []);
    });
  }

  test('unknown view types, bad ids, more than 250 collections and unknown fields are 400s', async () => {
    const unknown = await collectionsRequest(t, [
      { collectionId: '1', viewsToFetch: [{ viewType: 'holders', viewId: 'x', bookmark: '' }] },
    ]);
    assert.equal(unknown.statusCode, 400);
    assert.match(
      unknown.json().errorMessage,
      /"holders" is unknown; collection views are owners, transferActivity, amountTrackers, challengeTrackers/,
    );
    const tooMany = await collectionsRequest(
      t,
      Array.from({ length: 251 }, () => ({ collectionId: '1' })),
    );
    assert.equal(tooMany.statusCode, 400);
    assert.match(tooMany.json().errorMessage, /collectionsToFetch must NOT have more than 250 items/);
    assert.equal(
      (
        await collectionsRequest(
          t,
          Array.from({ length: 250 }, () => ({ collectionId: '1' })),
        )
      ).statusCode,
      200,
    );
    const badId = await collectionsRequest(t, [{ collectionId: '1x' }]);
    assert.equal(badId.statusCode, 400);
    assert.match(badId.json().errorMessage, /collectionsToFetch\[0\]\.collectionId must be a collection id/);
    const extra = await collectionsRequest(t, [{ collectionId: '1', fetchPrivateParams: true }]);
    assert.equal(extra.statusCode, 400);
    assert.match(extra.json().errorMessage, /unknown field "fetchPrivateParams"/);
    const badAddr = await collectionsRequest(t, [
      { collectionId: '1', viewsToFetch: [{ viewType: 'owners', viewId: 'x', bookmark: '', address: 'bb1nope' }] },
    ]);
    assert.equal(badAddr.statusCode, 400);
  });

  test('an unknown collection is null in the batch; the response carries every document array', async () => {
    const res = await collectionsRequest(t, [{ collectionId: '1' }, { collectionId: '42' }]);
    assert.equal(res.statusCode, 200);
    const [one, missing] = res.json().collections;
    assert.equal(missing, null);
    for (const k of ['activity', 'owners', 'challengeTrackers', 'approvalTrackers', 'listings', 'claims'])
      assert.deepEqual(one[k], [], k);
    assert.deepEqual(one.views, {});
    assert.equal(one._docId, '1');
  });
});

describe('a deleted collection', () => {
  test('is purged from the read model with its balances; its activity stays', async () => {
    const { t, chain } = await startIndexedApp();
    try {
      chain.setCollection('5', collectionDoc('5', MANAGER));
      chain.addBlock([chain.transfer({ collectionId: '5', from: 'Mint', to: A, tokenId: 1, amount: 1 })]);
      await waitIndexed(t, 1);
      assert.equal((await t.request('GET', `/api/v0/collection/5/balance/${A}`)).statusCode, 200);
      chain.setCollection('5', null);
      chain.addBlock([chain.tx([messageEvent({ msgType: 'delete_collection', collectionId: '5', sender: MANAGER })])]);
      await waitIndexed(t, 2);
      assert.equal((await t.request('GET', '/api/v0/collection/5')).statusCode, 404);
      const rows = await collectionsRequest(t, [{ collectionId: '5' }]);
      assert.deepEqual(rows.json().collections, [null]);
      const { accountChainView } = await import('../../src/chain/account-views.ts');
      assert.deepEqual((await accountChainView(t.ctx, A, 'tokensCollected', {})).docs, [], 'balances purged');
      assert.equal((await accountChainView(t.ctx, A, 'transferActivity', {})).docs.length, 1, 'the mint happened');
    } finally {
      await t.close();
      await chain.close();
    }
  });
});

describe('CHAIN_START_HEIGHT', () => {
  let t: TestApp;
  let chain: FakeChain;
  after(async () => {
    await t.close();
    await chain.close();
  });

  test('without a cursor the indexer starts at CHAIN_START_HEIGHT and reads nothing before it', async () => {
    const { startFakeChain } = await import('../helpers/fake-chain.ts');
    chain = await startFakeChain();
    chain.setCollection('3', collectionDoc('3', MANAGER));
    chain.addBlock([chain.transfer({ collectionId: '3', from: 'Mint', to: A, tokenId: 1, amount: 1 })]);
    chain.advanceTo(5);
    chain.addBlock([chain.transfer({ collectionId: '3', from: 'Mint', to: B, tokenId: 1, amount: 2 })]); // 6
    ({ t } = await startIndexedApp({ chain, env: { CHAIN_START_HEIGHT: '6' } }));
    await waitIndexed(t, 6);
    const blockReads = chain.requests
      .map((r) => /\/blocks\/(\d+)$/.exec(r.path)?.[1])
      .filter((x): x is string => x !== undefined)
      .map(Number);
    assert.deepEqual(blockReads, [6]);
    const { view } = await viewPage(t, '3', { viewType: 'owners' });
    assert.deepEqual(view.ids, [`3:${B}`], 'the mint at block 1 was before the start height');
  });
});

describe('catching up on demand', () => {
  test('a catch-up right after another one indexes the blocks added between them (the chain head is read fresh)', async () => {
    const { startFakeChain } = await import('../helpers/fake-chain.ts');
    const { startApp } = await import('../helpers/app.ts');
    const { createIndexer } = await import('../../src/chain/loops.ts');
    const chain = await startFakeChain();
    const t = await startApp({ listen: true, env: { CHAIN_REST_URL: chain.url, RUN_WORKER: 'false' } });
    try {
      const indexer = createIndexer(t.ctx)!;
      chain.setCollection('7', collectionDoc('7', MANAGER));
      chain.addBlock([chain.transfer({ collectionId: '7', from: 'Mint', to: A, tokenId: 1, amount: 1 })]);
      assert.equal(await indexer.catchUp(), 1);
      // at once: the client's short cache of the chain head must not hide the new block
      chain.setCollection('8', collectionDoc('8', MANAGER));
      chain.addBlock([chain.transfer({ collectionId: '8', from: 'Mint', to: B, tokenId: 1, amount: 2 })]);
      assert.equal(await indexer.catchUp(), 1);
      const { view } = await viewPage(t, '8', { viewType: 'owners' });
      assert.deepEqual(view.ids, [`8:${B}`]);
    } finally {
      await t.close();
      await chain.close();
    }
  });
});
