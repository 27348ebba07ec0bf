// test-run: once (no database: pure code; scripts/test.mjs)
// The per-context parsed balance stores (chain/stored-balances.ts): a store is parsed again
// whenever its text changed, kept balances are shared and frozen, and the bounds hold, dropping
// the addresses read least recently first.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ParsedBalanceStores } from '../../src/chain/stored-balances.ts';

const store = (amount: number, tokenId = 1) =>
  JSON.stringify({
    balances: [
      {
        amount: String(amount),
        tokenIds: [{ start: String(tokenId), end: String(tokenId) }],
        ownershipTimes: [{ start: '1', end: '18446744073709551615' }],
      },
    ],
    outgoingApprovals: [],
  });

describe('parsed balance stores', () => {
  test('the same text is parsed once; another text for the same store is parsed again', () => {
    const cache = new ParsedBalanceStores();
    const first = cache.balancesOf(cache.storesOf('a'), '1', store(5));
    assert.deepEqual(first, [
      { amount: 5n, tokenIds: [{ start: 1n, end: 1n }], ownershipTimes: [{ start: 1n, end: 2n ** 64n - 1n }] },
    ]);
    // an equal text read anew (another string) is the kept parse
    assert.equal(cache.balancesOf(cache.storesOf('a'), '1', store(5)), first);
    const changed = cache.balancesOf(cache.storesOf('a'), '1', store(6));
    assert.equal(changed[0].amount, 6n);
    // and back: the previous text is not remembered beside the current one
    assert.notEqual(cache.balancesOf(cache.storesOf('a'), '1', store(5)), first);
    assert.deepEqual(cache.size, { entries: 1, chars: store(5).length });
  });

  test('kept balances are frozen: no reader can change them for the next', () => {
    const cache = new ParsedBalanceStores();
    const kept = cache.balancesOf(cache.storesOf('a'), '1', store(5));
    assert.throws(() => {
      kept[0].amount = 1n;
    }, TypeError);
    assert.throws(() => {
      kept[0].tokenIds[0].end = 9n;
    }, TypeError);
    assert.throws(() => kept.push(kept[0]), TypeError);
  });

  test('at most maxEntries stores: the addresses read least recently go first', () => {
    const cache = new ParsedBalanceStores(3, 1_000_000);
    for (const address of ['a', 'b']) cache.balancesOf(cache.storesOf(address), '1', store(1));
    const aKept = cache.balancesOf(cache.storesOf('a'), '2', store(2)); // a read again: b is now the oldest
    cache.balancesOf(cache.storesOf('c'), '1', store(3));
    assert.equal(cache.size.entries, 3);
    // b was dropped, a kept
    assert.equal(cache.balancesOf(cache.storesOf('a'), '2', store(2)), aKept);
    assert.equal(cache.size.entries, 3);
    const bAgain = cache.balancesOf(cache.storesOf('b'), '1', store(1));
    assert.equal(cache.balancesOf(cache.storesOf('b'), '1', store(1)), bAgain);
    assert.ok(cache.size.entries <= 3);
  });

  test('at most maxChars of text; a text longer than that alone is not kept', () => {
    const len = store(1).length;
    const cache = new ParsedBalanceStores(1000, 2 * len);
    for (const address of ['a', 'b', 'c']) cache.balancesOf(cache.storesOf(address), '1', store(1));
    assert.deepEqual(cache.size, { entries: 2, chars: 2 * len });
    const tiny = new ParsedBalanceStores(1000, len - 1);
    const parsed = tiny.balancesOf(tiny.storesOf('a'), '1', store(7));
    assert.equal(parsed[0].amount, 7n);
    assert.deepEqual(tiny.size, { entries: 0, chars: 0 });
    // read again: parsed again, the same answer
    assert.deepEqual(tiny.balancesOf(tiny.storesOf('a'), '1', store(7)), parsed);
  });
});
