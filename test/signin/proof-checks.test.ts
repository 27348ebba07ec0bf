// Second angles on sign-in checks (issue 16): the auth/status body check and the PKCE verifier
// comparison. Each test here was seen to fail on the bug its comment names.
import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { base64, bech32 } from '@scure/base';
import { privateKeyToAccount } from 'viem/accounts';
import { authorizeCode, basicAuth, signIn } from '../helpers/signin.ts';
import { recoverEip191Signer, verifyAdr36, HIGH_S_REASON } from '../../src/signin/verify.ts';

const TOKEN = '/api/v0/signin/token';
const STATUS = '/api/v0/auth/status';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };

function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

describe('sign-in edges', () => {
  const t = useApp();

  // Bug it catches: the body check throwing a plain Error (a 500) instead of a 400.
  test('auth/status: an unknown field is a 400 naming it; a non-object body is a 400', async () => {
    const s = await signIn(t, { scopes: ['completeClaims'] });
    for (const token of [s.accessToken, undefined]) {
      const other = await t.request('POST', STATUS, { token, body: { other: 1 } });
      assert.equal(other.statusCode, 400, other.body);
      assert.deepEqual(other.json(), { errorMessage: 'body has unknown field "other"' });
      for (const payload of ['[1]', '[]', '"text"', '5', 'true']) {
        const res = await t.request('POST', STATUS, { token, body: payload, headers: JSON_TYPE });
        assert.equal(res.statusCode, 400, `${payload}: ${res.body}`);
        assert.deepEqual(res.json(), { errorMessage: 'body must be an empty object' }, payload);
      }
    }
    // and the accepted forms still answer
    const ok = await t.request('POST', STATUS, { token: s.accessToken, body: {} });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().signedIn, true);
  });

  // Bug it catches: the verifier compared to the challenge without hashing it, or not compared at all.
  test("PKCE over a form body with HTTP Basic: the challenge itself and another pair's verifier are refused, and do not burn the code", async () => {
    const mine = pkcePair();
    const other = pkcePair();
    const { code, client } = await authorizeCode(t, { codeChallenge: mine.challenge });
    const exchange = (code_verifier: string) =>
      t.request('POST', TOKEN, {
        apiKey: t.apiKey,
        headers: { ...FORM, authorization: basicAuth(client.clientId, client.clientSecret) },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: client.redirectUri,
          code_verifier,
        }).toString(),
      });
    for (const wrong of [mine.challenge, other.verifier]) {
      const res = await exchange(wrong);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().error, 'invalid_grant');
      assert.equal(res.json().error_description, 'code_verifier does not match the code_challenge.');
    }
    const ok = await exchange(mine.verifier);
    assert.equal(ok.statusCode, 200, ok.body);
    const st = await t.request('POST', STATUS, { token: ok.json().access_token, body: {} });
    assert.equal(st.json().signedIn, true);
  });
});

