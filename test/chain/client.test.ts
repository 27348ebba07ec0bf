// The chain REST client against the fake chain: pinned reads, ordering of tx results, request
// coalescing, the TTL cache, and errors that name the chain instead of hanging.
// test-run: once (no database: pure code; scripts/test.mjs)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChainClient, ChainError } from '../../src/chain/client.ts';
import { addressOf, balanceStore, bal, collectionDoc, type FakeChain, startFakeChain } from '../helpers/fake-chain.ts';

const A = addressOf(1);
const B = addressOf(2);

describe('chain client', () => {
  let chain: FakeChain;
  let client: ChainClient;
  before(async () => {
    chain = await startFakeChain();
    client = new ChainClient({ baseUrl: chain.url, timeoutMs: 10_000 });
    chain.setCollection('1', collectionDoc('1', A));
    chain.addBlock([chain.transfer({ collectionId: '1', from: 'Mint', to: A, tokenId: 1, amount: 10 })]);
    chain.addBlock(
      Array.from({ length: 130 }, (_, i) =>
        chain.transfer({ collectionId: '1', from: A, to: B, tokenId: 1, amount: 0, failed: i % 2 === 1 }),
      ),
    );
    chain.setBalance('1', B, balanceStore([bal('340282366920938463463374607431768211456', 7)]));
    chain.addBlock();
  });
  after(async () => {
    await client.close();
    await chain.close();
  });

  test('latest block, block by height, results of a block in block order across tx-search pages', async () => {
    const latest = await client.latestBlock();
    assert.equal(latest.height, 3);
    const b2 = await client.block(2);
    assert.equal(b2.txs.length, 130);
    const results = await client.blockResults(2, b2.txs);
    assert.equal(results.length, 130);
    assert.deepEqual(
      results.map((r) => r.index),
      [...Array(130).keys()],
    );
    assert.deepEqual(
      results.map((r) => r.hash),
      chain.blocks[1].txs.map((t) => t.hash),
    );
    assert.equal(results[1].code, 5);
    assert.ok(
      chain.requests.some((r) => r.path.includes('page=2')),
      'second tx-search page read',
    );
  });

  test('state reads pinned to a height see that height', async () => {
    const at1 = await client.balance('1', B, { height: 1 });
    assert.deepEqual(at1.balances, []);
    const at3 = await client.balance('1', B, { height: 3 });
    assert.equal(at3.balances[0].amount, '340282366920938463463374607431768211456');
    assert.equal(chain.requests.at(-1)!.height, 3);
    assert.equal(await client.collection('999'), null, 'unknown collection is null');
  });

  test('concurrent reads of one key make one call; native balance is cached briefly', async () => {
    chain.nativeBalances.set(A, '2500000000');
    let release!: () => void;
    chain.intercept({
      match: (p) => p.includes('/by_denom'),
      action: { wait: new Promise<void>((r) => (release = r)) },
      times: 1,
    });
    const before = chain.requests.length;
    const reads = Array.from({ length: 20 }, () => client.nativeBalance(A));
    await new Promise((r) => setTimeout(r, 50));
    release();
    assert.deepEqual(new Set(await Promise.all(reads)), new Set(['2500000000']));
    assert.equal(await client.nativeBalance(A), '2500000000');
    assert.equal(chain.requests.length - before, 1, 'one HTTP call for 21 reads');
  });

  test('a chain error answers 502 naming the chain; a silent chain 503 within the timeout', async () => {
    chain.intercept({
      match: (p) => p.includes('/get_balance/1/'),
      action: { status: 500, message: 'boom' },
      times: 1,
    });
    await assert.rejects(
      client.balance('1', A),
      (err: unknown) =>
        err instanceof ChainError && err.statusCode === 502 && /CHAIN_REST_URL.*answered 500.*boom/.test(err.message),
    );
    chain.intercept({ match: (p) => p.includes('/blocks/1'), action: { wait: new Promise(() => {}) }, times: 1 });
    const impatient = new ChainClient({ baseUrl: chain.url, timeoutMs: 500 });
    // the block never answers: the rejection itself shows the 500 ms timeout applied
    await assert.rejects(
      impatient.block(1),
      (err: unknown) => err instanceof ChainError && err.statusCode === 503 && /unreachable.*500 ms/.test(err.message),
    );
    await impatient.close();
    const dead = new ChainClient({ baseUrl: 'http://127.0.0.1:1', timeoutMs: 500 });
    await assert.rejects(
      dead.latestBlock(),
      (err: unknown) =>
        err instanceof ChainError && err.statusCode === 503 && /CHAIN_REST_URL\) is unreachable/.test(err.message),
    );
    await dead.close();
  });
});
