// `platform import-chain FILE` starts the read model at a height without replaying history; the
// indexer then follows from height + 1. On that model: every view's paging (25 a page, exact
// hasMore, signed bookmarks bound to their view), oldestFirst and the address filter.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestApp, type TestDatabase } from '../helpers/app.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { addressOf, bal, balanceStore, collectionDoc, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { startIndexedApp, viewPage, waitIndexed } from './helpers.ts';

const MANAGER = addressOf(100);
const SNAPSHOT_HEIGHT = 100;
const holders = Array.from({ length: 30 }, (_, i) => addressOf(500 + i));
const EXACT = '18446744073709551616000'; // 2^64 × 1000

function snapshot() {
  return {
    height: String(SNAPSHOT_HEIGHT),
    blockTime: '2026-07-13T12:00:00Z',
    collections: [collectionDoc('7', MANAGER)],
    balances: holders.map((address, i) => ({
      collectionId: '7',
      address,
      balance: balanceStore([bal(i === 0 ? EXACT : String(i + 1), '1')]),
    })),
    amountTrackers: Array.from({ length: 27 }, (_, i) => ({
      collectionId: '7',
      approvalLevel: 'incoming',
      approverAddress: i % 2 ? holders[1] : holders[2],
      approvalId: `approval-${i}`,
      amountTrackerId: 'per-user',
      trackerType: 'to',
      approvedAddress: holders[3],
      numTransfers: String(i),
      amounts: [],
      lastUpdatedAt: '0',
    })),
    challengeTrackers: [
      {
        collectionId: '7',
        approvalLevel: 'collection',
        approverAddress: '',
        approvalId: 'claim',
        challengeTrackerId: 'codes',
        usedLeafIndices: [{ leafIndex: '0', usedBy: holders[4] }],
      },
      ...Array.from({ length: 29 }, (_, i) => ({
        collectionId: '7',
        approvalLevel: 'incoming',
        approverAddress: holders[5],
        approvalId: `in-${String(i).padStart(2, '0')}`,
        challengeTrackerId: 'c',
        usedLeafIndices: [],
      })),
    ],
  };
}

