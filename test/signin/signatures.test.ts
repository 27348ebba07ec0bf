// Signature verification against the reference vectors (notes §6.6 and §7.6) and their negatives.
// test-run: once (no database: pure code; scripts/test.mjs)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { base64, bech32 } from '@scure/base';
import { adr36SignDocBytes, eip191Hash, recoverEip191Signer, verifyAdr36 } from '../../src/signin/verify.ts';

const HARDHAT0 = hexToBytes('ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const PUBKEY = 'A4MYU1tUEF1Keq5gwI/EX5aHGBtP38YlvRp1P6c5f+11';
const COSMOS_ADDR = 'cosmos15428vq2uzwhm3taey9sr9x5vm6tk78ewe54lwe';
const ETH_AS_COSMOS = 'cosmos17w0adeg64ky0daxwd2ugyuneellmjgnxramjtq';
const SIG_SECP = 'u0UuK0Vr3rtqCnhVVWKBa/LThrc/IFfrRxEHbrNEbuZYo5i5XPvCZ2slU45peDIO75spYcaczI/VI3l4oSiejA==';
const SIG_ETHSECP = 'NiEVBuYWuSuHviK5Lh5mXOShK0jzDXvrBzL3Ima7O4I7zoX0kkgdHvU1P865clZmumNTgMUeeLrXMOD0nvHtJQ==';

/** A sign doc written out by hand (independent of the code under test), fields overridable. */
function handDoc(signer: string, dataB64: string, o: { chainId?: string; memo?: string } = {}): Uint8Array {
  return new TextEncoder().encode(
    `{"account_number":"0","chain_id":"${o.chainId ?? ''}","fee":{"amount":[],"gas":"0"},"memo":"${o.memo ?? ''}","msgs":[{"type":"sign/MsgSignData","value":{"data":"${dataB64}","signer":"${signer}"}}],"sequence":"0"}`,
  );
}
const signDoc = (doc: Uint8Array) => base64.encode(secp256k1.sign(doc, HARDHAT0)); // SHA-256 prehash, low-S

describe('EIP-191 (personal_sign)', () => {
  test('the §6.6 vector recovers Hardhat account #0', () => {
    assert.equal(bytesToHex(eip191Hash('hello')), '50b2c43fd39106bafbba0da34fc430e1f91e3c96ea2acee2bc34119f92b37750');
    const sig =
      '0xf16ea9a3478698f695fd1401bfe27e9e4a7e8e3da94aa72b021125e31fa899cc573c48ea3fe1d4ab61a9db10c19032026e3ed2dbccba5a178235ac27f94504311c';
    assert.equal(bytesToHex(recoverEip191Signer('hello', sig)!), 'f39fd6e51aad88f6f4ce6ab8827279cfffb92266');
    // v as 0/1 is accepted too
    assert.equal(
      bytesToHex(recoverEip191Signer('hello', sig.slice(0, -2) + '01')!),
      'f39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    );
    // another message recovers another (wrong) signer
    assert.notEqual(
      bytesToHex(recoverEip191Signer('hello!', sig) ?? new Uint8Array()),
      'f39fd6e51aad88f6f4ce6ab8827279cfffb92266',
    );
  });

  test('malformed, bad-v and high-S signatures are refused', () => {
    const sig =
      'f16ea9a3478698f695fd1401bfe27e9e4a7e8e3da94aa72b021125e31fa899cc573c48ea3fe1d4ab61a9db10c19032026e3ed2dbccba5a178235ac27f94504311c';
    assert.equal(recoverEip191Signer('hello', sig), null, 'missing 0x');
    assert.equal(recoverEip191Signer('hello', '0x' + sig.slice(0, 128)), null, '64 bytes');
    assert.equal(recoverEip191Signer('hello', '0x' + sig.slice(0, 128) + '1d'), null, 'v = 29');
    const s = secp256k1.Signature.fromBytes(hexToBytes(sig.slice(0, 128)), 'compact');
    const highS = new secp256k1.Signature(s.r, secp256k1.Point.CURVE().n - s.s);
    assert.equal(recoverEip191Signer('hello', '0x' + bytesToHex(highS.toBytes('compact')) + '1b'), null);
  });
});

describe('ADR-36 (Keplr signArbitrary)', () => {
  test('the §7.6 sign doc serialization and digest', () => {
    const doc = adr36SignDocBytes(COSMOS_ADDR, new TextEncoder().encode('hello'));
    assert.deepEqual(doc, handDoc(COSMOS_ADDR, 'aGVsbG8='));
    assert.equal(bytesToHex(sha256(doc)), '216239b8039dc024b0a8b5f04e8725309582772ac4136cbfe2830db209031ce6');
    // Go-style HTML escaping of & < > inside the JSON
    const escaped = new TextDecoder().decode(adr36SignDocBytes('a&b<c>', new Uint8Array([1])));
    assert.ok(escaped.includes('"signer":"a\\u0026b\\u003cc\\u003e"'));
  });

  test('the §7.6 secp256k1 vector verifies', () => {
    assert.deepEqual(verifyAdr36({ signer: COSMOS_ADDR, data: 'hello', publicKey: PUBKEY, signature: SIG_SECP }), {
      ok: true,
      algo: 'secp256k1',
    });
    // and is what an RFC 6979 signer produces for the hand-written doc
    assert.equal(signDoc(handDoc(COSMOS_ADDR, 'aGVsbG8=')), SIG_SECP);
  });

  test('the §7.6 ethsecp256k1 vector verifies, and only with Keccak', () => {
    assert.deepEqual(verifyAdr36({ signer: ETH_AS_COSMOS, data: 'hello', publicKey: PUBKEY, signature: SIG_ETHSECP }), {
      ok: true,
      algo: 'ethsecp256k1',
    });
    const doc = handDoc(ETH_AS_COSMOS, 'aGVsbG8=');
    const pub = base64.decode(PUBKEY);
    assert.equal(secp256k1.verify(base64.decode(SIG_ETHSECP), doc, pub), false, 'SHA-256 digest fails');
    assert.equal(secp256k1.verify(base64.decode(SIG_ETHSECP), keccak_256(doc), pub, { prehash: false }), true);
    // the same bytes under the other algorithm's address do not verify
    assert.equal(
      verifyAdr36({ signer: COSMOS_ADDR, data: 'hello', publicKey: PUBKEY, signature: SIG_ETHSECP }).ok,
      false,
    );
  });

  test('negatives: other prefix, other data, high-S, non-empty chain_id or memo, non-canonical data, foreign key', () => {
    const osmo = bech32.encode('osmo', bech32.decode(COSMOS_ADDR as `${string}1${string}`).words);
    assert.equal(
      verifyAdr36({ signer: osmo, data: 'hello', publicKey: PUBKEY, signature: SIG_SECP }).ok,
      false,
      'prefix is signed',
    );
    assert.equal(
      verifyAdr36({ signer: COSMOS_ADDR, data: 'hello!', publicKey: PUBKEY, signature: SIG_SECP }).ok,
      false,
    );

    const s = secp256k1.Signature.fromBytes(base64.decode(SIG_SECP), 'compact');
    const highS = base64.encode(new secp256k1.Signature(s.r, secp256k1.Point.CURVE().n - s.s).toBytes('compact'));
    assert.equal(
      secp256k1.verify(base64.decode(highS), handDoc(COSMOS_ADDR, 'aGVsbG8='), base64.decode(PUBKEY), { lowS: false }),
      true,
      'mathematically valid',
    );
    assert.deepEqual(
      verifyAdr36({ signer: COSMOS_ADDR, data: 'hello', publicKey: PUBKEY, signature: highS }).ok,
      false,
      'but high-S is refused',
    );

    for (const doc of [
      handDoc(COSMOS_ADDR, 'aGVsbG8=', { chainId: 'signature' }),
      handDoc(COSMOS_ADDR, 'aGVsbG8=', { memo: 'x' }),
      handDoc(COSMOS_ADDR, 'aGVsbG8'),
    ]) {
      const r = verifyAdr36({ signer: COSMOS_ADDR, data: 'hello', publicKey: PUBKEY, signature: signDoc(doc) });
      assert.equal(r.ok, false);
      assert.match((r as { reason: string }).reason, /does not match/);
    }

    const otherPub = base64.encode(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true));
    const r = verifyAdr36({ signer: COSMOS_ADDR, data: 'hello', publicKey: otherPub, signature: SIG_SECP });
    assert.deepEqual(r, { ok: false, reason: 'publicKey does not derive the signer address' });
    assert.equal(
      verifyAdr36({
        signer: COSMOS_ADDR,
        data: 'hello',
        publicKey: base64.encode(new Uint8Array(33)),
        signature: SIG_SECP,
      }).ok,
      false,
    );
    assert.equal(
      verifyAdr36({ signer: COSMOS_ADDR, data: 'hello', publicKey: PUBKEY, signature: 'not base64!' }).ok,
      false,
    );
    assert.equal(
      verifyAdr36({
        signer: COSMOS_ADDR,
        data: 'hello',
        publicKey: PUBKEY,
        signature: base64.encode(new Uint8Array(65)),
      }).ok,
      false,
    );
    assert.equal(verifyAdr36({ signer: 'nonsense', data: 'hello', publicKey: PUBKEY, signature: SIG_SECP }).ok, false);
  });
});
