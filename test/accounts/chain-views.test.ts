// The chain-backed account views (transferActivity, tokensCollected, createdTokens,
// managingTokens): a fake chain's blocks go through the real indexer into the read model, and
// POST /api/v0/users pages them. They keep answering from the read model while the chain is down.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { collectionDoc, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { createIndexer } from '../../src/chain/loops.ts';
import { toPlatformAddress } from '../../src/shared/addresses.ts';

const randomAddress = () => toPlatformAddress(randomBytes(20));

interface View {
  ids: string[];
  type: string;
  pagination: { bookmark: string; hasMore: boolean };
}
type Account = Record<string, unknown> & { views: Record<string, View> };

describe('chain-backed account views', () => {
  let chain: FakeChain;
  const [alice, bob, carol] = [randomAddress(), randomAddress(), randomAddress()];

  async function account(address: string, viewType: string, bookmark = '', oldestFirst?: boolean): Promise<Account> {
    const res = await t.request('POST', '/api/v0/users', {
      body: {
        accountsToFetch: [
          {
            address,
            viewsToFetch: [{ viewType, viewId: 'v', bookmark, ...(oldestFirst !== undefined ? { oldestFirst } : {}) }],
          },
        ],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().accounts[0];
  }

  async function pageAll(address: string, viewType: string, field: string, oldestFirst?: boolean) {
    const pages: Array<Array<Record<string, unknown>>> = [];
    let bookmark = '';
    for (;;) {
      const a = await account(address, viewType, bookmark, oldestFirst);
      const docs = a[field] as Array<Record<string, unknown>>;
      assert.deepEqual(
        a.views.v.ids,
        docs.map((d) => d._docId),
      );
      assert.equal(a.views.v.type, viewType);
      pages.push(docs);
      if (!a.views.v.pagination.hasMore) return pages;
      bookmark = a.views.v.pagination.bookmark;
    }
  }

  before(async () => {
    chain = await startFakeChain();
    // collection 1: created and managed by alice; collection 2: created by alice, managed by bob
    chain.setCollection('1', collectionDoc('1', alice));
    chain.setCollection('2', collectionDoc('2', bob, { createdBy: alice }));
    chain.addBlock([
      chain.transfer({ collectionId: '1', from: 'Mint', to: alice, tokenId: 1, amount: 100 }),
      chain.transfer({ collectionId: '2', from: 'Mint', to: bob, tokenId: 7, amount: 1 }),
    ]);
    // 29 transfers alice → carol over several blocks, and one failed transfer that must not count
    for (let b = 0; b < 5; b++)
      chain.addBlock(
        Array.from({ length: b < 4 ? 6 : 5 }, () =>
          chain.transfer({ collectionId: '1', from: alice, to: carol, tokenId: 1, amount: 2 }),
        ),
      );
    chain.addBlock([
      chain.transfer({ collectionId: '1', from: carol, to: bob, tokenId: 1, amount: 1000, failed: true }),
    ]);
  });
  const t = useApp({ env: () => ({ CHAIN_REST_URL: chain.url, RUN_WORKER: 'false' }) });
  before(async () => {
    await createIndexer(t.ctx)!.catchUp();
  });
  after(() => chain.close());

  test('transferActivity: the address as sender or recipient, newest first, pages of 25, oldestFirst', async () => {
    const newest = await pageAll(alice, 'transferActivity', 'activity');
    assert.deepEqual(
      newest.map((p) => p.length),
      [25, 5],
      '1 mint + 29 sends',
    );
    const docs = newest.flat();
    assert.equal(docs[docs.length - 1].from, 'Mint');
    assert.deepEqual(docs[docs.length - 1].to, [alice]);
    for (let i = 1; i < docs.length; i++) assert.ok(Number(docs[i - 1].block) >= Number(docs[i].block), 'newest first');
    assert.ok(docs.slice(0, -1).every((d) => d.from === alice && (d.to as string[])[0] === carol));
    const oldest = (await pageAll(alice, 'transferActivity', 'activity', true)).flat();
    assert.deepEqual(
      oldest.map((d) => d._docId),
      docs.map((d) => d._docId).reverse(),
    );

    const carols = (await pageAll(carol, 'transferActivity', 'activity')).flat();
    assert.equal(carols.length, 29, 'the failed transfer is not activity');
    assert.deepEqual((await pageAll(randomAddress(), 'transferActivity', 'activity')).flat(), []);
  });

  test('tokensCollected: owner documents with an amount above 0', async () => {
    const [carolDocs] = await pageAll(carol, 'tokensCollected', 'collected');
    assert.equal(carolDocs.length, 1);
    assert.equal(carolDocs[0]._docId, `1:${carol}`);
    assert.equal(carolDocs[0].platformAddress, carol);
    assert.deepEqual(
      (carolDocs[0].balances as Array<{ amount: string }>).map((b) => b.amount),
      ['58'],
    );
    const [aliceDocs] = await pageAll(alice, 'tokensCollected', 'collected');
    assert.deepEqual(
      aliceDocs.map((d) => d._docId),
      [`1:${alice}`],
    );
    const [bobDocs] = await pageAll(bob, 'tokensCollected', 'collected');
    assert.deepEqual(
      bobDocs.map((d) => d._docId),
      [`2:${bob}`],
      'the failed transfer gave bob nothing in collection 1',
    );
  });

  test('createdTokens and managingTokens: collection documents by creator and by current manager', async () => {
    const created = (await pageAll(alice, 'createdTokens', 'collections')).flat();
    assert.deepEqual(created.map((d) => d._docId).sort(), ['1', '2']);
    assert.equal(created.find((d) => d._docId === '2')!.manager, bob);
    assert.deepEqual(
      (await pageAll(alice, 'managingTokens', 'collections')).flat().map((d) => d._docId),
      ['1'],
    );
    assert.deepEqual(
      (await pageAll(bob, 'managingTokens', 'collections')).flat().map((d) => d._docId),
      ['2'],
    );
    assert.deepEqual((await pageAll(carol, 'createdTokens', 'collections')).flat(), []);
  });

  test('the views answer from the read model while the chain is down; the balance says why it is missing', async () => {
    await chain.down();
    try {
      const a = await account(carol, 'tokensCollected');
      assert.equal((a.collected as unknown[]).length, 1);
      // (carol's balance may still be the one read a moment ago: the client reuses it for 2 s)
      const fresh = await account(randomAddress(), 'transferActivity');
      assert.equal(fresh.balance, undefined);
      assert.match(String(fresh.balanceError), /CHAIN_REST_URL/);
    } finally {
      await chain.up();
    }
  });
});