describe('indexing from an imported snapshot; view paging', () => {
  let t: TestApp;
  let chain: FakeChain;
  let database: TestDatabase;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chain-snapshot-'));
    database = createTestDatabase();
    const file = join(dir, 'snapshot.json');
    writeFileSync(file, JSON.stringify(snapshot()));
    const res = await runCliInProcess(['import-chain', file], database.env);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(JSON.parse(res.stdout), {
      height: 100,
      collections: 1,
      balances: 30,
      amountTrackers: 27,
      challengeTrackers: 30,
    });

    chain = await startFakeChain();
    chain.advanceTo(SNAPSHOT_HEIGHT);
    chain.prunedBelow = SNAPSHOT_HEIGHT; // history before the snapshot is not available: nothing may need it
    chain.setCollection('7', collectionDoc('7', MANAGER), SNAPSHOT_HEIGHT);
    ({ t } = await startIndexedApp({ database, chain }));
    // after the snapshot: holder 0 sends 1 of token 1 to a new address
    chain.setBalance('7', holders[0], balanceStore([bal('18446744073709551615999', '1')]));
    chain.setBalance('7', addressOf(999), balanceStore([bal('1', '1')]));
    const { transferEvent } = await import('../helpers/fake-chain.ts');
    chain.addBlock([
      chain.tx([transferEvent({ collectionId: '7', from: holders[0], to: addressOf(999), balances: [bal('1', '1')] })]),
    ]);
    await waitIndexed(t, SNAPSHOT_HEIGHT + 1);
  });
  after(async () => {
    await t.close();
    await chain.close();
  });

  test('the indexer resumed at snapshot height + 1 and read nothing before it', async () => {
    const blockReads = chain.requests
      .map((r) => /\/blocks\/(\d+)$/.exec(r.path)?.[1])
      .filter((x): x is string => x !== undefined)
      .map(Number);
    assert.deepEqual(blockReads, [SNAPSHOT_HEIGHT + 1]);
    const first = await t.request('GET', `/api/v0/collection/7/balance/${holders[0]}`);
    assert.deepEqual(first.json().balances, [bal('18446744073709551615999', '1')], 'exact after the transfer');
    assert.deepEqual(
      first.json().updateHistory.map((u: { block: string }) => u.block),
      ['100', '101'],
    );
  });

  test('owners: pages of 25, exact hasMore, newest first by default, oldestFirst reverses, address narrows', async () => {
    const p1 = await viewPage(t, '7', { viewType: 'owners' });
    assert.equal(p1.view.ids.length, 25);
    assert.equal(p1.view.pagination.hasMore, true);
    assert.equal(p1.view.ids[0], `7:${addressOf(999)}`, 'newest holder first');
    const p2 = await viewPage(t, '7', { viewType: 'owners', bookmark: p1.view.pagination.bookmark });
    assert.equal(p2.view.ids.length, 6);
    assert.deepEqual(p2.view.pagination, { bookmark: '', hasMore: false });
    const all = [...p1.view.ids, ...p2.view.ids];
    assert.equal(new Set(all).size, 31);
    assert.equal(p2.collection.owners.length, 6, 'each response holds only its page');

    const o1 = await viewPage(t, '7', { viewType: 'owners', oldestFirst: true });
    const o2 = await viewPage(t, '7', { viewType: 'owners', oldestFirst: true, bookmark: o1.view.pagination.bookmark });
    assert.deepEqual([...o1.view.ids, ...o2.view.ids], [...all].reverse());

    const one = await viewPage(t, '7', { viewType: 'owners', address: holders[0] });
    assert.deepEqual(one.view.ids, [`7:${holders[0]}`]);
    const evm = await viewPage(t, '7', {
      viewType: 'owners',
      address: '0x' + Buffer.from(new Uint8Array(20)).toString('hex'),
    });
    assert.deepEqual(evm.view.ids, []);
  });

  test('bookmarks are bound to their view: tampered, foreign or other-order bookmarks are 400s', async () => {
    const p1 = await viewPage(t, '7', { viewType: 'owners' });
    const bm = p1.view.pagination.bookmark;
    const send = (viewType: string, bookmark: string, extra: Record<string, unknown> = {}) =>
      t.request('POST', '/api/v0/collections', {
        body: {
          collectionsToFetch: [{ collectionId: '7', viewsToFetch: [{ viewType, viewId: 'v', bookmark, ...extra }] }],
        },
      });
    for (const [viewType, bookmark, extra] of [
      ['owners', bm.slice(0, -2) + (bm.endsWith('AA') ? 'BB' : 'AA'), {}],
      ['amountTrackers', bm, {}],
      ['owners', bm, { oldestFirst: true }],
      ['owners', bm, { address: holders[0] }],
    ] as const) {
      const res = await send(viewType, bookmark, extra);
      assert.equal(res.statusCode, 400, `${viewType} ${JSON.stringify(extra)}`);
      assert.match(res.json().errorMessage, /Invalid bookmark/);
    }
    const route = await t.request('GET', `/api/v0/collection/7/owners?bookmark=${encodeURIComponent(bm)}`);
    assert.equal(route.statusCode, 200, 'the SDK route pages the same view');
    assert.equal(route.json().owners.length, 6);
  });

  test('amount trackers: 27 paged 25 + 2; address matches approver or approved address', async () => {
    const p1 = await viewPage(t, '7', { viewType: 'amountTrackers', oldestFirst: true });
    assert.equal(p1.view.ids.length, 25);
    const p2 = await viewPage(t, '7', {
      viewType: 'amountTrackers',
      oldestFirst: true,
      bookmark: p1.view.pagination.bookmark,
    });
    assert.equal(p2.view.ids.length, 2);
    assert.equal(p2.view.pagination.hasMore, false);
    const byApprover = await viewPage(t, '7', { viewType: 'amountTrackers', address: holders[1] });
    assert.equal(byApprover.view.ids.length, 13);
    assert.ok(
      byApprover.collection.approvalTrackers.every(
        (d: { approverAddress: string }) => d.approverAddress === holders[1],
      ),
    );
    const byApproved = await viewPage(t, '7', { viewType: 'amountTrackers', address: holders[3] });
    assert.equal(byApproved.view.ids.length, 25);
    assert.equal(byApproved.view.pagination.hasMore, true);
  });

  test('challenge trackers and activity views after the import', async () => {
    const c1 = await viewPage(t, '7', { viewType: 'challengeTrackers' });
    const c2 = await viewPage(t, '7', { viewType: 'challengeTrackers', bookmark: c1.view.pagination.bookmark });
    assert.deepEqual([c1.view.ids.length, c2.view.ids.length, c2.view.pagination.hasMore], [25, 5, false]);
    const o1 = await viewPage(t, '7', { viewType: 'challengeTrackers', oldestFirst: true });
    const o2 = await viewPage(t, '7', {
      viewType: 'challengeTrackers',
      oldestFirst: true,
      bookmark: o1.view.pagination.bookmark,
    });
    assert.deepEqual([...o1.view.ids, ...o2.view.ids], [...c1.view.ids, ...c2.view.ids].reverse());
    const codes = [...c1.collection.challengeTrackers, ...c2.collection.challengeTrackers].find(
      (d: { _docId: string }) => d._docId === '7:collection--claim-codes',
    );
    assert.deepEqual(codes.usedLeafIndices, [{ leafIndex: '0', usedBy: holders[4] }]);
    const approver = await viewPage(t, '7', { viewType: 'challengeTrackers', address: holders[5] });
    assert.equal(approver.view.ids.length, 25);
    assert.ok(
      approver.collection.challengeTrackers.every((d: { approverAddress: string }) => d.approverAddress === holders[5]),
    );
    const none = await viewPage(t, '7', { viewType: 'challengeTrackers', address: holders[4] });
    assert.deepEqual(none.view.ids, [], 'address filters challenge trackers by approver');
    const act = await viewPage(t, '7', { viewType: 'transferActivity' });
    assert.deepEqual(act.view.ids, ['collection-7:101-0-0'], 'a snapshot carries no history; activity starts after it');
  });

  test('a malformed snapshot is refused whole, naming the field', async () => {
    const bad = snapshot();
    (bad.balances[3].balance.balances as { amount: unknown }[])[0].amount = 12;
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify(bad));
    const res = await runCliInProcess(['import-chain', file], database.env);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /balances\[3\]\.balance\.balances\[0\]\.amount must be a decimal string/);
    const still = await t.request('GET', `/api/v0/collection/7/balance/${addressOf(999)}`);
    assert.deepEqual(still.json().balances, [bal('1', '1')], 'nothing replaced');
  });
});

