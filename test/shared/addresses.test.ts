// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { nullAddress, parseAddress, toCanonical, tryParseAddress } from '../../src/shared/addresses.ts';
import { ApiError } from '../../src/shared/errors.ts';

// Hardhat account #0: the same 20 bytes in both forms (reference notes §7.6).
const EVM = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const NATIVE = 'bb17w0adeg64ky0daxwd2ugyuneellmjgnxqqnph3';

describe('addresses', () => {
  test('null address for prefix bb', () => {
    assert.equal(nullAddress(), 'bb1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqs7gvmv');
    assert.equal(
      toCanonical('0x0000000000000000000000000000000000000000'),
      'bb1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqs7gvmv',
    );
  });

  test('EVM form maps to the native form and back', () => {
    const p = parseAddress(EVM);
    assert.equal(p.platformAddress, NATIVE);
    assert.equal(p.evmAddress, EVM);
    assert.equal(p.chain, 'ETH');
    const n = parseAddress(NATIVE);
    assert.equal(n.evmAddress, EVM);
    assert.equal(n.chain, 'Cosmos');
    assert.deepEqual(n.bytes, p.bytes);
  });

  test('all-lowercase and all-uppercase EVM forms skip the checksum', () => {
    assert.equal(toCanonical(EVM.toLowerCase()), NATIVE);
    assert.equal(toCanonical('0x' + EVM.slice(2).toUpperCase()), NATIVE);
  });

  test('an all-uppercase native address is accepted (BIP-173 allows it, e.g. in QR codes) and given back in lower case', () => {
    assert.equal(toCanonical(NATIVE.toUpperCase()), NATIVE);
    assert.equal(tryParseAddress(NATIVE.toUpperCase())?.platformAddress, NATIVE);
    // mixed case stays refused, in either direction
    assert.equal(tryParseAddress('BB1' + NATIVE.slice(3)), null);
    assert.equal(
      tryParseAddress(NATIVE.replace(/[a-z](?=[^a-z]*$)/, (c) => c.toUpperCase())),
      null,
      'its last letter upper case',
    );
    assert.throws(() => toCanonical('BB1' + NATIVE.slice(3)));
  });

  test('a mixed-case EVM address with a bad EIP-55 checksum is refused', () => {
    const bad = '0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
    assert.equal(tryParseAddress(bad), null);
  });

  test('invalid inputs are refused with a 400 naming the field', () => {
    for (const bad of [
      '',
      '0x123',
      'bb1qqqq',
      'cosmos17w0adeg64ky0daxwd2ugyuneellmjgnxramjtq',
      NATIVE.slice(0, -1) + 'x',
      42,
      null,
      NATIVE.toUpperCase().replace('BB1', 'bb1'),
    ]) {
      assert.equal(tryParseAddress(bad), null, `accepted ${String(bad)}`);
    }
    assert.throws(
      () => parseAddress('nope', 'body.address'),
      (e: unknown) =>
        e instanceof ApiError && e.statusCode === 400 && /body\.address/.test(e.message) && /"nope"/.test(e.message),
    );
  });

  test('a bech32 string of the right prefix but wrong length is refused', () => {
    // 32-byte payload under the bb prefix
    assert.equal(tryParseAddress('bb1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqs3hzc5'), null);
  });
});
