// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_UINT64,
  addToRanges,
  parseUintRanges,
  rangesContain,
  rangesSize,
  rangesToJson,
  sortAndMerge,
  subtractRanges,
  type UintRange,
} from '../../src/shared/uint-ranges.ts';
import { ApiError } from '../../src/shared/errors.ts';

const r = (start: bigint | number, end: bigint | number): UintRange => ({ start: BigInt(start), end: BigInt(end) });

describe('UintRanges', () => {
  test('sort and merge joins overlapping and adjacent ranges', () => {
    assert.deepEqual(sortAndMerge([r(10, 12), r(1, 3), r(4, 5), r(11, 20), r(30, 30)]), [
      r(1, 5),
      r(10, 20),
      r(30, 30),
    ]);
    assert.deepEqual(sortAndMerge([]), []);
  });

  test('contain', () => {
    const rs = [r(1, 5), r(10, 10)];
    assert.equal(rangesContain(rs, 1n), true);
    assert.equal(rangesContain(rs, 5n), true);
    assert.equal(rangesContain(rs, 6n), false);
    assert.equal(rangesContain(rs, 10n), true);
    assert.equal(rangesContain([r(0, MAX_UINT64)], MAX_UINT64), true);
  });

  test('subtract splits, trims and removes', () => {
    assert.deepEqual(subtractRanges([r(1, 10)], [r(4, 6)]), [r(1, 3), r(7, 10)]);
    assert.deepEqual(subtractRanges([r(1, 10)], [r(1, 10)]), []);
    assert.deepEqual(subtractRanges([r(1, 10), r(20, 30)], [r(5, 25)]), [r(1, 4), r(26, 30)]);
    assert.deepEqual(subtractRanges([r(1, 10)], [r(11, 20)]), [r(1, 10)]);
    assert.deepEqual(subtractRanges([r(0, MAX_UINT64)], [r(1, MAX_UINT64)]), [r(0, 0)]);
  });

  test('bounds beyond 2^53 stay exact', () => {
    const big = 2n ** 60n + 1n;
    const merged = addToRanges([r(big, big)], big + 1n);
    assert.deepEqual(rangesToJson(merged), [{ start: (2n ** 60n + 1n).toString(), end: (2n ** 60n + 2n).toString() }]);
    assert.equal(rangesSize([r(0, MAX_UINT64)]), MAX_UINT64 + 1n);
    assert.deepEqual(parseUintRanges([{ start: '18446744073709551615', end: '18446744073709551615' }]), [
      r(MAX_UINT64, MAX_UINT64),
    ]);
  });

  test('validation refuses bad ranges with a 400 naming the field', () => {
    const bad = (v: unknown, re: RegExp) =>
      assert.throws(
        () => parseUintRanges(v, 'times'),
        (e: unknown) => e instanceof ApiError && e.statusCode === 400 && re.test(e.message),
      );
    bad([{ start: '5', end: '4' }], /times\[0\]\.start must not exceed/);
    bad([{ start: '18446744073709551616', end: '18446744073709551616' }], /exceeds/);
    bad([{ start: '-1', end: '4' }], /times\[0\]\.start/);
    bad([{ start: '1.5', end: '4' }], /times\[0\]\.start/);
    bad([{ start: '1' }], /times\[0\]\.end/);
    bad('nope', /times must be an array/);
  });
});