describe('import-chain while an indexer runs', () => {
  test('the running indexer loses its lease, resumes after the snapshot height, and the old model is gone', async () => {
    const chain = await startFakeChain();
    const { t } = await startIndexedApp({ chain });
    try {
      chain.setCollection('1', collectionDoc('1', MANAGER));
      chain.addBlock([chain.transfer({ collectionId: '1', from: 'Mint', to: holders[0], tokenId: 1, amount: 1 })]);
      await waitIndexed(t, 1);
      chain.advanceTo(50);
      chain.prunedBelow = 50;
      chain.setCollection('7', collectionDoc('7', MANAGER), 50);
      const dir2 = mkdtempSync(join(tmpdir(), 'chain-snapshot-'));
      const file = join(dir2, 'snap.json');
      writeFileSync(file, JSON.stringify({ ...snapshot(), height: '50', amountTrackers: [], challengeTrackers: [] }));
      const res = await runCliInProcess(['import-chain', file], t.database.env);
      assert.equal(res.code, 0, res.stderr);
      chain.addBlock([chain.transfer({ collectionId: '7', from: 'Mint', to: addressOf(4242), tokenId: 1, amount: 5 })]); // 51
      await waitIndexed(t, 51);
      assert.equal(
        (await t.request('GET', '/api/v0/collection/1')).statusCode,
        404,
        'the pre-import model was replaced',
      );
      const owners = await viewPage(t, '7', { viewType: 'owners' });
      assert.equal(owners.view.ids[0], `7:${addressOf(4242)}`);
      assert.equal(owners.view.pagination.hasMore, true);
    } finally {
      await t.close();
      await chain.close();
    }
  });
});