// Signature checks at their edges (npm run mutate -- src/signin/verify.ts left these alive).
describe('signature edges', () => {
  const KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
  const ADDRESS = 'f39fd6e51aad88f6f4ce6ab8827279cfffb92266';
  const COSMOS_ADDR = 'cosmos15428vq2uzwhm3taey9sr9x5vm6tk78ewe54lwe';
  const PUBKEY = 'A4MYU1tUEF1Keq5gwI/EX5aHGBtP38YlvRp1P6c5f+11';
  const SIG_SECP = 'u0UuK0Vr3rtqCnhVVWKBa/LThrc/IFfrRxEHbrNEbuZYo5i5XPvCZ2slU45peDIO75spYcaczI/VI3l4oSiejA==';

  test('EIP-191: v of 27 and 28 and their 0/1 forms all recover; 2, 26 and 29 do not', async () => {
    const account = privateKeyToAccount(KEY);
    const seen = new Set<number>();
    for (let i = 0; seen.size < 2 && i < 64; i++) {
      const message = `message ${i}`;
      const sig = await account.signMessage({ message });
      const v = parseInt(sig.slice(-2), 16);
      seen.add(v);
      assert.equal(bytesToHex(recoverEip191Signer(message, sig)!), ADDRESS, `v = ${v}`);
      assert.equal(
        bytesToHex(recoverEip191Signer(message, sig.slice(0, -2) + (v - 27).toString(16).padStart(2, '0'))!),
        ADDRESS,
        `v = ${v - 27}`,
      );
      for (const bad of [2, 26, 29])
        assert.equal(
          recoverEip191Signer(message, sig.slice(0, -2) + bad.toString(16).padStart(2, '0')),
          null,
          `v = ${bad}`,
        );
    }
    assert.deepEqual([...seen].sort(), [27, 28]);
    // uppercase hex is hex too
    const sig = await account.signMessage({ message: 'upper' });
    assert.equal(bytesToHex(recoverEip191Signer('upper', '0x' + sig.slice(2).toUpperCase())!), ADDRESS);
    assert.equal(recoverEip191Signer('upper', sig + '00'), null, '66 bytes');
  });

  test('EIP-191: junk around the hex, and the high-S twin of a valid signature, are refused', async () => {
    const sig = await privateKeyToAccount(KEY).signMessage({ message: 'twin' });
    assert.equal(recoverEip191Signer('twin', 'zz' + sig), null);
    assert.equal(recoverEip191Signer('twin', sig + 'zz'), null);
    // (r, n - s) with the other recovery bit recovers the same key: EIP-2 refuses it
    const s = secp256k1.Signature.fromBytes(hexToBytes(sig.slice(2, 130)), 'compact');
    const v = parseInt(sig.slice(-2), 16);
    const twin =
      '0x' +
      bytesToHex(new secp256k1.Signature(s.r, secp256k1.Point.CURVE().n - s.s).toBytes('compact')) +
      (v === 27 ? '1c' : '1b');
    assert.equal(recoverEip191Signer('twin', twin), null);
  });

  test('ADR-36: the public key must derive all of the signer bytes', () => {
    const own = bech32.decodeToBytes(COSMOS_ADDR).bytes;
    const longer = bech32.encode('cosmos', bech32.toWords(new Uint8Array([...own, ...new Uint8Array(12)])));
    const oneByteOff = bech32.encode('cosmos', bech32.toWords(new Uint8Array([own[0]! ^ 1, ...own.slice(1)])));
    for (const signer of [longer, oneByteOff]) {
      assert.deepEqual(verifyAdr36({ signer, data: 'hello', publicKey: PUBKEY, signature: SIG_SECP }), {
        ok: false,
        reason: 'publicKey does not derive the signer address',
      });
    }
  });

  test('ADR-36: each malformed input names its reason', () => {
    const base = { signer: COSMOS_ADDR, data: 'hello', publicKey: PUBKEY, signature: SIG_SECP };
    const reason = (o: Partial<typeof base>) => verifyAdr36({ ...base, ...o });
    assert.deepEqual(reason({ signer: 'nonsense' }), { ok: false, reason: 'signer is not a bech32 address' });
    assert.deepEqual(reason({ signature: 'not base64!' }), {
      ok: false,
      reason: 'publicKey and signature must be standard base64',
    });
    assert.deepEqual(reason({ publicKey: '%%%' }), {
      ok: false,
      reason: 'publicKey and signature must be standard base64',
    });
    assert.deepEqual(reason({ publicKey: base64.encode(new Uint8Array(32)) }), {
      ok: false,
      reason: 'publicKey must be a 33-byte compressed secp256k1 key',
    });
    assert.deepEqual(reason({ publicKey: base64.encode(new Uint8Array(34)) }), {
      ok: false,
      reason: 'publicKey must be a 33-byte compressed secp256k1 key',
    });
    assert.deepEqual(reason({ signature: base64.encode(new Uint8Array(63)) }), {
      ok: false,
      reason: 'signature must be 64 bytes (r‖s)',
    });
    assert.deepEqual(reason({ signature: base64.encode(new Uint8Array(65)) }), {
      ok: false,
      reason: 'signature must be 64 bytes (r‖s)',
    });
    assert.deepEqual(reason({ publicKey: base64.encode(new Uint8Array(33).fill(5)) }), {
      ok: false,
      reason: 'publicKey is not a valid secp256k1 point',
    });
    assert.deepEqual(reason({ data: 'hello!' }), {
      ok: false,
      reason: 'signature does not match the message and public key',
    });
    assert.deepEqual(reason({ signature: base64.encode(new Uint8Array(64)) }), {
      ok: false,
      reason: 'signature does not match the message and public key',
    });
    assert.deepEqual(
      reason({ signature: base64.encode(new Uint8Array(64).fill(0xff)) }),
      { ok: false, reason: 'signature does not match the message and public key' },
      'r and s past the curve order',
    );
    // the high-S twin of the ethsecp256k1 vector is refused too
    const ETH_AS_COSMOS = 'cosmos17w0adeg64ky0daxwd2ugyuneellmjgnxramjtq';
    const SIG_ETHSECP = 'NiEVBuYWuSuHviK5Lh5mXOShK0jzDXvrBzL3Ima7O4I7zoX0kkgdHvU1P865clZmumNTgMUeeLrXMOD0nvHtJQ==';
    assert.deepEqual(verifyAdr36({ ...base, signer: ETH_AS_COSMOS, signature: SIG_ETHSECP }), {
      ok: true,
      algo: 'ethsecp256k1',
    });
    const es = secp256k1.Signature.fromBytes(base64.decode(SIG_ETHSECP), 'compact');
    const highS = base64.encode(new secp256k1.Signature(es.r, secp256k1.Point.CURVE().n - es.s).toBytes('compact'));
    assert.deepEqual(verifyAdr36({ ...base, signer: ETH_AS_COSMOS, signature: highS }), {
      ok: false,
      reason: HIGH_S_REASON,
    });
    // and so is the high-S twin of the secp256k1 vector, while s at or past the order stays a mismatch
    const cs = secp256k1.Signature.fromBytes(base64.decode(SIG_SECP), 'compact');
    assert.deepEqual(
      reason({
        signature: base64.encode(new secp256k1.Signature(cs.r, secp256k1.Point.CURVE().n - cs.s).toBytes('compact')),
      }),
      { ok: false, reason: HIGH_S_REASON },
    );
    // bytes and the same text as a string verify alike
    assert.deepEqual(reason({ data: new TextEncoder().encode('hello') as unknown as string }), {
      ok: true,
      algo: 'secp256k1',
    });
    assert.ok(secp256k1.Point.fromBytes(base64.decode(PUBKEY)));
  });
});
