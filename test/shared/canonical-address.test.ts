// The fast canonicalisation (`toCanonical`, hot in batch edits) must accept, reject and output
// exactly what the full parser (`tryParseAddress`) does.
// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  toCanonical as canonicalAddress,
  toChecksumAddress,
  toPlatformAddress,
  tryParseAddress,
} from '../../src/shared/addresses.ts';
import { ApiError } from '../../src/shared/errors.ts';

function both(input: unknown): { fast: string | number; shared: string | null } {
  let fast: string | number;
  try {
    fast = canonicalAddress(input, 'f');
  } catch (e) {
    assert.ok(e instanceof ApiError);
    fast = e.statusCode;
  }
  return { fast, shared: tryParseAddress(input)?.platformAddress ?? null };
}

describe('toCanonical (fast path) agrees with tryParseAddress', () => {
  test('agrees with the shared parser on valid, malformed and edge-case inputs', () => {
    const inputs: unknown[] = [
      undefined,
      null,
      5,
      '',
      'bb1',
      'hello',
      '0x',
      '0x' + '0'.repeat(40),
      toPlatformAddress(new Uint8Array(20)),
    ];
    for (let i = 0; i < 300; i++) {
      const bytes = randomBytes(20);
      const native = toPlatformAddress(bytes);
      const evm = toChecksumAddress(bytes);
      const body = evm.slice(2);
      inputs.push(
        native,
        native.toUpperCase(),
        native.slice(0, -1) + (native.endsWith('q') ? 'p' : 'q'), // checksum broken
        ' ' + native,
        evm,
        evm.toLowerCase(),
        '0x' + body.toUpperCase(),
        '0X' + body,
        '0x' +
          [...body]
            .map((c, k) => (k === i % 40 ? (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) : c))
            .join(''), // one case flipped
        evm + '0',
        'cosmos' + native.slice(2),
      );
    }
    for (const input of inputs) {
      const { fast, shared } = both(input);
      if (shared === null) assert.equal(fast, 400, `should reject ${JSON.stringify(input)}`);
      else assert.equal(fast, shared, `should canonicalise ${JSON.stringify(input)}`);
    }
  });

  test('the 400 names the field and the value', () => {
    assert.throws(
      () => canonicalAddress('nope', 'actions[7].payload.address'),
      (e: unknown) =>
        e instanceof ApiError &&
        e.statusCode === 400 &&
        /actions\[7\]\.payload\.address/.test(e.message) &&
        /"nope"/.test(e.message),
    );
  });
});
